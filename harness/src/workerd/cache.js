// A data centre's cache for the Worker under test (the harness's `cacheApiOutbound`), in
// memory: what `caches.default` is on Cloudflare, shared by every isolate of the one
// workerd. workerd speaks to it over HTTP: `match` is a GET, answered with the stored
// response and `CF-Cache-Status: HIT`, or 504 with `MISS`; `put` is a PUT whose body is
// the whole response as HTTP/1.1 text; `delete` is a PURGE. Expiry is the Worker's to
// judge (`Cache-Control` is kept, not enforced).
const entries = new Map();
const decoder = new TextDecoder();

function parse(raw) {
  for (let i = 0; i + 3 < raw.length; i++) {
    if (raw[i] === 13 && raw[i + 1] === 10 && raw[i + 2] === 13 && raw[i + 3] === 10) {
      const [statusLine, ...lines] = decoder.decode(raw.subarray(0, i)).split("\r\n");
      const status = Number(statusLine.split(" ")[1]);
      const headers = lines.map((line) => {
        const colon = line.indexOf(":");
        return [line.slice(0, colon), line.slice(colon + 1).trim()];
      });
      return { status, headers, body: raw.slice(i + 4) };
    }
  }
  return null;
}

export default {
  async fetch(request) {
    const key = request.url;
    if (request.method === "GET") {
      const entry = entries.get(key);
      if (!entry) {
        return new Response(null, { status: 504, headers: { "cf-cache-status": "MISS" } });
      }
      const headers = new Headers(entry.headers);
      headers.set("cf-cache-status", "HIT");
      return new Response(entry.body, { status: entry.status, headers });
    }
    if (request.method === "PUT") {
      const entry = parse(new Uint8Array(await request.arrayBuffer()));
      if (!entry) return new Response(null, { status: 413 });
      entries.set(key, entry);
      return new Response(null, { status: 204 });
    }
    if (request.method === "PURGE") {
      return new Response(null, { status: entries.delete(key) ? 200 : 404 });
    }
    return new Response(null, { status: 405 });
  },
};
