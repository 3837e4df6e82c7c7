//! Every outcome reaches the merchant: the outbox's events (`store/outbox.rs`, written
//! by trigger in the same transaction as each change) delivered as signed webhooks
//! (Standard Webhooks, `signature.rs`) to `MERCHANT_WEBHOOK_URL` (`config.rs`).
//!
//! - **At least once, in order per order.** The loop publishes what was committed,
//!   claims the heads of the orders' lines under a lease, and delivers each; the next
//!   event of an order is claimable only once the one before it is acknowledged.
//!   Different orders go out in parallel, `MERCHANT_WEBHOOK_CONCURRENCY` at most.
//! - **Crashes.** A lease outlives the receiver's longest answer; if the process dies
//!   mid-delivery, the event is claimed again when its lease runs out — by any instance
//!   on the database (`FOR UPDATE SKIP LOCKED` on PostgreSQL) — and sent with the same
//!   `webhook-id`, so the receiver can drop the repeat.
//! - **A receiver cannot hurt us.** Its answer is bounded in time
//!   (`MERCHANT_WEBHOOK_TIMEOUT_MS`) and its body read to [`MAX_ANSWER_BYTES`] at most;
//!   a failure is retried with backoff and jitter for 3 days (`policy::delivery`), then
//!   kept as a dead letter; 410 Gone disables the endpoint until an operator enables it.
//!   Delivery runs beside the payments, on its own connections and tasks, its requests
//!   to the merchant built, signed and sent on a thread and runtime of their own
//!   (`apart.rs`); the attempts under way stop with the loop.

mod apart;
pub mod config;
pub mod message;
pub mod signature;

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Semaphore;
use tokio::task::JoinSet;

use self::apart::Apart;
use self::config::MerchantWebhooks;
use crate::clock::now_ms;
use crate::metrics::Metrics;
use crate::policy::delivery::{verdict, Verdict};
use crate::store::{Ack, Attempt, Claim, Failure, Lease, OutboxEvent, Store, StoreError};

/// The most of a receiver's answer read; the rest is dropped with the connection.
pub const MAX_ANSWER_BYTES: usize = 64 * 1024;
/// How long the loop rests when nothing is due.
const IDLE: Duration = Duration::from_millis(50);
/// How long it rests between passes that started deliveries: the attempts that end
/// meanwhile are recorded together, in one transaction, at the next pass.
const TICK: Duration = Duration::from_millis(10);
/// How long it rests while the endpoint is disabled, or the database fails.
const HELD: Duration = Duration::from_secs(1);
/// A lease's margin over the receiver's longest answer.
const LEASE_MARGIN_MS: i64 = 20_000;

/// The delivery of the outbox's events to the merchant.
pub struct Delivery {
    store: Arc<dyn Store>,
    metrics: Arc<Metrics>,
    /// The endpoint, its settings, and what signs and sends each message (on the
    /// thread of `apart`).
    merchant: Arc<Merchant>,
    /// Where the requests to the merchant run (`apart.rs`).
    apart: Apart,
    /// This instance's name on its leases.
    holder: String,
    /// When this instance was answered 410 (0: not since it last saw the endpoint
    /// enabled): what it claimed meanwhile is put back unsent. The database tells the
    /// other instances; this is what a claim made just before it learned is checked by.
    gone_at: AtomicI64,
    /// Held while a 410 is recorded.
    recording_gone: tokio::sync::Mutex<()>,
    /// Attempts ended and not yet recorded: their events stay leased until they are.
    ended: Mutex<Vec<Attempt>>,
}

impl Delivery {
    pub fn new(
        store: Arc<dyn Store>,
        metrics: Arc<Metrics>,
        config: MerchantWebhooks,
        currency: &str,
    ) -> anyhow::Result<Self> {
        let http = reqwest::Client::builder()
            .timeout(config.timeout)
            .redirect(reqwest::redirect::Policy::none())
            .build()?;
        let mut random = [0u8; 8];
        getrandom::fill(&mut random).map_err(|err| anyhow::anyhow!("no randomness: {err}"))?;
        let merchant = Merchant {
            http,
            config,
            currency: currency.to_owned(),
        };
        Ok(Self {
            store,
            metrics,
            merchant: Arc::new(merchant),
            apart: Apart::start("merchant-webhooks")?,
            holder: format!("webhooks-{}", u64::from_le_bytes(random)),
            gone_at: AtomicI64::new(0),
            recording_gone: tokio::sync::Mutex::new(()),
            ended: Mutex::new(Vec::new()),
        })
    }

