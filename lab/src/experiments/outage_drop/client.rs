//! One buyer of the gated drop: enters the queue, polls until admitted, takes a moment to
//! check out, then confirms until the payment is approved or its outcome is unknown —
//! waiting where the edge says so. What it saw is its [`Journal`].

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{json, Value};

use super::{EVENT, THINK};

/// The pause after an answer that says nothing about when to come back.
const PAUSE: Duration = Duration::from_secs(1);

/// What one buyer saw, every time in seconds since the run's start.
#[derive(Default)]
pub(super) struct Journal {
    /// When it was admitted, each time.
    pub admitted: Vec<f64>,
    /// When it found its pass gone before it had paid.
    pub passes_lost: Vec<f64>,
    /// Every `paused: true` poll: `[seen at, pausedUntil)`, in seconds.
    pub paused_seen: Vec<(f64, f64)>,
    /// Confirms the edge refused with `PAYMENTS_PAUSED`.
    pub refused_paused: u32,
    /// Confirms the origin answered: `(sent, answered, outcome)`.
    pub forwarded: Vec<(f64, f64, String)>,
}

pub(super) struct Buyer {
    pub http: reqwest::Client,
    pub edge: String,
    pub token: String,
    pub user: String,
    pub start: Instant,
    /// Epoch ms at `start`, to read `pausedUntil`.
    pub start_epoch_ms: i64,
    pub end: Instant,
    pub journal: Journal,
}

/// What one confirm came to.
enum Confirmed {
    /// Approved, or an unknown outcome that keeps the pass: this buyer is done.
    Done,
    /// Failed at the origin: a new order may try.
    Failed,
    /// The pass is gone: back to the queue.
    PassLost,
}

impl Buyer {
    pub(super) async fn run(mut self) -> Journal {
        let mut order = 0;
        while self.admitted().await {
            self.sleep(THINK).await;
            loop {
                order += 1;
                match self.confirm(order).await {
                    Some(Confirmed::Done) | None => return self.journal,
                    Some(Confirmed::Failed) => self.sleep(PAUSE).await,
                    Some(Confirmed::PassLost) => break,
                }
            }
        }
        self.journal
    }

    fn now(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }

    async fn sleep(&self, wait: Duration) {
        tokio::time::sleep_until(self.end.min(Instant::now() + wait).into()).await;
    }

    /// Enters and polls until admitted; false when the run ended first.
    async fn admitted(&mut self) -> bool {
        let mut path = "enter";
        while Instant::now() < self.end {
            let url = format!("{}/queue/{EVENT}/{path}", self.edge);
            let request = if path == "enter" {
                self.http.post(url)
            } else {
                self.http.get(url)
            };
            let wait = match request.bearer_auth(&self.token).send().await {
                Ok(answer) if answer.status().is_success() => {
                    let status: Value = answer.json().await.unwrap_or_default();
                    self.note_pause(&status);
                    if status["admitted"] == true {
                        self.journal.admitted.push(self.now());
                        return true;
                    }
                    path = "status";
                    Duration::from_secs(status["pollAfterSeconds"].as_u64().unwrap_or(2))
                }
                Ok(answer) => {
                    path = if answer.status() == StatusCode::SERVICE_UNAVAILABLE {
                        path
                    } else {
                        "enter"
                    };
                    retry_after(&answer)
                }
                Err(_) => PAUSE,
            };
            self.sleep(wait).await;
        }
        false
    }

    fn note_pause(&mut self, status: &Value) {
        if let Some(until) = status["pausedUntil"].as_i64() {
            let until = (until - self.start_epoch_ms) as f64 / 1e3;
            self.journal.paused_seen.push((self.now(), until));
        }
    }

    /// Confirms order `n` until it is answered; `None` when the run ended first.
    async fn confirm(&mut self, n: u32) -> Option<Confirmed> {
        let order_id = format!("{}-{n}", self.user);
        let body = json!({
            "orderId": order_id,
            "paymentKey": format!("pk-{order_id}"),
            "amount": 5000,
            "eventId": EVENT,
        });
        while Instant::now() < self.end {
            let sent = self.now();
            let request = self
                .http
                .post(format!("{}/payments/confirm", self.edge))
                .bearer_auth(&self.token)
                .header("idempotency-key", &order_id)
                .json(&body);
            let Ok(answer) = request.send().await else {
                self.sleep(PAUSE).await;
                continue;
            };
            let status = answer.status();
            let wait = retry_after(&answer);
            let body: Value = answer.json().await.unwrap_or_default();
            let code = body["code"].as_str().unwrap_or_default();
            match (status.as_u16(), code) {
                (201 | 202, _) => {
                    let outcome = match body["failureReason"].as_str() {
                        Some(reason) => format!("FAILED:{reason}"),
                        None => body["status"].as_str().unwrap_or("?").to_owned(),
                    };
                    self.journal
                        .forwarded
                        .push((sent, self.now(), outcome.clone()));
                    return Some(if outcome.starts_with("FAILED") {
                        Confirmed::Failed
                    } else {
                        Confirmed::Done
                    });
                }
                (503, "PAYMENTS_PAUSED") => self.journal.refused_paused += 1,
                (429, "QUEUE_PASS_REQUIRED") => {
                    self.journal.passes_lost.push(self.now());
                    return Some(Confirmed::PassLost);
                }
                _ => {}
            }
            self.sleep(wait).await;
        }
        None
    }
}

fn retry_after(answer: &reqwest::Response) -> Duration {
    answer
        .headers()
        .get("retry-after")
        .and_then(|value| value.to_str().ok()?.trim().parse().ok())
        .map_or(PAUSE, Duration::from_secs)
}
