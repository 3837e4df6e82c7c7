//! The report's notes: each PG's acceptance checks, run by run, and what the figures say
//! beside the seed's.

use super::figures::Figures;
use super::setup::Pg;
use super::{verdict, Edge, HOLD, RAMP};
use crate::stats::range;

/// Whether `holds(off, on)` in every run, runs paired by number; a run without the figure
/// fails it.
fn each_run(off: &[Option<f64>], on: &[Option<f64>], holds: impl Fn(f64, f64) -> bool) -> bool {
    !off.is_empty()
        && off.len() == on.len()
        && off.iter().zip(on).all(|pair| match pair {
            (Some(off), Some(on)) => holds(*off, *on),
            _ => false,
        })
}

/// Each run's value, in run order.
fn per_run(values: &[Option<f64>]) -> String {
    let each: Vec<String> = values
        .iter()
        .map(|value| value.map_or("—".into(), |value| format!("{value:.0}")))
        .collect();
    each.join(" / ")
}

fn known(values: &[f64]) -> Vec<Option<f64>> {
    values.iter().copied().map(Some).collect()
}

/// The check that `figure(on) ≤ factor × figure(off)` in every run, as a clause.
fn at_most(name: &str, factor: f64, off: &[Option<f64>], on: &[Option<f64>]) -> String {
    let factor_text = if factor == 1.0 {
        String::new()
    } else {
        format!("{factor}× ")
    };
    format!(
        "{name} with control on ≤ {factor_text}off in each run — on {} ms, off {} ms: {}",
        per_run(on),
        per_run(off),
        verdict(each_run(off, on, |off, on| on <= factor * off)),
    )
}

fn worst(values: &[f64]) -> f64 {
    values.iter().copied().fold(0.0, f64::max)
}

/// The check that an approved confirm with control on takes at most 1.1× the PG's own
/// p95 service time (the simulator's, its line left out) in every run, as a clause.
fn near_the_pg(on: &Figures) -> String {
    let pg = &on.pg_service_p95;
    format!(
        "approved-confirm p95 with control on ≤ 1.1× the PG's own p95 service time in each \
         run — on {} ms, the PG's {} ms: {}",
        per_run(on.approved_p95()),
        per_run(pg),
        verdict(each_run(pg, on.approved_p95(), |pg, on| on <= 1.1 * pg)),
    )
}

/// The acceptance checks of one PG's table, as one paragraph.
pub(super) fn acceptance(pg: Pg, off: &Figures, on: &Figures) -> String {
    match pg {
        Pg::Saturating => {
            let refused_on = &on.pg_refused;
            let none_refused = !refused_on.is_empty() && refused_on.iter().all(|n| *n == Some(0.0));
            let errors = worst(&off.server_errors).max(worst(&on.server_errors));
            format!(
                "Acceptance (PG that saturates): {}; {}; {}; payments approved with control on \
                 ≥ off in each run — on {}, off {}: {}; PG 429s with control on — {} a run: \
                 {}; no 5xx in either configuration — worst run {errors:.0}: {}.",
                at_most(
                    "approved-confirm p95",
                    0.3,
                    off.approved_p95(),
                    on.approved_p95()
                ),
                near_the_pg(on),
                at_most("success p95", 0.3, &known(&off.p95), &known(&on.p95)),
                per_run(&known(&on.approved)),
                per_run(&known(&off.approved)),
                verdict(each_run(
                    &known(&off.approved),
                    &known(&on.approved),
                    |off, on| on >= off
                )),
                per_run(refused_on),
                verdict(none_refused),
                verdict(errors == 0.0),
            )
        }
        Pg::Instant => {
            let (errors, unanswered) = (worst(&on.server_errors), worst(&on.no_answer));
            format!(
                "Acceptance (instant PG): {}; {}; no 5xx with control on — worst run \
                 {errors:.0} (requests without any answer, counted apart: at most \
                 {unanswered:.0}): {}.",
                at_most("success p95", 1.0, &known(&off.p95), &known(&on.p95)),
                at_most("enter p95", 2.0, off.enter_p95(), on.enter_p95()),
                verdict(errors == 0.0),
            )
        }
    }
}

/// What the origin makes of the saturating PG's 429.
pub(super) fn pg_refusals() -> String {
    "How the origin reads the PG's 429 `TOO_MANY_REQUESTS` (its line full): throttled — \
     refused before it was processed, so nothing was charged — never unknown. The payment is recorded FAILED \
     (`GATEWAY_REJECTED`, answered 201), counted in \
     `origin_gateway_needs_operator_total{outcome=\"throttled\"}`, and the 429 counts \
     against the breaker, as a slow call (from 1 s) does. An open breaker refuses confirms \
     unsent (`CIRCUIT_OPEN`, the guard's share of the FAILED column, with `BULKHEAD_FULL` \
     and `RATE_LIMITED`) and pauses the room's payments at the edge. A FAILED answer frees the pass's claim at the edge."
        .into()
}

