//! The operator's setting of a breaker, beside its state machine.

use serde::Serialize;

/// What an operator has set the breaker to: [`BreakerMode::Auto`] is the state machine
/// below; [`BreakerMode::ForcedOpen`] refuses every call; [`BreakerMode::Disabled`] lets
/// every call through and records nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum BreakerMode {
    Auto,
    ForcedOpen,
    Disabled,
}

impl BreakerMode {
    pub const ALL: [Self; 3] = [Self::Auto, Self::ForcedOpen, Self::Disabled];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Auto => "AUTO",
            Self::ForcedOpen => "FORCED_OPEN",
            Self::Disabled => "DISABLED",
        }
    }

    /// The mode a stored or sent name means.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|mode| mode.as_str() == name)
    }
}
