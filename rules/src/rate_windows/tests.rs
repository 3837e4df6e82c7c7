use std::convert::Infallible;

use proptest::prelude::*;

use super::*;

/// An object with its storage: the rows a real one keeps in SQLite, written as told.
struct Object {
    windows: RateWindows,
    rows: Vec<i64>,
}

impl Object {
    fn new() -> Self {
        Self {
            windows: RateWindows::new(),
            rows: Vec::new(),
        }
    }

    /// Whether a request at `now_ms` is admitted, with the writes done.
    fn admit(&mut self, rate: Rate, now_ms: i64) -> bool {
        let rows = self.rows.clone();
        let checked = self
            .windows
            .check("k", rate, now_ms, || Ok::<_, Infallible>(rows))
            .unwrap_or_else(|never| match never {});
        if let Some(cutoff) = checked.writes.sweep_at_or_before {
            self.rows.retain(|at| *at > cutoff);
        }
        self.rows.extend(checked.writes.insert_at);
        checked.at_ms.is_some()
    }

    /// The object put out of memory and started again: its storage stays.
    fn restart(&mut self) {
        self.windows = RateWindows::new();
    }
}

const SHORT: Rate = Rate {
    limit: 5,
    window_ms: 1_000,
};
const LONG: Rate = Rate {
    limit: 5,
    window_ms: 60_000,
};

#[test]
fn a_short_window_writes_nothing_and_a_long_one_one_row_an_admission() {
    let mut object = Object::new();
    assert!((0..5).all(|at| object.admit(SHORT, at)));
    assert!(!object.admit(SHORT, 5));
    assert!(object.rows.is_empty());
    let mut object = Object::new();
    assert!((0..5).all(|at| object.admit(LONG, at)));
    assert!(!object.admit(LONG, 5));
    assert_eq!(object.rows, vec![0, 1, 2, 3, 4]);
}

#[test]
fn a_long_window_is_whole_after_a_restart_and_a_short_one_starts_empty() {
    let mut object = Object::new();
    for at in 0..5 {
        object.admit(LONG, at);
        object.admit(SHORT, at);
    }
    object.restart();
    assert!(!object.admit(LONG, 10), "the stored window is still full");
    assert!(object.admit(SHORT, 10), "the short one was in memory only");
}

#[test]
fn a_release_says_whether_storage_holds_the_admission() {
    let mut windows = RateWindows::new();
    let none = || Ok::<_, Infallible>(Vec::new());
    let short = windows.check("s", SHORT, 0, none).expect("checked");
    let long = windows.check("l", LONG, 0, none).expect("checked");
    assert!(!windows.release("s", short.at_ms.expect("admitted")));
    assert!(windows.release("l", long.at_ms.expect("admitted")));
    assert!(
        windows.release("forgotten", 0),
        "not known here: maybe stored"
    );
}

#[test]
fn empty_short_windows_leave_memory_and_stored_ones_stay_until_forgotten() {
    let mut windows = RateWindows::new();
    let none = || Ok::<_, Infallible>(Vec::new());
    windows.check("long", LONG, 0, none).expect("checked");
    for key in 0..PRUNE_EVERY {
        windows
            .check(&key.to_string(), SHORT, 0, none)
            .expect("checked");
    }
    for _ in 0..PRUNE_EVERY {
        windows.check("late", SHORT, 5_000, none).expect("checked");
    }
    assert_eq!(
        windows.kept.len(),
        2,
        "the long window and the one just used"
    );
    assert!(
        windows.kept.contains_key("long"),
        "stored windows are not pruned"
    );
    windows.forget_before(60_000);
    assert!(!windows.kept.contains_key("long"));
}

/// A request `gap_ms` after the one before, or the object restarted.
#[derive(Debug, Clone)]
enum Step {
    Request { gap_ms: i64 },
    Restart,
}

fn steps() -> impl Strategy<Value = Vec<Step>> {
    let step = prop_oneof![
        20 => (0..400i64).prop_map(|gap_ms| Step::Request { gap_ms }),
        1 => Just(Step::Restart),
    ];
    prop::collection::vec(step, 1..300)
}

/// A time, and the restart epoch it fell in.
type Epoched = (i64, u32);

/// Every admission's window `(at - W, at]`: the admissions in it, and how many of those
/// came before the last restart inside it.
fn windows_of(
    admitted: &[(i64, u32)],
    window_ms: i64,
    restarts: &[(i64, u32)],
) -> Vec<(usize, usize)> {
    admitted
        .iter()
        .map(|&(at, _)| {
            let inside: Vec<_> = admitted
                .iter()
                .filter(|(t, _)| *t > at - window_ms && *t <= at)
                .collect();
            let last_restart = restarts
                .iter()
                .filter(|(t, _)| *t > at - window_ms && *t <= at)
                .map(|(_, epoch)| *epoch)
                .max();
            let before = inside
                .iter()
                .filter(|(_, epoch)| last_restart.is_some_and(|restart| *epoch < restart))
                .count();
            (inside.len(), before)
        })
        .collect()
}

proptest! {
    /// The promise of a window kept in memory: a restart never lets it admit more than
    /// its limit plus what it had admitted before the restart, in any window.
    #[test]
    fn a_restart_admits_at_most_the_limit_plus_what_came_before(
        steps in steps(),
        limit in 1u32..8,
        window_ms in 1i64..=IN_MEMORY_UP_TO_MS,
    ) {
        let rate = Rate { limit, window_ms };
        let (admitted, restarts) = run(rate, &steps);
        for (inside, before) in windows_of(&admitted, window_ms, &restarts) {
            prop_assert!(inside <= limit as usize + before, "{inside} in a window, {before} before its restart");
        }
    }

    /// A stored window holds its bound exactly, restarts or not.
    #[test]
    fn a_stored_window_holds_its_limit_across_restarts(
        steps in steps(),
        limit in 1u32..8,
        window_ms in (IN_MEMORY_UP_TO_MS + 1)..=(IN_MEMORY_UP_TO_MS * 4),
    ) {
        let rate = Rate { limit, window_ms };
        let (admitted, restarts) = run(rate, &steps);
        for (inside, _) in windows_of(&admitted, window_ms, &restarts) {
            prop_assert!(inside <= limit as usize);
        }
    }
}

/// Runs `steps` (request gaps scaled so long windows fill too) on one object: the
/// admissions with the restart epoch each came in, and each restart with its epoch.
fn run(rate: Rate, steps: &[Step]) -> (Vec<Epoched>, Vec<Epoched>) {
    let scale = 1 + rate.window_ms / 2_000;
    let (mut object, mut now, mut epoch) = (Object::new(), 0, 0);
    let (mut admitted, mut restarts) = (Vec::new(), Vec::new());
    for step in steps {
        match step {
            Step::Request { gap_ms } => {
                now += gap_ms * scale;
                if object.admit(rate, now) {
                    admitted.push((now, epoch));
                }
            }
            Step::Restart => {
                epoch += 1;
                object.restart();
                restarts.push((now, epoch));
            }
        }
    }
    (admitted, restarts)
}
