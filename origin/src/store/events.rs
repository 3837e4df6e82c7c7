//! Limited-stock events as they stand: stock, units reserved and sold. (Setting an
//! event's stock is a backend's own: how it keeps reservations out meanwhile differs.)

use sqlx::Row;

use super::sql::sql_bounds;
use super::{EventView, StoreError};

/// Each event with its units reserved (PENDING or UNKNOWN) and sold (APPROVED).
const EVENTS: &str = "SELECT event_id, stock, amount, \
     (SELECT COUNT(*) FROM payments p WHERE p.event_id = e.event_id \
       AND p.status IN ('PENDING', 'UNKNOWN')) AS reserved, \
     (SELECT COUNT(*) FROM payments p WHERE p.event_id = e.event_id \
       AND p.status = 'APPROVED') AS sold \
     FROM events e";

fn view<R: Row>(row: &R) -> Result<EventView, StoreError>
where
    for<'r> &'r str: sqlx::ColumnIndex<R>,
    for<'r> String: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> i64: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
{
    Ok(EventView {
        event_id: row.try_get("event_id")?,
        stock: row.try_get("stock")?,
        amount: row.try_get("amount")?,
        reserved: row.try_get("reserved")?,
        sold: row.try_get("sold")?,
    })
}

sql_bounds! {
    pub(super) async fn event(&mut self, event_id: &str) -> Result<Option<EventView>, StoreError> {
        let row = sqlx::query(&format!("{EVENTS} WHERE event_id = $1"))
            .bind(event_id)
            .fetch_optional(&mut *self.conn)
            .await?;
        row.as_ref().map(view).transpose()
    }

    pub(super) async fn events(&mut self, limit: u32) -> Result<Vec<EventView>, StoreError> {
        let rows = sqlx::query(&format!("{EVENTS} ORDER BY event_id LIMIT $1"))
            .bind(i64::from(limit))
            .fetch_all(&mut *self.conn)
            .await?;
        rows.iter().map(view).collect()
    }
}
