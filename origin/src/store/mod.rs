//! Where payments are kept. All SQL lives behind [`Store`]; the use cases never see it.
//!
//! SQLite ([`sqlite::SqliteStore`]) is the default; PostgreSQL ([`postgres::PostgresStore`])
//! is for several origin instances sharing one database. [`open`] chooses by the URL's
//! scheme.

mod events;
mod idempotency;
mod open;
mod payment_keys;
mod payments;
pub mod postgres;
mod reconciliation;
mod recovery;
mod sql;
mod sql_store;
pub mod sqlite;
pub mod transient;
mod users;

use async_trait::async_trait;
use serde::Serialize;

pub use self::open::{open, without_password, Backend};
use crate::crypto::CryptoError;
use crate::policy::recovery::{Decision, RecoveryState};
use crate::policy::settlement::period::Period;
use crate::policy::settlement::queue::{Item, ItemStatus, Resolution};
use crate::policy::settlement::reconcile::Finding;

/// Where a payment stands. Only `Pending` and `Unknown` may still change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum PaymentStatus {
    Pending,
    Approved,
    Failed,
    Unknown,
    /// The PG approved it after we had recorded it FAILED; we cancelled the charge.
    Refunded,
}

impl PaymentStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "PENDING",
            Self::Approved => "APPROVED",
            Self::Failed => "FAILED",
            Self::Unknown => "UNKNOWN",
            Self::Refunded => "REFUNDED",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        [
            Self::Pending,
            Self::Approved,
            Self::Failed,
            Self::Unknown,
            Self::Refunded,
        ]
        .into_iter()
        .find(|status| status.as_str() == text)
    }
}

/// A payment as stored, and as the API shows it (the payment key is never shown).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Payment {
    pub payment_id: i64,
    pub order_id: String,
    #[serde(skip)]
    pub user_id: String,
    #[serde(skip)]
    pub payment_key: String,
    pub amount: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event_id: Option<String>,
    pub status: PaymentStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approved_at: Option<i64>,
    pub created_at: i64,
    pub updated_at: i64,
    /// What recovery knows of it while it is unsettled; operators see it.
    #[serde(skip)]
    pub recovery: RecoveryState,
}

/// What TX 1 inserts.
#[derive(Debug, Clone)]
pub struct NewPayment {
    pub order_id: String,
    pub user_id: String,
    pub payment_key: String,
    pub amount: i64,
    pub event_id: Option<String>,
    pub now_ms: i64,
}

/// What TX 2 records: the settled status of a pending payment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Approved { approved_at: i64 },
    Failed { reason: String },
    Unknown,
}

/// A limited-stock event, as an operator sets it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EventSpec {
    pub event_id: String,
    pub stock: i64,
    /// The price every confirm for the event must pay.
    pub amount: i64,
}

/// An event and its units now: `reserved` (PENDING or UNKNOWN payments) + `sold`
/// (APPROVED) never exceeds `stock`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EventView {
    pub event_id: String,
    pub stock: i64,
    pub amount: i64,
    pub reserved: i64,
    pub sold: i64,
}

/// A payment key as the database holds it.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct StoredPaymentKey {
    pub payment_id: i64,
    pub order_id: String,
    pub stored: String,
}

/// A stored payment key to replace, if it is still `old`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replacement {
    pub payment_id: i64,
    pub old: String,
    pub new: String,
}

/// A user who can log in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct User {
    pub id: String,
    pub username: String,
    /// argon2id, PHC string format.
    pub password_hash: String,
}

/// A recovery lease: who holds it (a token of one recovery's life), and until when.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lease<'a> {
    pub holder: &'a str,
    pub until_ms: i64,
}

/// An Idempotency-Key claim: who, which key, and what request it was first used for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdempotencyClaim {
    pub user_id: String,
    pub key: String,
    /// SHA-256 of the request body, hex.
    pub request_hash: String,
    /// How long a claim in flight keeps others out (bounds the effect of a crash).
    pub lease_ms: i64,
    /// How long a record is kept, from its creation.
    pub retain_ms: i64,
}

/// A response kept for replay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredResponse {
    pub status: u16,
    /// JSON text, replayed byte for byte.
    pub body: String,
}

