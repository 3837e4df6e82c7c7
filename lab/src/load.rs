//! Open-model load: requests sent at a fixed arrival rate whatever the answers do — a
//! slow server gets more requests in flight, not fewer arrivals (a closed loop would
//! hide exactly the pile-up the experiments look for). Every request is one [`Sample`].

use std::future::Future;
use std::time::{Duration, Instant};

use tokio::task::JoinSet;

/// One request: when it was sent (from the run's start), how long it took, and what
/// came of it.
#[derive(Debug, Clone)]
pub struct Sample {
    /// The request's sequence number in its stream.
    pub seq: u64,
    pub sent_at: Duration,
    pub latency: Duration,
    /// The HTTP status; 0 when no answer came (refused, reset, client timeout).
    pub status: u16,
    /// What the answer said: a payment's status and reason, `OK`, an error code.
    pub outcome: String,
}

/// Sends `rate` requests a second for `duration` from `start`, each made by `call`
/// with its sequence number, and waits for every answer.
pub async fn open_model<F, Fut>(
    start: Instant,
    rate: f64,
    duration: Duration,
    call: F,
) -> Vec<Sample>
where
    F: Fn(u64) -> Fut,
    Fut: Future<Output = (u16, String)> + Send + 'static,
{
    let count = (rate * duration.as_secs_f64()).round() as u64;
    let mut running = JoinSet::new();
    for n in 0..count {
        let at = start + Duration::from_secs_f64(n as f64 / rate);
        tokio::time::sleep_until(at.into()).await;
        let request = call(n);
        running.spawn(async move {
            let sent = Instant::now();
            let (status, outcome) = request.await;
            Sample {
                seq: n,
                sent_at: sent.duration_since(start),
                latency: sent.elapsed(),
                status,
                outcome,
            }
        });
    }
    let mut samples = Vec::with_capacity(count as usize);
    while let Some(done) = running.join_next().await {
        if let Ok(sample) = done {
            samples.push(sample);
        }
    }
    samples.sort_by_key(|sample| sample.sent_at);
    samples
}

/// The answer to a request as a sample's status and outcome: for a JSON body, its
/// `status` (and `failureReason`) or its error `code`.
pub async fn outcome_of(answer: reqwest::Result<reqwest::Response>) -> (u16, String) {
    let response = match answer {
        Ok(response) => response,
        Err(error) if error.is_timeout() => return (0, "CLIENT_TIMEOUT".into()),
        Err(_) => return (0, "NO_ANSWER".into()),
    };
    let status = response.status().as_u16();
    let body: serde_json::Value = response.json().await.unwrap_or_default();
    let outcome = match (
        body["status"].as_str(),
        body["failureReason"].as_str(),
        body["code"].as_str(),
    ) {
        (Some(status), Some(reason), _) => format!("{status}:{reason}"),
        (Some(status), None, _) => status.to_owned(),
        (None, _, Some(code)) => code.to_owned(),
        _ => {
            if (200..300).contains(&status) {
                "OK".into()
            } else {
                format!("HTTP_{status}")
            }
        }
    };
    (status, outcome)
}
