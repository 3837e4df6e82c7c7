//! The claims of passes by orders: a pass backs one payment at a time. A claim counts the
//! confirms it was granted to, so that one confirm's claim can be undone only while no
//! other confirm of the order holds it too.

use serde::Deserialize;
use worker::{Result, SqlStorage};

use super::RoomStorage;
use crate::queue::protocol::PassClaim;

#[derive(Deserialize)]
struct ClaimRow {
    order_id: String,
}

/// A room made before claims counted their grants gets the column (each of its claims
/// counted as granted once).
pub(super) fn add_grants(sql: &SqlStorage) {
    if sql.exec("SELECT grants FROM claims LIMIT 0", None).is_ok() {
        return;
    }
    let added = sql.exec(
        "ALTER TABLE claims ADD COLUMN grants INTEGER NOT NULL DEFAULT 1",
        None,
    );
    if let Err(err) = added {
        worker::console_error!("waiting room claims: {err}");
    }
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
        let fresh = match held.first() {
            Some(claim) if claim.order_id != order_id => return Ok(PassClaim::InUse),
            Some(_) => {
                self.sql.exec(
                    "UPDATE claims SET grants = grants + 1 WHERE user = ?",
                    vec![user.into()],
                )?;
                false
            }
            None => {
                self.sql.exec(
                    "INSERT INTO claims (user, order_id) VALUES (?, ?)",
                    vec![user.into(), order_id.into()],
                )?;
                true
            }
        };
        Ok(PassClaim::Granted {
            room: self.identity()?,
            fresh,
        })
    }

    /// The claiming payment failed at the PG (the origin's 201 `FAILED` for this very
    /// order): the pass may back another order.
    pub fn release(&self, user: &str, order_id: &str) -> Result<()> {
        self.sql.exec(
            "DELETE FROM claims WHERE user = ? AND order_id = ?",
            vec![user.into(), order_id.into()],
        )?;
        Ok(())
    }

    /// Undoes the claim one confirm made afresh, unless another confirm of the order was
    /// granted it since (which may have sent the order to the PG).
    pub fn untie(&self, user: &str, order_id: &str) -> Result<()> {
        self.sql.exec(
            "DELETE FROM claims WHERE user = ? AND order_id = ? AND grants = 1",
            vec![user.into(), order_id.into()],
        )?;
        Ok(())
    }
}
