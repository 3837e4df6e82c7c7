//! Fault settings: how the simulated gateway misbehaves right now.
//!
//! `PUT /admin/faults` replaces the whole setting at once (the body is
//! validated in [`routes`](crate::routes)); the confirm handler reads a copy
//! per request and the serve loop acts on `REFUSE_CONNECTIONS`. Plain data:
//! the timing and the rolls happen in the callers.

use std::num::NonZeroU32;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// The longest any fault may hold a request or keep the port closed:
/// `delayMs`, `jitterMs` and `durationMs` are capped here, and a HANG mode
/// without `delayMs` holds this long.
pub const MAX_HOLD_MS: u64 = 10 * 60 * 1000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum FaultMode {
    /// Process at once.
    Normal,
    /// Wait `delayMs` plus a random 0..=`jitterMs`, then process and answer.
    Delay,
    /// Record the confirm as received, never process it, hold the
    /// connection, then drop it without an answer.
    HangBeforeProcessing,
    /// Process at once, then hold the answer.
    HangAfterProcessing,
    /// Record the confirm as received, never process it, answer 500.
    #[serde(rename = "ERROR_500")]
    Error500,
    /// Close the listening socket and every open connection for
    /// `durationMs`, then listen again in `NORMAL` mode.
    RefuseConnections,
}

/// The settings in force; serializes as the `/admin/faults` answer, every
/// field present.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Faults {
    pub mode: FaultMode,
    pub delay_ms: u64,
    pub jitter_ms: u64,
    /// Probability, 0.0 to 1.0, that a newly processed confirm is declined.
    pub decline_rate: f64,
    /// Confirms let through in any one-second window; `None`: no cap.
    pub max_per_second: Option<NonZeroU32>,
    /// `false`: every confirm is a new charge, repeats included.
    pub idempotent: bool,
    /// How long `REFUSE_CONNECTIONS` lasts; `Some` exactly in that mode.
    pub duration_ms: Option<u64>,
    /// `false`: confirms received and cancels made meanwhile are never
    /// called back (when a callback URL is configured at all).
    pub callbacks: bool,
    /// `false`: the status query answers NOT_FOUND for a confirm received and not
    /// decided yet — a PG whose status lags its processing, so a stalled request can
    /// be approved after it was reported unknown.
    pub pending_visible: bool,
    /// How long the status query waits before it answers, in any mode: a PG slow to
    /// say what happened.
    pub status_delay_ms: u64,
}

impl Default for Faults {
    fn default() -> Self {
        Self {
            mode: FaultMode::Normal,
            delay_ms: 0,
            jitter_ms: 0,
            decline_rate: 0.0,
            max_per_second: None,
            idempotent: true,
            duration_ms: None,
            callbacks: true,
            pending_visible: true,
            status_delay_ms: 0,
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

    /// How long the port stays closed, in `REFUSE_CONNECTIONS` mode only.
    pub fn refusal(&self) -> Option<Duration> {
        match self.mode {
            FaultMode::RefuseConnections => self.duration_ms.map(Duration::from_millis),
            _ => None,
        }
    }

    /// The settings once a refusal is over: `NORMAL`, everything else kept,
    /// so a decline rate or a rate cap set with the refusal outlives it.
    pub fn after_refusal(self) -> Self {
        Self {
            mode: FaultMode::Normal,
            duration_ms: None,
            ..self
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_is_normal_idempotent_uncapped_and_calling_back() {
        let faults = Faults::default();
        assert_eq!(faults.mode, FaultMode::Normal);
        assert!(faults.idempotent);
        assert!(faults.callbacks);
        assert_eq!(faults.max_per_second, None);
        assert_eq!(faults.refusal(), None);
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
            idempotent: false,
            callbacks: false,
            ..Faults::default()
        };
        assert_eq!(refusing.refusal(), Some(Duration::from_millis(1500)));

        let after = refusing.after_refusal();
        assert_eq!(after.mode, FaultMode::Normal);
        assert_eq!(after.duration_ms, None);
        assert_eq!(after.refusal(), None);
        assert_eq!(after.decline_rate, 0.5);
        assert_eq!(after.max_per_second, NonZeroU32::new(3));
        assert!(!after.idempotent);
        assert!(!after.callbacks);
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
                "idempotent": true,
                "durationMs": null,
                "callbacks": true,
                "pendingVisible": true,
                "statusDelayMs": 0,
            })
        );
    }
}
