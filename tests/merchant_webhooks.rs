//! The merchant's webhooks through kill -9 (issue 39): the simulator and the origin as
//! real processes, the merchant the receiver of `harness::merchant`, which verifies every
//! delivery with PyPI's `standardwebhooks`. A burst of 500 payments — approved,
//! declined, and UNKNOWN until recovery settles them — with the origin killed -9
//! mid-burst while deliveries are in flight: on SQLite it is started again on its
//! database, on PostgreSQL the other instance carries on alone. Either way every
//! payment's outcome reaches the merchant, in order per order, none lost, repeats only
//! under their own `webhook-id`, nothing refused (`support::merchant::delivered_whole`).
//! (Receivers that misbehave, and an outage: `merchant_webhooks_receivers.rs`.)

use crate::support;

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use harness::eventually::eventually;
use harness::merchant::MerchantReceiver;
use harness::services::Killer;
use serde_json::{json, Value};
use support::agreement::{agree, settled};
use support::confirms;
use support::merchant::{arrivals, delivered_whole, outbox, Arrival};
use support::{order_body, System};

/// `whsec_` and the base64 of 32 bytes.
const SECRET: &str = "whsec_ZTJlLW1lcmNoYW50LWNyYXNoLXNlY3JldC0zMmJ5dGU=";
/// How long another process may take to get somewhere on a loaded 2-core machine.
const WITHIN: Duration = Duration::from_secs(120);
/// The payments of the burst.
const BURST: usize = 500;

/// The origin's configuration besides the endpoint.
const CRASH: [(&str, &str); 10] = [
    // A receiver has 2 s to answer (10 s in production), so an event leased by the
    // killed process is claimed again 22 s after its claim instead of 30 s.
    ("MERCHANT_WEBHOOK_TIMEOUT_MS", "2000"),
    // Deliveries held unanswered at the kill time out on the survivor and are tried
    // again 100 ms later, doubling to 2 s (5 s to an hour in production), so they go
    // out within seconds of the receiver answering again.
    ("MERCHANT_WEBHOOK_RETRY_FIRST_MS", "100"),
    ("MERCHANT_WEBHOOK_RETRY_MAX_MS", "2000"),
    // A PG holding its answer 4 s leaves the payment UNKNOWN.
    ("GATEWAY_TIMEOUT_MS", "1000"),
    // A confirm cut off by the kill holds its Idempotency-Key 3 s (60 s in
    // production): its client's retries are answered 409 IDEMPOTENCY_IN_FLIGHT until
    // then, and make the payment after.
    ("IDEMPOTENCY_LEASE_MS", "3000"),
    ("RECOVERY_INTERVAL_MS", "3600000"),
    ("RECOVERY_MIN_AGE_MS", "500"),
    ("BULKHEAD_MAX_CONCURRENT", "400"),
    // Hundreds of calls out at once on purpose; the UNKNOWNs' timeouts must not open
    // the breaker for the confirms after them.
    ("GATEWAY_CONCURRENCY", "off"),
    ("BREAKER_ENABLED", "false"),
];

/// The receiver, and the simulator with one origin on SQLite (or two on PostgreSQL)
/// delivering to it.
async fn start(postgres: bool) -> (MerchantReceiver, System) {
    let receiver = MerchantReceiver::start(SECRET).await;
    let url = receiver.url();
    let mut vars = vec![
        ("MERCHANT_WEBHOOK_URL", url.as_str()),
        ("MERCHANT_WEBHOOK_SECRET", SECRET),
    ];
    vars.extend_from_slice(&CRASH);
    let system = if postgres {
        System::backend_on_postgres(&vars).await
    } else {
        System::backend(&vars).await
    };
    (receiver, system)
}

/// The PG of each stretch of the burst: a slow one that declines 3 in 10; one that
/// decides at once, declining 3 in 10, and holds its answer past the origin's timeout
/// (UNKNOWN, until recovery asks); the slow one again, during which the kill lands.
fn slow_pg() -> Value {
    json!({"mode": "DELAY", "delayMs": 20, "jitterMs": 200, "declineRate": 0.3})
}

fn holding_pg() -> Value {
    json!({"mode": "HANG_AFTER_PROCESSING", "delayMs": 4_000, "declineRate": 0.3})
}

/// The orders `range` names.
fn orders(range: std::ops::Range<usize>) -> Vec<String> {
    range.map(|n| format!("order-{n}")).collect()
}

/// The gap between two confirms of the burst.
const GAP: Duration = Duration::from_millis(10);

