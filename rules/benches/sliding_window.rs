//! One rate-limit decision: the exact sliding window at L = 5 and L = 100, beside the
//! `governor` crate's GCRA check (the reference: approximate, O(1) state).
//!
//! The window is driven at twice its rate, so it stays full and half the decisions are
//! admissions (an append and an eviction) and half refusals — its working state.
//!
//! A benchmark is the rules' caller, so it reads the clock they are given.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use std::hint::black_box;
use std::num::NonZeroU32;

use criterion::{criterion_group, criterion_main, Criterion};
use governor::{Quota, RateLimiter};
use rules::sliding_window::{Rate, SlidingWindow};

fn decisions(c: &mut Criterion) {
    let mut group = c.benchmark_group("rate limit decision");
    for limit in [5u32, 100] {
        let rate = Rate {
            limit,
            window_ms: 1000,
        };
        let step = 1000 / i64::from(limit) / 2;
        let mut window = SlidingWindow::new(rate);
        let mut now = 0i64;
        group.bench_function(format!("sliding window L={limit}"), |b| {
            b.iter(|| {
                now += step;
                black_box(window.check(black_box(now)))
            })
        });
        let quota = Quota::per_second(NonZeroU32::new(limit).expect("a positive limit"));
        let governor = RateLimiter::direct(quota);
        group.bench_function(format!("governor GCRA L={limit}"), |b| {
            b.iter(|| black_box(governor.check()))
        });
    }
    group.finish();
}

criterion_group!(benches, decisions);
criterion_main!(benches);