/// What a claim found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claimed {
    /// The key is new: this request runs.
    Started,
    /// The key was in flight past its lease (its request died): this request runs,
    /// and must expect that the first one may have got partway.
    Resumed,
    /// Another request with this key is running, until at most `until_ms`.
    InFlight { until_ms: i64 },
    /// The key was used for another request body.
    Mismatch,
    /// The key's request finished: its response, to replay.
    Done(StoredResponse),
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("a payment for this order id already exists")]
    DuplicateOrder,
    #[error("a user with this name already exists")]
    DuplicateUser,
    #[error("no payment with id {0}")]
    NoSuchPayment(i64),
    /// The event has no unit left to reserve.
    #[error("the event is sold out")]
    SoldOut,
    /// The payment's amount is not the event's price.
    #[error("the event's price is {price}")]
    WrongAmount { price: i64 },
    /// An event's stock cannot go below what is already reserved or sold.
    #[error("{committed} units are already reserved or sold")]
    StockBelowCommitted { committed: i64 },
    /// A sealed column did not open (altered, moved, or its KEK version is gone), or a
    /// value could not be sealed.
    #[error("sealed column: {0}")]
    Crypto(#[from] CryptoError),
    /// No database connection came free within the acquire timeout.
    #[error("no database connection came free in time")]
    Busy,
    #[error("database: {0}")]
    Database(sqlx::Error),
}

impl From<sqlx::Error> for StoreError {
    fn from(err: sqlx::Error) -> Self {
        match err {
            sqlx::Error::PoolTimedOut => Self::Busy,
            other => Self::Database(other),
        }
    }
}