/// Confirms `orders` at `targets`, [`GAP`] apart ([`confirms::paced`]); those answered
/// with a payment.
async fn confirms(
    system: &System,
    orders: &[String],
    targets: &[String],
    answered: &AtomicUsize,
) -> BTreeSet<String> {
    confirms::paced(system, orders, targets, GAP, &order_body, answered).await
}

/// Waits until `count` confirms are counted in `answered`.
async fn answered(what: &str, answered: &AtomicUsize, count: usize) {
    eventually(what, WITHIN, Duration::from_millis(5), || async {
        match answered.load(Ordering::SeqCst) {
            n if n >= count => Ok(()),
            n => Err(format!("{n}")),
        }
    })
    .await;
}

/// The burst: 200 orders to the slow PG, 100 to the holding one, then 200 to the slow
/// one again in three steps, so the kill lands mid-burst with payments and deliveries
/// in flight however slow the machine: 30 orders, of which 20 answered are followed by
/// `before_kill` and the receiver made to hold its answers; then 30 more, `victim`
/// killed once a delivery is held and 10 of them are answered; the last 140 after it.
/// The orders answered with a payment.
async fn burst_with_a_kill<F: std::future::Future<Output = ()>>(
    system: &System,
    receiver: &MerchantReceiver,
    targets: &[String],
    victim: Killer,
    before_kill: F,
) -> BTreeSet<String> {
    let counted = AtomicUsize::new(0);
    system.set_faults(slow_pg()).await;
    let mut made = confirms(system, &orders(0..200), targets, &counted).await;
    system.set_faults(holding_pg()).await;
    made.extend(confirms(system, &orders(200..300), targets, &counted).await);
    system.set_faults(slow_pg()).await;

    let (first, second) = (AtomicUsize::new(0), AtomicUsize::new(0));
    let hang = async {
        answered("20 of the last stretch answered", &first, 20).await;
        before_kill.await;
        receiver.set_mode("hang").await;
    };
    let (stretch, around) = (orders(300..330), orders(330..360));
    let (made_first, ()) = tokio::join!(confirms(system, &stretch, targets, &first), hang);
    // Awaited beside the next 30: on a fast machine the stretch's deliveries can all be
    // done before the receiver hangs, and theirs are then the ones held.
    let kill = async {
        let what = "a delivery held";
        eventually(what, WITHIN, Duration::from_millis(20), || async {
            let held = arrivals(receiver).await;
            match held.iter().any(|a| a.mode == "hang") {
                true => Ok(()),
                false => Err(format!("{} deliveries, none held", held.len())),
            }
        })
        .await;
        answered("10 answered just before the kill", &second, 10).await;
        victim.kill();
    };
    let (made_second, ()) = tokio::join!(confirms(system, &around, targets, &second), kill);
    let after = confirms(system, &orders(360..BURST), targets, &AtomicUsize::new(0)).await;
    eprintln!(
        "the kill landed mid-burst: of the last 200, {} answered before it, {} of 30 around \
         it, {} of 140 after it",
        made_first.len(),
        made_second.len(),
        after.len()
    );
    made.extend(made_first);
    made.extend(made_second);
    made.extend(after);
    made
}

/// The rest of the burst after the kill: each order not answered confirmed again at
/// `target` under its key, as its client would, until it is made
/// ([`confirms::until_made`]); `answered` then holds every order.
async fn the_rest(system: &System, target: &str, answered: &mut BTreeSet<String>) {
    let rest: Vec<String> = orders(0..BURST)
        .into_iter()
        .filter(|order_id| !answered.contains(order_id))
        .collect();
    confirms::until_made(system, target, &rest, &order_body, WITHIN).await;
    answered.extend(rest);
}

/// With the PG healthy again, runs recovery at `base` until every order of the burst
/// has a settled payment, and checks the origin and the PG agree.
async fn settle(system: &System, base: &str, answered: &BTreeSet<String>) {
    system.set_faults(json!({"mode": "NORMAL"})).await;
    let what = "every order of the burst settled";
    eventually(what, WITHIN, Duration::from_millis(600), || async {
        system.run_recovery_at(base).await;
        settled(&system.payments_at(base).await, BURST)
    })
    .await;
    agree(system, base, &orders(0..BURST), answered).await;
}

