//! Experiment 3b's outage on the breaker's own clock, with the default settings: 10
//! payments a second into a PG whose confirms stall for 40 s while its look-ups answer at
//! once; then the PG back. A stalled confirm times out at 3 s; a probe that is not
//! answered is given up at the slow-call threshold, as the guard does.

use super::*;
use crate::policy::breaker::probe::{ProbeKind, ProbeTicket};

const RECOVERED_MS: u64 = 40_000;
const TIMEOUT_MS: u64 = 3_000;
const HEALTHY_LATENCY_MS: u64 = 150;

#[derive(Default)]
struct Outage {
    /// When each payment was sent.
    sent: Vec<u64>,
    /// Every transition, with its time.
    transitions: Vec<Transition>,
    probes: Vec<(u64, ProbeKind)>,
}

fn play(until_ms: u64) -> Outage {
    let mut breaker = Breaker::new(BreakerConfig::default());
    breaker.probe_with_look_ups();
    let slow_ms = breaker.config().slow_call_ms;
    let mut outage = Outage::default();
    // Calls out: their permit, when they are answered and how.
    let mut out: Vec<(BreakerPermit, u64, CallResult)> = Vec::new();
    let mut probe: Option<(ProbeTicket, u64, bool)> = None;
    for now in (0..until_ms).step_by(100) {
        let mut changed = Vec::new();
        out.retain(|&(permit, at, result)| {
            let due = at <= now;
            if due {
                changed.extend(breaker.record(permit, result, at));
            }
            !due
        });
        changed.extend(breaker.overdue(now));
        match probe {
            Some((ticket, at, healthy)) if at <= now => {
                changed.extend(breaker.probe_answered(ticket, healthy, at));
                probe = None;
            }
            Some(_) => {}
            None => {
                probe = breaker.probe_due(now).map(|ticket| {
                    outage.probes.push((now, ticket.kind()));
                    // Look-ups answer throughout; confirms only once the PG is back.
                    let healthy = ticket.kind() == ProbeKind::LookUp || now >= RECOVERED_MS;
                    let after = if healthy { 20 } else { slow_ms };
                    (ticket, now + after, healthy)
                });
            }
        }
        let (permit, transition) = breaker.try_acquire(now);
        changed.extend(transition);
        if let Ok(permit) = permit {
            outage.sent.push(now);
            let (took, failed) = match now >= RECOVERED_MS {
                true => (HEALTHY_LATENCY_MS, false),
                false => (TIMEOUT_MS, true),
            };
            let result = CallResult {
                failed,
                duration_ms: took,
            };
            out.push((permit, now + took, result));
        }
        outage.transitions.extend(changed);
    }
    outage
}

#[test]
fn a_stall_of_the_confirms_alone_costs_one_payment_after_the_breaker_opens() {
    let outage = play(60_000);
    let opened = outage
        .transitions
        .iter()
        .find(|t| t.to == BreakerState::Open);
    let opened = opened.expect("it opened").at_ms;
    let into_stall = |from: u64, to: u64| {
        let sent = outage.sent.iter().filter(|&&at| (from..to).contains(&at));
        sent.count()
    };
    assert_eq!(
        into_stall(opened, RECOVERED_MS),
        1,
        "{:?}",
        outage.transitions
    );
    assert!(into_stall(0, opened) <= 11);
    let kinds: Vec<ProbeKind> = outage.probes.iter().map(|(_, kind)| *kind).collect();
    use ProbeKind::*;
    assert_eq!(
        kinds,
        [LookUp, Confirm, Confirm, Confirm],
        "{:?}",
        outage.probes
    );
    // Back within one cycle of the PG's recovery, as before.
    let half_open = outage
        .transitions
        .iter()
        .find(|t| t.at_ms >= RECOVERED_MS && t.to == BreakerState::HalfOpen);
    let half_open = half_open.expect("half-open after the recovery").at_ms;
    let closed = outage
        .transitions
        .iter()
        .find(|t| t.at_ms >= half_open && t.to == BreakerState::Closed);
    assert!(
        closed.is_some_and(|t| t.at_ms - half_open <= 1_000),
        "{:?}",
        outage.transitions
    );
    assert!(half_open - RECOVERED_MS <= BreakerConfig::default().open_ms + 1_000);
}
