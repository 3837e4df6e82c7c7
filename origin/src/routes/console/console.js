"use strict";
// The console's frame: signing in, the calls to the operator routes, the PG guard, the
// merchant's webhooks, the reconciliation exceptions, UNKNOWN payments and the events; the live refresh of the
// drops, the guard and the charts every few seconds. Tables with inputs in them (the
// exceptions) are redrawn only on "Refresh" or after an action, never under the
// operator's typing.

const $ = (id) => document.getElementById(id);
const key = "operatorToken";
const LIVE_EVERY_MS = 3_000;
let currency = null;
let liveTimer = null;

function say(text) { $("problem").textContent = text; }
function note(text) { $("status").textContent = text; }

// A route's refusal: its HTTP status, code and message.
class Refused extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

async function api(method, path, body) {
  const headers = { "Authorization": "Bearer " + sessionStorage.getItem(key), "Accept": "application/json" };
  if (body) headers["Content-Type"] = "application/json";
  const response = await fetch(path, { method, headers, body: body ? JSON.stringify(body) : undefined });
  let json = null;
  try { json = await response.json(); } catch (_) { json = null; }
  if (response.status === 401) { sessionStorage.removeItem(key); show(false); throw new Refused(401, "UNAUTHORIZED", "the token was refused"); }
  if (!response.ok) {
    throw new Refused(response.status, json && json.code, (json && json.message) || ("HTTP " + response.status));
  }
  return json;
}

function show(signedIn) {
  $("sign-in").hidden = signedIn;
  $("console").hidden = !signedIn;
  if (!signedIn) { stopLive(); $("token").focus(); }
}

// Cells are filled with textContent only: nothing from the API is read as HTML.
function row(cells) {
  const tr = document.createElement("tr");
  for (const cell of cells) {
    const td = document.createElement("td");
    if (cell instanceof Node) td.append(cell); else td.textContent = cell == null ? "—" : String(cell);
    tr.append(td);
  }
  return tr;
}

function resolver(item) {
  const form = document.createElement("form");
  const input = document.createElement("input");
  input.required = true;
  input.maxLength = 500;
  input.setAttribute("aria-label", "Note for order " + item.orderId);
  const button = document.createElement("button");
  button.type = "submit";
  button.textContent = "Resolve";
  form.append(input, " ", button);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      await api("POST", "/admin/reconciliations/" + item.id + "/resolve", { note: input.value });
      note("Resolved the finding for order " + item.orderId + ".");
      await load();
    } catch (err) { say(err.message); }
  });
  return form;
}

// A guard's concurrency limit beside its calls in flight (the guard's own count, whatever
// the limit's mode); with mode "off" there is no limit, so nothing waits.
function concurrency(label, guard) {
  const limit = guard.concurrency || {};
  const bounded = limit.limit != null;
  return row([
    label,
    limit.mode,
    bounded ? limit.limit + " (" + limit.floor + "–" + limit.ceiling + ")" : null,
    guard.inFlight,
    limit.waiting,
    bounded && limit.maxWaitMs != null ? limit.maxWaitMs + " ms" : null,
  ]);
}

// One row a reason, whichever guard refused for it.
function refusals(approve, recovery) {
  const reasons = [...new Set([...Object.keys(approve), ...Object.keys(recovery)])].sort();
  return reasons.map((reason) => row([reason, approve[reason], recovery[reason]]));
}

function showGuard(guard) {
  // The approval guard's view is the answer's top level; the recovery job's is `recovery`.
  const breaker = guard.breaker || {};
  $("breaker").textContent = breaker.state || (breaker.enabled ? "?" : "off");
  $("mode").textContent = (breaker.control && breaker.control.mode) || "AUTO";
  $("concurrency").replaceChildren(concurrency("Approval guard", guard), concurrency("Recovery guard", guard.recovery));
  $("refusals").replaceChildren(...refusals(guard.refusals, guard.recovery.refusals));
}

// The guard's charts: latency, calls in flight, refusals by reason, the breaker's band.
function showGuardCharts(history) {
  const to = history.nowMs;
  const from = to - history.windowMs;
  const samples = history.guard.samples;
  const points = (pick) => samples.map((s) => [s.atMs, pick(s)]);
  const inWindow = samples.filter((s) => s.atMs >= from);
  const reasons = [...new Set(inWindow.flatMap((s) => Object.keys(s.refusals)))].sort();
  const transitions = history.guard.transitions;
  const start = Math.max(from, history.keptSinceMs);
  const before = transitions.filter((t) => t.atMs <= start);
  const initial = before.length ? before[before.length - 1].to
    : transitions.length ? transitions[0].from
      : samples.length ? samples[0].breaker : null;
  const band = bandChart({ title: "Breaker", from, to, start, initial, transitions });
  $("guard-charts").replaceChildren(
    lineChart({ title: "PG latency", unit: "ms", from, to, series: [
      { name: "p50", points: points((s) => s.p50Ms) },
      { name: "p95", points: points((s) => s.p95Ms) },
    ] }),
    lineChart({ title: "PG calls in flight", unit: "", from, to, series: [{ name: "In flight", points: points((s) => s.inFlight) }] }),
    lineChart({ title: "Refusals every 5 s", unit: "", from, to, series: reasons.length
      ? reasons.map((reason) => ({ name: reason, points: points((s) => s.refusals[reason] || 0) }))
      : [{ name: "None", points: points(() => 0) }] }),
    band,
  );
  const restarted = history.keptSinceMs > from;
  $("kept-since").textContent = restarted
    ? `The charts begin at ${moment(history.keptSinceMs)}: the origin started then, and keeps the last 15 minutes in memory only.`
    : "The last 15 minutes, sampled every 5 s by this origin instance.";
}

