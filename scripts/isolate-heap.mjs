// Prints the V8 heap of a workerd service's isolate, as JSON, through workerd's inspector
// (`--inspector-addr`): `lab room` reads the edge's with it.
//
//   node --experimental-websocket scripts/isolate-heap.mjs 127.0.0.1:9229 SERVICE URL
//
// workerd handles inspector messages only while the isolate runs, so once they are sent
// the script requests URL (one of the service's own routes, e.g. its /healthz) until
// they are answered.
// It prints {"usedBytes", "totalBytes", "foundBytes", "foundTotalBytes", "collections",
// "embedderBytes", "backingStorageBytes"} from Runtime.getHeapUsage: `found…` as the heap
// was found, garbage included (used, committed); the rest after full collections
// (HeapProfiler.collectGarbage) a moment apart, at least two and then until one frees
// less than 1 % (at most eight): what the isolate holds. One is not enough: what a
// FinalizationRegistry callback lets go (wasm-bindgen frees JavaScript objects from
// one) goes only at the collection after the callback ran, a task after the
// collection that found its object dead. The edge's heap, 1,000 in line, held 5.3 MB
// after one collection and 0.6 MB after the second. ArrayBuffers' backing stores —
// the Worker's WebAssembly memory among them — are outside `usedBytes`, in
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
  send("HeapProfiler.enable");
  let found, usage, collections = 0;
  try {
    found = await poking(send("Runtime.getHeapUsage"), poke);
    usage = found;
    for (let freed = Infinity; collections < 2 || (freed > 0.01 * usage.usedSize && collections < 8); collections++) {
      // The last collection's finalizers run meanwhile, as the pokes have the isolate run.
      if (collections > 0) await new Promise((resolve) => setTimeout(resolve, 300));
      // Sent together, handled in order.
      send("HeapProfiler.collectGarbage");
      const after = await poking(send("Runtime.getHeapUsage"), poke);
      freed = usage.usedSize - after.usedSize;
      usage = after;
    }
  } catch (err) {
    console.error(`${service}'s isolate: ${err.message}`);
    process.exit(1);
  }
  close();
  console.log(JSON.stringify({
    usedBytes: usage.usedSize,
    totalBytes: usage.totalSize,
    foundBytes: found.usedSize,
    foundTotalBytes: found.totalSize,
    collections,
    embedderBytes: usage.embedderHeapUsedSize ?? null,
    backingStorageBytes: usage.backingStorageSize ?? null,
  }));
}
