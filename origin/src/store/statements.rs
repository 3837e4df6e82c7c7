//! What is written the same way for either database: the exception queue's rows and
//! the statements that fill and close it, and the statement that replaces payment keys.

use sqlx::{ColumnIndex, Database, Decode, Encode, QueryBuilder, Row, Type};

use super::{Replacement, StoreError};
use crate::policy::settlement::period::Period;
use crate::policy::settlement::queue::{self, CLOSED_BY_A_MATCH};
use crate::policy::settlement::queue::{Item, ItemStatus};
use crate::policy::settlement::reconcile::Category;
use crate::policy::settlement::reconcile::Finding;

/// The columns [`item_from_row`] reads.
pub const ITEM_COLUMNS: &str = "id, order_id, category, internal_amount, external_amount, line, \
     period_first, period_last, status, note, created_at, resolved_at";

/// The items a later file closes when it matches their order.
const CLOSED_BY_A_MATCH_CATEGORIES: &str = "('AMOUNT_MISMATCH', 'INTERNAL_ONLY')";

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

/// One statement queueing `chunk` (at most [`ROWS_PER_STATEMENT`]) as PENDING items found
/// reconciling `period`; a finding already known by its fingerprint is skipped.
pub fn queueing_findings<'a, DB>(
    chunk: &'a [Finding],
    period: &Period,
    now_ms: i64,
) -> QueryBuilder<'a, DB>
where
    DB: Database,
    i64: Encode<'a, DB> + Type<DB>,
    Option<i64>: Encode<'a, DB> + Type<DB>,
    String: Encode<'a, DB> + Type<DB>,
    &'a str: Encode<'a, DB> + Type<DB>,
{
    let mut insert = QueryBuilder::new(
        "INSERT INTO reconciliation_items (fingerprint, order_id, category, internal_amount, \
         external_amount, line, period_first, period_last, created_at) ",
    );
    insert.push_values(chunk, |mut row, finding| {
        row.push_bind(queue::fingerprint(finding))
            .push_bind(finding.order_id.as_str())
            .push_bind(finding.category.as_str())
            .push_bind(finding.internal_amount)
            .push_bind(finding.external_amount)
            .push_bind(finding.line.and_then(|line| i64::try_from(line).ok()))
            .push_bind(period.first.to_string())
            .push_bind(period.last.to_string())
            .push_bind(now_ms);
    });
    insert.push(" ON CONFLICT (fingerprint) DO NOTHING");
    insert
}

/// One statement closing the pending AMOUNT_MISMATCH and INTERNAL_ONLY items of the
/// orders in `chunk` (at most [`ROWS_PER_STATEMENT`]), with [`CLOSED_BY_A_MATCH`].
pub fn closing_matched<'a, DB>(chunk: &'a [String], now_ms: i64) -> QueryBuilder<'a, DB>
where
    DB: Database,
    i64: Encode<'a, DB> + Type<DB>,
    &'a str: Encode<'a, DB> + Type<DB>,
{
    let mut update =
        QueryBuilder::new("UPDATE reconciliation_items SET status = 'RESOLVED', note = ");
    update
        .push_bind(CLOSED_BY_A_MATCH)
        .push(", resolved_at = ")
        .push_bind(now_ms)
        .push(format!(
            " WHERE status = 'PENDING' AND category IN {CLOSED_BY_A_MATCH_CATEGORIES} \
             AND order_id IN ("
        ));
    let mut ids = update.separated(", ");
    for order_id in chunk {
        ids.push_bind(order_id.as_str());
    }
    update.push(")");
    update
}
