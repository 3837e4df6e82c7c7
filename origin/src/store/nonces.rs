//! Edge nonces shared by every instance on one database: insert-or-refuse, and forgotten
//! once their signatures are stale.

use super::sql::{sql_bounds, Written as _};
use super::StoreError;

sql_bounds! {
    pub(super) async fn first_use_of_nonce(
        &mut self,
        nonce: &str,
        expires_at_ms: i64,
    ) -> Result<bool, StoreError> {
        let inserted = sqlx::query(
            "INSERT INTO edge_nonces (nonce, expires_at) VALUES ($1, $2) ON CONFLICT DO NOTHING",
        )
        .bind(nonce)
        .bind(expires_at_ms)
        .execute(&mut *self.conn)
        .await?;
        Ok(inserted.rows() == 1)
    }

    pub(super) async fn purge_edge_nonces(&mut self, now_ms: i64) -> Result<u64, StoreError> {
        let done = sqlx::query("DELETE FROM edge_nonces WHERE expires_at < $1")
            .bind(now_ms)
            .execute(&mut *self.conn)
            .await?;
        Ok(done.rows())
    }
}
