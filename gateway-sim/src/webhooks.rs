//! Delivery of the `PAYMENT_STATUS_CHANGED` webhooks the ledger owes the
//! payment system, as Toss sends them.
//!
//! Each webhook is `POST`ed from a task of its own, so no answer to a client
//! waits for it, as
//! `{"eventType":"PAYMENT_STATUS_CHANGED","createdAt":"…","data":{<Payment>}}`
//! — the Payment as it stood when its status changed — with Toss's three
//! headers and, as Toss, no signature: the receiver is to ask
//! `GET /v1/payments/{paymentKey}` before it believes one. The body is the
//! same bytes on every attempt, and so is `tosspayments-webhook-transmission-id`;
//! `-retried-count` counts the retries (0 first) and `-transmission-time` is
//! the attempt's, written like a Payment's times (Toss's exact format for this
//! header is unconfirmed).
//!
//! An attempt succeeds on a 200 within [`ATTEMPT_TIMEOUT`], as Toss requires;
//! anything else (another status, a failed connection, a slow answer) is
//! retried after the next of the configured pauses — by default Toss's
//! seven, scaled down ([`WEBHOOK_RETRY_PAUSES`](crate::config::WEBHOOK_RETRY_PAUSES))
//! — then given up. Every attempt is reported to the ledger, so
//! `GET /admin/ledger` shows what was delivered. Webhooks are delivered
//! independently of one another, so one being retried (a `DONE`) may be
//! overtaken by a later one (its `CANCELED`).

use std::error::Error;
use std::time::Duration;

use reqwest::header::CONTENT_TYPE;
use reqwest::redirect::Policy;
use reqwest::{StatusCode, Url};
use serde::Serialize;

use crate::config::WebhookConfig;
use crate::ledger::Webhook;
use crate::payment::{seoul_time, webhook_time, Payment};
use crate::{now_ms, SimState};

pub const TRANSMISSION_TIME_HEADER: &str = "tosspayments-webhook-transmission-time";
pub const RETRIED_COUNT_HEADER: &str = "tosspayments-webhook-transmission-retried-count";
pub const TRANSMISSION_ID_HEADER: &str = "tosspayments-webhook-transmission-id";
pub const EVENT_TYPE: &str = "PAYMENT_STATUS_CHANGED";

/// How long one attempt may take, answer included: Toss's 10 seconds.
pub const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(10);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// The HTTP client for webhooks could not be set up.
#[derive(Debug, thiserror::Error)]
#[error("cannot build the webhook HTTP client: {0}")]
pub struct ClientError(#[from] reqwest::Error);

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct WebhookBody {
    event_type: &'static str,
    created_at: String,
    data: Payment,
}

/// Sends webhooks to one URL.
pub(crate) struct Notifier {
    client: reqwest::Client,
    url: Url,
    retry_pauses: Vec<Duration>,
}

impl Notifier {
    pub(crate) fn new(config: WebhookConfig) -> Result<Self, ClientError> {
        let client = reqwest::Client::builder()
            // The receiver is named by the configuration, never by a proxy
            // setting, and a redirect is an answer that is not a 200.
            .no_proxy()
            .redirect(Policy::none())
            .connect_timeout(CONNECT_TIMEOUT)
            .timeout(ATTEMPT_TIMEOUT)
            .build()?;
        Ok(Self {
            client,
            url: config.url,
            retry_pauses: config.retry_pauses,
        })
    }

    pub(crate) fn url(&self) -> &Url {
        &self.url
    }

    /// Delivers `webhook`, retrying after each configured pause; every
    /// attempt is recorded in `state`'s ledger.
    pub(crate) async fn deliver(&self, state: &SimState, webhook: Webhook) {
        let Webhook {
            id,
            transmission_id,
            created_at,
            payment,
        } = webhook;
        let order_id = payment.order_id.as_str();
        let status = payment.status;
        let body = WebhookBody {
            event_type: EVENT_TYPE,
            created_at: webhook_time(created_at),
            data: Payment::of(&payment),
        };
        let payload = match serde_json::to_vec(&body) {
            Ok(payload) => payload,
            Err(err) => {
                tracing::error!(order_id, ?status, "webhook not sent: {err}");
                return;
            }
        };
        let mut pauses = self.retry_pauses.iter();
        let mut retried = 0;
        loop {
            let result = self.attempt(&payload, &transmission_id, retried).await;
            let delivered = result.is_ok();
            state.with_ledger(|ledger| ledger.webhook_attempted(id, now_ms(), delivered));
            match (result, pauses.next()) {
                (Ok(()), _) => {
                    tracing::info!(order_id, ?status, retried, "webhook delivered");
                    return;
                }
                (Err(reason), Some(&pause)) => {
                    tracing::warn!(
                        order_id,
                        ?status,
                        retried,
                        retry_in_ms = pause.as_millis(),
                        "webhook not delivered: {reason}"
                    );
                    tokio::time::sleep(pause).await;
                    retried += 1;
                }
                (Err(reason), None) => {
                    tracing::error!(order_id, ?status, retried, "webhook given up: {reason}");
                    return;
                }
            }
        }
    }

    /// One `POST`; `Err` says why it does not count as delivered.
    async fn attempt(
        &self,
        payload: &[u8],
        transmission_id: &str,
        retried: u32,
    ) -> Result<(), String> {
        let response = self
            .client
            .post(self.url.clone())
            .header(CONTENT_TYPE, "application/json")
            .header(TRANSMISSION_TIME_HEADER, seoul_time(now_ms()))
            .header(RETRIED_COUNT_HEADER, retried.to_string())
            .header(TRANSMISSION_ID_HEADER, transmission_id)
            .body(payload.to_vec())
            .send()
            .await
            .map_err(|err| with_sources(&err))?;
        match response.status() {
            StatusCode::OK => Ok(()),
            status => Err(format!("answered {status}, not 200")),
        }
    }
}

/// reqwest's own message names the URL; the cause (refused, timed out…) is
/// in its sources.
fn with_sources(err: &dyn Error) -> String {
    let mut message = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        message = format!("{message}: {cause}");
        source = cause.source();
    }
    message
}