    /// Delivers until dropped (then [`Delivery::flush`] records the attempts that ended).
    /// The attempts under way are dropped with it — one ending just then may go
    /// unrecorded —: their events are sent again when their leases run out, as after
    /// a crash.
    pub async fn run(self: Arc<Self>) {
        let slots = Arc::new(Semaphore::new(self.config().concurrency as usize));
        let mut under_way = JoinSet::new();
        loop {
            while let Some(ended) = under_way.try_join_next() {
                if ended.is_err_and(|err| err.is_panic()) {
                    self.panicked(None);
                }
            }
            match self.next_batch(&slots, &mut under_way).await {
                Ok(0) => tokio::time::sleep(IDLE).await,
                Ok(_) => tokio::time::sleep(TICK).await,
                Err(err) => {
                    tracing::warn!(error = %err, "merchant webhooks: the outbox could not be read");
                    tokio::time::sleep(HELD).await;
                }
            }
        }
    }

    /// Records the attempts that ended so far — acknowledged, failed, held back — in
    /// one write (publishing what was committed beside them), and forgets them once
    /// written: a write that fails or is cancelled
    /// leaves them for the next. One flush at a time: the loop's, or, once the loop has
    /// stopped, the caller's. (Those not written when the process dies are delivered
    /// again once their leases run out, under the same `webhook-id`.)
    pub async fn flush(&self) -> Result<(), StoreError> {
        self.pass(None).await.map(drop)
    }

    /// One pass in one write: the attempts that ended so far recorded, what was
    /// committed published, and `claim` claimed; the recorded attempts forgotten once
    /// written (a write that fails or is cancelled leaves them for the next).
    async fn pass(&self, claim: Option<Claim<'_>>) -> Result<Vec<OutboxEvent>, StoreError> {
        let ended = self.ended().clone();
        // Read first: most passes of a quiet outbox have nothing to write, and a write
        // would take SQLite's one write lock from the payments for nothing.
        let due_at = claim.map(|claim| claim.now_ms);
        if ended.is_empty() && !self.store.outbox_work(due_at).await? {
            return Ok(Vec::new());
        }
        // The outer error: nothing was recorded. The ends are not held hostage by the
        // claim: a pass that fails records them alone, so receivers that answered are
        // not sent the event again when its lease runs out, and then says why it failed.
        let passed = match self.store.delivery_pass(&ended, claim).await {
            Err(err) if claim.is_some() && !ended.is_empty() => self
                .store
                .delivery_pass(&ended, None)
                .await
                .map(|_| Err(err)),
            passed => passed.map(Ok),
        }?;
        // Only appended to meanwhile: the written ones are still the first.
        self.ended().drain(..ended.len());
        passed
    }

    /// A delivery panicked, its request or the rest: counted, and its event sent again
    /// when its lease runs out.
    fn panicked(&self, id: Option<&str>) {
        self.metrics.task_panicked("webhook");
        tracing::error!(
            id,
            "a webhook's delivery panicked: sent again when its lease runs out"
        );
    }

    fn config(&self) -> &MerchantWebhooks {
        &self.merchant.config
    }

    fn ended(&self) -> std::sync::MutexGuard<'_, Vec<Attempt>> {
        self.ended
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// An attempt at `event` that did not deliver it, to be recorded at the next pass.
    fn failed(&self, event: &OutboxEvent, status: Option<u16>, error: &str, next: Option<i64>) {
        self.ended().push(Attempt::Failed(Failure {
            id: event.id,
            status,
            error: error.to_owned(),
            next_attempt_at: next,
        }));
    }

    /// Once a slot is free: in one write, records the attempts that ended, publishes,
    /// and claims what is due into the free slots (nothing while the endpoint is
    /// disabled); then starts each delivery. How many were started.
    async fn next_batch(
        self: &Arc<Self>,
        slots: &Arc<Semaphore>,
        under_way: &mut JoinSet<()>,
    ) -> Result<usize, StoreError> {
        // Wait for a slot before claiming, so nothing claimed waits out its lease.
        drop(slots.acquire().await);
        let checked_at = now_ms();
        // Read before the pass: a 410 recorded among its attempts was written first.
        let disabled = self
            .store
            .endpoint_disabled(self.config().url.as_str())
            .await?
            .is_some();
        let gone_at = self.gone_at.load(Ordering::SeqCst);
        if !disabled && gone_at != 0 && gone_at < checked_at {
            // Enabled since this instance was answered 410 (unless it was answered again).
            let _ = self
                .gone_at
                .compare_exchange(gone_at, 0, Ordering::SeqCst, Ordering::SeqCst);
        }
        let now = now_ms();
        let claim = Claim {
            now_ms: now,
            lease: Lease {
                holder: &self.holder,
                until_ms: now + self.config().timeout.as_millis() as i64 + LEASE_MARGIN_MS,
            },
            limit: slots.available_permits().max(1) as u32,
        };
        let claimed = self.pass((!disabled).then_some(claim)).await?;
        if disabled {
            tokio::time::sleep(HELD).await;
            return Ok(0);
        }
        let started = claimed.len();
        for event in claimed {
            let Ok(slot) = slots.clone().acquire_owned().await else {
                break;
            };
            let delivery = self.clone();
            under_way.spawn(async move {
                delivery.deliver(&event).await;
                drop(slot);
            });
        }
        Ok(started)
    }

