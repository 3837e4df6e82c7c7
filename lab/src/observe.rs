//! What the origin shows while an experiment runs, sampled from its metrics listener
//! every [`EVERY`]: PG calls in flight and the breaker's state. The listener is apart
//! from the API, so it answers while the API is saturated — and a scrape that fails is
//! recorded as a gap, as the seed's was.

use std::time::{Duration, Instant};

use tokio::sync::watch;

use crate::stack::{metric, Stack};

pub const EVERY: Duration = Duration::from_millis(250);

#[derive(Debug, Clone)]
pub struct Point {
    pub at: Duration,
    /// `None` when the scrape failed.
    pub in_flight: Option<f64>,
    /// 0 CLOSED, 1 HALF_OPEN, 2 OPEN; `None` when unknown.
    pub breaker: Option<f64>,
}

/// Samples until `stop` turns true.
pub async fn sample(stack: &Stack, start: Instant, mut stop: watch::Receiver<bool>) -> Vec<Point> {
    let mut points = Vec::new();
    let mut tick = tokio::time::interval(EVERY);
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            _ = stop.changed() => return points,
        }
        let text = stack.metrics_text().await.ok();
        let read = |series: &str| text.as_deref().and_then(|text| metric(text, series));
        let breaker = [("CLOSED", 0.0), ("HALF_OPEN", 1.0), ("OPEN", 2.0)]
            .into_iter()
            .find(|(state, _)| {
                read(&format!(
                    "origin_breaker_state{{guard=\"approve\",state=\"{state}\"}}"
                )) == Some(1.0)
            })
            .map(|(_, value)| value);
        points.push(Point {
            at: start.elapsed(),
            in_flight: read("origin_gateway_in_flight{guard=\"approve\"}"),
            breaker,
        });
    }
}
