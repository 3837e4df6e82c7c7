//! Fault settings: how the simulated gateway misbehaves right now.
//!
//! `PUT /admin/faults` replaces the whole setting at once (the body is
//! validated in [`routes`](crate::routes)); the confirm handler reads a copy
//! per request and the serve loop acts on `REFUSE_CONNECTIONS`. Plain data:
//! the timing and the rolls happen in the callers.
//!
//! The modes act on confirms; of them only `ERROR_500` (and the closed port of
//! `REFUSE_CONNECTIONS`) acts on cancels.
//!
//! `capacity` and `lineLimit` make the gateway saturate as a real one does
//! ([`crate::capacity`]): at most `capacity` confirms are processed at once, and up to
//! `lineLimit` wait, first come, first served, for a slot; a confirm that finds the
//! line full is refused at once with 429 `TOO_MANY_REQUESTS` — the simulator's own
//! answer, Toss documents no rate-limit status — before anything is recorded. With a
//! capacity set, processing takes time in `NORMAL` too: `delayMs` plus a random
//! 0..=`jitterMs`, as in `DELAY`, the two modes then alike. A confirm holds its slot
//! until its mode is done with it: `NORMAL` and `DELAY` until it is processed, the
//! `HANG` modes through their hold, the others while they answer. Look-ups and cancels
//! are never capped.

use std::num::NonZeroU32;
use std::ops::RangeInclusive;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::capacity::Limits;

/// The longest any fault may hold a request or keep the port closed:
/// `delayMs`, `jitterMs` and `durationMs` are capped here, and a HANG mode
/// without `delayMs` holds this long.
pub const MAX_HOLD_MS: u64 = 10 * 60 * 1000;
/// The largest `capacity` and `lineLimit` accepted: far beyond what a test loads, and
/// small enough that a line of waiting connections stays affordable.
pub const MAX_CAPACITY: u32 = 10_000;
pub const MAX_LINE: u32 = 10_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum FaultMode {
    /// Process at once; with a `capacity`, as `DELAY` does.
    Normal,
    /// Wait `delayMs` plus a random 0..=`jitterMs`, then process and answer.
    Delay,
    /// Record the confirm as received, never process it, hold the
    /// connection, then drop it without an answer.
    HangBeforeProcessing,
    /// Process at once, then hold the answer.
    HangAfterProcessing,
    /// Record the confirm as received, never process it, answer 500
    /// `FAILED_INTERNAL_SYSTEM_PROCESSING`.
    #[serde(rename = "ERROR_500")]
    Error500,
    /// Process the confirm (a charge is made and its webhook sent), then
    /// answer 500 `FAILED_INTERNAL_SYSTEM_PROCESSING` all the same.
    #[serde(rename = "ERROR_500_AFTER_PROCESSING")]
    Error500AfterProcessing,
    /// Close the listening socket and every open connection for
    /// `durationMs`, then listen again in `NORMAL` mode.
    RefuseConnections,
}

/// The settings in force; serializes as the `/admin/faults` answer, every
/// field present.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Faults {
    pub mode: FaultMode,
    pub delay_ms: u64,
    pub jitter_ms: u64,
    /// Probability, 0.0 to 1.0, that a newly processed confirm is declined.
    pub decline_rate: f64,
    /// Confirms let through in any one-second window; `None`: no cap.
    pub max_per_second: Option<NonZeroU32>,
    /// Confirms processed at once, 1 to [`MAX_CAPACITY`]; `None`: no cap.
    pub capacity: Option<NonZeroU32>,
    /// Confirms that may wait for a slot, 0 to [`MAX_LINE`]; `Some` exactly when
    /// `capacity` is.
    pub line_limit: Option<u32>,
    /// `false`: a PG that ignores `Idempotency-Key` and never refuses a
    /// repeat: every confirm is a new charge, repeats included, and a cancel
    /// takes back every charge of the order.
    pub idempotent: bool,
    /// How long `REFUSE_CONNECTIONS` lasts; `Some` exactly in that mode.
    pub duration_ms: Option<u64>,
    /// `false`: what is decided and cancelled meanwhile sends no webhook
    /// (when a webhook URL is configured at all).
    pub webhooks: bool,
    /// `false`: a look-up answers `NOT_FOUND_PAYMENT` for a confirm received and
    /// not decided yet (`IN_PROGRESS`) — a PG whose status lags its processing, so
    /// a stalled request can be approved after it was reported unknown.
    pub pending_visible: bool,
    /// How long a look-up waits before it answers, in any mode: a PG slow to
    /// say what happened.
    pub status_delay_ms: u64,
    /// A Toss error code every confirm answers, as if each carried it in
    /// `TossPayments-Test-Code` (so ignored with a live key); nothing is
    /// charged. For clients that never send the header.
    pub test_code: Option<String>,
    /// Added to a confirm's amount to make the approval's `totalAmount` (and
    /// the amount charged), never below 0: a PG approving another amount than
    /// asked.
    pub approved_amount_delta: i64,
}

impl Default for Faults {
    fn default() -> Self {
        Self {
            mode: FaultMode::Normal,
            delay_ms: 0,
            jitter_ms: 0,
            decline_rate: 0.0,
            max_per_second: None,
            capacity: None,
            line_limit: None,
            idempotent: true,
            duration_ms: None,
            webhooks: true,
            pending_visible: true,
            status_delay_ms: 0,
            test_code: None,
            approved_amount_delta: 0,
        }
    }
}

impl Faults {
    /// How long the HANG modes hold: `delayMs` when set, else the cap.
    pub fn hold(&self) -> Duration {
        let millis = if self.delay_ms > 0 {
            self.delay_ms
        } else {
            MAX_HOLD_MS
        };
        Duration::from_millis(millis)
    }

