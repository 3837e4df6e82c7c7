//! Throughput of the queue routes in the local runtime, at two line lengths, beside
//! reference routes measured in the same run:
//!
//! - `GET /healthz` — the edge with no object call (the floor of every route);
//! - `GET /auth/me` — token check plus one indexed read in the user's object: the
//!   closest route to a no-op object call;
//! - `GET /queue/{e}/status` — the poll: the user's object, then the room's O(log n) read;
//! - `POST /queue/{e}/enter` (new people) — the user's object, the global limiter and the
//!   room's insert.
//!
//! A poll should not slow down as the line grows; its ratio to `/auth/me` shows what the
//! room adds. `cargo build --release -p origin -p gateway-sim` then
//! `E2E_BIN_DIR=target/release cargo bench --bench queue_load`.

// A benchmark uses a part of the end-to-end harness.
#[allow(dead_code)]
#[path = "../tests/support/mod.rs"]
mod support;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::future::join_all;
use support::{EdgeSetup, System};

const CLIENTS: usize = 16;
const SECONDS: u64 = 5;

/// Requests per second that `CLIENTS` concurrent clients get through in `SECONDS`, each
/// sending its next request when the last is answered; request `i` comes from `make(i)`.
async fn throughput(make: impl Fn(u64) -> reqwest::RequestBuilder + Sync) -> f64 {
    let next = AtomicU64::new(0);
    let deadline = Instant::now() + Duration::from_secs(SECONDS);
    let started = Instant::now();
    let counts = join_all((0..CLIENTS).map(|_| async {
        let mut done = 0u64;
        while Instant::now() < deadline {
            let response = make(next.fetch_add(1, Ordering::Relaxed))
                .send()
                .await
                .expect("the edge answers");
            assert!(response.status().is_success(), "{}", response.status());
            response.bytes().await.expect("a body");
            done += 1;
        }
        done
    }))
    .await;
    counts.iter().sum::<u64>() as f64 / started.elapsed().as_secs_f64()
}

/// Fills the line of `event` with the holders of `tokens`, 32 at a time.
async fn fill(system: &System, tokens: &[String], event: &str) {
    let url = format!("{}/queue/{event}/enter", system.edge);
    let next = AtomicU64::new(0);
    join_all((0..32).map(|_| async {
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed) as usize;
            let Some(token) = tokens.get(i) else { break };
            let response = system
                .http
                .post(&url)
                .bearer_auth(token)
                .send()
                .await
                .expect("the edge answers");
            assert!(response.status().is_success(), "{}", response.status());
        }
    }))
    .await;
}

#[tokio::main]
async fn main() {
    let system = Arc::new(
        System::start_with(EdgeSetup {
            vars: vec![("RATE_LIMIT_GLOBAL", "1000000/1s".into())],
            ..EdgeSetup::default()
        })
        .await,
    );
    let me = system.token("bench-me", 3600);
    let healthz = throughput(|_| system.http.get(format!("{}/healthz", system.edge))).await;
    let auth_me = throughput(|_| {
        system
            .http
            .get(format!("{}/auth/me", system.edge))
            .bearer_auth(&me)
    })
    .await;
    println!("GET /healthz        {healthz:8.0} req/s");
    println!("GET /auth/me        {auth_me:8.0} req/s  (one object read: the reference)");

    for people in [1_000usize, 20_000] {
        let event = format!("bench-{people}");
        let tokens: Vec<String> = (0..people)
            .map(|i| system.token(&format!("{event}-{i}"), 3600))
            .collect();
        let filled = Instant::now();
        fill(&system, &tokens, &event).await;
        let fill_rate = people as f64 / filled.elapsed().as_secs_f64();
        let middle = &tokens[people / 2];
        let status_url = format!("{}/queue/{event}/status", system.edge);
        let poll = throughput(|_| system.http.get(&status_url).bearer_auth(middle)).await;
        let newcomers: Vec<String> = (0..20_000)
            .map(|i| system.token(&format!("{event}-new-{i}"), 3600))
            .collect();
        let enter_url = format!("{}/queue/{event}/enter", system.edge);
        let enter = throughput(|i| {
            system
                .http
                .post(&enter_url)
                .bearer_auth(&newcomers[i as usize % newcomers.len()])
        })
        .await;
        println!("line of {people:>6}: fill {fill_rate:6.0}/s; status poll {poll:6.0} req/s ({:.2} of /auth/me); enter {enter:6.0} req/s ({:.2} of /auth/me)", poll / auth_me, enter / auth_me);
    }
}
