//! Envelope encryption's cost per value — a fresh data key, two AES-256-GCM seals (the
//! data, then the data key under the KEK) and base64, or the reverse — for a 32-byte
//! value such as a payment key. Beside a database write it should not register: a few
//! microseconds at most.
//!
//! `cargo bench -p origin --bench envelope`

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use origin::crypto::{open, seal, Context, LocalKeys};

fn bench(c: &mut Criterion) {
    // v1 = 32 bytes of 0x07, in base64.
    let keys = LocalKeys::from_env(|name| match name {
        "ENCRYPTION_KEKS" => Some("v1:BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=".to_owned()),
        "ENCRYPTION_CURRENT_KEK" => Some("v1".to_owned()),
        _ => None,
    })
    .expect("the bench's keys");
    let ctx = Context {
        table: "payments",
        column: "payment_key",
        row_id: "order-0001",
    };
    let value = [0x42u8; 32];
    let stored = seal(&keys, &ctx, &value).expect("seal");
    assert_eq!(open(&keys, &ctx, &stored).expect("open").as_slice(), value);

    let mut group = c.benchmark_group("envelope, 32-byte value");
    group.bench_function("seal", |b| {
        b.iter(|| black_box(seal(&keys, &ctx, black_box(&value))))
    });
    group.bench_function("open", |b| {
        b.iter(|| black_box(open(&keys, &ctx, black_box(&stored))))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
