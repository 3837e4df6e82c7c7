//! The `paymentKey`s the simulator's imitation of the payment window issued
//! (`routes::window`), each for the one order and amount the buyer paid in it.
//!
//! Toss's window authenticates a buyer for an order and an amount, and its
//! confirm must repeat both. A confirm that names an issued key with another
//! order or amount is refused; Toss does not publish the code it answers
//! then, so the simulator answers `INVALID_REQUEST` (400), the code Toss gives
//! a request it will not process (an assumption, `routes::window`'s too). Keys
//! the window never issued are taken as before: as a real window's.

use std::collections::HashMap;

/// What the window took a key's payment for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IssuedKey {
    pub order_id: String,
    pub amount: u64,
}

/// A confirm of an issued key for another order or amount.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "this paymentKey was issued for orderId {:?} and amount {}, not orderId {order_id:?} and amount {amount}",
    .issued.order_id, .issued.amount
)]
pub struct NotAsIssued {
    pub issued: IssuedKey,
    pub order_id: String,
    pub amount: u64,
}

#[derive(Debug, Default)]
pub(super) struct IssuedKeys(HashMap<String, IssuedKey>);

impl IssuedKeys {
    pub(super) fn issue(&mut self, payment_key: String, issued: IssuedKey) {
        self.0.insert(payment_key, issued);
    }

    /// Whether a confirm of `payment_key` for `order_id` and `amount` is what
    /// the window issued it for; a key it never issued always is.
    pub(super) fn check(
        &self,
        payment_key: &str,
        order_id: &str,
        amount: u64,
    ) -> Result<(), NotAsIssued> {
        match self.0.get(payment_key) {
            Some(issued) if issued.order_id != order_id || issued.amount != amount => {
                Err(NotAsIssued {
                    issued: issued.clone(),
                    order_id: order_id.to_owned(),
                    amount,
                })
            }
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys() -> IssuedKeys {
        let mut keys = IssuedKeys::default();
        let issued = IssuedKey {
            order_id: "order-1".into(),
            amount: 5000,
        };
        keys.issue("tviva1".into(), issued);
        keys
    }

    #[test]
    fn an_issued_key_is_taken_for_its_order_and_amount_only() {
        let keys = keys();
        assert_eq!(keys.check("tviva1", "order-1", 5000), Ok(()));
        let other_amount = keys.check("tviva1", "order-1", 4000).unwrap_err();
        assert_eq!(other_amount.amount, 4000);
        assert!(other_amount.to_string().contains("amount 5000"));
        assert!(keys.check("tviva1", "order-2", 5000).is_err());
    }

    #[test]
    fn a_key_the_window_never_issued_is_taken_as_before() {
        assert_eq!(keys().check("pk-anything", "order-1", 1), Ok(()));
    }
}
