// A connection to one isolate's V8 inspector (workerd's `--inspector-addr`), for the
// scripts that read it (profile-edge.mjs, isolate-heap.mjs): `send(method, params)`
// answers a method's result, or rejects with its error. workerd handles inspector
// messages only while the isolate runs: `poking` waits for an answer while it requests
// one of the isolate's own routes.

/** Connects to `target` (an entry of the inspector's /json/list). */
export async function connect(target) {
  const socket = new WebSocket(target.webSocketDebuggerUrl);
  await new Promise((resolve, reject) => {
    socket.onopen = resolve;
    socket.onerror = () => reject(new Error("the inspector refused the connection"));
  });
  let next = 1;
  const pending = new Map();
  socket.onmessage = (event) => {
    const message = JSON.parse(event.data);
    const waiting = pending.get(message.id);
    if (waiting) {
      pending.delete(message.id);
      message.error ? waiting.reject(new Error(message.error.message)) : waiting.resolve(message.result);
    }
  };
  const send = (method, params = {}) =>
    new Promise((resolve, reject) => {
      const id = next++;
      pending.set(id, { resolve, reject });
      socket.send(JSON.stringify({ id, method, params }));
    });
  return { send, close: () => socket.close() };
}

/** `answer` (a `send`'s promise), awaited while `poke` (a URL the isolate serves, e.g.
 * its /healthz) is requested every 50 ms, so that the isolate runs to handle it. */
export async function poking(answer, poke) {
  let settled = false;
  answer.then(() => (settled = true), () => (settled = true));
  for (let tries = 0; !settled; tries++) {
    if (tries === 100) throw new Error("the isolate did not answer its inspector");
    await (await fetch(poke)).arrayBuffer();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return answer;
}
