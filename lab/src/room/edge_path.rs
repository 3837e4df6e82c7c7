//! The room through the edge's own routes: ticket polls against `/healthz` and against
//! polls without a ticket — with what they cost the room — and enters.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::server::Room;
use super::EVENT;
use crate::cost::get;
use crate::cost::measure::{closed_loop, Measured};
use crate::edge::token;

/// Users whose tickets the polls carry, spread over the line.
const SAMPLED: u64 = 64;
/// Requests per row, after a warm-up of [`WARM_UP`] of the same kind.
const PLAIN_POLLS: u64 = 1_000;
const ENTERS: u64 = 2_000;
const WARM_UP: u64 = 200;

/// A row of requests, and what else workerd did over it.
pub struct Polled {
    pub measured: Measured,
    /// workerd's main thread's CPU time over the row (of `measured`'s, all threads).
    main_thread: Duration,
    /// The calls the edge made to rooms over the row.
    room_calls: f64,
}

impl Polled {
    /// `rows` as one row.
    fn merged(rows: Vec<Polled>) -> anyhow::Result<Polled> {
        let (mut measured, mut main_thread, mut room_calls) = (Vec::new(), Duration::ZERO, 0.0);
        for row in rows {
            measured.push(row.measured);
            main_thread += row.main_thread;
            room_calls += row.room_calls;
        }
        Ok(Polled {
            measured: Measured::merged(measured)?,
            main_thread,
            room_calls,
        })
    }

    /// workerd's main thread's CPU time per request, in µs.
    pub fn main_thread_us(&self) -> f64 {
        self.main_thread.as_secs_f64() * 1e6 / self.measured.requests() as f64
    }

    pub fn room_calls_per_s(&self) -> f64 {
        self.room_calls / self.measured.elapsed().as_secs_f64()
    }
}

/// `/healthz` and ticket polls are measured in turn, [`ROUNDS`] rounds of [`PER_ROUND`]
/// of each, and each kind's rounds summed. Under load workerd spends bursts of some
/// 150 ms of CPU, one row of a thousand `/healthz` in ten or so (idle, none): in rows
/// of 3,000 one after the other they made `/healthz` cost 75–203 µs from run to run;
/// in short rows in turn they fall on both kinds alike.
pub const ROUNDS: usize = 64;
pub const PER_ROUND: u64 = 500;

