//! Idempotency-Key claims: one claimant per key, a lease while its request runs, the
//! answer kept for replay, and keys forgotten after their retention.

use sqlx::Row;

use super::sql::{decode_error, sql_bounds, Written as _};
use super::{Claimed, IdempotencyClaim, IdempotencyRecord, StoreError, StoredResponse};

sql_bounds! {
    pub(super) async fn claim_idempotency_key(
        &mut self,
        claim: &IdempotencyClaim,
        now_ms: i64,
    ) -> Result<Claimed, StoreError> {
        let key = (claim.user_id.as_str(), claim.key.as_str());
        sqlx::query(
            "DELETE FROM idempotency_keys WHERE user_id = $1 AND idempotency_key = $2 \
             AND created_at <= $3",
        )
        .bind(key.0)
        .bind(key.1)
        .bind(now_ms - claim.retain_ms)
        .execute(&mut *self.conn)
        .await?;
        // Of concurrent inserts of one key exactly one inserts: on PostgreSQL the others
        // wait for it to commit, on SQLite their turn behind it, and then do nothing.
        let inserted = sqlx::query(
            "INSERT INTO idempotency_keys (user_id, idempotency_key, request_hash, state, \
             locked_until, created_at) VALUES ($1, $2, $3, 'IN_FLIGHT', $4, $5) \
             ON CONFLICT DO NOTHING",
        )
        .bind(key.0)
        .bind(key.1)
        .bind(claim.request_hash.as_str())
        .bind(now_ms + claim.lease_ms)
        .bind(now_ms)
        .execute(&mut *self.conn)
        .await?;
        if inserted.rows() == 1 {
            return Ok(Claimed::Started);
        }
        let locked_until = match self.recorded(claim, now_ms).await? {
            // Purged between the insert and the read: as good as in flight for a moment.
            None => return Ok(Claimed::InFlight { until_ms: now_ms }),
            Some(IdempotencyRecord::Mismatch) => return Ok(Claimed::Mismatch),
            Some(IdempotencyRecord::Done(stored)) => return Ok(Claimed::Done(stored)),
            Some(IdempotencyRecord::InFlight { until_ms }) if until_ms > now_ms => {
                return Ok(Claimed::InFlight { until_ms })
            }
            Some(IdempotencyRecord::InFlight { until_ms }) => until_ms,
        };
        // Compare-and-set on the lease: of takeovers racing, the first to update wins,
        // and the others re-check the row it left and find the lease moved.
        let taken_over = sqlx::query(
            "UPDATE idempotency_keys SET locked_until = $1 WHERE user_id = $2 \
             AND idempotency_key = $3 AND state = 'IN_FLIGHT' AND locked_until = $4",
        )
        .bind(now_ms + claim.lease_ms)
        .bind(key.0)
        .bind(key.1)
        .bind(locked_until)
        .execute(&mut *self.conn)
        .await?;
        Ok(if taken_over.rows() == 1 {
            Claimed::Resumed
        } else {
            Claimed::InFlight {
                until_ms: now_ms + claim.lease_ms,
            }
        })
    }

    /// What is recorded for `claim`'s key, read only; `None` when there is no record
    /// within its retention, or only a lease that ran out (its request died, and left
    /// only what it may have written).
    pub(super) async fn idempotency_record(
        &mut self,
        claim: &IdempotencyClaim,
        now_ms: i64,
    ) -> Result<Option<IdempotencyRecord>, StoreError> {
        let record = self.recorded(claim, now_ms).await?;
        Ok(record.filter(|record| {
            !matches!(record, IdempotencyRecord::InFlight { until_ms } if *until_ms <= now_ms)
        }))
    }

    /// The record of `claim`'s key created within its retention, its lease as it stands
    /// (perhaps run out).
    async fn recorded(
        &mut self,
        claim: &IdempotencyClaim,
        now_ms: i64,
    ) -> Result<Option<IdempotencyRecord>, StoreError> {
        let row = sqlx::query(
            "SELECT request_hash, state, response_status, response_body, locked_until \
             FROM idempotency_keys WHERE user_id = $1 AND idempotency_key = $2 \
             AND created_at > $3",
        )
        .bind(claim.user_id.as_str())
        .bind(claim.key.as_str())
        .bind(now_ms - claim.retain_ms)
        .fetch_optional(&mut *self.conn)
        .await?;
        let Some(row) = row else {
            return Ok(None);
        };
        let request_hash: String = row.try_get("request_hash")?;
        if request_hash != claim.request_hash {
            return Ok(Some(IdempotencyRecord::Mismatch));
        }
        if row.try_get::<String, _>("state")? == "DONE" {
            let status: Option<i64> = row.try_get("response_status")?;
            let body: Option<String> = row.try_get("response_body")?;
            let (Some(status), Some(body)) = (status, body) else {
                return Err(decode_error("a DONE key without its response".into()));
            };
            return Ok(Some(IdempotencyRecord::Done(StoredResponse {
                status: u16::try_from(status)
                    .map_err(|_| decode_error(format!("response status {status}")))?,
                body,
            })));
        }
        Ok(Some(IdempotencyRecord::InFlight {
            until_ms: row.try_get("locked_until")?,
        }))
    }

    pub(super) async fn finish_idempotency_key(
        &mut self,
        user_id: &str,
        key: &str,
        response: &StoredResponse,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE idempotency_keys SET state = 'DONE', response_status = $1, \
             response_body = $2 WHERE user_id = $3 AND idempotency_key = $4",
        )
        .bind(i64::from(response.status))
        .bind(response.body.as_str())
        .bind(user_id)
        .bind(key)
        .execute(&mut *self.conn)
        .await?;
        Ok(())
    }

    pub(super) async fn release_idempotency_key(&mut self, user_id: &str, key: &str) -> Result<(), StoreError> {
        sqlx::query(
            "DELETE FROM idempotency_keys WHERE user_id = $1 AND idempotency_key = $2 \
             AND state = 'IN_FLIGHT'",
        )
        .bind(user_id)
        .bind(key)
        .execute(&mut *self.conn)
        .await?;
        Ok(())
    }

    pub(super) async fn purge_idempotency_keys(&mut self, before_ms: i64) -> Result<u64, StoreError> {
        let done = sqlx::query("DELETE FROM idempotency_keys WHERE created_at < $1")
            .bind(before_ms)
            .execute(&mut *self.conn)
            .await?;
        Ok(done.rows())
    }
}