#[async_trait]
pub trait Store: Send + Sync + 'static {
    /// TX 1: inserts the payment as PENDING and commits. For an event with stock, it
    /// reserves a unit in the same statement or transaction: `SoldOut` when none is
    /// left, `WrongAmount` when the amount is not the event's price.
    async fn insert_pending(&self, payment: NewPayment) -> Result<Payment, StoreError>;

    /// TX 2: records the outcome of a payment that is still PENDING, and returns the
    /// payment as it now stands. A payment that already left PENDING is left as it is.
    async fn record_outcome(
        &self,
        payment_id: i64,
        outcome: Outcome,
        now_ms: i64,
    ) -> Result<Payment, StoreError>;

    /// The user's payment for `order_id`; another user's payment is not found.
    async fn payment_by_order(
        &self,
        user_id: &str,
        order_id: &str,
    ) -> Result<Option<Payment>, StoreError>;

    /// The user's most recent payments, newest first.
    async fn recent_payments(&self, user_id: &str, limit: u32) -> Result<Vec<Payment>, StoreError>;

    /// Claims an Idempotency-Key for a request, atomically with any concurrent claim
    /// of the same key. A record older than `retain_ms` counts as absent.
    async fn claim_idempotency_key(
        &self,
        claim: &IdempotencyClaim,
        now_ms: i64,
    ) -> Result<Claimed, StoreError>;

    /// Stores the response of a claimed key's request, for replay.
    async fn finish_idempotency_key(
        &self,
        user_id: &str,
        key: &str,
        response: &StoredResponse,
    ) -> Result<(), StoreError>;

    /// Forgets a claimed key whose request did nothing, so a retry runs afresh.
    async fn release_idempotency_key(&self, user_id: &str, key: &str) -> Result<(), StoreError>;

    /// Deletes records created before `before_ms`; returns how many.
    async fn purge_idempotency_keys(&self, before_ms: i64) -> Result<u64, StoreError>;

    /// The payment with this id.
    async fn payment_by_id(&self, payment_id: i64) -> Result<Payment, StoreError>;

    /// The payment for `order_id`, whoever owns it (PG callbacks name only the order).
    async fn payment_by_order_id(&self, order_id: &str) -> Result<Option<Payment>, StoreError>;

    /// Payments in `status`, oldest first.
    async fn payments_with_status(
        &self,
        status: PaymentStatus,
        limit: u32,
    ) -> Result<Vec<Payment>, StoreError>;

    /// Claims up to `limit` payments due for recovery — UNKNOWN ones, PENDING ones
    /// created before `pending_before_ms` (a confirm that died), and FAILED ones with a
    /// refund due — whose next attempt is due at `now_ms` and whose lease (if any) has
    /// run out, oldest due first; each is leased to `lease`. Concurrent claims never
    /// return the same payment.
    async fn claim_for_recovery(
        &self,
        now_ms: i64,
        pending_before_ms: i64,
        lease: Lease<'_>,
        limit: u32,
    ) -> Result<Vec<Payment>, StoreError>;

    /// Extends to `lease.until_ms` the leases `lease.holder` still holds at `now_ms`
    /// among `payment_ids`; answers the ids still held. A lease that ran out, or that
    /// another holder took since, is not renewed.
    async fn renew_recovery_leases(
        &self,
        payment_ids: &[i64],
        lease: Lease<'_>,
        now_ms: i64,
    ) -> Result<Vec<i64>, StoreError>;

    /// Records what recovery decided, if the payment is still PENDING or UNKNOWN;
    /// `None` when it was settled meanwhile. A payment asked about again later is
    /// UNKNOWN from now on. Its lease ends if `lease_holder` holds it: another holder's
    /// lease stays, so a recovery that lost its lease cannot free the payment for a third.
    async fn record_recovery(
        &self,
        payment_id: i64,
        decision: &Decision,
        lease_holder: &str,
        now_ms: i64,
    ) -> Result<Option<Payment>, StoreError>;

    /// Creates an event or sets its stock and price; `StockBelowCommitted` when the
    /// stock would fall below the units already reserved or sold.
    async fn upsert_event(&self, event: &EventSpec, now_ms: i64) -> Result<EventView, StoreError>;

    /// The event and its units now.
    async fn event(&self, event_id: &str) -> Result<Option<EventView>, StoreError>;

    /// Marks a FAILED payment the PG approved after all: its charge must be cancelled.
    /// Recovery claims it from `next_attempt_at` until [`Store::record_refunded`].
    /// False when the payment is not FAILED.
    async fn mark_refund_due(
        &self,
        payment_id: i64,
        next_attempt_at: i64,
        now_ms: i64,
    ) -> Result<bool, StoreError>;

    /// Records that a late approval was cancelled at the PG: FAILED (refund due) →
    /// REFUNDED, with `note` for operators. `None` when it was not due.
    async fn record_refunded(
        &self,
        payment_id: i64,
        note: &str,
        now_ms: i64,
    ) -> Result<Option<Payment>, StoreError>;

    /// Our APPROVED payments approved in `[from_ms, to_ms)`: order id and amount.
    async fn approved_between(
        &self,
        from_ms: i64,
        to_ms: i64,
    ) -> Result<Vec<(String, i64)>, StoreError>;

    /// Queues the exceptions found reconciling `period` as PENDING items, one per
    /// distinct finding: one already known (pending or resolved) is not added again.
    /// Returns how many were added.
    async fn queue_exceptions(
        &self,
        findings: &[Finding],
        period: &Period,
        now_ms: i64,
    ) -> Result<u64, StoreError>;

    /// Closes the pending AMOUNT_MISMATCH and INTERNAL_ONLY items of orders a file has
    /// now matched, with [`CLOSED_BY_A_MATCH`](crate::policy::settlement::queue::CLOSED_BY_A_MATCH). Returns how many.
    async fn close_matched(&self, order_ids: &[String], now_ms: i64) -> Result<u64, StoreError>;

    /// Queue items in `status` (all when `None`) with ids above `after_id`, oldest first.
    async fn reconciliation_items(
        &self,
        status: Option<ItemStatus>,
        after_id: i64,
        limit: u32,
    ) -> Result<Vec<Item>, StoreError>;

    /// How many items are PENDING.
    async fn pending_reconciliation_items(&self) -> Result<u64, StoreError>;

    /// Resolves a pending item with an operator's note.
    async fn resolve_reconciliation_item(
        &self,
        id: i64,
        note: &str,
        now_ms: i64,
    ) -> Result<Resolution, StoreError>;

    /// Payment keys as stored (sealed, or in plain text from before encryption) that
    /// are not sealed under KEK `version`, of payments with ids above `after_id`, by id.
    async fn payment_keys_not_on(
        &self,
        version: u32,
        after_id: i64,
        limit: u32,
    ) -> Result<Vec<StoredPaymentKey>, StoreError>;

    /// How many payment keys are not sealed under KEK `version`.
    async fn count_payment_keys_not_on(&self, version: u32) -> Result<u64, StoreError>;

    /// Stores each payment's new sealed key if its stored key is still the old one, in
    /// one transaction; returns how many were replaced.
    async fn replace_payment_keys(&self, replacements: &[Replacement]) -> Result<u64, StoreError>;

    /// Adds a user; the name must be new.
    async fn insert_user(&self, user: &User, now_ms: i64) -> Result<(), StoreError>;

    /// Replaces a user's password hash; false when there is no such user.
    async fn set_password_hash(
        &self,
        username: &str,
        password_hash: &str,
        now_ms: i64,
    ) -> Result<bool, StoreError>;

    /// The user with this (normalised) name.
    async fn user_by_name(&self, username: &str) -> Result<Option<User>, StoreError>;
}
