//! Limited-stock events as they stand: stock, units reserved and sold. (Setting an
//! event's stock is a backend's own: how it keeps reservations out meanwhile differs.)

use sqlx::Row;

use super::sql::sql_bounds;
use super::{EventView, StoreError};

sql_bounds! {
    pub(super) async fn event(&self, event_id: &str) -> Result<Option<EventView>, StoreError> {
        let row = sqlx::query(
            "SELECT event_id, stock, amount, \
             (SELECT COUNT(*) FROM payments p WHERE p.event_id = e.event_id \
               AND p.status IN ('PENDING', 'UNKNOWN')) AS reserved, \
             (SELECT COUNT(*) FROM payments p WHERE p.event_id = e.event_id \
               AND p.status = 'APPROVED') AS sold \
             FROM events e WHERE event_id = $1",
        )
        .bind(event_id)
        .fetch_optional(self.pool)
        .await?;
        row.map(|row| {
            Ok(EventView {
                event_id: row.try_get("event_id")?,
                stock: row.try_get("stock")?,
                amount: row.try_get("amount")?,
                reserved: row.try_get("reserved")?,
                sold: row.try_get("sold")?,
            })
        })
        .transpose()
    }
}
