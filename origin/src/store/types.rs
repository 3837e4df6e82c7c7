//! What the store takes and gives: payments and their outcomes, events, keys, users,
//! Idempotency-Key claims, recovery leases, and the store's errors.

use rules::confirm::REDACTED;
use serde::Serialize;

use crate::crypto::CryptoError;
use crate::policy::breaker::BreakerMode;
use crate::policy::recovery::RecoveryState;

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

/// A payment as stored, and as the API shows it (the payment key is never shown, in
/// answers or in `Debug`).
#[derive(Clone, PartialEq, Eq, Serialize)]
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
    /// What the PG knows it by.
    #[serde(skip)]
    pub gateway: GatewayKeys,
}

/// What the PG knows a payment by, besides its order id.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GatewayKeys {
    /// The `Idempotency-Key` of its confirm, stored before the call.
    pub confirm_key: String,
    /// The PG's own id for it, once an answer named one (Stripe's `pi_…`).
    pub reference: Option<String>,
}

impl GatewayKeys {
    /// A new payment's keys: its confirm's `Idempotency-Key`, unique to this payment —
    /// the order id and 64 random bits — so that no two orders ever share one, even
    /// after a database was reset. At most 64 + 25 characters (Toss allows 300).
    pub fn new(order_id: &str, random: [u8; 8]) -> Self {
        Self {
            confirm_key: format!("{order_id}:confirm:{}", hex::encode(random)),
            reference: None,
        }
    }

    /// The confirm key of a payment made before keys were stored: derived from its order.
    pub fn legacy(order_id: &str) -> String {
        format!("{order_id}:confirm")
    }
}

/// What TX 1 inserts; its `Debug` never shows the payment key.
#[derive(Clone)]
pub struct NewPayment {
    pub order_id: String,
    pub user_id: String,
    pub payment_key: String,
    pub amount: i64,
    pub event_id: Option<String>,
    /// The confirm's `Idempotency-Key` at the PG, stored with the payment.
    pub confirm_key: String,
    pub now_ms: i64,
}

impl std::fmt::Debug for Payment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Payment")
            .field("payment_id", &self.payment_id)
            .field("order_id", &self.order_id)
            .field("user_id", &self.user_id)
            .field("payment_key", &REDACTED)
            .field("amount", &self.amount)
            .field("event_id", &self.event_id)
            .field("status", &self.status)
            .field("failure_reason", &self.failure_reason)
            .field("approved_at", &self.approved_at)
            .field("created_at", &self.created_at)
            .field("updated_at", &self.updated_at)
            .field("gateway", &self.gateway)
            .finish()
    }
}

impl std::fmt::Debug for NewPayment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NewPayment")
            .field("order_id", &self.order_id)
            .field("user_id", &self.user_id)
            .field("payment_key", &REDACTED)
            .field("amount", &self.amount)
            .field("event_id", &self.event_id)
            .field("confirm_key", &self.confirm_key)
            .field("now_ms", &self.now_ms)
            .finish()
    }
}

/// An operator's setting of a guard's breaker, shared by every instance on the database.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BreakerControl {
    pub mode: BreakerMode,
    pub reason: String,
    /// Who set it: the operator's address.
    pub by: String,
    pub at_ms: i64,
    /// Grows with every setting: the later of two is the one with the higher version.
    pub version: i64,
}

/// A slot of a shared sliding window, and who took it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    pub slot: i32,
    pub holder: i64,
}

/// What TX 2 records: the settled status of a pending payment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Approved {
        approved_at: i64,
    },
    Failed {
        reason: String,
    },
    Unknown,
    /// UNKNOWN, and kept for an operator: the PG approved something other than the order
    /// (another amount, currency or order id).
    Flagged {
        flag: String,
    },
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

/// What is recorded for a key, read without claiming it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IdempotencyRecord {
    /// The key was used for another request body.
    Mismatch,
    /// The key's request is running, its lease until `until_ms`.
    InFlight { until_ms: i64 },
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
    /// The payment names an event the origin was never told of: it has no stock or
    /// price to hold it to.
    #[error("no such event")]
    UnknownEvent,
    /// The payment's amount is not the event's price.
    #[error("the event's price is {price}")]
    WrongAmount { price: i64 },
    /// An event's stock cannot go below what is already reserved or sold.
    #[error("{committed} units are already reserved or sold")]
    StockBelowCommitted { committed: i64 },
    /// A room change made from a version that is no longer the room's: `current` is.
    #[error("the room is at version {current}")]
    StaleVersion { current: u64 },
    /// A sealed column did not open (altered, moved, or its KEK version is gone), or a
    /// value could not be sealed.
    #[error("sealed column: {0}")]
    Crypto(#[from] CryptoError),
    /// No database connection came free within the acquire timeout.
    #[error("no database connection came free in time")]
    Busy,
    #[error("database: {0}")]
    Database(sqlx::Error),
    /// A write ran, but the batch it joined did not commit (SQLite's one writer,
    /// `group_commit.rs`), or the store closed before the commit was known.
    #[error("database: the write did not commit: {0}")]
    NotCommitted(String),
}

impl From<sqlx::Error> for StoreError {
    fn from(err: sqlx::Error) -> Self {
        match err {
            sqlx::Error::PoolTimedOut => Self::Busy,
            other => Self::Database(other),
        }
    }
}
