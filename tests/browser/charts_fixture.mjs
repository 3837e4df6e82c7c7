// The known history that tests/browser/console_charts.mjs feeds the operator console in
// place of GET /admin/history, GET /admin/events and GET /admin/events/spring, and what
// its charts must then show. Times are fixed: "now" is 00:07 on 14 March 2026 in Seoul
// (15:07 UTC the day before), so the window's whole five minutes are 23:55, 00:00 and
// 00:05 there, across midnight.

export const NOW = Date.UTC(2026, 2, 13, 15, 7, 0);
export const WINDOW = 900_000;
export const FROM = NOW - WINDOW;
const INTERVAL = 5_000;
const minute = (hours, minutes) => Date.UTC(2026, 2, 13, hours, minutes, 0);

// The x axis's labels in Asia/Seoul, and the times they stand for.
export const WINDOW_TICKS = [[minute(14, 55), "23:55"], [minute(15, 0), "00:00"], [minute(15, 5), "00:05"]];

// One sample every 5 s, off the minute as the sampler's are; the first is just before the
// window (as the origin keeps it), with values far above the rest: never drawn.
const times = Array.from({ length: 181 }, (_, i) => NOW - 1_234 - (180 - i) * INTERVAL);
const before = (i) => i === 0;
// No call in these intervals (p50, p95 unknown); the edge unreadable in those.
const noCalls = (i) => i >= 90 && i < 96;
const edgeDown = (i) => i >= 120 && i < 124;

// On a tick of 0, 20 … 80 and between them; p95 twice p50, so its top is 80.
const LATENCY = [12.34, 20, 40, 27.5, 0, 33.3];
const p50 = (i) => (before(i) ? 250 : noCalls(i) ? null : LATENCY[i % LATENCY.length]);
const p95 = (i) => (p50(i) == null ? null : p50(i) * 2);

// CLOSED → OPEN → HALF_OPEN → CLOSED inside the window, after two changes before it:
// the window starts CLOSED (the last of those), not HALF_OPEN (the first's `to`) nor
// OPEN (its `from`).
const OPENED = FROM + 302_500;
const PROBING = OPENED + 30_000;
const CLOSED_AGAIN = PROBING + 7_000;
const TRANSITIONS = [
  { from: "OPEN", to: "HALF_OPEN", atMs: FROM - 9_000 },
  { from: "HALF_OPEN", to: "CLOSED", atMs: FROM - 4_000 },
  { from: "CLOSED", to: "OPEN", atMs: OPENED },
  { from: "OPEN", to: "HALF_OPEN", atMs: PROBING },
  { from: "HALF_OPEN", to: "CLOSED", atMs: CLOSED_AGAIN },
];
export const BAND = [
  { state: "CLOSED", from: FROM, to: OPENED },
  { state: "OPEN", from: OPENED, to: PROBING },
  { state: "HALF_OPEN", from: PROBING, to: CLOSED_AGAIN },
  { state: "CLOSED", from: CLOSED_AGAIN, to: NOW },
];
const breakerAt = (at) => (at < OPENED ? "CLOSED" : at < PROBING ? "OPEN" : at < CLOSED_AGAIN ? "HALF_OPEN" : "CLOSED");

function refusals(i, at) {
  const reasons = {};
  const state = breakerAt(at);
  if (state !== "CLOSED") reasons.CIRCUIT_OPEN = state === "OPEN" ? 4 : 1;
  if (i >= 150 && i < 160) reasons.CONCURRENCY_LIMITED = (i % 3) + 1;
  return reasons;
}

const guardSamples = times.map((atMs, i) => ({
  atMs, calls: noCalls(i) ? 0 : 3, p50Ms: p50(i), p95Ms: p95(i),
  inFlight: before(i) ? 9 : i % 4, refusals: before(i) ? { CIRCUIT_OPEN: 40 } : refusals(i, atMs),
  breaker: breakerAt(atMs),
}));

