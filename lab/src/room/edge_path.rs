//! The room through the edge's own routes: ticket polls against `/healthz` and against
//! polls without a ticket — with what they cost the room — and enters.

use std::sync::Arc;

use serde_json::Value;

use super::server::Room;
use super::EVENT;
use crate::cost::get;
use crate::cost::measure::{closed_loop, Measured};
use crate::edge::token;

/// Users whose tickets the polls carry, spread over the line.
const SAMPLED: u64 = 64;
/// Requests per row, after a warm-up of [`WARM_UP`] of the same kind.
const HEALTHZ: u64 = 2_000;
const TICKET_POLLS: u64 = 4_000;
const PLAIN_POLLS: u64 = 1_000;
const ENTERS: u64 = 2_000;
const WARM_UP: u64 = 200;

/// A row of requests, and the calls the edge made to rooms meanwhile, per second.
pub struct Polled {
    pub measured: Measured,
    /// workerd's main thread's CPU time per request, in µs (of `measured.cpu_us`, all
    /// threads).
    pub main_thread_us: f64,
    pub room_calls_per_s: f64,
}

/// Rounds of `/healthz` and ticket polls, one after the other: the machine is shared, so
/// the ratio is taken within each round and the median round reported.
const ROUNDS: usize = 5;

/// Polls at one size of the line.
pub struct Polls {
    /// The median round's (by the ratio of their CPU per request).
    pub healthz: Polled,
    pub ticket: Polled,
    pub plain: Polled,
    /// Every sampled ticket's poll read its holder's exact place.
    pub exact: bool,
}

/// Entering through the edge.
pub struct Enters {
    pub new_users: Measured,
    pub in_line: Measured,
}

fn bearer(user: &str) -> String {
    token(user).unwrap_or_default()
}

/// `request(i)` [`WARM_UP`] times, then `total` times, measured, with the room calls the
/// edge made meanwhile.
async fn row<F>(room: &Room, total: u64, request: F) -> anyhow::Result<Polled>
where
    F: Fn(u64) -> reqwest::RequestBuilder + Clone + Send + Sync + 'static,
{
    closed_loop(|| room.cpu_time(), 0, WARM_UP, request.clone()).await?;
    let calls = room.health("roomCalls").await?;
    let main_thread = || {
        room.main_thread_cpu_time()
            .ok_or_else(|| anyhow::anyhow!("workerd's main thread's CPU time is unreadable"))
    };
    let main_before = main_thread()?;
    let started = std::time::Instant::now();
    let measured = closed_loop(|| room.cpu_time(), WARM_UP, total, request).await?;
    let elapsed = started.elapsed().as_secs_f64();
    let main_thread_us =
        (main_thread()? - main_before).as_secs_f64() * 1e6 / measured.requests.max(1) as f64;
    let room_calls_per_s = (room.health("roomCalls").await? - calls) / elapsed;
    Ok(Polled {
        measured,
        main_thread_us,
        room_calls_per_s,
    })
}

/// With `size` in line (`uN` at N + 1): `/healthz`, then polls with and without tickets.
pub async fn polls(room: &Room, size: u64) -> anyhow::Result<Polls> {
    let sampled: Vec<u64> = (0..SAMPLED).map(|i| i * (size / SAMPLED)).collect();
    let mut held = Vec::new();
    let enter = room.url(&format!("/queue/{EVENT}/enter"));
    for &n in &sampled {
        let token = bearer(&format!("u{n}"));
        let ticket = crate::cost::ticket(&room.edge_http, &enter, &token).await?;
        held.push((n, token, ticket));
    }
    let held = Arc::new(held);
    let status = room.url(&format!("/queue/{EVENT}/status"));
    let mut exact = true;
    for (n, token, ticket) in held.iter() {
        let read: Value = room
            .http
            .get(&status)
            .bearer_auth(token)
            .header("queue-ticket", ticket)
            .send()
            .await?
            .json()
            .await?;
        exact &= read["position"].as_u64() == Some(n + 1);
    }
    let mut rounds = Vec::new();
    for _ in 0..ROUNDS {
        let healthz = row(room, HEALTHZ, get(&room.edge_http, room.url("/healthz"))).await?;
        let ticket = {
            let (http, url, held) = (room.edge_http.clone(), status.clone(), held.clone());
            row(room, TICKET_POLLS, move |i| {
                let (_, token, ticket) = &held[(i % SAMPLED) as usize];
                http.get(&url)
                    .bearer_auth(token)
                    .header("queue-ticket", ticket)
            })
            .await?
        };
        rounds.push((healthz, ticket));
    }
    rounds.sort_by(|a, b| {
        let ratio =
            |(healthz, ticket): &(Polled, Polled)| ticket.measured.cpu_us / healthz.measured.cpu_us;
        ratio(a).total_cmp(&ratio(b))
    });
    let (healthz, ticket) = rounds.swap_remove(ROUNDS / 2);
    let plain = {
        let (http, url) = (room.edge_http.clone(), status);
        row(room, PLAIN_POLLS, move |i| {
            let (_, token, _) = &held[(i % SAMPLED) as usize];
            http.get(&url).bearer_auth(token)
        })
        .await?
    };
    Ok(Polls {
        healthz,
        ticket,
        plain,
        exact,
    })
}

/// Enters through the edge: users new to the edge (each one's session object made), then
/// users already in line entering again.
pub async fn enters(room: &Room) -> anyhow::Result<Enters> {
    let url = room.url(&format!("/queue/{EVENT}/enter"));
    let new_users = {
        let (http, url) = (room.edge_http.clone(), url.clone());
        row(room, ENTERS, move |i| {
            http.post(&url).bearer_auth(bearer(&format!("edge-{i}")))
        })
        .await?
        .measured
    };
    let in_line = {
        let http = room.edge_http.clone();
        row(room, ENTERS, move |i| {
            http.post(&url)
                .bearer_auth(bearer(&format!("edge-{}", i % 256)))
        })
        .await?
        .measured
    };
    Ok(Enters { new_users, in_line })
}
