//! `lab shards` in workerd: one drop driven at a fixed arrival rate through its arrival
//! shards, as the edge's Worker calls them — the driver Worker (`lab/src/room/driver.js`)
//! sends each user's enter to the shard the server's hash gives it (to the room itself
//! with one shard). Every second's arrivals are counted per object; every answer's
//! position is checked against the reference order (the arrival numbers: nobody leaves,
//! so whoever holds number n stands at n + 1); each call's time is how long until its
//! position was final; workerd's CPU per arrival is read from `/proc`.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use base64::Engine as _;
use futures_util::stream::{FuturesUnordered, StreamExt as _};
use rules::drop::{RoomSettings, RoomState, RoomUpdate};
use rules::queue::arrivals::shard_of;
use serde_json::{json, Value};

use crate::room::server::Room;

/// The key the lab's users are spread under (the edge's is its ticket key).
const KEY: &[u8] = b"lab shards";
/// Arrivals are sent in ticks of this length, all of a tick's at once.
const TICK: Duration = Duration::from_millis(100);

/// One drop, driven.
pub struct Driven {
    pub shards: u32,
    /// Arrivals a second, as sent and as answered (first to last).
    pub sent_per_s: f64,
    pub answered_per_s: f64,
    /// The busiest second of the busiest shard (of the room, with one), as sent.
    pub busiest_rps: u64,
    /// The batches the room took a second, over the run (the enters, with one shard).
    pub head_rps: f64,
    /// The widest a shard's share strays from 1/N.
    pub spread: f64,
    pub exact: bool,
    /// Each call's time, sorted: until its position was final.
    pub final_ms: Vec<u64>,
    /// workerd's CPU per arrival, all threads, µs.
    pub cpu_us: Option<f64>,
    /// Users spread over the line, each with their position.
    pub sampled: Vec<(String, u64)>,
}

/// Users sampled over the line.
const SAMPLED: usize = 64;

fn configure(shards: u32) -> anyhow::Result<Value> {
    let update = RoomUpdate {
        settings: RoomSettings {
            gated: true,
            shards: Some(shards),
            ..RoomSettings::default()
        },
        state: RoomState::Open,
        version: 1,
    };
    Ok(json!({ "op": "configure", "update": serde_json::to_value(update)? }))
}

/// `arrivals` enters of `event` over `shards`, at `rate` a second.
pub async fn drive(room: &Room, shards: u32, arrivals: u64, rate: u64) -> anyhow::Result<Driven> {
    let event = format!("driven-{shards}");
    room.call(&event, &configure(shards)?).await?;
    let per_tick = (rate as f64 * TICK.as_secs_f64()).round().max(1.0) as u64;
    let shard_of_user = |user: u64| shard_of(KEY, &event, &format!("u{user}"), shards.max(1));
    let cpu_before = room.cpu_time();
    let started = Instant::now();
    let mut sent_by_second: HashMap<(u32, u64), u64> = HashMap::new();
    let mut pending = FuturesUnordered::new();
    let mut answers = Vec::new();
    let mut next = 0;
    for tick in 0.. {
        if next >= arrivals {
            break;
        }
        // Until the tick is due, the answers of those sent before.
        let due = tokio::time::sleep_until((started + TICK * tick).into());
        tokio::pin!(due);
        loop {
            tokio::select! {
                _ = &mut due => break,
                Some(answer) = pending.next(), if !pending.is_empty() => answers.push(answer?),
            }
        }
        let second = started.elapsed().as_secs();
        let count = per_tick.min(arrivals - next);
        let batch: Vec<(u32, String)> = (next..next + count)
            .map(|user| (shard_of_user(user), format!("u{user}")))
            .collect();
        for (shard, _) in &batch {
            *sent_by_second.entry((*shard, second)).or_default() += 1;
        }
        next += count;
        let users: Vec<String> = batch.iter().map(|(_, user)| user.clone()).collect();
        let body = json!({ "event": event, "shards": shards, "arrivals": batch });
        pending.push(
            async move { Ok::<_, anyhow::Error>((users, room.post("/arrive", &body).await?)) },
        );
    }
    let sent_s = started.elapsed().as_secs_f64();
    while let Some(answer) = pending.next().await {
        answers.push(answer?);
    }
    let answered_s = started.elapsed().as_secs_f64();
    let cpu_us = cpu_before
        .zip(room.cpu_time())
        .and_then(|(before, after)| after.checked_sub(before))
        .map(|spent| spent.as_secs_f64() * 1e6 / arrivals as f64);

    let mut seqs = Vec::with_capacity(arrivals as usize);
    let mut final_ms = Vec::with_capacity(arrivals as usize);
    let mut held = Vec::with_capacity(arrivals as usize);
    let mut exact = true;
    for (users, tick) in &answers {
        let tick = tick.as_array().cloned().unwrap_or_default();
        exact &= tick.len() == users.len();
        for (user, answer) in users.iter().zip(tick) {
            let seq = answer["seq"].as_u64();
            exact &= answer["ok"] == true
                && seq.is_some()
                && answer["position"].as_u64() == seq.map(|s| s + 1);
            seqs.extend(seq);
            held.extend(seq.map(|seq| (seq, user.clone())));
            final_ms.push(answer["ms"].as_u64().unwrap_or(u64::MAX));
        }
    }
    held.sort_unstable();
    let step = (held.len() / SAMPLED).max(1);
    let sampled = held
        .iter()
        .step_by(step)
        .map(|(seq, user)| (user.clone(), seq + 1))
        .collect();
    seqs.sort_unstable();
    exact &= seqs == (0..arrivals).collect::<Vec<_>>();
    final_ms.sort_unstable();

    let mut per_shard: HashMap<u32, u64> = HashMap::new();
    for ((shard, _), count) in &sent_by_second {
        *per_shard.entry(*shard).or_default() += count;
    }
    let fair = arrivals as f64 / f64::from(shards.max(1));
    let spread = (0..shards.max(1))
        .map(|shard| (per_shard.get(&shard).copied().unwrap_or(0) as f64 - fair).abs() / fair)
        .fold(0.0, f64::max);
    let batches = if shards > 1 {
        let mut batches = 0;
        for shard in 0..shards {
            let request = json!({ "event": event, "shards": shards, "call": { "op": "report" } });
            let text = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(request.to_string());
            let report = room
                .get(&format!("/shard?name={event}%23{shard}&request={text}"))
                .await?;
            batches += report["answer"]["batches"]
                .as_u64()
                .with_context(|| format!("shard {shard}'s report: {report}"))?;
        }
        batches
    } else {
        arrivals
    };
    Ok(Driven {
        shards,
        sent_per_s: arrivals as f64 / sent_s,
        answered_per_s: arrivals as f64 / answered_s,
        busiest_rps: sent_by_second.values().copied().max().unwrap_or(0),
        head_rps: batches as f64 / answered_s,
        spread,
        exact,
        final_ms,
        cpu_us,
        sampled,
    })
}
