//! "Payments are paused": what the origin says when its PG guard refuses a payment because
//! the breaker is open (forced or not), and how the edge reads it (`docs/design/queue.md`).
//!
//! The origin adds [`PAYMENTS_PAUSED_HEADER`] to that answer: how long, in milliseconds from
//! now, it expects to go on refusing. The edge then holds the gated events' rooms for that
//! long and refuses their confirms without forwarding them. A value is a duration, not a
//! time, so the two parts' clocks need not agree; one past [`MAX_PAUSE_MS`] is read as it,
//! so a wrong value cannot hold the queue for long.

/// The origin's answer header: milliseconds the breaker is expected to stay open.
pub const PAYMENTS_PAUSED_HEADER: &str = "payments-paused-for-ms";

/// The longest pause one answer can ask for.
pub const MAX_PAUSE_MS: u64 = 5 * 60 * 1000;

/// The header's value for a pause of `for_ms` (at least 1).
pub fn header_value(for_ms: u64) -> String {
    for_ms.clamp(1, MAX_PAUSE_MS).to_string()
}

/// The pause a header value asks for: digits only, at least 1, at most [`MAX_PAUSE_MS`];
/// `None` for anything else.
pub fn parse(value: &str) -> Option<u64> {
    if value.is_empty() || value.len() > 12 || !value.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let for_ms: u64 = value.parse().ok()?;
    (for_ms > 0).then(|| for_ms.min(MAX_PAUSE_MS))
}

/// `Retry-After` (whole seconds, at least 1) for a pause with `remaining_ms` left.
pub fn retry_after_seconds(remaining_ms: i64) -> u64 {
    remaining_ms.max(1).unsigned_abs().div_ceil(1000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_is_read_as_written_and_bounded() {
        assert_eq!(parse("9800"), Some(9_800));
        assert_eq!(parse("1"), Some(1));
        assert_eq!(parse(&(MAX_PAUSE_MS * 10).to_string()), Some(MAX_PAUSE_MS));
        assert_eq!(parse(&header_value(0)), Some(1));
        assert_eq!(parse(&header_value(u64::MAX)), Some(MAX_PAUSE_MS));
    }

    #[test]
    fn anything_but_positive_digits_is_no_pause() {
        for value in ["", "0", "-5", "1.5", " 10", "10s", "9999999999999", "１"] {
            assert_eq!(parse(value), None, "{value:?}");
        }
    }

    #[test]
    fn retry_after_rounds_up_to_whole_seconds() {
        assert_eq!(retry_after_seconds(1), 1);
        assert_eq!(retry_after_seconds(1_000), 1);
        assert_eq!(retry_after_seconds(1_001), 2);
        assert_eq!(retry_after_seconds(-20), 1);
    }
}