/// The seed's p95 drop beside ours before the instant PG, and why ours is what it is.
pub(super) fn comparison(off: &Figures, on: &Figures) -> String {
    let mean = |values: &[f64]| values.iter().sum::<f64>() / values.len().max(1) as f64;
    let (before, after) = (mean(&off.p95), mean(&on.p95));
    let seconds = (RAMP + HOLD).as_secs_f64();
    let change = if after <= before {
        format!("{:.1}× lower", before / after.max(f64::EPSILON))
    } else {
        format!("{:.1}× higher", after / before.max(f64::EPSILON))
    };
    let head = format!(
        "Success p95 before the instant PG, off → on: seed 737.81 → 52.01 ms (14.2× lower); \
         ours {} → {} ms ({change}, means over runs).",
        range(&off.p95, 1),
        range(&on.p95, 1),
    );
    let where_waited = format!(
        "The origin was not where requests waited (its `/healthz` p95 {} ms off, {} ms on); \
         the edge, workerd on one thread for the Worker and every object, was (p95 {} ms \
         off, {} ms on). Flow control keeps load off the origin — about {:.0} approved \
         confirms/s reached it without control, {:.0}/s with it.",
        range(&off.origin_probe_p95, 1),
        range(&on.origin_probe_p95, 1),
        range(&off.edge_probe_p95, 1),
        range(&on.edge_probe_p95, 1),
        mean(&off.approved) / seconds,
        mean(&on.approved) / seconds,
    );
    if after <= before / 2.0 {
        return format!("{head} The drop is reproduced. {where_waited}");
    }
    if after <= before {
        return format!(
            "{head} The direction is reproduced — control lowers the p95 — but not the \
             seed's size. {where_waited} The seed's gain came from taking load off its \
             database; here the narrowest point is the local workerd, which both \
             configurations load: refusals from memory cost it almost nothing, but an \
             admitted request with control on makes more object calls than without (a \
             gated confirm four, an enter three; without control a confirm one, an enter two)."
        );
    }
    format!(
        "{head} The drop is **not reproduced** on this machine. {where_waited} Refusals \
         from memory cost the edge almost nothing, but an admitted request with control on \
         makes more object calls and more durable writes than without: a gated confirm \
         four calls, an enter three, each of the enter's writing (the user's window, the \
         route's global window, the room), and every admitted request of a route writes in \
         its one global object; without control a confirm makes one call and writes \
         nothing, an enter two calls and one write. workerd's thread is far from full \
         (busy share below), so these requests wait on the objects' writes reaching the \
         local disk — docs/edge-performance.md has a diagnostic run with the objects' \
         SQLite on tmpfs, where the direction is clear. The seed's database was the \
         narrowest point of its test; here it is the local disk under the objects."
    )
}

pub(super) fn seed_reading() -> String {
    "The seed's 5xx went the other way from its p95: none without control, 113 (0.55 %) \
     with it — deadlocks of its outbox inserts under the fixed window's bursts at each \
     second's start — and 0.00 % once deadlocks were retried (p95 then 66 ms, and no \
     deadlock happened in that run): \"5xx 0.55 % → 0 %\". Our \
     SQLite takes one writer at a time and retries transient errors in every transaction, \
     and our limiter is a sliding window, so neither cause is present."
        .into()
}

pub(super) fn runtime_note() -> String {
    let workerd = Edge::version().unwrap_or_else(|_| "workerd".into());
    format!(
        "Runtime of these figures: the edge under `workerd serve` ({workerd}, from \
         node_modules) with a configuration the lab generates from the edge build \
         (`build/`, unless `--edge-build` names another) and `wrangler.toml` \
         (`harness/src/workerd/config.rs`), not under `wrangler dev`, whose Node.js proxy \
         in front of workerd costs most of its throughput; the origin (SQLite) and \
         the simulator as release builds; the lab's clients, workerd, the origin and the \
         simulator share one machine (2 cores) on loopback."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_check_holds_only_when_it_holds_in_every_run() {
        let off = [Some(1000.0), Some(2000.0)];
        assert!(each_run(&off, &[Some(300.0), Some(600.0)], |off, on| on <= 0.3 * off));
        assert!(!each_run(&off, &[Some(300.0), Some(601.0)], |off, on| on <= 0.3 * off));
        assert!(
            !each_run(&off, &[Some(1.0), None], |off, on| on <= off),
            "a run without it"
        );
        assert!(!each_run(&[], &[], |off, on| on <= off), "no run at all");
        assert_eq!(per_run(&[Some(812.4), None]), "812 / —");
    }
}
