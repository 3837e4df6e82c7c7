//! A drop's room, as an operator defines it at run time (`POST /admin/events`): what the
//! origin stores and hands to the edge's room, signed, and the room applies. Absent
//! limits are the edge's defaults (`QUEUE_ADMIT_LIMIT`, `QUEUE_PASS_TTL_SECONDS`).
//!
//! Validation names the field at fault; both parts run it, so nothing the origin would
//! refuse reaches a room, and a room refuses what no origin would send.

use serde::{Deserialize, Serialize};

/// The longest event name shown on the waiting-room page.
pub const MAX_NAME_LEN: usize = 120;
/// The largest limits accepted.
const MAX_ADMIT_LIMIT: u32 = 1_000_000;
const MAX_TTL_SECONDS: u32 = 24 * 3600;

/// The room's settings.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RoomSettings {
    /// Confirms for the event need a live pass.
    #[serde(default)]
    pub gated: bool,
    /// Passes live at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub admit_limit: Option<u32>,
    /// New passes per minute (both limits hold).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub admit_per_minute: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pass_ttl_seconds: Option<u32>,
    /// The opening (epoch ms): the prequeue is drawn then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opens_at: Option<i64>,
    /// From when people may enter the prequeue (epoch ms), before `opensAt`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prequeue_from: Option<i64>,
    /// The event's name, for the page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The arrival shards the event's enters are spread over (`queue::arrivals`): 1, the
    /// room alone, unless given. Fixed from the room's first statement on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shards: Option<u32>,
}

/// What an operator has made of the drop.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum RoomState {
    #[default]
    Open,
    /// No new pass; live ones keep working; everyone keeps their place.
    Paused,
    /// Newcomers are turned away and no pass is issued: the drop is over.
    Closed,
}

impl RoomState {
    pub fn name(self) -> &'static str {
        match self {
            RoomState::Open => "OPEN",
            RoomState::Paused => "PAUSED",
            RoomState::Closed => "CLOSED",
        }
    }

    pub fn from_name(name: &str) -> Option<Self> {
        [RoomState::Open, RoomState::Paused, RoomState::Closed]
            .into_iter()
            .find(|state| state.name() == name)
    }
}

/// What the origin hands the room: its settings and state, versioned — a room applies a
/// version only once, and never an older one after a newer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RoomUpdate {
    pub settings: RoomSettings,
    pub state: RoomState,
    pub version: u64,
}

/// A setting refused, and the field it is about.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct SettingError {
    pub field: &'static str,
    pub message: &'static str,
}

fn refuse(field: &'static str, message: &'static str) -> Result<(), SettingError> {
    Err(SettingError { field, message })
}

impl RoomSettings {
    /// The arrival shards in force.
    pub fn shard_count(&self) -> u32 {
        self.shards.unwrap_or(1)
    }

    /// Whether an operator said anything about the room at all.
    pub fn is_configured(&self) -> bool {
        *self != RoomSettings::default()
    }

