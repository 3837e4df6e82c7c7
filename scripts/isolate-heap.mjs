// Prints the V8 heap of a workerd service's isolate, as JSON, through workerd's inspector
// (`--inspector-addr`): `lab room` reads the edge's with it.
//
//   node --experimental-websocket scripts/isolate-heap.mjs 127.0.0.1:9229 SERVICE URL
//
// workerd handles inspector messages only while the isolate runs, so once they are sent
// the script requests URL (one of the service's own routes, e.g. its /healthz) until
// they are answered.
// It prints {"usedBytes", "totalBytes", "embedderBytes", "backingStorageBytes"} from
// Runtime.getHeapUsage after a full collection (HeapProfiler.collectGarbage): what the
// isolate holds, not garbage not yet collected. ArrayBuffers' backing stores — the
// Worker's WebAssembly memory among them — are outside `usedBytes`, in
// `backingStorageBytes`.

import { connect, poking } from "./inspector.mjs";

const [address, service, poke] = process.argv.slice(2);
if (!address || !service || !poke) {
  console.error("usage: isolate-heap.mjs HOST:PORT SERVICE URL");
  process.exit(2);
}

const targets = (await (await fetch(`http://${address}/json/list`)).json())
  .filter((t) => t.webSocketDebuggerUrl && t.id === service);
if (targets.length !== 1) {
  console.error(`no inspectable isolate of ${service} at ${address}`);
  process.exit(1);
}

for (const target of targets) {
  const { send, close } = await connect(target);
  // Sent together, handled in order.
  send("HeapProfiler.enable");
  send("HeapProfiler.collectGarbage");
  let usage;
  try {
    usage = await poking(send("Runtime.getHeapUsage"), poke);
  } catch (err) {
    console.error(`${service}'s isolate: ${err.message}`);
    process.exit(1);
  }
  close();
  console.log(JSON.stringify({
    usedBytes: usage.usedSize,
    totalBytes: usage.totalSize,
    embedderBytes: usage.embedderHeapUsedSize ?? null,
    backingStorageBytes: usage.backingStorageSize ?? null,
  }));
}
