//! The last 15 minutes, for the operator console's charts (`GET /admin/history`): every
//! [`INTERVAL_MS`] the sampler reads the approval guard (its calls' p50 and p95, calls in
//! flight, refusals by reason, the breaker's state and each transition) and each drop's
//! room from the edge (waiting, prequeued, passes live, passes issued in the last
//! minute), beside the confirms each drop answered, by outcome.
//!
//! Kept in this process's memory only, in bounded rings ([`SAMPLES`] a series, at most
//! [`MAX_DROPS`] drops, closed drops no longer sampled): a restart loses it, and the
//! answer says from when it holds (`keptSinceMs`). Several instances each keep their
//! own calls and confirms; the rooms are the edge's, the same for all.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::join_all;
use rules::drop::RoomState;
use serde::Serialize;

use crate::edge::Edge;
use crate::guard::GatewayGuard;
use crate::metrics::Metrics;
use crate::policy::breaker::{BreakerState, Transition};
use crate::policy::history::{
    gained, Confirms, DropSample, GuardSample, Ring, INTERVAL_MS, SAMPLES, WINDOW_MS,
};
use crate::store::{PaymentStatus, Store};

/// The most drops sampled at once; the others (by event id) are left out of the charts.
pub const MAX_DROPS: usize = 32;
/// The most events whose confirms are counted between two samples.
const MAX_COUNTED: usize = 1_000;

pub struct History {
    kept_since_ms: i64,
    kept: Mutex<Kept>,
}

struct Kept {
    guard: Ring<GuardSample>,
    transitions: Ring<WallTransition>,
    drops: BTreeMap<String, Ring<DropSample>>,
    /// Since the last sample.
    confirms: HashMap<String, Confirms>,
    refusals_before: BTreeMap<&'static str, u64>,
}

/// A breaker transition, at wall-clock time.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WallTransition {
    pub from: BreakerState,
    pub to: BreakerState,
    pub at_ms: i64,
}

/// `GET /admin/history`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HistoryView {
    pub now_ms: i64,
    pub interval_ms: i64,
    pub window_ms: i64,
    /// This process began sampling then: nothing before it is kept.
    pub kept_since_ms: i64,
    pub guard: GuardHistory,
    pub drops: BTreeMap<String, Vec<DropSample>>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GuardHistory {
    pub samples: Vec<GuardSample>,
    pub transitions: Vec<WallTransition>,
}

impl History {
    pub fn new(now_ms: i64) -> Self {
        Self {
            kept_since_ms: now_ms,
            kept: Mutex::new(Kept {
                guard: Ring::new(SAMPLES),
                transitions: Ring::new(SAMPLES),
                drops: BTreeMap::new(),
                confirms: HashMap::new(),
                refusals_before: BTreeMap::new(),
            }),
        }
    }

    fn kept(&self) -> std::sync::MutexGuard<'_, Kept> {
        self.kept
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// A confirm for `event_id` answered with `status`.
    pub fn confirm_answered(&self, event_id: &str, status: PaymentStatus) {
        let mut kept = self.kept();
        let counted = kept.confirms.len();
        let confirms = match kept.confirms.get_mut(event_id) {
            Some(confirms) => confirms,
            None if counted < MAX_COUNTED => kept.confirms.entry(event_id.to_owned()).or_default(),
            None => return,
        };
        match status {
            PaymentStatus::Approved => confirms.approved += 1,
            PaymentStatus::Failed | PaymentStatus::Refunded => confirms.failed += 1,
            PaymentStatus::Unknown => confirms.unknown += 1,
            PaymentStatus::Pending => {}
        }
    }

    /// The guard at `sample.at_ms`, its refusals counted since start (`refused`), and
    /// its breaker's transitions as the guard keeps them.
    pub fn record_guard(
        &self,
        mut sample: GuardSample,
        refused: &BTreeMap<&'static str, u64>,
        transitions: &[WallTransition],
    ) {
        let mut kept = self.kept();
        sample.refusals = gained(&kept.refusals_before, refused);
        kept.refusals_before = refused.clone();
        let last = kept.transitions.iter().last().map(|t| t.at_ms);
        for transition in transitions {
            if last.is_none_or(|last| transition.at_ms > last) {
                kept.transitions.push(*transition);
            }
        }
        kept.guard.push(sample);
    }

