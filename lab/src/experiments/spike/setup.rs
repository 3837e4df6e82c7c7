//! What the spike compares — the PG (one that saturates, one that answers at once) and
//! flow control (off, on) — and the setup as the report states it.

use serde_json::{json, Map, Value};

use super::{CLIENTS, EVENT, HOLD, RAMP, REQUEST_TIMEOUT, STOCK};

/// The saturating PG: confirms processed at once, and how many may wait for a slot.
/// With 150 clients it is overloaded without control: ~20 confirms/s is all it takes.
const PG_CAPACITY: u32 = 10;
/// Short enough that the worst wait stays under the origin's 3 s gateway timeout: the
/// last in the line waits two rounds of at most 800 ms, then is processed in at most
/// 800 ms (2.4 s), so a full line is refused (429, FAILED) and never times out
/// (UNKNOWN).
const PG_LINE: u32 = 20;
/// Each confirm holds its slot 200 ms + 0–600 ms: a real PG's 200–800 ms.
const PG_DELAY_MS: u64 = 200;
const PG_JITTER_MS: u64 = 600;
/// With control on, the room's new passes a minute: a little under what the PG takes,
/// `PG_CAPACITY` / 0.5 s mean processing = 20/s, 1,200 a minute.
const ROOM_ADMIT_PER_MINUTE: u32 = 1_100;
/// And its passes live at once. A minute's budget holds for any 60 s, so over a 30 s
/// run it is the count that paces: a pass backs one confirm at a time, so with as many
/// as the PG has slots no confirm waits in its line.
const ROOM_ADMIT_LIMIT: u32 = PG_CAPACITY;

/// What the simulated PG does.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Pg {
    Saturating,
    Instant,
}

impl Pg {
    /// In the report's order.
    pub(super) const ALL: [Pg; 2] = [Pg::Saturating, Pg::Instant];

    /// The caption of its table.
    pub(super) fn caption(self) -> String {
        match self {
            Pg::Saturating => format!(
                "PG that saturates — capacity {PG_CAPACITY}, a line of {PG_LINE}, \
                 {PG_DELAY_MS}–{} ms a confirm",
                PG_DELAY_MS + PG_JITTER_MS
            ),
            Pg::Instant => "instant PG — the edge's own overhead".into(),
        }
    }

    /// Short, for the chart and the notes.
    pub(super) fn name(self) -> &'static str {
        match self {
            Pg::Saturating => "saturating PG",
            Pg::Instant => "instant PG",
        }
    }

    /// The simulator's faults (`PUT /admin/faults`).
    pub(super) fn faults(self) -> Value {
        match self {
            Pg::Saturating => json!({
                "mode": "NORMAL",
                "capacity": PG_CAPACITY,
                "lineLimit": PG_LINE,
                "delayMs": PG_DELAY_MS,
                "jitterMs": PG_JITTER_MS,
            }),
            Pg::Instant => json!({ "mode": "NORMAL" }),
        }
    }

    /// The room's settings when control paces it to the PG, handed to the edge by the
    /// origin (`POST /admin/events`); `None`: the edge's defaults.
    pub(super) fn room(self) -> Option<Map<String, Value>> {
        match self {
            Pg::Saturating => {
                let room = json!({
                    "gated": true,
                    "admitLimit": ROOM_ADMIT_LIMIT,
                    "admitPerMinute": ROOM_ADMIT_PER_MINUTE,
                });
                room.as_object().cloned()
            }
            Pg::Instant => None,
        }
    }
}