    /// One attempt at `event`; how it ended is recorded at the next pass.
    async fn deliver(&self, event: &OutboxEvent) {
        let id = message::message_id(event);
        if self.gone_at.load(Ordering::SeqCst) != 0 {
            let held = "not sent: the endpoint is disabled";
            self.failed(event, None, held, Some(now_ms()));
            return;
        }
        let (merchant, message) = (self.merchant.clone(), event.clone());
        let sent = self.apart.run(async move { merchant.post(&message).await });
        // The request panicked (a delivery that stops drops this task, and the request
        // with it): the event is sent again after its lease.
        let Some(answer) = sent.await else {
            self.panicked(Some(&id));
            return;
        };
        let now = now_ms();
        match verdict(answer) {
            Verdict::Delivered(status) => {
                self.metrics.webhook_attempt("delivered");
                self.ended().push(Attempt::Delivered(Ack {
                    id: event.id,
                    status,
                    at_ms: now,
                }));
            }
            Verdict::Gone => {
                self.metrics.webhook_attempt("gone");
                let why = "answered 410 Gone";
                // One write for the deliveries answered 410 together, the loop's own (the
                // background lane): the others wait for it, and find it made.
                let recording = self.recording_gone.lock().await;
                if self.gone_at.load(Ordering::SeqCst) == 0 {
                    tracing::error!(url = %self.config().url, "the merchant's endpoint answered 410 Gone: disabled until an operator enables it");
                    let url = self.config().url.as_str();
                    let gone = self.store.set_endpoint_disabled(url, Some((now, why)));
                    if let Err(err) = gone.await {
                        tracing::warn!(%id, error = %err, "the endpoint's 410 could not be recorded: the webhook is tried again when its lease runs out");
                        return;
                    }
                    // Known disabled from now on, before the event is claimable again.
                    self.gone_at.store(now_ms().max(1), Ordering::SeqCst);
                }
                drop(recording);
                self.failed(event, Some(410), why, Some(now));
            }
            Verdict::Failed { status, error } => {
                let attempts = u32::try_from(event.attempts).unwrap_or(u32::MAX);
                let next =
                    self.config()
                        .schedule
                        .next_attempt(attempts, event.occurred_at, now, jitter());
                self.metrics
                    .webhook_attempt(if next.is_some() { "failed" } else { "dead" });
                if next.is_none() {
                    tracing::error!(%id, order_id = %event.order_key, %error, "a webhook could not be delivered in time: kept as a dead letter");
                }
                self.failed(event, status, &error, next);
            }
        }
    }
}

/// The merchant's endpoint, as configured, and the client that sends to it: shared
/// with the thread the requests run on.
struct Merchant {
    http: reqwest::Client,
    config: MerchantWebhooks,
    currency: String,
}

impl Merchant {
    /// Builds, signs and posts `event`'s message: the answer's status, or why none came.
    async fn post(&self, event: &OutboxEvent) -> Result<u16, String> {
        let id = message::message_id(event);
        let body = message::message(event, &self.currency).to_string();
        let timestamp = now_ms() / 1_000;
        let signature = self.config.secrets.sign(&id, timestamp, body.as_bytes());
        let request = self
            .http
            .post(self.config.url.clone())
            .header("content-type", "application/json")
            .header("webhook-id", &id)
            .header("webhook-timestamp", timestamp.to_string())
            .header("webhook-signature", signature)
            .body(body);
        match request.send().await {
            Ok(mut response) => {
                let status = response.status().as_u16();
                read_bounded(&mut response).await;
                Ok(status)
            }
            Err(err) => Err(describe(&err)),
        }
    }
}

/// Reads at most [`MAX_ANSWER_BYTES`] of the answer's body; the rest is never read.
async fn read_bounded(response: &mut reqwest::Response) {
    let mut read = 0;
    while read < MAX_ANSWER_BYTES {
        match response.chunk().await {
            Ok(Some(chunk)) => read += chunk.len(),
            _ => break,
        }
    }
}

fn describe(err: &reqwest::Error) -> String {
    if err.is_timeout() {
        "no answer in time".to_owned()
    } else if err.is_connect() {
        "could not connect".to_owned()
    } else {
        format!("{err}")
    }
}

/// A number in [0, 1), for the retries' jitter.
fn jitter() -> f64 {
    let mut random = [0u8; 8];
    if getrandom::fill(&mut random).is_err() {
        return 0.5;
    }
    (u64::from_le_bytes(random) >> 11) as f64 / (1u64 << 53) as f64
}
