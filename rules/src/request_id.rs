//! Request ids: the edge gives every request one — the client's own `X-Request-Id` when
//! it is well formed, else a fresh random one — returns it on every answer, signs it into
//! the call to the origin (`signing`), and both parts log it, so one id follows a confirm
//! from the browser to the origin's log and back.

/// The longest id kept from a client.
pub const MAX_LEN: usize = 64;

/// Whether a client's `X-Request-Id` is kept: 1 to [`MAX_LEN`] bytes of letters,
/// digits and `-_.:`, nothing a log line or a header could be confused by.
pub fn well_formed(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= MAX_LEN
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.:".contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clients_id_is_kept_only_when_it_is_short_and_plain() {
        for kept in ["abc", "0f1e2d3c", "trace-1:span_2.x", &"a".repeat(MAX_LEN)] {
            assert!(well_formed(kept), "{kept}");
        }
        for refused in ["", "a b", "a\nb", "id;drop", "é", &"a".repeat(MAX_LEN + 1)] {
            assert!(!well_formed(refused), "{refused:?}");
        }
    }
}
