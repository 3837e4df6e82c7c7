//! The event queue at the sizes of a drop: 10^5 and 10^6 people in line, 100 admitted.
//!
//! Each operation should cost O(log n), so going from 10^5 to 10^6 should add a small
//! constant factor (cache misses of a ten-times larger index), not ten times the time.
//! - `enter` — a new user joins at the back (the time of a batch of new users entering,
//!   who then leave untimed, so the line keeps its size);
//! - `position` — a poll by someone in the middle part of the line (1,024 users spread
//!   over it, in turn, so the index is not all in cache);
//! - `leave + re-enter` — one of those users leaves and enters again at the back;
//! - `restore` — the cold-start rebuild from the stored bitmap and passes, at 10^5 and
//!   10^6;
//! - `snapshot build`, `encode`, `decode` and `place` — the line published for ticket
//!   polls at 10^3, 10^5 and 10^6, and one place read from it; the encoded size and the
//!   heap the whole `EventQueue` holds at each size are printed (a counting allocator).
//!
//! The queue knows people by arrival number; the names are the room's storage's.
//!
//! Run: `cargo bench -p rules --bench queue`.
//!
//! A benchmark is the rules' caller, so it reads the clock they are given.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion};
use rules::queue::snapshot::{Snapshot, SnapshotOf};
use rules::queue::{EventQueue, QueueConfig, Stored};

/// The system allocator, counting the bytes live: what a structure holds is the count
/// after building it less the count before.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        // SAFETY: the caller's contract, passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: the caller's contract, passed on.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

const CONFIG: QueueConfig = QueueConfig {
    admit_limit: 100,
    pass_ttl_ms: 600_000,
    admit_per_minute: None,
};
const NOW: i64 = 1_000;
const BATCH: u64 = 1_000;

/// A line of `size` as storage holds it: everyone from 0 to `size` in line, the first
/// 100 with passes.
fn stored(size: u64) -> Stored {
    let mut words = vec![u64::MAX; (size / 64) as usize];
    if !size.is_multiple_of(64) {
        words.push((1u64 << (size % 64)) - 1);
    }
    Stored {
        words,
        next_seq: size,
        passes: (0..u64::from(CONFIG.admit_limit))
            .map(|seq| (seq, NOW + CONFIG.pass_ttl_ms))
            .collect(),
        ..Stored::default()
    }
}

/// 1,024 arrival numbers spread over the middle half of a line of `size`.
fn middle(size: u64) -> Vec<u64> {
    (0..1024u64)
        .map(|i| size / 4 + i * (size / 2) / 1024)
        .collect()
}

fn operations(c: &mut Criterion) {
    let mut group = c.benchmark_group("queue");
    for size in [100_000u64, 1_000_000] {
        let mut queue = EventQueue::restore(CONFIG, stored(size));
        let mut polled = middle(size);

        group.bench_function(BenchmarkId::new("enter", size), |b| {
            b.iter_custom(|iters| {
                let mut timed = Duration::ZERO;
                let mut done = 0;
                while done < iters {
                    let batch = BATCH.min(iters - done);
                    let start = Instant::now();
                    let entered: Vec<u64> = (0..batch)
                        .filter_map(|_| black_box(queue.enter(None, NOW)).0)
                        .map(|ticket| ticket.seq)
                        .collect();
                    timed += start.elapsed();
                    for seq in entered {
                        queue.leave(seq, NOW);
                    }
                    done += batch;
                }
                timed
            })
        });

        let mut turn = 0;
        group.bench_function(BenchmarkId::new("position", size), |b| {
            b.iter(|| {
                turn = (turn + 1) % polled.len();
                black_box(queue.status(polled[turn], NOW))
            })
        });

        group.bench_function(BenchmarkId::new("leave + re-enter", size), |b| {
            b.iter(|| {
                turn = (turn + 1) % polled.len();
                black_box(queue.leave(polled[turn], NOW));
                let (ticket, _) = black_box(queue.enter(None, NOW));
                polled[turn] = ticket.map_or(polled[turn], |ticket| ticket.seq);
            })
        });
    }

    for size in [100_000u64, 1_000_000] {
        let storage = stored(size);
        group.bench_function(BenchmarkId::new("restore", size), |b| {
            b.iter_batched(
                || storage.clone(),
                |storage| EventQueue::restore(CONFIG, storage),
                BatchSize::LargeInput,
            )
        });
    }
    group.finish();
}

/// A line of `size` entered in order at `NOW`, the first 100 admitted.
fn line_of(size: u64) -> EventQueue {
    let mut queue = EventQueue::new(CONFIG);
    for _ in 0..size {
        queue.enter(None, NOW);
    }
    queue
}

fn snapshots(c: &mut Criterion) {
    let mut group = c.benchmark_group("snapshot");
    let of = SnapshotOf {
        room: 1,
        version: 1,
        as_of: NOW,
        rate_per_second: Some(10.0),
    };
    for size in [1_000u64, 100_000, 1_000_000] {
        let before = LIVE.load(Ordering::Relaxed);
        let queue = line_of(size);
        let held = LIVE.load(Ordering::Relaxed).saturating_sub(before);
        let snapshot = queue.snapshot(of);
        let bytes = snapshot.encode();
        println!(
            "{size} in line: the EventQueue holds {:.1} MB of heap ({:.0} B a person); \
             its snapshot encodes to {} bytes",
            held as f64 / 1e6,
            held as f64 / size as f64,
            bytes.len()
        );
        group.bench_function(BenchmarkId::new("build", size), |b| {
            b.iter(|| black_box(queue.snapshot(of)))
        });
        group.bench_function(BenchmarkId::new("encode", size), |b| {
            b.iter(|| black_box(snapshot.encode()))
        });
        group.bench_function(BenchmarkId::new("decode", size), |b| {
            b.iter(|| black_box(Snapshot::decode(&bytes)))
        });
        let mut seq = 0;
        group.bench_function(BenchmarkId::new("place", size), |b| {
            b.iter(|| {
                seq = (seq + 7_919) % size;
                black_box(snapshot.place(seq))
            })
        });
    }
    group.finish();
}

criterion_group!(benches, operations, snapshots);
criterion_main!(benches);