/// The burst's outcomes were mixed: approved, declined, UNKNOWN on the way; and every
/// delivery held unanswered at the kill was sent again, under its id, and acknowledged.
/// Prints what it saw.
async fn after_the_kill(system: &System, base: &str, events: &[Value], arrived: &[Arrival]) {
    let payments = system.payments_at(base).await;
    assert_eq!(payments.len(), BURST, "every order of the burst paid");
    let count = |status: &str| payments.values().filter(|p| p["status"] == status).count();
    let declined = payments
        .values()
        .filter(|p| p["failureReason"] == "DECLINED")
        .count();
    let unknown = events
        .iter()
        .filter(|e| e["type"] == "payment.unknown")
        .count();
    assert!(
        count("APPROVED") > 0 && declined > 0 && unknown > 0,
        "mixed outcomes: {} approved, {declined} declined, {unknown} were UNKNOWN",
        count("APPROVED")
    );
    let held: BTreeSet<&str> = arrived
        .iter()
        .filter(|a| a.mode == "hang")
        .map(|a| a.id.as_str())
        .collect();
    for id in &held {
        let last_held = arrived
            .iter()
            .rposition(|a| a.id == *id && a.mode == "hang");
        let again = arrived
            .iter()
            .skip(last_held.map_or(0, |at| at + 1))
            .any(|a| a.id == *id && a.acknowledged());
        assert!(again, "{id}, held at the kill, was not sent again");
    }
    let distinct: BTreeSet<&str> = arrived.iter().map(|a| a.id.as_str()).collect();
    eprintln!(
        "{} payments ({} approved, {} failed of which {declined} declined, {unknown} UNKNOWN \
         on the way): {} events, {} deliveries ({} repeats), {} held at the kill and sent again",
        payments.len(),
        count("APPROVED"),
        count("FAILED"),
        events.len(),
        arrived.len(),
        arrived.len() - distinct.len(),
        held.len()
    );
}

#[tokio::test]
async fn a_kill_9_mid_burst_on_sqlite_every_outcome_reaches_the_merchant_after_the_restart() {
    let (receiver, mut system) = start(false).await;
    let targets = [system.origin.clone()];
    let killer = system.killer("origin");
    let mut answered = burst_with_a_kill(&system, &receiver, &targets, killer, async {}).await;
    system.restart_origin().await;
    let restarted = Instant::now();
    receiver.set_mode("ok").await;
    let base = system.origin.clone();
    the_rest(&system, &base, &mut answered).await;
    settle(&system, &base, &answered).await;
    let (events, arrived) = delivered_whole(&system, &base, &receiver).await;
    eprintln!(
        "everything delivered {:.1?} after the restart",
        restarted.elapsed()
    );
    after_the_kill(&system, &base, &events, &arrived).await;
}

/// Deliveries the origin at `base` has recorded as delivered.
async fn delivered_in_outbox(system: &System, base: &str) -> usize {
    let events = outbox(system, base).await;
    events
        .iter()
        .filter(|e| e["delivery"]["state"] == "DELIVERED")
        .count()
}

/// What the first instance counts as delivered (`origin_webhook_attempts_total`).
async fn delivered_by_first(system: &System) -> usize {
    let metrics = system.origin_metrics().await;
    metrics
        .lines()
        .find_map(|line| {
            line.strip_prefix(r#"origin_webhook_attempts_total{outcome="delivered"} "#)
        })
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0)
}

#[tokio::test]
async fn a_kill_9_mid_burst_on_postgres_the_other_instance_delivers_everything() {
    let (receiver, system) = start(true).await;
    let survivor = system.second_origin.clone().expect("a second instance");
    let targets = [system.origin.clone(), survivor.clone()];
    let killer = system.killer("origin");
    // Both deliver: an instance counts a delivery before it records it, so more
    // recorded than the first had counted by the time it was read means the second
    // delivered some.
    let both_delivered = async {
        let recorded = delivered_in_outbox(&system, &survivor).await;
        let by_first = delivered_by_first(&system).await;
        assert!(
            by_first > 0 && recorded > by_first,
            "both instances delivered before the kill: {recorded} recorded, {by_first} by the first"
        );
        eprintln!("before the kill: {recorded} delivered, {by_first} of them by the first");
    };
    let mut answered =
        burst_with_a_kill(&system, &receiver, &targets, killer, both_delivered).await;
    let killed = Instant::now();
    receiver.set_mode("ok").await;
    the_rest(&system, &survivor, &mut answered).await;
    settle(&system, &survivor, &answered).await;
    let (events, arrived) = delivered_whole(&system, &survivor, &receiver).await;
    eprintln!(
        "everything delivered {:.1?} after the kill",
        killed.elapsed()
    );
    after_the_kill(&system, &survivor, &events, &arrived).await;
}
