// Samples the CPU of a workerd isolate through its inspector for a few seconds and prints
// where the time went, as Markdown: each kind of work's share, then the functions with
// the most self time. `lab cost --profile` runs it while it loads one route.
//
//   node --experimental-websocket scripts/profile-edge.mjs 127.0.0.1:9229 5 POKE [REQUESTS]
//
// workerd handles inspector messages only while the isolate runs: the script requests
// POKE (one of the isolate's routes, e.g. its /healthz) until the profiler has started
// (then it writes `sampling` to standard error), and again until it has stopped, so an
// idle isolate is profiled for exactly the time asked. Given the number of requests the isolate answered while it sampled (besides
// those few), it also divides each kind's and function's time by it: µs per request.
//
// The inspector protocol is the V8 one (Profiler.start / Profiler.stop); workerd serves
// it with `--inspector-addr`. Wasm functions keep their Rust names (scripts/build-edge
// runs wasm-opt with --debuginfo), so the Rust side is read by crate and function.

import { connect, poking } from "./inspector.mjs";

const [address, secondsText, poke, requestsText] = process.argv.slice(2);
const seconds = Number(secondsText);
const requests = requestsText === undefined ? undefined : Number(requestsText);
if (!address || !(seconds > 0) || !poke || (requests !== undefined && !(requests > 0))) {
  console.error("usage: profile-edge.mjs HOST:PORT SECONDS POKE [REQUESTS]");
  process.exit(2);
}

const targets = await (await fetch(`http://${address}/json/list`)).json();
const target = targets.find((t) => t.webSocketDebuggerUrl);
if (!target) {
  console.error(`no inspectable isolate at ${address}`);
  process.exit(1);
}

const { send, close } = await connect(target);
// Sent together, handled in order.
const started = Promise.all([
  send("Profiler.enable"),
  send("Profiler.setSamplingInterval", { interval: 100 }),
  send("Profiler.start"),
]);
await poking(started, poke);
console.error("sampling");
await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
const { profile } = await poking(send("Profiler.stop"), poke);
close();

// Self time per node, from the samples and the time between them.
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const selfUs = new Map();
profile.samples.forEach((id, i) => {
  selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
});

/** What kind of work a function is, by its name and where it comes from. */
function kind(frame) {
  const name = frame.functionName;
  const wasm = frame.url.startsWith("wasm://") || /^\$?[a-z_]+::/.test(name) || name.startsWith("$");
  if (name === "(idle)") return "idle (waiting for work)";
  if (name === "(garbage collector)") return "garbage collection";
  if (name === "(program)" || name === "(root)") return "runtime outside JS and wasm (workerd, V8, I/O)";
  if (!wasm) return "runtime APIs called from JavaScript (fetch, Request, Response, promises) and wasm-bindgen's JS glue";
  if (/serde_json|serde::|serde_wasm_bindgen/.test(name)) return "wasm: JSON (serde)";
  if (/sha2|hmac|digest|jwt|rules::token|base64/.test(name)) return "wasm: token and signature crypto";
  if (/wasm_bindgen|js_sys|web_sys|worker_sys|externref|__wbindgen/.test(name)) return "wasm: wasm-bindgen boundary";
  if (/dlmalloc|alloc::|__rust_alloc|__rust_dealloc|memcpy|memmove|memset/.test(name)) return "wasm: allocation and copying";
  if (/^\$?(edge|rules)::/.test(name)) return "wasm: the edge's own code";
  if (/^\$?worker::/.test(name)) return "wasm: workers-rs";
  return "wasm: other";
}

const kinds = new Map();
const functions = new Map();
let total = 0;
for (const [id, us] of selfUs) {
  const frame = byId.get(id).callFrame;
  total += us;
  const k = kind(frame);
  kinds.set(k, (kinds.get(k) ?? 0) + us);
  const name = frame.functionName || "(anonymous)";
  functions.set(name, (functions.get(name) ?? 0) + us);
}
const busy = total - (kinds.get("idle (waiting for work)") ?? 0);
const share = (us) => `${((100 * us) / busy).toFixed(1)} %`;
const perRequest = requests === undefined ? [] : [(us) => (us / requests).toFixed(1)];
const columns = (heading) => `| ${heading} | share of busy time |${perRequest.length ? " µs per request |" : ""}`;
const rule = `|---|---|${perRequest.length ? "---|" : ""}`;
const cells = (us) => [share(us), ...perRequest.map((per) => per(us))].join(" | ");

console.log(`Sampled ${seconds} s, ${profile.samples.length} samples, busy ${(busy / 1000).toFixed(0)} ms of ${(total / 1000).toFixed(0)} ms${requests === undefined ? "" : `: ${(busy / requests).toFixed(1)} µs per request`}.\n`);
console.log(`${columns("kind of work")}\n${rule}`);
for (const [k, us] of [...kinds].sort((a, b) => b[1] - a[1])) {
  if (k !== "idle (waiting for work)") console.log(`| ${k} | ${cells(us)} |`);
}
console.log(`\n${columns("function (self time)")}\n${rule}`);
for (const [name, us] of [...functions].sort((a, b) => b[1] - a[1]).slice(0, 15)) {
  if (name !== "(idle)") console.log(`| \`${name.replaceAll("|", "\\|").slice(0, 90)}\` | ${cells(us)} |`);
}
