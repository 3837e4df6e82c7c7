//! The outbox's queries, written once for both databases (`outbox.rs` says what they
//! keep true).

use sqlx::{Connection as _, Row};

use super::outbox::{Ack, Attempt, Backlog, Claim, Failure, OutboxEvent};
use super::sql::{sql_bounds, values_list, Written as _};
use super::StoreError;

const EVENT_COLUMNS: &str = "id, position, order_key, type, payment_id, status, amount, \
     event_id, failure_reason, flag, finding, external_amount, occurred_at, delivery, \
     attempts, last_status, last_error, last_attempt_at, delivered_at";

/// The events due at `$1` that head their order's line: published, pending, not
/// leased, and no earlier event of their order undelivered.
const HEADS_DUE: &str = "FROM payment_events e \
     WHERE e.delivery = 'PENDING' AND e.position IS NOT NULL \
     AND e.next_attempt_at <= $1 AND e.lease_until <= $1 \
     AND NOT EXISTS (SELECT 1 FROM payment_events p \
       WHERE p.order_key = e.order_key AND p.position < e.position \
       AND p.delivery <> 'DELIVERED')";

/// One committed event without a place, if any.
const UNPUBLISHED: &str = "SELECT id FROM payment_events WHERE position IS NULL LIMIT 1";

/// Events given a place in one publishing pass, at most.
const PUBLISH_BATCH: i64 = 10_000;
/// Attempts' ends recorded by one statement, at most (5 parameters each, well within
/// both databases' limits).
const ROWS_PER_STATEMENT: usize = 500;

/// `UPDATE … SET {set}` of the pending events a `VALUES` list of `rows` rows names by
/// its first column, `columns` each: the rest are the values `set` reads. Both databases
/// name the columns of a `VALUES` list `column1`, `column2`, ….
fn pending_set_from_values(set: &str, rows: usize, columns: usize) -> String {
    format!(
        "UPDATE payment_events SET {set} FROM (VALUES {}) AS v \
         WHERE payment_events.id = v.column1 AND payment_events.delivery = 'PENDING'",
        values_list(rows, columns, 1)
    )
}

fn event_from_row<R: Row>(row: &R) -> Result<OutboxEvent, StoreError>
where
    for<'r> &'r str: sqlx::ColumnIndex<R>,
    for<'r> String: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> i64: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> Option<String>: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> Option<i64>: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
{
    Ok(OutboxEvent {
        id: row.try_get("id")?,
        position: row.try_get("position")?,
        order_key: row.try_get("order_key")?,
        kind: row.try_get("type")?,
        payment_id: row.try_get("payment_id")?,
        status: row.try_get("status")?,
        amount: row.try_get("amount")?,
        event_id: row.try_get("event_id")?,
        failure_reason: row.try_get("failure_reason")?,
        flag: row.try_get("flag")?,
        finding: row.try_get("finding")?,
        external_amount: row.try_get("external_amount")?,
        occurred_at: row.try_get("occurred_at")?,
        delivery: row.try_get("delivery")?,
        attempts: row.try_get("attempts")?,
        last_status: row.try_get("last_status")?,
        last_error: row.try_get("last_error")?,
        last_attempt_at: row.try_get("last_attempt_at")?,
        delivered_at: row.try_get("delivered_at")?,
    })
}

