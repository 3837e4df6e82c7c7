//! Delivery of the signed callbacks the ledger owes the payment system.
//!
//! Each callback is `POST`ed as JSON to the configured URL with the headers of
//! [`rules::callback`], from a task of its own, so no answer to a client waits
//! for it. A non-2xx answer or a failed connection is retried after
//! [`BACKOFF`]; each attempt is signed afresh, and reported to the ledger, so
//! `GET /admin/ledger` shows what was delivered. A 2xx ends it: the payment
//! system has it, and must take a callback that came twice as once.
//! Callbacks are delivered independently of one another, so one being
//! retried (an `APPROVED`) may be overtaken by a later one (its `CANCELLED`).

use std::error::Error;
use std::time::Duration;

use reqwest::header::CONTENT_TYPE;
use reqwest::redirect::Policy;
use reqwest::Url;
use rules::callback::{self, SIGNATURE_HEADER, TIMESTAMP_HEADER};

use crate::config::{CallbackConfig, CallbackSecret};
use crate::ledger::Callback;
use crate::{now_ms, SimState};

/// The pauses between attempts: five attempts in all, the last 7.5 s after
/// the first.
pub const BACKOFF: [Duration; 4] = [
    Duration::from_millis(500),
    Duration::from_secs(1),
    Duration::from_secs(2),
    Duration::from_secs(4),
];
/// How long one attempt may take, answer included.
const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(5);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// The HTTP client for callbacks could not be set up.
#[derive(Debug, thiserror::Error)]
#[error("cannot build the callback HTTP client: {0}")]
pub struct ClientError(#[from] reqwest::Error);

/// Sends callbacks to one URL, signed with one secret.
pub(crate) struct Notifier {
    client: reqwest::Client,
    url: Url,
    secret: CallbackSecret,
}

impl Notifier {
    pub(crate) fn new(config: CallbackConfig) -> Result<Self, ClientError> {
        let client = reqwest::Client::builder()
            // The receiver is named by the configuration, never by a proxy
            // setting, and a redirect is an answer that is not a 2xx.
            .no_proxy()
            .redirect(Policy::none())
            .connect_timeout(CONNECT_TIMEOUT)
            .timeout(ATTEMPT_TIMEOUT)
            .build()?;
        Ok(Self {
            client,
            url: config.url,
            secret: config.secret,
        })
    }

    pub(crate) fn url(&self) -> &Url {
        &self.url
    }

    /// Delivers `callback`, retrying as [`BACKOFF`] says; every attempt is
    /// recorded in `state`'s ledger.
    pub(crate) async fn deliver(&self, state: &SimState, callback: Callback) {
        let Callback { id, body } = callback;
        let order_id = body.order_id.as_str();
        let status = body.status;
        let payload = match serde_json::to_vec(&body) {
            Ok(payload) => payload,
            Err(err) => {
                tracing::error!(order_id, ?status, "callback not sent: {err}");
                return;
            }
        };
        let mut pauses = BACKOFF.iter();
        let mut attempt = 0;
        loop {
            attempt += 1;
            let result = self.attempt(&payload).await;
            let delivered = result.is_ok();
            state.with_ledger(|ledger| ledger.callback_attempted(id, now_ms(), delivered));
            match (result, pauses.next()) {
                (Ok(()), _) => {
                    tracing::info!(order_id, ?status, attempt, "callback delivered");
                    return;
                }
                (Err(reason), Some(&pause)) => {
                    tracing::warn!(
                        order_id,
                        ?status,
                        attempt,
                        retry_in_ms = pause.as_millis(),
                        "callback not delivered: {reason}"
                    );
                    tokio::time::sleep(pause).await;
                }
                (Err(reason), None) => {
                    tracing::error!(order_id, ?status, attempt, "callback given up: {reason}");
                    return;
                }
            }
        }
    }

    /// One signed `POST`; `Err` says why it does not count as delivered.
    async fn attempt(&self, payload: &[u8]) -> Result<(), String> {
        let timestamp_ms = i64::try_from(now_ms()).unwrap_or(i64::MAX);
        let signature = callback::sign(self.secret.as_bytes(), timestamp_ms, payload);
        let response = self
            .client
            .post(self.url.clone())
            .header(CONTENT_TYPE, "application/json")
            .header(TIMESTAMP_HEADER, timestamp_ms.to_string())
            .header(SIGNATURE_HEADER, signature)
            .body(payload.to_vec())
            .send()
            .await
            .map_err(|err| with_sources(&err))?;
        let status = response.status();
        if status.is_success() {
            Ok(())
        } else {
            Err(format!("answered {status}"))
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
