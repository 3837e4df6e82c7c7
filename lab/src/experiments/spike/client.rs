//! One spike client: it logs in once, then enters the event's queue, polls until
//! admitted and confirms a payment, again and again until the run ends, pausing only
//! when an answer says so. Every request is a [`Hit`].

use std::time::{Duration, Instant};

use reqwest::{RequestBuilder, StatusCode};
use serde_json::{json, Value};

use super::{EVENT, PASSWORD, PAUSE, PRICE};
use crate::load::Sample;

/// What a client sends.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Login,
    Enter,
    Status,
    Confirm,
}

impl Kind {
    /// In the order of the report's columns.
    pub(super) const ALL: [Kind; 4] = [Kind::Login, Kind::Enter, Kind::Status, Kind::Confirm];
}

/// One request of one client.
pub(super) struct Hit {
    pub(super) kind: Kind,
    pub(super) sample: Sample,
}

/// An answer as a client reads it.
struct Answer {
    status: StatusCode,
    body: Value,
    retry_after: Option<Duration>,
}

/// One client: its requests so far, and when the test ends.
pub(super) struct Client {
    pub(super) http: reqwest::Client,
    pub(super) edge: String,
    pub(super) user: String,
    /// Order ids are `{orders}-{n}`.
    pub(super) orders: String,
    pub(super) start: Instant,
    pub(super) end: Instant,
    pub(super) hits: Vec<Hit>,
}

impl Client {
    pub(super) async fn run(mut self) -> Vec<Hit> {
        let Some(token) = self.login().await else {
            return self.hits;
        };
        let mut order = 0;
        while self.has_time() {
            if self.admitted(&token).await {
                order += 1;
                self.confirm(&token, order).await;
            }
        }
        self.hits
    }

    fn has_time(&self) -> bool {
        Instant::now() < self.end
    }

    /// Sleeps `wait`, or until the end of the test if that comes first.
    async fn pause(&self, wait: Duration) {
        tokio::time::sleep_until(self.end.min(Instant::now() + wait).into()).await;
    }

    /// Sends `request` and records it as a `kind` hit; `None` when no answer came.
    async fn send(&mut self, kind: Kind, request: RequestBuilder) -> Option<Answer> {
        let sent = Instant::now();
        let answer = request.send().await;
        let (answer, outcome) = match answer {
            Ok(response) => {
                let status = response.status();
                let retry_after = response
                    .headers()
                    .get("retry-after")
                    .and_then(|value| value.to_str().ok())
                    .and_then(|value| value.trim().parse().ok())
                    .map(Duration::from_secs);
                let body: Value = response.json().await.unwrap_or_default();
                let outcome = outcome(status, &body);
                (
                    Some(Answer {
                        status,
                        body,
                        retry_after,
                    }),
                    outcome,
                )
            }
            Err(error) if error.is_timeout() => (None, "CLIENT_TIMEOUT".to_owned()),
            Err(_) => (None, "NO_ANSWER".to_owned()),
        };
        self.hits.push(Hit {
            kind,
            sample: Sample {
                seq: self.hits.len() as u64,
                sent_at: sent.duration_since(self.start),
                latency: sent.elapsed(),
                status: answer.as_ref().map_or(0, |a| a.status.as_u16()),
                outcome,
            },
        });
        answer
    }

    /// Logs in, as long as it takes within the test: the access token.
    async fn login(&mut self) -> Option<String> {
        while self.has_time() {
            let request = self
                .http
                .post(format!("{}/auth/login", self.edge))
                .header("cf-connecting-ip", crate::edge::client_address(&self.user))
                .json(&json!({ "username": self.user, "password": PASSWORD }));
            let answer = self.send(Kind::Login, request).await;
            match answer {
                Some(answer) if answer.status.is_success() => {
                    if let Some(token) = answer.body["accessToken"].as_str() {
                        return Some(token.to_owned());
                    }
                    self.pause(PAUSE).await;
                }
                Some(answer) => self.pause(answer.retry_after.unwrap_or(PAUSE)).await,
                None => self.pause(PAUSE).await,
            }
        }
        None
    }