// A dead letter's "send again" button.
function redeliverer(event) {
  const button = document.createElement("button");
  button.type = "button";
  button.textContent = "Send again";
  button.setAttribute("aria-label", `Send ${event.id} (${event.type} of ${event.data.orderId}) again`);
  button.addEventListener("click", async () => {
    try {
      await api("POST", `/admin/webhooks/${encodeURIComponent(event.id)}/redeliver`);
      note(`${event.id} is being sent again.`);
      await load();
    } catch (err) { say(err.message); }
  });
  return button;
}

// The merchant's webhooks: the endpoint, what waits, what fails, the dead letters.
function showWebhooks(hooks) {
  const endpoint = hooks.endpoint;
  const age = hooks.oldestAgeMs == null ? "" : `; the oldest happened ${Math.round(hooks.oldestAgeMs / 1000)} s ago`;
  $("webhooks-pending").textContent = count(hooks.pending);
  $("webhooks-endpoint").textContent = endpoint == null
    ? "No endpoint is set (MERCHANT_WEBHOOK_URL): the events are kept for GET /admin/payment-events."
    : endpoint.disabled
      ? `${endpoint.url} is disabled since ${moment(endpoint.disabled.since)} (${endpoint.disabled.reason}): nothing is sent until it is enabled${age}.`
      : `Delivering to ${endpoint.url}${age}. ${count(hooks.dead)} dead letters.`;
  $("webhooks-enable").hidden = !(endpoint && endpoint.disabled);
  $("webhooks-failing").replaceChildren(...hooks.failing.map((e) =>
    row([e.id, e.type, e.data.orderId, e.delivery.attempts, e.delivery.lastError, moment(e.delivery.lastAttemptAt)])));
  $("webhooks-dead").replaceChildren(...hooks.deadLetters.map((e) =>
    row([e.id, e.type, e.data.orderId, e.delivery.lastError, redeliverer(e)])));
}

// What changes by the second: the drops, the guard and the charts.
async function refreshLive() {
  const [events, guard, history] = await Promise.all([
    api("GET", "/admin/events"),
    api("GET", "/admin/guard"),
    api("GET", "/admin/history"),
  ]);
  currency = events.currency;
  showGuard(guard);
  showGuardCharts(history);
  await refreshDrops(events.events, history);
  $("events").replaceChildren(...events.events.map((e) =>
    row([e.eventId, count(e.stock), count(e.reserved), count(e.sold), money(e.amount, events.currency), e.room ? "yes" : "no"])));
  $("updated").textContent = `Updated at ${moment(Date.now())}.`;
}

// Refreshes the live parts every few seconds while signed in and not paused.
function startLive() {
  stopLive();
  const tick = async () => {
    try { await refreshLive(); } catch (err) { say(err.message); }
    if (liveTimer !== null) liveTimer = setTimeout(tick, LIVE_EVERY_MS);
  };
  liveTimer = setTimeout(tick, LIVE_EVERY_MS);
}

function stopLive() {
  if (liveTimer) clearTimeout(liveTimer);
  liveTimer = null;
}

async function load() {
  say("");
  const [items, unknown, hooks] = await Promise.all([
    api("GET", "/admin/reconciliations?status=PENDING"),
    api("GET", "/admin/payments?status=UNKNOWN"),
    api("GET", "/admin/webhooks"),
    refreshLive(),
  ]);
  showWebhooks(hooks);
  $("items").replaceChildren(...items.items.map((item) =>
    row([item.orderId, item.category, money(item.internalAmount, currency), money(item.externalAmount, currency), resolver(item)])));
  $("pending-count").textContent = items.items.length;
  $("unknown").replaceChildren(...unknown.payments.map((p) =>
    row([p.orderId, money(p.amount, currency), moment(p.createdAt), p.recovery.attempts, p.recovery.flag])));
  $("unknown-count").textContent = unknown.payments.length;
  note("Updated at " + moment(Date.now()) + ".");
}

bindDropForm();
$("zone").textContent = zoneLabel();
for (const node of document.querySelectorAll(".zone-short")) node.textContent = ZONE;
$("sign-in").addEventListener("submit", async (event) => {
  event.preventDefault();
  sessionStorage.setItem(key, $("token").value);
  $("token").value = "";
  show(true);
  try { await load(); } catch (err) { say(err.message); }
  startLive();
});
$("refresh").addEventListener("click", () => load().catch((err) => say(err.message)));
$("live").addEventListener("click", () => {
  const on = $("live").getAttribute("aria-pressed") !== "true";
  $("live").setAttribute("aria-pressed", String(on));
  if (on) startLive(); else stopLive();
  note(on ? "Live updates are on." : "Live updates are paused.");
});
$("webhooks-enable").addEventListener("click", async () => {
  try { await api("POST", "/admin/webhooks/enable"); note("The merchant's endpoint takes deliveries again."); await load(); }
  catch (err) { say(err.message); }
});
$("sign-out").addEventListener("click", () => { sessionStorage.removeItem(key); show(false); });
$("recover").addEventListener("click", async () => {
  try { const report = await api("POST", "/admin/recovery/run"); note("Recovery ran: " + JSON.stringify(report)); await load(); }
  catch (err) { say(err.message); }
});
$("breaker-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  try {
    await api("POST", "/admin/guard/breaker", { state: $("breaker-state").value, reason: $("breaker-reason").value });
    note("The breaker is set to " + $("breaker-state").value + ".");
    await load();
  } catch (err) { say(err.message); }
});

if (sessionStorage.getItem(key)) {
  show(true);
  load().catch((err) => say(err.message)).finally(startLive);
} else show(false);
