//! The claims of passes by orders: a pass backs one payment at a time.

use serde::Deserialize;
use worker::Result;

use super::RoomStorage;
use crate::queue::protocol::PassClaim;

#[derive(Deserialize)]
struct ClaimRow {
    order_id: String,
}

impl RoomStorage {
    /// Gives a live pass to `order_id` unless another order holds it. Claims are read
    /// from storage, which is small (one row per admitted user at most).
    pub fn claim(&self, user: &str, order_id: &str) -> Result<PassClaim> {
        let held: Vec<ClaimRow> = self
            .sql
            .exec(
                "SELECT order_id FROM claims WHERE user = ?",
                vec![user.into()],
            )?
            .to_array()?;
        match held.first() {
            Some(claim) if claim.order_id != order_id => Ok(PassClaim::InUse),
            Some(_) => Ok(PassClaim::Granted {
                room: self.identity()?,
            }),
            None => {
                self.sql.exec(
                    "INSERT INTO claims (user, order_id) VALUES (?, ?)",
                    vec![user.into(), order_id.into()],
                )?;
                Ok(PassClaim::Granted {
                    room: self.identity()?,
                })
            }
        }
    }

    /// The claiming payment failed at the PG (the origin's 201 `FAILED` for this very
    /// order): the pass may back another order. Nothing else frees a claim.
    pub fn release(&self, user: &str, order_id: &str) -> Result<()> {
        self.sql.exec(
            "DELETE FROM claims WHERE user = ? AND order_id = ?",
            vec![user.into(), order_id.into()],
        )?;
        Ok(())
    }
}
