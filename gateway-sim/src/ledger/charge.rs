//! One decided charge, and the identifiers the ledger hands out.

use super::{CancelRecord, PaymentRecord, PaymentStatus};

#[derive(Debug)]
pub(super) struct Charge {
    pub(super) payment_key: String,
    pub(super) order_id: String,
    /// Approved: what was approved; declined: what was asked.
    pub(super) amount: u64,
    pub(super) approved: bool,
    pub(super) requested_at: u64,
    pub(super) decided_at: u64,
    /// Confirms that named this charge, the first included.
    pub(super) request_count: u64,
    pub(super) transaction_key: String,
    /// Its ordinal among the ledger's charges, for the approval number.
    pub(super) number: usize,
    pub(super) cancel: Option<CancelRecord>,
}

impl Charge {
    pub(super) fn is_live_approval(&self) -> bool {
        self.approved && self.cancel.is_none()
    }

    pub(super) fn record(&self) -> PaymentRecord {
        let status = match (self.approved, &self.cancel) {
            (false, _) => PaymentStatus::Aborted,
            (true, None) => PaymentStatus::Done,
            (true, Some(_)) => PaymentStatus::Canceled,
        };
        PaymentRecord {
            payment_key: self.payment_key.clone(),
            order_id: self.order_id.clone(),
            status,
            amount: self.amount,
            requested_at: self.requested_at,
            approved_at: self.approved.then_some(self.decided_at),
            transaction_key: Some(self.transaction_key.clone()),
            approve_no: self
                .approved
                .then(|| format!("{:08}", self.number % 100_000_000)),
            cancel: self.cancel.clone(),
        }
    }
}

/// The `n`th transaction's key: 32 upper-case hex digits, as Toss's look,
/// distinct for every `n` (the first half is a bijection of it).
pub(super) fn transaction_key(n: u64) -> String {
    format!("{:016X}{:016X}", scramble(n), scramble(!n))
}

/// The `n`th webhook's `tosspayments-webhook-transmission-id`, UUID-shaped
/// and distinct for every `n`.
pub(super) fn transmission_id(n: u64) -> String {
    let (high, low) = (scramble(n), scramble(n ^ 0x5bd1_e995));
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        high >> 32,
        (high >> 16) & 0xffff,
        high & 0xffff,
        low >> 48,
        low & 0xffff_ffff_ffff
    )
}

/// Multiplying by an odd constant is a bijection on `u64`: distinct inputs,
/// distinct outputs, that look random enough for identifiers.
fn scramble(n: u64) -> u64 {
    n.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    #[test]
    fn transaction_keys_are_distinct_32_hex_digits() {
        let keys: HashSet<_> = (0..1000).map(transaction_key).collect();
        assert_eq!(keys.len(), 1000);
        assert!(keys.iter().all(|key| key.len() == 32
            && key
                .chars()
                .all(|c| c.is_ascii_digit() || c.is_ascii_uppercase())));
    }

    #[test]
    fn transmission_ids_are_distinct_and_uuid_shaped() {
        let ids: HashSet<_> = (0..1000).map(transmission_id).collect();
        assert_eq!(ids.len(), 1000);
        for id in &ids {
            let groups: Vec<_> = id.split('-').map(str::len).collect();
            assert_eq!(groups, [8, 4, 4, 4, 12], "{id}");
        }
    }
}