/// One side of the comparison: the edge's and the origin's variables, and whether the
/// room is paced to the PG.
pub(super) struct Control {
    pub(super) label: &'static str,
    pub(super) edge: Vec<(&'static str, String)>,
    pub(super) origin: Vec<(&'static str, String)>,
    pub(super) paces_room: bool,
}

pub(super) fn controls() -> [Control; 2] {
    [
        Control {
            label: "off",
            // The event's queue exists only if defined: here by `GATED_EVENTS`, with
            // everyone admitted at once, so its gate never holds anyone back.
            edge: vec![
                ("RATE_LIMITED_ROUTES", "none".into()),
                ("GATED_EVENTS", EVENT.into()),
                ("QUEUE_ADMIT_LIMIT", "1000000".into()),
            ],
            // The seed's "before": a connection waited for 30 s, threads unbounded. The
            // PG guard stays at its defaults, as in production: once its breaker opens,
            // the edge pauses the room's payments (503 PAYMENTS_PAUSED).
            origin: vec![
                ("DB_ACQUIRE_TIMEOUT_MS", "30000".into()),
                ("ORIGIN_MAX_CONCURRENT_REQUESTS", "100000".into()),
            ],
            paces_room: false,
        },
        Control {
            label: "on",
            // Everything else at the project's defaults.
            edge: vec![("GATED_EVENTS", EVENT.into())],
            origin: Vec::new(),
            paces_room: true,
        },
    ]
}

pub(super) fn setup() -> String {
    let seconds = (RAMP + HOLD).as_secs();
    let slowest = PG_DELAY_MS + PG_JITTER_MS;
    format!(
        "{CLIENTS} clients start evenly over {ramp} s and run until {seconds} s ({hold} s at \
         {CLIENTS}); then no new request is sent and those in flight are awaited. Each client \
         logs in once (`POST /auth/login`, the origin checks the argon2id hash), then loops: \
         `POST /queue/{EVENT}/enter`, `GET /queue/{EVENT}/status` every `pollAfterSeconds` \
         until admitted (with the `Queue-Ticket` entering answered, as the waiting-room page \
         polls: answered from the room's snapshot), `POST /payments/confirm` (5,000 won, `eventId` {EVENT}, its own \
         `Idempotency-Key`). It waits only where the edge says so: `Retry-After` on a 429 or \
         503 (then repeats the step; a confirm with the same key), `pollAfterSeconds` while \
         queued, 1 s after any other failure. The event's stock at the origin ({STOCK}) \
         never runs out. A fresh stack, edge and {CLIENTS} users per run.\n\n\
         **Two PGs.** *A PG that saturates*: the simulator processes at most {PG_CAPACITY} \
         confirms at once (`capacity`), each for {PG_DELAY_MS} ms plus 0–{PG_JITTER_MS} ms \
         (`delayMs`, `jitterMs`), so it takes about {rate} confirms/s; up to {PG_LINE} more \
         wait for a slot (`lineLimit`), and past them it answers 429 `TOO_MANY_REQUESTS` at \
         once, processing nothing (the simulator's own answer: Toss documents no rate-limit \
         status). The line is that short so that the last in it is done within \
         {worst} ms (it waits {rounds} rounds of at most {slowest} ms, then takes at most \
         {slowest} ms itself), under the origin's 3 s gateway timeout: the overloaded PG shows as 429s, which the origin records FAILED \
         (`GATEWAY_REJECTED`, nothing charged), not as UNKNOWNs. *An instant PG* (simulator \
         `NORMAL`) shows the edge's own overhead.\n\n\
         **Flow control off**: edge `RATE_LIMITED_ROUTES=none`, `GATED_EVENTS={EVENT}` \
         (an event's queue exists only once defined) with `QUEUE_ADMIT_LIMIT=1000000` \
         (everyone admitted at once, so the gate holds nobody back); origin \
         `DB_ACQUIRE_TIMEOUT_MS=30000` and `ORIGIN_MAX_CONCURRENT_REQUESTS=100000` (the \
         seed's 30 s connection wait and unbounded threads). **On**: the project's defaults — \
         `RATE_LIMIT_USER=5/1s` and `RATE_LIMIT_GLOBAL=100/1s` on `POST /payments/confirm` \
         and `POST /queue/*/enter`, `GATED_EVENTS={EVENT}` with `QUEUE_ADMIT_LIMIT=100`, and \
         the origin's fail-fast defaults (`DB_ACQUIRE_TIMEOUT_MS=3000`, \
         `ORIGIN_MAX_CONCURRENT_REQUESTS=256`); before the saturating PG, the room is also \
         paced to it, as an operator sets a drop's room at run time (`POST /admin/events`, \
         handed to the edge): `admitPerMinute` {ROOM_ADMIT_PER_MINUTE}, a little under the \
         PG's {per_minute} a minute, and `admitLimit` {ROOM_ADMIT_LIMIT}, its slots — a \
         minute's budget holds for any 60 s, so in a {seconds} s run the passes live at once \
         are what paces, and a pass backs one confirm at a time, so none waits in the PG's \
         line. The PG guard is at its defaults in both (timeout 3 s, bulkhead 50, the \
         breaker: a call is slow from 1 s, and a 429 counts against it); once its breaker \
         opens, the edge pauses the gated room's payments (503 `PAYMENTS_PAUSED`, counted \
         as 5xx) until it closes.\n\n\
         Success = a 2xx answer, but a confirm succeeds only when APPROVED: a 201 FAILED or \
         a 202 UNKNOWN is a 2xx that sold nothing. Success p95 is over the successful \
         requests of the whole run (logins, enters and polls with a 2xx, approved \
         confirms); approved-confirm p95 over the approved confirms alone. Without queueing \
         at the PG an approved confirm takes the PG's own {PG_DELAY_MS}–{slowest} ms (p95 \
         {p95_own} ms) plus the edge's time, and with control off none takes the PG more \
         than {worst} ms, so on/off cannot go below about {p95_own}/{worst} unless the \
         edge's own time adds more to off than to on: the 0.3× check is near what this \
         PG allows. The PG's own p95 service time is measured, not assumed: the \
         simulator's `serviceP95Ms`, over the time each confirm held one of its slots, its \
         line left out (`GET /admin/capacity`). *PG 429s*: \
         the simulator's count of confirms refused at a full line (`GET /admin/capacity`); \
         *FAILED*: confirms answered 201 FAILED for a PG 429 (`GATEWAY_REJECTED`) and those \
         the origin's guard refused unsent (`CIRCUIT_OPEN`, `BULKHEAD_FULL`, \
         `RATE_LIMITED`). 429s at the edge (`RATE_LIMITED`, `QUEUE_PASS_REQUIRED`) are \
         shed, counted apart; *refused from memory* is how many of them the edge's isolate \
         refused without any object call, as its `/healthz` counts them, and their share of \
         every request sent; the 5xx share is of every request sent; \"no answer\" is a \
         refused connection or a client timeout ({timeout} s).",
        ramp = RAMP.as_secs(),
        hold = HOLD.as_secs(),
        timeout = REQUEST_TIMEOUT.as_secs(),
        rate = u64::from(PG_CAPACITY) * 1000 / (PG_DELAY_MS + PG_JITTER_MS / 2),
        per_minute = u64::from(PG_CAPACITY) * 60_000 / (PG_DELAY_MS + PG_JITTER_MS / 2),
        rounds = PG_LINE.div_ceil(PG_CAPACITY),
        worst = (u64::from(PG_LINE.div_ceil(PG_CAPACITY)) + 1) * slowest,
        p95_own = PG_DELAY_MS + PG_JITTER_MS * 95 / 100,
    )
}
