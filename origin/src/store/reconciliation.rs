//! The exception queue: findings queued once each, pending items closed by a later
//! match or resolved by an operator, and our APPROVED payments of a period to match.

use sqlx::{ColumnIndex, Decode, Row, Type};

use super::sql::{sql_bounds, values_list, Written as _};
use super::StoreError;
use crate::policy::settlement::period::Period;
use crate::policy::settlement::queue::{self, Item, ItemStatus, Resolution, CLOSED_BY_A_MATCH};
use crate::policy::settlement::reconcile::{Category, Finding};

/// Rows one statement writes: at 9 values a row at most, far below either database's
/// limit on bound values.
const ROWS_PER_STATEMENT: usize = 500;

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

sql_bounds! {
    pub(super) async fn approved_between(
        &mut self,
        from_ms: i64,
        to_ms: i64,
    ) -> Result<Vec<(String, i64)>, StoreError> {
        Ok(sqlx::query_as(
            "SELECT order_id, amount FROM payments \
             WHERE status = 'APPROVED' AND approved_at >= $1 AND approved_at < $2",
        )
        .bind(from_ms)
        .bind(to_ms)
        .fetch_all(&mut *self.conn)
        .await?)
    }

    pub(super) async fn queue_exceptions(
        &mut self,
        findings: &[Finding],
        period: &Period,
        now_ms: i64,
    ) -> Result<u64, StoreError> {
        // One statement a chunk; a finding already known by its fingerprint is skipped.
        let (first, last) = (period.first.to_string(), period.last.to_string());
        let mut added = 0;
        for chunk in findings.chunks(ROWS_PER_STATEMENT) {
            let sql = format!(
                "INSERT INTO reconciliation_items (fingerprint, order_id, category, \
                 internal_amount, external_amount, line, period_first, period_last, \
                 created_at) VALUES {} ON CONFLICT (fingerprint) DO NOTHING",
                values_list(chunk.len(), 9, 1)
            );
            let fingerprints: Vec<String> = chunk.iter().map(queue::fingerprint).collect();
            let mut statement = sqlx::query(&sql);
            for (finding, fingerprint) in chunk.iter().zip(&fingerprints) {
                statement = statement
                    .bind(fingerprint.as_str())
                    .bind(finding.order_id.as_str())
                    .bind(finding.category.as_str())
                    .bind(finding.internal_amount)
                    .bind(finding.external_amount)
                    .bind(finding.line.and_then(|line| i64::try_from(line).ok()))
                    .bind(first.as_str())
                    .bind(last.as_str())
                    .bind(now_ms);
            }
            added += statement.execute(&mut *self.conn).await?.rows();
        }
        Ok(added)
    }

    pub(super) async fn close_matched(
        &mut self,
        order_ids: &[String],
        now_ms: i64,
    ) -> Result<u64, StoreError> {
        // The pending AMOUNT_MISMATCH and INTERNAL_ONLY items of the orders, one
        // statement a chunk, closed with [`CLOSED_BY_A_MATCH`].
        let mut closed = 0;
        for chunk in order_ids.chunks(ROWS_PER_STATEMENT) {
            let places: Vec<String> = (3..3 + chunk.len()).map(|n| format!("${n}")).collect();
            let sql = format!(
                "UPDATE reconciliation_items SET status = 'RESOLVED', note = $1, \
                 resolved_at = $2 WHERE status = 'PENDING' \
                 AND category IN {CLOSED_BY_A_MATCH_CATEGORIES} AND order_id IN ({})",
                places.join(", ")
            );
            let mut statement = sqlx::query(&sql).bind(CLOSED_BY_A_MATCH).bind(now_ms);
            for order_id in chunk {
                statement = statement.bind(order_id.as_str());
            }
            closed += statement.execute(&mut *self.conn).await?.rows();
        }
        Ok(closed)
    }

    pub(super) async fn reconciliation_items(
        &mut self,
        status: Option<ItemStatus>,
        after_id: i64,
        limit: u32,
    ) -> Result<Vec<Item>, StoreError> {
        let sql = format!(
            "SELECT {ITEM_COLUMNS} FROM reconciliation_items \
             WHERE (CAST($1 AS TEXT) IS NULL OR status = $1) AND id > $2 ORDER BY id LIMIT $3"
        );
        let status = status.map(ItemStatus::as_str);
        let rows = sqlx::query(&sql)
            .bind(status)
            .bind(after_id)
            .bind(i64::from(limit))
            .fetch_all(&mut *self.conn)
            .await?;
        rows.iter().map(item_from_row).collect()
    }

    pub(super) async fn pending_reconciliation_items(&mut self) -> Result<u64, StoreError> {
        let pending: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM reconciliation_items WHERE status = 'PENDING'",
        )
        .fetch_one(&mut *self.conn)
        .await?;
        Ok(u64::try_from(pending).unwrap_or_default())
    }

    pub(super) async fn resolve_reconciliation_item(
        &mut self,
        id: i64,
        note: &str,
        now_ms: i64,
    ) -> Result<Resolution, StoreError> {
        let sql = format!(
            "UPDATE reconciliation_items SET status = 'RESOLVED', note = $1, resolved_at = $2 \
             WHERE id = $3 AND status = 'PENDING' RETURNING {ITEM_COLUMNS}"
        );
        let resolved = sqlx::query(&sql)
            .bind(note)
            .bind(now_ms)
            .bind(id)
            .fetch_optional(&mut *self.conn)
            .await?;
        if let Some(row) = resolved {
            return Ok(Resolution::Resolved(item_from_row(&row)?));
        }
        let sql = format!("SELECT {ITEM_COLUMNS} FROM reconciliation_items WHERE id = $1");
        let found = sqlx::query(&sql)
            .bind(id)
            .fetch_optional(&mut *self.conn)
            .await?;
        Ok(match found {
            Some(row) => Resolution::AlreadyResolved(item_from_row(&row)?),
            None => Resolution::NotFound,
        })
    }
}