    /// Checks the settings as they are to be applied at `now_ms`; `opens_at_stored` is the
    /// opening already in force, which may stay as it is once past.
    pub fn check(&self, now_ms: i64, opens_at_stored: Option<i64>) -> Result<(), SettingError> {
        let positive = |value: Option<u32>, most: u32| value.is_none_or(|v| v > 0 && v <= most);
        if !positive(self.admit_limit, MAX_ADMIT_LIMIT) {
            return refuse("admitLimit", "must be from 1 to 1000000");
        }
        if !positive(self.admit_per_minute, MAX_ADMIT_LIMIT) {
            return refuse("admitPerMinute", "must be from 1 to 1000000");
        }
        if !positive(self.pass_ttl_seconds, MAX_TTL_SECONDS) {
            return refuse("passTtlSeconds", "must be from 1 to 86400");
        }
        if !positive(self.shards, crate::queue::arrivals::MAX_SHARDS) {
            return refuse("shards", "must be from 1 to 256");
        }
        if let Some(name) = &self.name {
            if name.trim().is_empty()
                || name.len() > MAX_NAME_LEN
                || name.chars().any(char::is_control)
            {
                return refuse("name", "must be 1 to 120 bytes of printable text");
            }
        }
        match (self.opens_at, self.prequeue_from) {
            (Some(opens_at), _) if opens_at <= now_ms && opens_at_stored != Some(opens_at) => {
                refuse("opensAt", "must be in the future")
            }
            (None, Some(_)) => refuse("prequeueFrom", "needs an opensAt"),
            (Some(opens_at), Some(from)) if from > opens_at => {
                refuse("prequeueFrom", "must not be after opensAt")
            }
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_000_000;

    fn field(settings: RoomSettings) -> Option<&'static str> {
        settings.check(NOW, None).err().map(|err| err.field)
    }

    #[test]
    fn each_bad_setting_is_refused_by_its_name() {
        let ok = RoomSettings {
            gated: true,
            admit_limit: Some(10),
            admit_per_minute: Some(30),
            pass_ttl_seconds: Some(60),
            opens_at: Some(NOW + 5_000),
            prequeue_from: Some(NOW),
            name: Some("Spring drop".into()),
            shards: Some(8),
        };
        assert_eq!(field(ok.clone()), None);
        for (bad, name) in [
            (
                RoomSettings {
                    admit_limit: Some(0),
                    ..ok.clone()
                },
                "admitLimit",
            ),
            (
                RoomSettings {
                    admit_per_minute: Some(0),
                    ..ok.clone()
                },
                "admitPerMinute",
            ),
            (
                RoomSettings {
                    pass_ttl_seconds: Some(0),
                    ..ok.clone()
                },
                "passTtlSeconds",
            ),
            (
                RoomSettings {
                    opens_at: Some(NOW - 1),
                    ..ok.clone()
                },
                "opensAt",
            ),
            (
                RoomSettings {
                    prequeue_from: Some(NOW + 6_000),
                    ..ok.clone()
                },
                "prequeueFrom",
            ),
            (
                RoomSettings {
                    opens_at: None,
                    ..ok.clone()
                },
                "prequeueFrom",
            ),
            (
                RoomSettings {
                    shards: Some(0),
                    ..ok.clone()
                },
                "shards",
            ),
            (
                RoomSettings {
                    shards: Some(257),
                    ..ok.clone()
                },
                "shards",
            ),
            (
                RoomSettings {
                    name: Some(" ".into()),
                    ..ok.clone()
                },
                "name",
            ),
            (
                RoomSettings {
                    name: Some("a\nb".into()),
                    ..ok.clone()
                },
                "name",
            ),
        ] {
            assert_eq!(field(bad), Some(name));
        }
    }

    #[test]
    fn an_opening_already_in_force_may_stay_once_past() {
        let settings = RoomSettings {
            opens_at: Some(NOW - 1),
            ..RoomSettings::default()
        };
        assert!(settings.check(NOW, Some(NOW - 1)).is_ok());
        assert!(settings.check(NOW, Some(NOW - 2)).is_err());
    }

    #[test]
    fn unknown_fields_are_refused_and_the_wire_names_are_camel_case() {
        let parsed: Result<RoomSettings, _> =
            serde_json::from_str(r#"{"gated":true,"admitLimt":3}"#);
        let err = parsed.err().map(|err| err.to_string()).unwrap_or_default();
        assert!(err.contains("unknown field `admitLimt`"), "{err}");
        let update = RoomUpdate {
            settings: RoomSettings {
                admit_per_minute: Some(30),
                ..RoomSettings::default()
            },
            state: RoomState::Paused,
            version: 3,
        };
        let text = serde_json::to_string(&update).unwrap_or_default();
        assert_eq!(
            text,
            r#"{"settings":{"gated":false,"admitPerMinute":30},"state":"PAUSED","version":3}"#
        );
        assert!(!RoomSettings::default().is_configured());
    }
}
