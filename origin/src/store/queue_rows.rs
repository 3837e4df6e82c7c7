//! The exception queue's rows, read the same way from either database.

use sqlx::{ColumnIndex, Decode, Row, Type};

use super::StoreError;
use crate::settlement::period::Period;
use crate::settlement::queue::{Item, ItemStatus};
use crate::settlement::reconcile::Category;

/// The columns [`item_from_row`] reads.
pub const ITEM_COLUMNS: &str = "id, order_id, category, internal_amount, external_amount, line, \
     period_first, period_last, status, note, created_at, resolved_at";

/// The items an operator must look at when a file matches their order.
pub const CLOSED_BY_A_MATCH_CATEGORIES: &str = "('AMOUNT_MISMATCH', 'INTERNAL_ONLY')";

/// How many findings one statement writes: 8 values each stays far below either
/// database's limit on bound values.
pub const FINDINGS_PER_STATEMENT: usize = 500;

pub fn item_from_row<'r, R>(row: &'r R) -> Result<Item, StoreError>
where
    R: Row,
    &'static str: ColumnIndex<R>,
    i64: Decode<'r, R::Database> + Type<R::Database>,
    String: Decode<'r, R::Database> + Type<R::Database>,
{
    let text = |column: &'static str| -> Result<String, StoreError> { Ok(row.try_get(column)?) };
    let corrupt = |what: String| StoreError::Database(sqlx::Error::Decode(what.into()));
    let category = text("category")?;
    let category = Category::parse(&category)
        .ok_or_else(|| corrupt(format!("unknown category {category}")))?;
    let status = text("status")?;
    let status =
        ItemStatus::parse(&status).ok_or_else(|| corrupt(format!("unknown status {status}")))?;
    let date = |column: &'static str| -> Result<chrono::NaiveDate, StoreError> {
        let value = text(column)?;
        value
            .parse()
            .map_err(|_| corrupt(format!("{column} is not a date: {value}")))
    };
    let line: Option<i64> = row.try_get("line")?;
    Ok(Item {
        id: row.try_get("id")?,
        order_id: text("order_id")?,
        category,
        internal_amount: row.try_get("internal_amount")?,
        external_amount: row.try_get("external_amount")?,
        line: line.and_then(|line| u64::try_from(line).ok()),
        period: Period {
            first: date("period_first")?,
            last: date("period_last")?,
        },
        status,
        note: row.try_get("note")?,
        created_at: row.try_get("created_at")?,
        resolved_at: row.try_get("resolved_at")?,
    })
}
