//! What is written the same way for either database: the exception queue's rows, and
//! the statement that replaces payment keys.

use sqlx::{ColumnIndex, Database, Decode, Encode, QueryBuilder, Row, Type};

use super::{Replacement, StoreError};
use crate::settlement::period::Period;
use crate::settlement::queue::{Item, ItemStatus};
use crate::settlement::reconcile::Category;

/// The columns [`item_from_row`] reads.
pub const ITEM_COLUMNS: &str = "id, order_id, category, internal_amount, external_amount, line, \
     period_first, period_last, status, note, created_at, resolved_at";

/// The items an operator must look at when a file matches their order.
pub const CLOSED_BY_A_MATCH_CATEGORIES: &str = "('AMOUNT_MISMATCH', 'INTERNAL_ONLY')";

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

/// Rows one statement writes: at 9 values a row at most, far below either database's
/// limit on bound values.
pub const ROWS_PER_STATEMENT: usize = 500;

/// One statement replacing the payment keys of `chunk` (at most [`ROWS_PER_STATEMENT`])
/// where each is still the old one. Both databases name the columns of a `VALUES` list
/// `column1`, `column2`, ….
pub fn replacing_payment_keys<'a, DB>(chunk: &'a [Replacement]) -> QueryBuilder<'a, DB>
where
    DB: Database,
    i64: Encode<'a, DB> + Type<DB>,
    &'a str: Encode<'a, DB> + Type<DB>,
{
    let mut update = QueryBuilder::new("UPDATE payments SET payment_key = v.column3 FROM (");
    update.push_values(chunk, |mut row, replacement| {
        row.push_bind(replacement.payment_id)
            .push_bind(replacement.old.as_str())
            .push_bind(replacement.new.as_str());
    });
    update.push(") AS v WHERE payments.id = v.column1 AND payments.payment_key = v.column2");
    update
}
