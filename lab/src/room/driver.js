// The room bench's driver (lab/src/room/): served by workerd beside the edge, bound to
// its WaitingRoom class, it calls one room's object as the edge's Worker does — the call
// as base64url JSON in the URL, the answer's JSON in the `x-answer` header — without the
// edge's routes, tokens or session objects.
//   GET /fill?event=E&from=N&count=C&parallel=P  enters users uN… (P calls at a time)
//   GET /call?event=E&op=OP&user=U              one call: {ok, answer}
//   GET /snapshot?event=E                        {ok, bytes}
//   GET /raw?event=E&request=R                   the call R (base64url JSON): {ok, answer}
//   POST /arrive {event, shards, arrivals: [[shard, user], …]}
//                                                each user's enter at its arrival shard
//                                                (`{event}#{shard}`; the room itself when
//                                                shards is 1), all at once: each answer's
//                                                {ok, seq, position, ms} (ms: its call's
//                                                time, from the driver's clock)
//   GET /shard?name=N&request=R                  the call R to arrival shard N: {ok, answer}
const base64url = (text) => btoa(String.fromCharCode(...new TextEncoder().encode(text)))
  .replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
const unbase64url = (text) => new TextDecoder().decode(
  Uint8Array.from(atob(text.replaceAll("-", "+").replaceAll("_", "/")), (c) => c.charCodeAt(0)));

function call(env, event, request) {
  const room = env.WAITING_ROOMS.get(env.WAITING_ROOMS.idFromName(event));
  return room.fetch("https://object/" + base64url(JSON.stringify(request)));
}

function callShard(env, name, request) {
  const shard = env.ARRIVAL_SHARDS.get(env.ARRIVAL_SHARDS.idFromName(name));
  return shard.fetch("https://object/" + base64url(JSON.stringify(request)));
}

async function answered(response) {
  const header = response.headers.get("x-answer");
  return { ok: response.ok, answer: header ? JSON.parse(unbase64url(header)) : null };
}

async function arrive(env, { event, shards, arrivals }) {
  return Promise.all(arrivals.map(async ([shard, user]) => {
    const started = Date.now();
    const enter = { op: "enter", user };
    const response = shards > 1
      ? await callShard(env, event + "#" + shard, { event, shards, call: enter })
      : await call(env, event, enter);
    const { ok, answer } = await answered(response);
    return { ok, seq: answer ? answer.seq : null, position: answer ? answer.placement.position : null,
      ms: Date.now() - started };
  }));
}

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname === "/arrive") return Response.json(await arrive(env, await request.json()));
    if (url.pathname === "/shard") {
      return Response.json(await answered(await callShard(env, url.searchParams.get("name"),
        JSON.parse(unbase64url(url.searchParams.get("request"))))));
    }
    const param = (name) => url.searchParams.get(name);
    const event = param("event");
    if (url.pathname === "/fill") {
      const from = Number(param("from")), end = from + Number(param("count"));
      let next = from, failed = 0;
      const lane = async () => {
        while (next < end) {
          const user = "u" + next++;
          const answer = await call(env, event, { op: "enter", user });
          if (!answer.ok) failed++;
        }
      };
      await Promise.all(Array.from({ length: Number(param("parallel")) || 16 }, lane));
      return Response.json({ entered: end - from - failed, failed });
    }
    if (url.pathname === "/call") {
      const answer = await call(env, event, { op: param("op"), user: param("user") });
      const header = answer.headers.get("x-answer");
      return Response.json({ ok: answer.ok, answer: header ? JSON.parse(unbase64url(header)) : null });
    }
    if (url.pathname === "/raw") {
      const answer = await call(env, event, JSON.parse(unbase64url(param("request"))));
      const header = answer.headers.get("x-answer");
      return Response.json({ ok: answer.ok, answer: header ? JSON.parse(unbase64url(header)) : null });
    }
    if (url.pathname === "/snapshot") {
      const answer = await call(env, event, { op: "snapshot" });
      return Response.json({ ok: answer.ok, bytes: (await answer.arrayBuffer()).byteLength });
    }
    return new Response("no such route", { status: 404 });
  },
};
