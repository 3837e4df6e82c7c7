//! The queue ticket: what a waiting user carries so that a status poll can be answered
//! without calling the room (`docs/design/queue.md`, "Polls from the snapshot").
//!
//! `qt1.{room}.{seq}.{expires}.{mac}`: the room's identity (a random number drawn when
//! the room was made, so a ticket of a room that was reset names no one), the arrival
//! sequence number, when the ticket stops being honoured (epoch seconds), and an
//! HMAC-SHA256 under the edge's ticket key over all of those *and* the event and the
//! user, which the ticket does not carry: the edge takes them from the path and the
//! verified access token, so another user's ticket, or one for another event, fails the
//! MAC. Nothing in it is secret; it only saves the room the lookup.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use sha2::Sha256;

const PREFIX: &str = "qt1";
/// How long a ticket is honoured after it is issued; entering again issues a new one.
pub const TICKET_TTL_SECS: i64 = 24 * 3600;
/// The longest ticket accepted, well above any this module writes.
const MAX_LEN: usize = 160;

/// What a verified ticket says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Held {
    pub room: u64,
    pub seq: u64,
}

/// Why a ticket is not honoured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TicketError {
    /// Not a ticket, or not one of ours for this event and user.
    Invalid,
    /// Ours, but past its time: enter again for a new one.
    Expired,
}

/// The ticket key derived from `secret` (the edge's `ORIGIN_SIGNING_SECRET` when no
/// `QUEUE_TICKET_SECRET` is set): HMAC-SHA256(secret, label), so the tickets' key is never
/// the signing key itself.
pub fn derive_key(secret: &[u8]) -> [u8; 32] {
    let mut mac =
        Hmac::<Sha256>::new_from_slice(secret).expect("HMAC-SHA256 accepts keys of any length");
    mac.update(b"queue ticket key v1");
    mac.finalize().into_bytes().into()
}

/// The ticket of `user`'s place `seq` in `event`'s room `room`, issued at `now_secs`.
pub fn issue(key: &[u8], event: &str, user: &str, held: Held, now_secs: i64) -> String {
    let expires = now_secs.saturating_add(TICKET_TTL_SECS);
    let body = format!("{PREFIX}.{:x}.{}.{expires}", held.room, held.seq);
    let mac = mac(key, event, user, &body).finalize().into_bytes();
    format!("{body}.{}", URL_SAFE_NO_PAD.encode(mac))
}

/// The place `ticket` holds for `user` in `event`, if it is ours and still honoured at
/// `now_secs`. The MAC is compared in constant time, and checked before anything else
/// it says is believed.
pub fn verify(
    key: &[u8],
    ticket: &str,
    event: &str,
    user: &str,
    now_secs: i64,
) -> Result<Held, TicketError> {
    if ticket.len() > MAX_LEN {
        return Err(TicketError::Invalid);
    }
    let (body, mac_text) = ticket.rsplit_once('.').ok_or(TicketError::Invalid)?;
    let given = URL_SAFE_NO_PAD
        .decode(mac_text)
        .map_err(|_| TicketError::Invalid)?;
    mac(key, event, user, body)
        .verify_slice(&given)
        .map_err(|_| TicketError::Invalid)?;
    let Some([PREFIX, room, seq, expires]) = crate::dotted::fields(body) else {
        return Err(TicketError::Invalid);
    };
    let held = Held {
        room: u64::from_str_radix(room, 16).map_err(|_| TicketError::Invalid)?,
        seq: seq.parse().map_err(|_| TicketError::Invalid)?,
    };
    let expires: i64 = expires.parse().map_err(|_| TicketError::Invalid)?;
    if now_secs >= expires {
        return Err(TicketError::Expired);
    }
    Ok(held)
}

/// The room `ticket` names, read without checking anything else: which room's copy to
/// verify it against, when the event is not known ([`verify`] decides).
pub fn room(ticket: &str) -> Option<u64> {
    let rest = ticket.strip_prefix(PREFIX)?.strip_prefix('.')?;
    let (room, _) = rest.split_once('.')?;
    u64::from_str_radix(room, 16).ok()
}

fn mac(key: &[u8], event: &str, user: &str, body: &str) -> Hmac<Sha256> {
    let mut mac =
        Hmac::<Sha256>::new_from_slice(key).expect("HMAC-SHA256 accepts keys of any length");
    for part in [PREFIX, event, user, body] {
        mac.update(&(part.len() as u64).to_be_bytes());
        mac.update(part.as_bytes());
    }
    mac
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &[u8] = b"queue-ticket-key-for-tests-only-0123456789";
    const HELD: Held = Held {
        room: 0xfeed_beef,
        seq: 41,
    };

    #[test]
    fn a_ticket_holds_its_place_for_its_user_and_event_until_it_expires() {
        let ticket = issue(KEY, "drop", "alice", HELD, 1_000);
        assert_eq!(verify(KEY, &ticket, "drop", "alice", 1_000), Ok(HELD));
        let last = 1_000 + TICKET_TTL_SECS - 1;
        assert_eq!(verify(KEY, &ticket, "drop", "alice", last), Ok(HELD));
        assert_eq!(
            verify(KEY, &ticket, "drop", "alice", last + 1),
            Err(TicketError::Expired)
        );
    }

    #[test]
    fn the_room_is_read_before_anything_is_verified() {
        let ticket = issue(KEY, "drop", "alice", HELD, 1_000);
        assert_eq!(room(&ticket), Some(HELD.room));
        for not_a_ticket in ["", "qt1", "qt1.", "qt1.zz.4.5.mac", "qt2.feedbeef.41.9.mac"] {
            assert_eq!(room(not_a_ticket), None, "{not_a_ticket}");
        }
    }

    #[test]
    fn another_users_another_events_or_an_altered_ticket_is_invalid() {
        let ticket = issue(KEY, "drop", "alice", HELD, 1_000);
        let invalid = Err(TicketError::Invalid);
        assert_eq!(verify(KEY, &ticket, "drop", "bob", 1_000), invalid);
        assert_eq!(verify(KEY, &ticket, "other", "alice", 1_000), invalid);
        assert_eq!(
            verify(b"another key", &ticket, "drop", "alice", 1_000),
            invalid
        );
        let earlier = ticket.replacen(".41.", ".1.", 1);
        assert_eq!(verify(KEY, &earlier, "drop", "alice", 1_000), invalid);
        let later_expiry = ticket.replacen(
            &format!(".{}.", 1_000 + TICKET_TTL_SECS),
            ".99999999999.",
            1,
        );
        assert_eq!(verify(KEY, &later_expiry, "drop", "alice", 1_000), invalid);
        for junk in ["", "qt1", "qt1.a.b.c.d", "....", &"x".repeat(500)] {
            assert_eq!(
                verify(KEY, junk, "drop", "alice", 1_000),
                invalid,
                "{junk:?}"
            );
        }
    }

    #[test]
    fn the_parts_are_bound_by_length_so_no_shift_between_them_verifies() {
        // "ab" + "c" and "a" + "bc" must not sign alike.
        let ticket = issue(KEY, "ab", "c", HELD, 0);
        assert_eq!(
            verify(KEY, &ticket, "a", "bc", 0),
            Err(TicketError::Invalid)
        );
    }
}