    /// Enters the queue and polls until admitted: whether it was, before the end. Polls
    /// carry the ticket entering answered, as the waiting-room page's do.
    async fn admitted(&mut self, token: &str) -> bool {
        let mut entering = true;
        let mut ticket: Option<String> = None;
        while self.has_time() {
            let (kind, request) = if entering {
                let url = format!("{}/queue/{EVENT}/enter", self.edge);
                (Kind::Enter, self.http.post(url))
            } else {
                let url = format!("{}/queue/{EVENT}/status", self.edge);
                let poll = self.http.get(url);
                let poll = match &ticket {
                    Some(ticket) => poll.header("queue-ticket", ticket),
                    None => poll,
                };
                (Kind::Status, poll)
            };
            let answer = self.send(kind, request.bearer_auth(token)).await;
            let wait = match answer {
                Some(answer) if answer.status.is_success() => {
                    if answer.body["admitted"].as_bool() == Some(true) {
                        return true;
                    }
                    if let Some(given) = answer.body["ticket"].as_str() {
                        ticket = Some(given.to_owned());
                    }
                    entering = false;
                    Duration::from_secs(answer.body["pollAfterSeconds"].as_u64().unwrap_or(2))
                }
                Some(answer) => {
                    // 503: the room could not answer, the place is kept; otherwise not
                    // in the line (any more), or shed: enter again.
                    entering |= answer.status != StatusCode::SERVICE_UNAVAILABLE;
                    answer.retry_after.unwrap_or(PAUSE)
                }
                None => {
                    entering = true;
                    PAUSE
                }
            };
            self.pause(wait).await;
        }
        false
    }

    /// Confirms order `n`, again with the same key while the edge sheds it; gives up on
    /// any other answer (a missing pass sends the client back to the queue).
    async fn confirm(&mut self, token: &str, n: u32) {
        let order_id = format!("{}-{n}", self.orders);
        let body = json!({
            "orderId": order_id,
            "paymentKey": format!("pk-{order_id}"),
            "amount": PRICE,
            "eventId": EVENT,
        });
        while self.has_time() {
            let request = self
                .http
                .post(format!("{}/payments/confirm", self.edge))
                .bearer_auth(token)
                .header("idempotency-key", &order_id)
                .json(&body);
            let Some(answer) = self.send(Kind::Confirm, request).await else {
                self.pause(PAUSE).await;
                return;
            };
            if answer.status.is_success() {
                return;
            }
            // Shed, or the same key still running: the same confirm after the wait.
            let again = matches!(
                answer.body["code"].as_str(),
                Some("RATE_LIMITED" | "IDEMPOTENCY_IN_FLIGHT")
            );
            self.pause(answer.retry_after.unwrap_or(PAUSE)).await;
            if !again {
                return;
            }
        }
    }
}

/// What an answer said: a payment's status (with its `failureReason`, as
/// `FAILED:GATEWAY_REJECTED`), an error code, or `OK`.
fn outcome(status: StatusCode, body: &Value) -> String {
    let reason = body["failureReason"].as_str();
    match (body["status"].as_str(), reason, body["code"].as_str()) {
        (Some(payment), Some(reason), _) => format!("{payment}:{reason}"),
        (Some(payment), None, _) => payment.to_owned(),
        (None, _, Some(code)) => code.to_owned(),
        _ if status.is_success() => "OK".to_owned(),
        _ => format!("HTTP_{}", status.as_u16()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_name_the_payment_or_the_error() {
        assert_eq!(
            outcome(StatusCode::CREATED, &json!({"status": "APPROVED"})),
            "APPROVED"
        );
        assert_eq!(
            outcome(
                StatusCode::TOO_MANY_REQUESTS,
                &json!({"code": "RATE_LIMITED"})
            ),
            "RATE_LIMITED"
        );
        assert_eq!(
            outcome(
                StatusCode::CREATED,
                &json!({"status": "FAILED", "failureReason": "GATEWAY_REJECTED"})
            ),
            "FAILED:GATEWAY_REJECTED"
        );
        assert_eq!(outcome(StatusCode::OK, &Value::Null), "OK");
        assert_eq!(outcome(StatusCode::BAD_GATEWAY, &Value::Null), "HTTP_502");
    }
}
