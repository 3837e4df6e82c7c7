//! What the Worker asks an event's waiting room, and what it answers.

use rules::drop::RoomUpdate;
use rules::paused;
use rules::queue::eta::advice;
use rules::queue::snapshot::Snapshot;
use serde::{Deserialize, Serialize};

/// A call to a waiting room, on behalf of one user.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum RoomRequest {
    /// Join the line (idempotent): answers [`Entered`].
    Enter { user: String },
    /// The user's placement, or `null` when they are not in the line.
    Status { user: String },
    /// Leave the line; everyone behind moves up.
    Leave { user: String },
    /// The payment gate: claim the user's live pass for the payment `order_id`. A pass
    /// backs one payment at a time; the same order may claim it again (a retry).
    ClaimPass { user: String, order_id: String },
    /// The claiming payment failed, so nothing was bought: the pass may back another.
    ReleaseClaim { user: String, order_id: String },
    /// The claim one confirm made afresh for `order_id` came to nothing — the confirm
    /// never went to the origin, or the origin answered it from an order that existed
    /// before — so it is undone: unless another confirm of the order was granted the
    /// pass since, the pass is as it was before (free).
    UntieClaim { user: String, order_id: String },
    /// A payment succeeded: the pass is used up and the user leaves the line.
    Consume { user: String },
    /// The origin answered a confirm for this event `SOLD_OUT`: the line stops growing
    /// (idempotent; stored).
    MarkSoldOut,
    /// The origin's PG guard refuses payments for `for_ms` more (its breaker is open): the
    /// room holds that long (stored; a shorter pause than the one in force changes nothing).
    PausePayments { for_ms: u64 },
    /// The line as a `rules::queue::snapshot::Snapshot`, encoded, in the answer's body.
    Snapshot,
    /// The origin's settings for the drop (signed by it; checked by the Worker and the
    /// room): applied at once unless an update as new or newer was. Answers [`Report`].
    Configure { update: RoomUpdate },
    /// The room's state for operators: answers [`Report`].
    Report,
    /// The draw for audit: answers [`DrawList`], `limit` people from place `from`.
    DrawList { from: u64, limit: u32 },
    /// From one of the event's arrival shards (`crate::arrivals`): the arrival numbers of
    /// its people who `left` are taken out of the line, then `users` enter in this order,
    /// each answered as a lone enter would be ([`Batched`]).
    Batch { users: Vec<String>, left: Vec<u64> },
}

/// The answer to [`RoomRequest::Batch`]: each user's, in the batch's order.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Batched {
    pub entered: Vec<Entered>,
}

/// The answer to [`RoomRequest::DrawList`]: the seed, when, how many, and a page of the
/// people in their drawn order (empty before the draw).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DrawList {
    pub draw_seed: Option<String>,
    pub drawn_at: Option<i64>,
    pub drawn: Option<i64>,
    /// The draw runs still: the list is whom it placed so far.
    pub drawing: bool,
    /// The place (0: the first drawn) of `people[0]`.
    pub from: u64,
    pub people: Vec<String>,
}

/// The answer to [`RoomRequest::Configure`].
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(
    tag = "outcome",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum Configured {
    /// Applied: the room as it is now.
    Applied(Report),
    /// An update as new or newer was applied before: this one changes nothing.
    Stale { version: u64 },
    /// Refused, naming the field.
    Refused { field: String, message: String },
}

/// An enter before the room takes anyone: when it opens, and from when its prequeue does.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NotOpen {
    pub opens_at: i64,
    pub prequeue_from: Option<i64>,
}

/// The room for the people running the drop.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// In line without a live pass.
    pub waiting: u64,
    pub prequeued: u64,
    pub passes_live: u64,
    pub passes_issued_last_minute: u64,
    /// Admissions per minute lately, if known.
    pub admissions_per_minute: Option<f64>,
    pub sold_out: bool,
    /// Held by an operator.
    pub paused: bool,
    pub closed: bool,
    /// Payments are paused (the origin's PG is down) until then: nobody new is admitted.
    pub payments_paused_until: Option<i64>,
    /// The limits in force: passes live at once, new passes a minute (absent: no limit),
    /// and how long a pass lives.
    pub admit_limit: u32,
    pub admit_per_minute: Option<u32>,
    pub pass_ttl_seconds: u64,
    pub opens_at: Option<i64>,
    /// The draw's seed (hex) once it began, when, and how many it placed so far.
    pub draw_seed: Option<String>,
    pub drawn_at: Option<i64>,
    pub drawn: Option<i64>,
    /// The draw runs still, in batches: the prequeue is whom it has still to place.
    pub drawing: bool,
    /// The batches it took so far (absent before it, and for a draw made in one call).
    pub draw_batches: Option<u64>,
    /// Who came while the draw ran, to be placed behind it.
    pub late_arrivals: u64,
    /// The update in force: its version (0: none, the defaults).
    pub version: u64,
}

/// The answer to [`RoomRequest::Enter`]: the placement, and what the Worker signs into
/// the user's ticket — the arrival number (absent when turned away) and the room's
/// identity.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Entered {
    pub placement: Placement,
    pub seq: Option<u64>,
    pub room: u64,
    /// Set when the room takes nobody yet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_open: Option<NotOpen>,
}

