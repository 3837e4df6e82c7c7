//! Transition scripts, one line per scenario.
//!
//! Steps, separated by spaces, run against a small breaker (window 6, min 4 calls,
//! failure rate 50 %, slow at 100 ms with rate 75 %, open 1000 ms, 2 probes):
//! - `+N` — N calls asked for, each admitted; `-N` — N calls asked for, each refused;
//! - `okN` / `failN` / `slowN` — the N most recent outstanding permits report a fast
//!   success, a failure, a slow success; `^failN` and so on — the N oldest;
//! - `relN` — the N most recent outstanding permits are given back without an outcome;
//! - `@N` — N milliseconds pass;
//! - `CLOSED` / `OPEN` / `HALF_OPEN` — the state now.

use super::*;

const SMALL: BreakerConfig = BreakerConfig {
    window: 6,
    min_calls: 4,
    failure_rate: 50,
    slow_call_ms: 100,
    slow_call_rate: 75,
    open_ms: 1_000,
    half_open_calls: 2,
};

const SCRIPTS: &[(&str, &str)] = &[
    (
        "under min calls nothing opens it",
        "+3 fail3 CLOSED +1 fail1 OPEN",
    ),
    (
        "failure rate below the threshold stays closed",
        "+4 ok3 fail1 CLOSED +1 fail1 CLOSED +1 fail1 OPEN",
    ),
    (
        "old outcomes slide out of the window",
        "+4 fail1 ok3 +6 ok6 +2 fail2 CLOSED +1 fail1 OPEN",
    ),
    (
        "slow successes open it at the slow-call rate",
        "+4 ok1 slow2 CLOSED +1 slow1 OPEN",
    ),
    (
        "a decline-like fast success never opens it",
        "+6 ok6 +6 ok6 CLOSED",
    ),
    (
        "open refuses every call until the wait is over",
        "+4 fail4 OPEN -3 @999 -1 OPEN @1 HALF_OPEN",
    ),
    (
        "half-open lets one probe through at a time and refuses the rest",
        "+4 fail4 @1000 +1 -1 HALF_OPEN ok1 +1 -1 HALF_OPEN",
    ),
    (
        "successful probes close it",
        "+4 fail4 @1000 +1 ok1 +1 ok1 CLOSED +4 ok4 CLOSED",
    ),
    (
        "a failed probe re-opens it",
        "+4 fail4 @1000 +1 ok1 HALF_OPEN +1 fail1 OPEN",
    ),
    ("a slow probe re-opens it", "+4 fail4 @1000 +1 slow1 OPEN"),
    (
        "a probe still out at the slow-call threshold re-opens it at once",
        "+4 fail4 @1000 +1 @99 HALF_OPEN @1 OPEN",
    ),
    (
        "calls in flight past the threshold count as slow before they end",
        "+4 @99 CLOSED @1 OPEN",
    ),
    (
        "a stall with the window empty opens it at the first slow call, min calls sent",
        "+1 @50 +3 @49 CLOSED @1 OPEN",
    ),
    (
        "a call counted slow in flight and then failed counts once",
        "+3 @100 CLOSED fail3 CLOSED +1 ok1 OPEN",
    ),
    (
        "re-opened, it waits the whole open time again",
        "+4 fail4 @1000 +1 fail1 OPEN @999 -1 @1 +1 HALF_OPEN",
    ),
    (
        "a probe given back frees its slot",
        "+4 fail4 @1000 +1 rel1 +1 -1 ok1 +1 ok1 CLOSED",
    ),
    (
        "permits given back while closed count nothing",
        "+4 rel4 +3 fail3 CLOSED",
    ),
    (
        "closing starts a fresh window",
        "+4 fail4 @1000 +1 ok1 +1 ok1 CLOSED +3 fail3 CLOSED +1 fail1 OPEN",
    ),
    (
        "outcomes admitted before the close are ignored after it (seed run 1)",
        "+8 fail4 OPEN @1000 +1 ok1 +1 ok1 CLOSED fail4 CLOSED +1 ok1 CLOSED",
    ),
    (
        "outcomes admitted before the open are ignored while half-open",
        "+6 fail4 OPEN @1000 +1 ^fail2 HALF_OPEN ok1 +1 ok1 CLOSED",
    ),
];

struct Run {
    breaker: Breaker,
    now_ms: u64,
    outstanding: Vec<BreakerPermit>,
}

impl Run {
    fn step(&mut self, step: &str) -> Result<(), String> {
        let count = |prefix: &str| -> Result<usize, String> {
            step[prefix.len()..]
                .parse()
                .map_err(|_| format!("bad step `{step}`"))
        };
        match step {
            "CLOSED" | "OPEN" | "HALF_OPEN" => {
                let (view, _) = self.breaker.observe(self.now_ms);
                if view.state.as_str() != step {
                    return Err(format!("state is {:?}, not {step}", view.state));
                }
            }
            _ if step.starts_with('+') => {
                for _ in 0..count("+")? {
                    let (permit, _) = self.breaker.try_acquire(self.now_ms);
                    self.outstanding
                        .push(permit.map_err(|_| format!("`{step}`: a call was refused"))?);
                }
            }
            _ if step.starts_with('-') => {
                for _ in 0..count("-")? {
                    if self.breaker.try_acquire(self.now_ms).0.is_ok() {
                        return Err(format!("`{step}`: a call was admitted"));
                    }
                }
            }
            _ if step.starts_with('@') => self.now_ms += count("@")? as u64,
            _ if step.starts_with("rel") => {
                for _ in 0..count("rel")? {
                    let permit = self.outstanding.pop().ok_or("no permit to release")?;
                    self.breaker.release(permit);
                }
            }
            _ => {
                let (oldest, step) = match step.strip_prefix('^') {
                    Some(rest) => (true, rest),
                    None => (false, step),
                };
                let count = |prefix: &str| -> Result<usize, String> {
                    step[prefix.len()..]
                        .parse()
                        .map_err(|_| format!("bad step `{step}`"))
                };
                let (prefix, failed, duration_ms) = if step.starts_with("ok") {
                    ("ok", false, 10)
                } else if step.starts_with("fail") {
                    ("fail", true, 10)
                } else if step.starts_with("slow") {
                    ("slow", false, 150)
                } else {
                    return Err(format!("unknown step `{step}`"));
                };
                for _ in 0..count(prefix)? {
                    let permit = if oldest && !self.outstanding.is_empty() {
                        Some(self.outstanding.remove(0))
                    } else {
                        self.outstanding.pop()
                    };
                    let permit = permit.ok_or("no permit to report on")?;
                    let result = CallResult {
                        failed,
                        duration_ms,
                    };
                    self.breaker.record(permit, result, self.now_ms);
                }
            }
        }
        Ok(())
    }
}