    /// A drop's room at `sample.at_ms` (its confirms are added here), or none when the
    /// drop is no longer sampled; then the drops whose samples all left the window go.
    pub fn record_drops(&self, at_ms: i64, rooms: Vec<(String, DropSample)>) {
        let mut kept = self.kept();
        let mut confirms = std::mem::take(&mut kept.confirms);
        for (event_id, mut sample) in rooms {
            sample.at_ms = at_ms;
            sample.confirms = confirms.remove(&event_id).unwrap_or_default();
            kept.drops
                .entry(event_id)
                .or_insert_with(|| Ring::new(SAMPLES))
                .push(sample);
        }
        let oldest = at_ms - WINDOW_MS - INTERVAL_MS;
        for ring in kept.drops.values_mut() {
            ring.forget_while(|sample| sample.at_ms < oldest);
        }
        kept.drops.retain(|_, ring| !ring.is_empty());
        kept.transitions.forget_while(|t| t.at_ms < oldest);
    }

    pub fn view(&self, now_ms: i64) -> HistoryView {
        let kept = self.kept();
        HistoryView {
            now_ms,
            interval_ms: INTERVAL_MS,
            window_ms: WINDOW_MS,
            kept_since_ms: self.kept_since_ms,
            guard: GuardHistory {
                samples: kept.guard.iter().cloned().collect(),
                transitions: kept.transitions.iter().copied().collect(),
            },
            drops: kept
                .drops
                .iter()
                .map(|(id, ring)| (id.clone(), ring.iter().cloned().collect()))
                .collect(),
        }
    }
}

/// The parts a sample reads.
pub struct Sources {
    pub history: Arc<History>,
    pub store: Arc<dyn Store>,
    pub guard: Arc<GatewayGuard>,
    pub metrics: Arc<Metrics>,
    pub edge: Option<Arc<Edge>>,
}

/// Takes one sample at `now_ms`.
pub async fn sample(sources: &Sources, now_ms: i64) {
    let view = sources.guard.view();
    let calls = sources.metrics.take_recent_calls(view.name);
    let guard_now = i64::try_from(view.breaker.now_ms).unwrap_or(i64::MAX);
    let transitions: Vec<WallTransition> = view
        .breaker
        .transitions
        .iter()
        .map(|t: &Transition| WallTransition {
            from: t.from,
            to: t.to,
            at_ms: now_ms - (guard_now - i64::try_from(t.at_ms).unwrap_or(i64::MAX)),
        })
        .collect();
    let sample = GuardSample {
        at_ms: now_ms,
        calls: calls.count(),
        p50_ms: calls.quantile(0.5),
        p95_ms: calls.quantile(0.95),
        in_flight: view.in_flight,
        refusals: BTreeMap::new(),
        breaker: view.breaker.state.map(|breaker| breaker.state),
    };
    sources
        .history
        .record_guard(sample, &view.refusals, &transitions);
    let rooms = match sources.store.event_rooms(1_000).await {
        Ok(rooms) => rooms,
        Err(err) => {
            tracing::warn!(error = %err, "the drops could not be listed for the console's charts");
            Vec::new()
        }
    };
    let open: Vec<String> = rooms
        .into_iter()
        .filter(|(_, room)| room.state != RoomState::Closed)
        .map(|(event_id, _)| event_id)
        .take(MAX_DROPS)
        .collect();
    let reports = join_all(open.iter().map(|event_id| room_now(sources, event_id))).await;
    sources
        .history
        .record_drops(now_ms, open.into_iter().zip(reports).collect());
}

/// A drop's room as the edge reports it; its figures absent when it cannot.
async fn room_now(sources: &Sources, event_id: &str) -> DropSample {
    let Some(edge) = &sources.edge else {
        return DropSample::default();
    };
    let report = match edge.room_report(event_id).await {
        Ok(answer) if answer.status == 200 => answer.body,
        _ => return DropSample::default(),
    };
    let figure = |name: &str| report[name].as_u64();
    DropSample {
        waiting: figure("waiting"),
        prequeued: figure("prequeued"),
        passes_live: figure("passesLive"),
        issued_last_minute: figure("passesIssuedLastMinute"),
        ..DropSample::default()
    }
}

/// Samples every [`INTERVAL_MS`], until dropped.
pub async fn sample_every_interval(sources: Sources) {
    let mut every = tokio::time::interval(Duration::from_millis(INTERVAL_MS.unsigned_abs()));
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        every.tick().await;
        sample(&sources, crate::clock::now_ms()).await;
    }
}

#[cfg(test)]
mod tests;