/// Where a user stands in a room: `QueueStatus` of API.md without the event id, which
/// the Worker adds (a room does not know its own name). Once the event is sold out,
/// `soldOut` is `true`; a newcomer turned away then has position 0 (not in the line).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Placement {
    /// People ahead + 1; 0 when not in the line.
    pub position: u64,
    pub admitted: bool,
    /// Epoch milliseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pass_expires_at: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub eta_seconds: Option<u64>,
    pub poll_after_seconds: u64,
    /// Absent unless sold out, so other queues keep their shape.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sold_out: bool,
    /// Payments are paused (the origin cannot take them): places are kept, live passes
    /// extended, and nobody new is admitted until `pausedUntil`. Absent otherwise.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub paused: bool,
    /// When the pause is expected to end (epoch ms); absent while an operator holds the
    /// room (`paused` without a time).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused_until: Option<i64>,
    /// In the prequeue: no position until the draw at `opensAt`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub prequeued: bool,
    /// The draw runs: no position until it places this user — the prequeued in the drawn
    /// order, then who came while it ran. Absent otherwise.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub drawing: bool,
    /// The opening (epoch ms), while it is ahead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opens_at: Option<i64>,
    /// The drop is over: newcomers are turned away and no pass is issued.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub closed: bool,
    /// The event's name, where an operator gave one (on answers from the room).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_name: Option<String>,
}

/// The answer to [`RoomRequest::ClaimPass`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "claim", rename_all = "camelCase")]
pub enum PassClaim {
    /// The pass is live and now backs this order; `room` is the room's identity, signed
    /// into the confirm for the origin (`rules::pass`). `fresh`: this very call tied the
    /// pass to the order (no confirm of the order held it before).
    Granted {
        room: u64,
        #[serde(default)]
        fresh: bool,
    },
    /// The drop opens at `opens_at` (epoch ms): no pass is valid before.
    NotOpen { opens_at: i64 },
    /// No live pass: not admitted, expired, or never in the line.
    NoPass,
    /// The pass backs another order that has not failed.
    InUse,
    /// Payments are paused until `until` (epoch ms): no confirm goes to the origin.
    Paused { until: i64 },
}

/// What every placement is read against: the line's state around one user.
#[derive(Debug, Clone, Copy)]
pub struct LineState {
    pub admit_limit: u32,
    pub sold_out: bool,
    pub paused_until: Option<i64>,
    /// Held by an operator.
    pub held: bool,
    pub closed: bool,
    pub rate_per_second: Option<f64>,
}

impl LineState {
    /// The line's state as a room's snapshot shows it.
    pub fn of(snapshot: &Snapshot) -> Self {
        Self {
            admit_limit: snapshot.admit_limit,
            sold_out: snapshot.sold_out,
            paused_until: snapshot.paused_until,
            held: snapshot.held,
            closed: snapshot.closed,
            rate_per_second: snapshot.rate_per_second,
        }
    }
}

impl Placement {
    /// The answer for a user at `position` (0: not in the line), with the wait estimate
    /// and poll interval the line's state calls for at `now`.
    pub fn of(
        position: u64,
        admitted: bool,
        pass_expires_at: Option<i64>,
        line: LineState,
        now: i64,
    ) -> Self {
        let advice = advice(
            position,
            line.admit_limit,
            admitted,
            line.sold_out,
            line.rate_per_second,
        );
        // While paused, the next news is the pause's end.
        let poll_after_seconds = line
            .paused_until
            .map_or(advice.poll_after_seconds, |until| {
                paused::retry_after_seconds(until - now).min(advice.poll_after_seconds.max(1))
            });
        Placement {
            position,
            admitted,
            pass_expires_at,
            eta_seconds: advice.eta_seconds,
            poll_after_seconds,
            sold_out: line.sold_out,
            paused: line.paused_until.is_some() || line.held,
            paused_until: line.paused_until,
            prequeued: false,
            drawing: false,
            opens_at: None,
            closed: line.closed,
            event_name: None,
        }
    }

    /// A prequeued user's answer: no position until the draw at `opens_at`, polled again
    /// by then (at most a minute from `now`).
    pub fn prequeued(opens_at: i64, now: i64) -> Self {
        let until = u64::try_from((opens_at - now).max(0) / 1000).unwrap_or(0);
        Placement {
            position: 0,
            admitted: false,
            pass_expires_at: None,
            eta_seconds: None,
            poll_after_seconds: until.clamp(1, 60),
            sold_out: false,
            paused: false,
            paused_until: None,
            prequeued: true,
            drawing: false,
            opens_at: Some(opens_at),
            closed: false,
            event_name: None,
        }
    }

    /// The answer while the draw that opened at `opens_at` runs, to someone it has not
    /// placed yet: `prequeued` if they were drawn, else they came while it ran.
    pub fn drawing(prequeued: bool, opens_at: i64) -> Self {
        Placement {
            prequeued,
            drawing: true,
            poll_after_seconds: DRAWING_POLL_SECONDS,
            ..Placement::prequeued(opens_at, opens_at)
        }
    }
}

/// How soon someone waiting for the draw to place them polls again: batches of ten
/// thousand take about a second each (`docs/draw-at-a-million.md`).
const DRAWING_POLL_SECONDS: u64 = 3;

/// `QueueStatus` of API.md.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QueueStatus<'a> {
    pub event_id: &'a str,
    #[serde(flatten)]
    pub placement: Placement,
    /// On an enter: the ticket to send back on every poll (`Queue-Ticket`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ticket: Option<String>,
    /// On a poll answered from the room's snapshot: the epoch ms it is exact at.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub as_of: Option<i64>,
}