#[test]
fn transition_scripts() {
    for (name, script) in SCRIPTS {
        let mut run = Run {
            breaker: Breaker::new(SMALL),
            now_ms: 0,
            outstanding: Vec::new(),
        };
        for (index, step) in script.split_whitespace().enumerate() {
            if let Err(problem) = run.step(step) {
                panic!("{name}: step {} of `{script}`: {problem}", index + 1);
            }
        }
    }
}

/// Four failed calls at `now_ms`: enough to open [`SMALL`].
fn open_with_failures(breaker: &mut Breaker, now_ms: u64) {
    for _ in 0..4 {
        let permit = breaker.try_acquire(now_ms).0.unwrap();
        let fail = CallResult {
            failed: true,
            duration_ms: 1,
        };
        breaker.record(permit, fail, now_ms);
    }
}

#[test]
fn a_permit_of_an_earlier_state_given_back_frees_no_probe_slot() {
    let mut breaker = Breaker::new(SMALL);
    let old = breaker.try_acquire(0).0.unwrap();
    open_with_failures(&mut breaker, 0);
    assert!(breaker.try_acquire(1_000).0.is_ok(), "the probe");
    breaker.release(old);
    assert_eq!(breaker.try_acquire(1_000).0, Err(CircuitOpen));
    assert_eq!(breaker.observe(1_000).0.probes_in_flight, 1);
}

#[test]
fn the_defaults_open_on_the_tenth_failure_of_twenty() {
    let mut breaker = Breaker::new(BreakerConfig::default());
    let failure = CallResult {
        failed: true,
        duration_ms: 3_000,
    };
    for call in 1..=10 {
        let (permit, _) = breaker.try_acquire(0);
        let transition = breaker.record(permit.unwrap(), failure, 0);
        assert_eq!(transition.is_some(), call == 10, "call {call}");
    }
    assert_eq!(breaker.observe(0).0.state, BreakerState::Open);
}

#[test]
fn every_transition_is_reported_once_with_its_time() {
    let mut breaker = Breaker::new(SMALL);
    let fail = CallResult {
        failed: true,
        duration_ms: 1,
    };
    let ok = CallResult {
        failed: false,
        duration_ms: 1,
    };
    let mut seen = Vec::new();
    for _ in 0..4 {
        let permit = breaker.try_acquire(5).0.unwrap();
        seen.extend(breaker.record(permit, fail, 5));
    }
    let (view, to_half_open) = breaker.observe(1_005);
    assert_eq!(view.open_until_ms, None);
    seen.extend(to_half_open);
    assert_eq!(breaker.observe(1_006).1, None, "reported once");
    for _ in 0..2 {
        let (permit, transition) = breaker.try_acquire(1_010);
        assert_eq!(transition, None);
        seen.extend(breaker.record(permit.unwrap(), ok, 1_020));
    }
    use BreakerState::*;
    let expected = [
        (Closed, Open, 5),
        (Open, HalfOpen, 1_005),
        (HalfOpen, Closed, 1_020),
    ];
    let seen: Vec<_> = seen.iter().map(|t| (t.from, t.to, t.at_ms)).collect();
    assert_eq!(seen, expected);
    assert_eq!(breaker.observe(1_020).0.generation, 3);
}

#[test]
fn an_open_breaker_shows_when_it_lets_probes_through() {
    let mut breaker = Breaker::new(SMALL);
    open_with_failures(&mut breaker, 100);
    let (view, _) = breaker.observe(200);
    assert_eq!(
        (view.state, view.open_until_ms),
        (BreakerState::Open, Some(1_100))
    );
}

#[test]
fn it_says_how_long_it_will_go_on_refusing() {
    let mut breaker = Breaker::new(SMALL);
    assert_eq!(breaker.refusing_for(0), None, "closed: admits now");
    open_with_failures(&mut breaker, 100);
    assert_eq!(
        breaker.refusing_for(400),
        Some(700),
        "open: the rest of its wait"
    );
    assert_eq!(breaker.refusing_for(5_000), Some(1), "due: at once");
    // Half-open, its probe out since 1 100: judged by the slow-call threshold at the latest.
    let probe = breaker.try_acquire(1_100).0.unwrap();
    assert_eq!(breaker.refusing_for(1_140), Some(60));
    breaker.release(probe);
    assert_eq!(
        breaker.refusing_for(1_150),
        None,
        "half-open, a probe may go"
    );
}

mod outage;
mod probes;
mod scripted;
