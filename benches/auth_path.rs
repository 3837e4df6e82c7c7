//! What authentication adds to a request in the local runtime: `GET /auth/me` (token
//! verification plus one call to the user's session object) against `GET /healthz`
//! (no work), each sent sequentially through the edge in workerd on loopback.
//!
//! `cargo bench --bench auth_path` (after `make test` has built everything). Prints the
//! medians and their ratio; the first requests of each kind warm the isolate up.

// A benchmark uses a part of the end-to-end harness.
#[allow(dead_code)]
#[path = "../tests/support/mod.rs"]
mod support;

use std::time::{Duration, Instant};

use support::System;

const WARM_UP: usize = 50;
const SAMPLES: usize = 500;

async fn median_latency(system: &System, path: &str, token: Option<&str>) -> Duration {
    let url = format!("{}{path}", system.edge);
    let send = || {
        let mut request = system.http.get(&url);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        request.send()
    };
    for _ in 0..WARM_UP {
        send().await.expect("the edge answers");
    }
    let mut samples = Vec::with_capacity(SAMPLES);
    for _ in 0..SAMPLES {
        let started = Instant::now();
        let response = send().await.expect("the edge answers");
        assert!(
            response.status().is_success(),
            "{path}: {}",
            response.status()
        );
        response.bytes().await.expect("a body");
        samples.push(started.elapsed());
    }
    samples.sort();
    samples[SAMPLES / 2]
}

#[tokio::main]
async fn main() {
    let system = System::start().await;
    let token = system.token("bench-user", 3600);
    let healthz = median_latency(&system, "/healthz", None).await;
    let me = median_latency(&system, "/auth/me", Some(&token)).await;
    println!("median GET /healthz  {healthz:?}  ({SAMPLES} sequential requests)");
    println!("median GET /auth/me  {me:?}  (verify + one session-object call)");
    println!(
        "ratio                {:.2}",
        me.as_secs_f64() / healthz.as_secs_f64()
    );
}