/// Polls at one size of the line.
pub struct Polls {
    /// Each kind's rounds summed.
    pub healthz: Polled,
    pub ticket: Polled,
    /// The lower quartile, median and upper quartile of the rounds' own ratios of the
    /// ticket polls' CPU per request to `/healthz`'s.
    pub round_ratios: [f64; 3],
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

/// `request(i)` [`WARM_UP`] times, then `total` times, measured.
async fn row<F>(room: &Room, total: u64, request: F) -> anyhow::Result<Polled>
where
    F: Fn(u64) -> reqwest::RequestBuilder + Clone + Send + Sync + 'static,
{
    closed_loop(|| room.cpu_time(), 0, WARM_UP, request.clone()).await?;
    measured(room, WARM_UP, total, request).await
}

/// `request(i)` for i in `first..first + total`, with what else workerd did meanwhile.
async fn measured<F>(room: &Room, first: u64, total: u64, request: F) -> anyhow::Result<Polled>
where
    F: Fn(u64) -> reqwest::RequestBuilder + Send + Sync + 'static,
{
    let calls = room.health("roomCalls").await?;
    let main_thread = || {
        room.main_thread_cpu_time()
            .ok_or_else(|| anyhow::anyhow!("workerd's main thread's CPU time is unreadable"))
    };
    let main_before = main_thread()?;
    let measured = closed_loop(|| room.cpu_time(), first, total, request).await?;
    Ok(Polled {
        measured,
        main_thread: main_thread()? - main_before,
        room_calls: room.health("roomCalls").await? - calls,
    })
}

/// `healthz` and `poll` in turn ([`ROUNDS`] × [`PER_ROUND`], each warmed first; which
/// goes first alternates, so neither always follows the other): each kind's rounds
/// summed, and the quartiles of the rounds' own ratios.
async fn in_turn<H, P>(
    room: &Room,
    healthz: H,
    poll: P,
) -> anyhow::Result<(Polled, Polled, [f64; 3])>
where
    H: Fn(u64) -> reqwest::RequestBuilder + Clone + Send + Sync + 'static,
    P: Fn(u64) -> reqwest::RequestBuilder + Clone + Send + Sync + 'static,
{
    closed_loop(|| room.cpu_time(), 0, WARM_UP, healthz.clone()).await?;
    closed_loop(|| room.cpu_time(), 0, WARM_UP, poll.clone()).await?;
    let (mut healthzes, mut polls, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..ROUNDS as u64 {
        let first = WARM_UP + round * PER_ROUND;
        let healthz_row = || measured(room, first, PER_ROUND, healthz.clone());
        let poll_row = || measured(room, first, PER_ROUND, poll.clone());
        let (healthz_row, poll_row) = if round % 2 == 0 {
            let healthz_row = healthz_row().await?;
            (healthz_row, poll_row().await?)
        } else {
            let poll_row = poll_row().await?;
            (healthz_row().await?, poll_row)
        };
        ratios.push(poll_row.measured.cpu_us() / healthz_row.measured.cpu_us());
        healthzes.push(healthz_row);
        polls.push(poll_row);
    }
    ratios.sort_by(f64::total_cmp);
    let quartile = |q: usize| ratios[q * (ratios.len() - 1) / 4];
    Ok((
        Polled::merged(healthzes)?,
        Polled::merged(polls)?,
        [quartile(1), quartile(2), quartile(3)],
    ))
}

/// With `size` in line (`uN` at N + 1): `/healthz`, then polls with and without tickets.
pub async fn polls(room: &Room, size: u64) -> anyhow::Result<Polls> {
    let sampled: Vec<(String, u64)> = (0..SAMPLED)
        .map(|i| i * (size / SAMPLED))
        .map(|n| (format!("u{n}"), n + 1))
        .collect();
    polls_of(room, EVENT, &sampled).await
}

/// `/healthz`, then polls of `event` with and without tickets, by `sampled` users, each
/// at the position beside it.
pub async fn polls_of(
    room: &Room,
    event: &str,
    sampled: &[(String, u64)],
) -> anyhow::Result<Polls> {
    let mut held = Vec::new();
    let enter = room.url(&format!("/queue/{event}/enter"));
    for (user, position) in sampled {
        let token = bearer(user);
        let ticket = crate::cost::ticket(&room.edge_http, &enter, &token).await?;
        held.push((*position, token, ticket));
    }
    let held = Arc::new(held);
    let status = room.url(&format!("/queue/{event}/status"));
    let mut exact = true;
    for (position, token, ticket) in held.iter() {
        let read: Value = room
            .http
            .get(&status)
            .bearer_auth(token)
            .header("queue-ticket", ticket)
            .send()
            .await?
            .json()
            .await?;
        exact &= read["position"].as_u64() == Some(*position);
    }
    let ticket = {
        let (http, url, held) = (room.edge_http.clone(), status.clone(), held.clone());
        move |i: u64| {
            let (_, token, ticket) = &held[i as usize % held.len()];
            http.get(&url)
                .bearer_auth(token)
                .header("queue-ticket", ticket)
        }
    };
    let healthz = get(&room.edge_http, room.url("/healthz"));
    let (healthz, ticket, round_ratios) = in_turn(room, healthz, ticket).await?;
    let plain = {
        let (http, url) = (room.edge_http.clone(), status);
        row(room, PLAIN_POLLS, move |i| {
            let (_, token, _) = &held[i as usize % held.len()];
            http.get(&url).bearer_auth(token)
        })
        .await?
    };
    Ok(Polls {
        healthz,
        ticket,
        round_ratios,
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