sql_bounds! {
    /// Gives the committed events without a place theirs, in id order, after the last
    /// place given; `lock` keeps publishers apart where several write at once.
    pub(super) async fn publish_events(&mut self, lock: &str) -> Result<u64, StoreError> {
        // Read first: a write would take SQLite's one write lock from the payments for
        // nothing (and PostgreSQL's publishing lock) whenever all is published.
        if !self.unpublished().await? {
            return Ok(0);
        }
        let mut tx = self.conn.begin().await?;
        let published = Self::publish_in(&mut tx, lock).await?;
        tx.commit().await?;
        Ok(published)
    }

    /// One pass of the delivery loop in one transaction: records how `ended` attempts
    /// ended, publishes what was committed, then claims what `claim` asks — so an
    /// order's next event, its head acknowledged in this pass, is claimed in it too.
    /// `locks` are the dialect's publishing and claiming locks.
    pub(super) async fn delivery_pass(
        &mut self,
        (publish_lock, claim_lock): (&str, &str),
        ended: &[Attempt],
        claim: Option<Claim<'_>>,
    ) -> Result<Vec<OutboxEvent>, StoreError> {
        let mut tx = self.conn.begin().await?;
        Self::record_in(&mut tx, ended).await?;
        Self::publish_in(&mut tx, publish_lock).await?;
        let claimed = match claim {
            Some(claim) => Self::claim_in(&mut tx, claim_lock, claim).await?,
            None => Vec::new(),
        };
        tx.commit().await?;
        Ok(claimed)
    }

    /// Whether a committed event waits for its place, or, at `due_at_ms`, one is due.
    pub(super) async fn outbox_work(&mut self, due_at_ms: Option<i64>) -> Result<bool, StoreError> {
        Ok(self.unpublished().await?
            || match due_at_ms {
                Some(now_ms) => self.due(now_ms).await?,
                None => false,
            })
    }

    /// Whether a committed event waits for its place.
    async fn unpublished(&mut self) -> Result<bool, StoreError> {
        let waiting = sqlx::query(UNPUBLISHED).fetch_optional(&mut *self.conn).await?;
        Ok(waiting.is_some())
    }

    /// Whether an event is due for delivery at `now_ms`.
    async fn due(&mut self, now_ms: i64) -> Result<bool, StoreError> {
        let due = sqlx::query(&format!("SELECT e.id {HEADS_DUE} LIMIT 1"))
            .bind(now_ms)
            .fetch_optional(&mut *self.conn)
            .await?;
        Ok(due.is_some())
    }

    /// Publishes in the transaction on `conn`. Where publishers take `lock` (several
    /// instances on PostgreSQL), it is taken — and held to the commit — only when an
    /// event waits for its place, so passes with nothing to publish do not queue on it.
    async fn publish_in(conn: &mut DB::Connection, lock: &str) -> Result<u64, StoreError> {
        if !lock.is_empty() {
            let waiting = sqlx::query(UNPUBLISHED).fetch_optional(&mut *conn).await?;
            if waiting.is_none() {
                return Ok(0);
            }
            sqlx::query(lock).execute(&mut *conn).await?;
        }
        let published = sqlx::query(
            "UPDATE payment_events SET position = placed.position FROM (\
               SELECT ranked.id, ranked.n + top.last AS position FROM (\
                 SELECT id, row_number() OVER (ORDER BY id) AS n FROM payment_events \
                 WHERE position IS NULL ORDER BY id LIMIT $1) AS ranked \
               CROSS JOIN (SELECT COALESCE(MAX(position), 0) AS last FROM payment_events) AS top\
             ) AS placed WHERE payment_events.id = placed.id",
        )
        .bind(PUBLISH_BATCH)
        .execute(&mut *conn)
        .await?
        .rows();
        Ok(published)
    }

    /// Claims up to `claim.limit` events due, each the head of its order's line, in
    /// their published order; `lock` keeps concurrent claims apart
    /// ([`Dialect::CLAIM_LOCK`]).
    ///
    /// [`Dialect::CLAIM_LOCK`]: super::sql_store::Dialect::CLAIM_LOCK
    async fn claim_in(
        conn: &mut DB::Connection,
        lock: &str,
        claim: Claim<'_>,
    ) -> Result<Vec<OutboxEvent>, StoreError> {
        let sql = format!(
            "UPDATE payment_events SET lease_until = $1, lease_holder = $2, \
             attempts = attempts + 1, last_attempt_at = $3 \
             WHERE id IN (SELECT e.id {} ORDER BY e.position LIMIT $4 {lock}) \
             RETURNING {EVENT_COLUMNS}",
            HEADS_DUE.replace("$1", "$3")
        );
        let rows = sqlx::query(&sql)
            .bind(claim.lease.until_ms)
            .bind(claim.lease.holder)
            .bind(claim.now_ms)
            .bind(i64::from(claim.limit))
            .fetch_all(&mut *conn)
            .await?;
        let mut events = rows.iter().map(event_from_row).collect::<Result<Vec<_>, _>>()?;
        events.sort_by_key(|event| event.position);
        Ok(events)
    }

    /// How attempts ended, one statement for the acknowledged and one for the failed
    /// (a chunk of them); one at an event no longer pending changes nothing.
    async fn record_in(conn: &mut DB::Connection, attempts: &[Attempt]) -> Result<(), StoreError> {
        let acks: Vec<&Ack> = attempts
            .iter()
            .filter_map(|attempt| match attempt {
                Attempt::Delivered(ack) => Some(ack),
                Attempt::Failed(_) => None,
            })
            .collect();
        for chunk in acks.chunks(ROWS_PER_STATEMENT) {
            let sql = pending_set_from_values(
                "delivery = 'DELIVERED', delivered_at = v.column2, lease_until = 0, \
                 last_status = v.column3",
                chunk.len(),
                3,
            );
            // Its text varies with the chunk's length: not kept in the statement cache,
            // where it would push out the payments' own.
            let mut statement = sqlx::query(&sql).persistent(false);
            for ack in chunk {
                statement = statement.bind(ack.id).bind(ack.at_ms).bind(i64::from(ack.status));
            }
            statement.execute(&mut *conn).await?;
        }
        let failures: Vec<&Failure> = attempts
            .iter()
            .filter_map(|attempt| match attempt {
                Attempt::Failed(failure) => Some(failure),
                Attempt::Delivered(_) => None,
            })
            .collect();
        for chunk in failures.chunks(ROWS_PER_STATEMENT) {
            let sql = pending_set_from_values(
                "delivery = v.column2, next_attempt_at = v.column3, lease_until = 0, \
                 last_status = v.column4, last_error = v.column5",
                chunk.len(),
                5,
            );
            let mut statement = sqlx::query(&sql).persistent(false);
            for failure in chunk {
                let (delivery, next) = match failure.next_attempt_at {
                    Some(at) => ("PENDING", at),
                    None => ("DEAD", 0),
                };
                statement = statement
                    .bind(failure.id)
                    .bind(delivery)
                    .bind(next)
                    .bind(failure.status.map(i64::from))
                    .bind(failure.error.as_str());
            }
            statement.execute(&mut *conn).await?;
        }
        Ok(())
    }

    /// A dead letter sent again from now on; false when `id` is no dead letter.
    pub(super) async fn redeliver(&mut self, id: i64, now_ms: i64) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "UPDATE payment_events SET delivery = 'PENDING', next_attempt_at = $2, \
             attempts = 0, lease_until = 0 WHERE id = $1 AND delivery = 'DEAD'",
        )
        .bind(id)
        .bind(now_ms)
        .execute(&mut *self.conn)
        .await?;
        Ok(done.rows() == 1)
    }

    /// The published events after `after` (a position), at most `limit`, in order.
    pub(super) async fn payment_events(&mut self, after: i64, limit: u32) -> Result<Vec<OutboxEvent>, StoreError> {
        let sql = format!(
            "SELECT {EVENT_COLUMNS} FROM payment_events WHERE position > $1 \
             ORDER BY position LIMIT $2"
        );
        let rows = sqlx::query(&sql)
            .bind(after)
            .bind(i64::from(limit))
            .fetch_all(&mut *self.conn)
            .await?;
        rows.iter().map(event_from_row).collect()
    }

    /// What waits, with the latest `listed` failures and dead letters.
    pub(super) async fn webhook_backlog(&mut self, listed: u32) -> Result<Backlog, StoreError> {
        let counts = sqlx::query(
            "SELECT COALESCE(SUM(CASE WHEN delivery = 'PENDING' THEN 1 ELSE 0 END), 0) AS pending, \
             MIN(CASE WHEN delivery = 'PENDING' THEN occurred_at END) AS oldest_at, \
             COALESCE(SUM(CASE WHEN delivery = 'DEAD' THEN 1 ELSE 0 END), 0) AS dead \
             FROM payment_events WHERE delivery <> 'DELIVERED'",
        )
        .fetch_one(&mut *self.conn)
        .await?;
        let list = |condition: &str| {
            format!(
                "SELECT {EVENT_COLUMNS} FROM payment_events WHERE {condition} \
                 ORDER BY last_attempt_at DESC, id DESC LIMIT $1"
            )
        };
        let failing = sqlx::query(&list("delivery = 'PENDING' AND last_error IS NOT NULL"))
            .bind(i64::from(listed))
            .fetch_all(&mut *self.conn)
            .await?;
        let dead = sqlx::query(&list("delivery = 'DEAD'"))
            .bind(i64::from(listed))
            .fetch_all(&mut *self.conn)
            .await?;
        Ok(Backlog {
            pending: counts.try_get("pending")?,
            oldest_at: counts.try_get("oldest_at")?,
            dead: counts.try_get("dead")?,
            failing: failing.iter().map(event_from_row).collect::<Result<_, _>>()?,
            dead_letters: dead.iter().map(event_from_row).collect::<Result<_, _>>()?,
        })
    }

    /// Since when, and why, the endpoint at `url` takes no delivery, if it does not.
    pub(super) async fn endpoint_disabled(&mut self, url: &str) -> Result<Option<(i64, String)>, StoreError> {
        let row = sqlx::query(
            "SELECT disabled_at, reason FROM webhook_endpoints \
             WHERE url = $1 AND disabled_at IS NOT NULL",
        )
        .bind(url)
        .fetch_optional(&mut *self.conn)
        .await?;
        row.map(|row| Ok((row.try_get("disabled_at")?, row.try_get::<Option<String>, _>("reason")?.unwrap_or_default())))
            .transpose()
    }

    /// Disables the endpoint at `url` (`Some((since, why))`), or enables it (`None`).
    pub(super) async fn set_endpoint_disabled(
        &mut self,
        url: &str,
        disabled: Option<(i64, &str)>,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO webhook_endpoints (url, disabled_at, reason) VALUES ($1, $2, $3) \
             ON CONFLICT (url) DO UPDATE SET disabled_at = excluded.disabled_at, \
             reason = excluded.reason",
        )
        .bind(url)
        .bind(disabled.map(|(at, _)| at))
        .bind(disabled.map(|(_, why)| why))
        .execute(&mut *self.conn)
        .await?;
        Ok(())
    }
}