// The line grows to 1,200 (prequeued 40 in the first minutes); 1,000 and 1,500 on the axis.
const room = (value) => (i) => (before(i) ? 9_000 : edgeDown(i) ? null : value(i));
const waiting = room((i) => 120 + 6 * i);
const prequeued = room((i) => (i < 30 ? 40 : 0));
const issued = room((i) => (i * 7) % 13);
const dropSamples = times.map((atMs, i) => ({
  atMs, waiting: waiting(i), prequeued: prequeued(i), passesLive: room(() => 2)(i),
  issuedLastMinute: issued(i), approved: i % 5 === 0 ? 2 : 0, failed: i % 17 === 0 ? 1 : 0,
  unknown: i === 170 ? 1 : 0,
}));

export const HISTORY = {
  nowMs: NOW, intervalMs: INTERVAL, windowMs: WINDOW, keptSinceMs: FROM - 3_600_000,
  guard: { samples: guardSamples, transitions: TRANSITIONS },
  drops: { spring: dropSamples },
};

// [atMs, value] of each series as drawn from these samples.
const series = (samples, name, pick) => ({ name, points: samples.map((s) => [s.atMs, pick(s)]) });
export const GUARD_SERIES = {
  "PG latency": [series(guardSamples, "p50", (s) => s.p50Ms), series(guardSamples, "p95", (s) => s.p95Ms)],
  "PG calls in flight": [series(guardSamples, "In flight", (s) => s.inFlight)],
  "Refusals every 5 s": ["CIRCUIT_OPEN", "CONCURRENCY_LIMITED"].map((reason) =>
    series(guardSamples, reason, (s) => s.refusals[reason] || 0)),
};
export const DROP_SERIES = {
  "People in line": [series(dropSamples, "In line", (s) => (s.waiting == null ? null : s.waiting + s.prequeued))],
  "Admissions per minute": [series(dropSamples, "Passes issued in the last minute", (s) => s.issuedLastMinute)],
  "Confirms every 5 s": [["Approved", "approved"], ["Failed", "failed"], ["UNKNOWN", "unknown"]].map(([name, field]) =>
    series(dropSamples, name, (s) => s[field])),
};

// Each chart's caption: its title, then the latest values (rounded to a tenth, en-US).
export const CAPTIONS = {
  "PG latency": "now — p50 12.3, p95 24.7 (ms)",
  "PG calls in flight": "now — In flight 0",
  "Refusals every 5 s": "now — CIRCUIT_OPEN 0, CONCURRENCY_LIMITED 0",
  "Breaker": "now closed; 3 changes, the last to closed at 23:57",
  "People in line": "now — In line 1,200",
  "Admissions per minute": "now — Passes issued in the last minute 12",
  "Confirms every 5 s": "now — Approved 2, Failed 0, UNKNOWN 0",
};

// After a restart 11m50s ago: nothing kept before then, one change since. The band keeps
// the window's time axis, so it lines up with the charts above it; it is blank before.
const KEPT = FROM + 190_000;
const TRIPPED = KEPT + 400_000;
export const RESTART_TICKS = WINDOW_TICKS;
export const RESTART_BAND = [
  { state: "CLOSED", from: KEPT, to: TRIPPED },
  { state: "OPEN", from: TRIPPED, to: NOW },
];
export const RESTARTED = {
  ...HISTORY, keptSinceMs: KEPT,
  guard: {
    samples: guardSamples.filter((s) => s.atMs >= KEPT).map((s) => ({ ...s, breaker: s.atMs < TRIPPED ? "CLOSED" : "OPEN" })),
    transitions: [{ from: "CLOSED", to: "OPEN", atMs: TRIPPED }],
  },
  drops: { spring: dropSamples.filter((s) => s.atMs >= KEPT) },
};

const EVENT = {
  eventId: "spring", stock: 100, amount: 5000, reserved: 0, sold: 3,
  room: { settings: { gated: true, admitLimit: 2 }, state: "OPEN", version: 1 },
};
export const EVENTS = { events: [EVENT], currency: "KRW" };
export const DROP = {
  ...EVENT, currency: "KRW",
  roomStatus: {
    waiting: 3, prequeued: 0, passesLive: 2, passesIssuedLastMinute: 2, admitLimit: 2,
    admitPerMinute: null, passTtlSeconds: 300, soldOut: false, paused: false, closed: false,
    paymentsPausedUntil: null, version: 1,
  },
};
