//! What the edge's gate said about a confirm, signed into it (`signing`'s `pass` field,
//! sent in [`PASS_HEADER`]), so that the origin enforces the gate too: a confirm for a
//! gated event is taken only with the pass the edge claimed for that event and order, or
//! as a replay that may create nothing.
//!
//! ```text
//! (empty)                              the edge gated nothing (no eventId, or not gated)
//! claimed {eventId} {room} {orderId}   a live pass of the room, claimed for this order
//! replay-only                          no pass, or payments paused: answer what exists
//! ```

use std::collections::HashSet;

/// The request header the gate's word travels in (signed).
pub const PASS_HEADER: &str = "x-edge-pass";

/// The event ids a `GATED_EVENTS` setting names (comma-separated, blanks ignored): read
/// alike by the edge, whose confirms for them need a pass, and by the origin, which then
/// refuses any of their confirms the edge did not pass.
pub fn gated_events(setting: &str) -> HashSet<String> {
    setting
        .split(',')
        .map(str::trim)
        .filter(|event| !event.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The gate's word on one confirm.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Gate {
    /// Not gated at the edge.
    Ungated,
    /// The pass of room `room` (its identity) for `event_id`, claimed for `order_id`.
    Claimed {
        event_id: String,
        room: u64,
        order_id: String,
    },
    /// Forwarded only to be answered from what exists: the idempotency record, or the
    /// user's payment for the order. Nothing may be created.
    ReplayOnly,
}

const CLAIMED: &str = "claimed";
const REPLAY_ONLY: &str = "replay-only";

impl Gate {
    /// The signed field's text.
    pub fn field(&self) -> String {
        match self {
            Gate::Ungated => String::new(),
            Gate::Claimed {
                event_id,
                room,
                order_id,
            } => format!("{CLAIMED} {event_id} {room} {order_id}"),
            Gate::ReplayOnly => REPLAY_ONLY.to_owned(),
        }
    }

    /// The field as sent; `None` for anything the edge does not write.
    pub fn parse(field: &str) -> Option<Gate> {
        if field.is_empty() {
            return Some(Gate::Ungated);
        }
        if field == REPLAY_ONLY {
            return Some(Gate::ReplayOnly);
        }
        let mut words = field.split(' ');
        let (Some(CLAIMED), Some(event_id), Some(room), Some(order_id), None) = (
            words.next(),
            words.next(),
            words.next(),
            words.next(),
            words.next(),
        ) else {
            return None;
        };
        let plain = |id: &str| crate::confirm::check_event_id(id).is_ok();
        let room = room.parse().ok()?;
        (plain(event_id) && plain(order_id)).then(|| Gate::Claimed {
            event_id: event_id.to_owned(),
            room,
            order_id: order_id.to_owned(),
        })
    }

    /// Whether this word lets a confirm for `event_id` and `order_id` create a payment.
    pub fn admits(&self, event_id: &str, order_id: &str) -> bool {
        matches!(self, Gate::Claimed { event_id: e, order_id: o, .. } if e == event_id && o == order_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_word_reads_back_as_written() {
        let claimed = Gate::Claimed {
            event_id: "drop-1".into(),
            room: 9_007_199_254_740_991,
            order_id: "order_7.b".into(),
        };
        for gate in [Gate::Ungated, Gate::ReplayOnly, claimed] {
            assert_eq!(Gate::parse(&gate.field()), Some(gate.clone()), "{gate:?}");
        }
    }

    #[test]
    fn anything_else_is_not_the_edges_word() {
        for field in [
            "claimed",
            "claimed drop-1 5",
            "claimed drop-1 5 order-1 extra",
            "claimed drop-1 -5 order-1",
            "claimed drop/1 5 order-1",
            "claimed drop-1 5 ..",
            "replay",
            " replay-only",
            "granted drop-1 5 order-1",
        ] {
            assert_eq!(Gate::parse(field), None, "{field}");
        }
    }

    #[test]
    fn gated_events_are_the_named_ids() {
        let named = gated_events(" drop-1, ,drop-2,");
        assert_eq!(named, HashSet::from(["drop-1".into(), "drop-2".into()]));
        assert!(gated_events("").is_empty());
    }

    #[test]
    fn a_pass_admits_only_its_own_event_and_order() {
        let gate = Gate::Claimed {
            event_id: "drop-1".into(),
            room: 5,
            order_id: "order-1".into(),
        };
        assert!(gate.admits("drop-1", "order-1"));
        assert!(!gate.admits("drop-1", "order-2"));
        assert!(!gate.admits("drop-2", "order-1"));
        assert!(!Gate::ReplayOnly.admits("drop-1", "order-1"));
        assert!(!Gate::Ungated.admits("drop-1", "order-1"));
    }
}
