//! The outbox's side of the store (`payment_events`, written by the triggers of its
//! migration): committed events given their place in the published order, the heads of
//! each order's line claimed for delivery under a lease, each attempt's result, the
//! backlog for operators, the dead letters sent again, and the events paged through by
//! position.
//!
//! **The published order.** An event's `position` is given once it is committed — on
//! SQLite perhaps in the very batch that commits it, written after it by the one
//! writer —, by one publisher at a time ([`Dialect::PUBLISH_LOCK`]), in id order: a
//! reader paging by position never skips an event committed after one it has read.
//! Within an order, ids already follow the commits — the payment's row lock makes a
//! change wait for the one before it — so positions keep an order's events in the
//! order they happened.
//!
//! **In order per order.** Only the head of an order's line is ever claimed: an event
//! whose order has an earlier event not yet delivered waits — behind a dead letter too,
//! until an operator sends it again.
//!
//! [`Dialect::PUBLISH_LOCK`]: super::sql_store::Dialect::PUBLISH_LOCK

use async_trait::async_trait;

use super::sql::sql_bounds;
use super::sql_store::{on, Dialect, SqlStore};
use super::{Lease, StoreError};

/// One event of the outbox, as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutboxEvent {
    pub id: i64,
    pub position: Option<i64>,
    /// The order it belongs to (its order id): the line it is delivered in.
    pub order_key: String,
    /// `payment.created`, `payment.approved`, … `reconciliation.finding`.
    pub kind: String,
    pub payment_id: Option<i64>,
    pub status: Option<String>,
    pub amount: Option<i64>,
    pub event_id: Option<String>,
    pub failure_reason: Option<String>,
    pub flag: Option<String>,
    /// A finding's category.
    pub finding: Option<String>,
    pub external_amount: Option<i64>,
    pub occurred_at: i64,
    /// `PENDING`, `DELIVERED` or `DEAD`.
    pub delivery: String,
    pub attempts: i64,
    pub last_status: Option<i64>,
    pub last_error: Option<String>,
    pub last_attempt_at: Option<i64>,
    pub delivered_at: Option<i64>,
}

/// How one attempt at an event ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Attempt {
    Delivered(Ack),
    Failed(Failure),
}

/// The receiver acknowledged event `id` with `status` (2xx) at `at_ms`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ack {
    pub id: i64,
    pub status: u16,
    pub at_ms: i64,
}

/// An attempt at event `id` did not deliver it: tried again at `next_attempt_at`, or —
/// without one — dead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub id: i64,
    pub status: Option<u16>,
    pub error: String,
    pub next_attempt_at: Option<i64>,
}

/// What a delivery pass claims: up to `limit` events due at `now_ms`, under `lease`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Claim<'a> {
    pub now_ms: i64,
    pub lease: Lease<'a>,
    pub limit: u32,
}

/// What waits to be delivered.
#[derive(Debug, Clone, Default)]
pub struct Backlog {
    pub pending: i64,
    /// When the oldest event waiting happened.
    pub oldest_at: Option<i64>,
    pub dead: i64,
    /// The latest attempts that failed, of events still waiting, newest first.
    pub failing: Vec<OutboxEvent>,
    /// The dead letters, newest first.
    pub dead_letters: Vec<OutboxEvent>,
}

/// The outbox's side of the store (a part of [`super::Store`]).
#[async_trait]
pub trait Outbox {
    /// Gives the committed events without a place one, in commit order; how many.
    async fn publish_events(&self) -> Result<u64, StoreError>;

    /// One pass of the delivery loop, in one transaction (one write where three would
    /// each take SQLite's one write lock from the payments, and a sync): records how the
    /// `ended` attempts ended — one at an event no longer pending changes nothing —,
    /// publishes the committed events, then claims what `claim` asks: published events
    /// due, each the head of its order's line and not leased, in their published order.
    async fn delivery_pass(
        &self,
        ended: &[Attempt],
        claim: Option<Claim<'_>>,
    ) -> Result<Vec<OutboxEvent>, StoreError>;

    /// Whether a delivery pass with nothing to record has anything to write: a committed
    /// event waiting for its place, or, at `due_at_ms`, one due for delivery. Read
    /// before the pass, outside SQLite's one writer's turn.
    async fn outbox_work(&self, due_at_ms: Option<i64>) -> Result<bool, StoreError>;

    /// Sends dead letter `id` again from `now_ms`; false when it is none.
    async fn redeliver(&self, id: i64, now_ms: i64) -> Result<bool, StoreError>;

    /// The published events after position `after`, at most `limit`, in order.
    async fn payment_events(&self, after: i64, limit: u32) -> Result<Vec<OutboxEvent>, StoreError>;

    /// What waits to be delivered, with the latest `listed` failures and dead letters.
    async fn webhook_backlog(&self, listed: u32) -> Result<Backlog, StoreError>;

    /// Since when and why the endpoint at `url` takes no delivery, if it does not.
    async fn endpoint_disabled(&self, url: &str) -> Result<Option<(i64, String)>, StoreError>;

    /// Disables the endpoint at `url` (`Some((since, why))`: the delivery loop's record of
    /// a 410 Gone) or enables it (`None`: an operator's). A background write on SQLite:
    /// the loop's is, and an operator does not miss the few milliseconds.
    async fn set_endpoint_disabled(
        &self,
        url: &str,
        disabled: Option<(i64, &str)>,
    ) -> Result<(), StoreError>;
}

sql_bounds! {
    @impl (#[async_trait] impl<DB: Dialect> Outbox for SqlStore<DB>)

    async fn publish_events(&self) -> Result<u64, StoreError> {
        on!(self, background, |sql| sql.publish_events(DB::PUBLISH_LOCK))
    }

    async fn delivery_pass(
        &self,
        ended: &[Attempt],
        claim: Option<Claim<'_>>,
    ) -> Result<Vec<OutboxEvent>, StoreError> {
        let locks = (DB::PUBLISH_LOCK, DB::CLAIM_LOCK);
        on!(self, background, |sql| sql.delivery_pass(locks, ended, claim))
    }

    async fn outbox_work(&self, due_at_ms: Option<i64>) -> Result<bool, StoreError> {
        on!(self, read, |sql| sql.outbox_work(due_at_ms))
    }

    async fn redeliver(&self, id: i64, now_ms: i64) -> Result<bool, StoreError> {
        on!(self, write, |sql| sql.redeliver(id, now_ms))
    }

    async fn payment_events(&self, after: i64, limit: u32) -> Result<Vec<OutboxEvent>, StoreError> {
        on!(self, read, |sql| sql.payment_events(after, limit))
    }

    async fn webhook_backlog(&self, listed: u32) -> Result<Backlog, StoreError> {
        on!(self, read, |sql| sql.webhook_backlog(listed))
    }

    async fn endpoint_disabled(&self, url: &str) -> Result<Option<(i64, String)>, StoreError> {
        on!(self, read, |sql| sql.endpoint_disabled(url))
    }

    async fn set_endpoint_disabled(
        &self,
        url: &str,
        disabled: Option<(i64, &str)>,
    ) -> Result<(), StoreError> {
        on!(self, background, |sql| sql.set_endpoint_disabled(url, disabled))
    }
}