    /// The cap in force, if any.
    pub fn limits(&self) -> Option<Limits> {
        self.capacity.map(|slots| Limits {
            slots,
            line: self.line_limit.unwrap_or(0),
        })
    }

    /// How long processing a confirm takes, in ms, to be rolled in this range: `DELAY`'s
    /// wait, and `NORMAL`'s with a capacity (also in `REFUSE_CONNECTIONS`, which serves
    /// what got in as `NORMAL`). `None`: at once, or as the mode says.
    pub fn processing_ms(&self) -> Option<RangeInclusive<u64>> {
        let takes_time = match self.mode {
            FaultMode::Delay => true,
            FaultMode::Normal | FaultMode::RefuseConnections => self.capacity.is_some(),
            _ => false,
        };
        takes_time.then(|| self.delay_ms..=self.delay_ms.saturating_add(self.jitter_ms))
    }

    /// How long the port stays closed, in `REFUSE_CONNECTIONS` mode only.
    pub fn refusal(&self) -> Option<Duration> {
        match self.mode {
            FaultMode::RefuseConnections => self.duration_ms.map(Duration::from_millis),
            _ => None,
        }
    }

    /// The settings once a refusal is over: `NORMAL`, everything else kept,
    /// so a decline rate or a rate cap set with the refusal outlives it.
    pub fn after_refusal(&self) -> Self {
        Self {
            mode: FaultMode::Normal,
            duration_ms: None,
            ..self.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_is_normal_idempotent_uncapped_and_sending_webhooks() {
        let faults = Faults::default();
        assert_eq!(faults.mode, FaultMode::Normal);
        assert!(faults.idempotent);
        assert!(faults.webhooks);
        assert_eq!(faults.test_code, None);
        assert_eq!(faults.approved_amount_delta, 0);
        assert_eq!(faults.max_per_second, None);
        assert_eq!(faults.limits(), None);
        assert_eq!(faults.processing_ms(), None);
        assert_eq!(faults.refusal(), None);
    }

    #[test]
    fn with_a_capacity_normal_takes_delay_ms_plus_jitter_as_delay_does() {
        let delay = Faults {
            mode: FaultMode::Delay,
            delay_ms: 200,
            jitter_ms: 600,
            ..Faults::default()
        };
        assert_eq!(delay.processing_ms(), Some(200..=800));
        let uncapped = Faults {
            mode: FaultMode::Normal,
            ..delay.clone()
        };
        assert_eq!(uncapped.processing_ms(), None, "NORMAL is at once");
        let capped = Faults {
            capacity: NonZeroU32::new(10),
            line_limit: Some(20),
            ..uncapped
        };
        assert_eq!(capped.processing_ms(), Some(200..=800));
        assert_eq!(
            capped.limits(),
            Some(Limits {
                slots: NonZeroU32::new(10).expect("not zero"),
                line: 20
            })
        );
        let hanging = Faults {
            mode: FaultMode::HangAfterProcessing,
            ..capped
        };
        assert_eq!(hanging.processing_ms(), None, "the hold is the mode's own");
    }

    #[test]
    fn hold_is_delay_ms_when_set_else_the_cap() {
        let held = Faults {
            mode: FaultMode::HangAfterProcessing,
            delay_ms: 250,
            ..Faults::default()
        };
        assert_eq!(held.hold(), Duration::from_millis(250));
        let capped = Faults {
            delay_ms: 0,
            ..held
        };
        assert_eq!(capped.hold(), Duration::from_millis(MAX_HOLD_MS));
    }

    #[test]
    fn after_refusal_is_normal_and_keeps_the_other_settings() {
        let refusing = Faults {
            mode: FaultMode::RefuseConnections,
            duration_ms: Some(1500),
            decline_rate: 0.5,
            max_per_second: NonZeroU32::new(3),
            capacity: NonZeroU32::new(4),
            line_limit: Some(8),
            idempotent: false,
            webhooks: false,
            test_code: Some("INVALID_CARD_EXPIRATION".into()),
            approved_amount_delta: -1,
            ..Faults::default()
        };
        assert_eq!(refusing.refusal(), Some(Duration::from_millis(1500)));

        let after = refusing.after_refusal();
        assert_eq!(after.mode, FaultMode::Normal);
        assert_eq!(after.duration_ms, None);
        assert_eq!(after.refusal(), None);
        assert_eq!(after.decline_rate, 0.5);
        assert_eq!(after.max_per_second, NonZeroU32::new(3));
        assert_eq!(
            (after.capacity, after.line_limit),
            (NonZeroU32::new(4), Some(8))
        );
        assert!(!after.idempotent);
        assert!(!after.webhooks);
        assert_eq!(after.test_code.as_deref(), Some("INVALID_CARD_EXPIRATION"));
        assert_eq!(after.approved_amount_delta, -1);
    }

    #[test]
    fn serializes_every_field_in_camel_case() {
        let json = serde_json::to_value(Faults {
            mode: FaultMode::Error500,
            ..Faults::default()
        })
        .expect("serializable");
        assert_eq!(
            json,
            serde_json::json!({
                "mode": "ERROR_500",
                "delayMs": 0,
                "jitterMs": 0,
                "declineRate": 0.0,
                "maxPerSecond": null,
                "capacity": null,
                "lineLimit": null,
                "idempotent": true,
                "durationMs": null,
                "webhooks": true,
                "pendingVisible": true,
                "statusDelayMs": 0,
                "testCode": null,
                "approvedAmountDelta": 0,
            })
        );
    }
}
