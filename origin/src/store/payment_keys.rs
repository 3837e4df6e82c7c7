//! Payment keys on their way to the current KEK (`origin keys rewrap`): the ones still
//! sealed under another, and their replacement, each only if still the old one.

use sqlx::Connection as _;

use super::sql::{sql_bounds, values_list, Written as _};
use super::{Replacement, StoreError, StoredPaymentKey};
use crate::crypto::version_prefix;

/// Rows one statement replaces: at 3 values a row, far below either database's limit.
const ROWS_PER_STATEMENT: usize = 500;

sql_bounds! {
    pub(super) async fn payment_keys_not_on(
        &mut self,
        version: u32,
        after_id: i64,
        limit: u32,
    ) -> Result<Vec<StoredPaymentKey>, StoreError> {
        let prefix = version_prefix(version);
        Ok(sqlx::query_as(
            "SELECT id AS payment_id, order_id, payment_key AS stored FROM payments \
             WHERE id > $1 AND substr(payment_key, 1, CAST($2 AS INTEGER)) <> $3 \
             ORDER BY id LIMIT $4",
        )
        .bind(after_id)
        .bind(prefix.len() as i64)
        .bind(prefix.as_str())
        .bind(i64::from(limit))
        .fetch_all(&mut *self.conn)
        .await?)
    }

    pub(super) async fn count_payment_keys_not_on(&mut self, version: u32) -> Result<u64, StoreError> {
        let prefix = version_prefix(version);
        let count: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM payments \
             WHERE substr(payment_key, 1, CAST($1 AS INTEGER)) <> $2",
        )
        .bind(prefix.len() as i64)
        .bind(prefix.as_str())
        .fetch_one(&mut *self.conn)
        .await?;
        Ok(u64::try_from(count).unwrap_or_default())
    }

    pub(super) async fn replace_payment_keys(
        &mut self,
        replacements: &[Replacement],
    ) -> Result<u64, StoreError> {
        // One statement a chunk, each key replaced only where it is still the old one.
        // Both databases name the columns of a `VALUES` list `column1`, `column2`, ….
        let mut transaction = self.conn.begin().await?;
        let mut replaced = 0;
        for chunk in replacements.chunks(ROWS_PER_STATEMENT) {
            let sql = format!(
                "UPDATE payments SET payment_key = v.column3 FROM (VALUES {}) AS v \
                 WHERE payments.id = v.column1 AND payments.payment_key = v.column2",
                values_list(chunk.len(), 3, 1)
            );
            let mut statement = sqlx::query(&sql);
            for replacement in chunk {
                statement = statement
                    .bind(replacement.payment_id)
                    .bind(replacement.old.as_str())
                    .bind(replacement.new.as_str());
            }
            replaced += statement.execute(&mut *transaction).await?.rows();
        }
        transaction.commit().await?;
        Ok(replaced)
    }
}
