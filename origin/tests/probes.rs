//! The breaker's probes as each adapter sends them, against the servers the other tests
//! use: the Toss adapter against the simulator, the Stripe adapter against localstripe. A confirm probe is a confirm of a payment that cannot exist: the
//! simulator refuses it `NOT_FOUND_PAYMENT` once its fault mode has taken its time, so a
//! stalled confirm path leaves it unanswered while look-ups are answered at once.

use std::time::Duration;

use harness::localstripe::Localstripe;
use serde_json::{json, Value};

use crate::stripe::{adapter, all_intents};
use crate::support::{simulator, toss};

const PROBE: &str = "probe-0123456789abcdef";

async fn put_faults(gateway: &str, faults: Value) {
    reqwest::Client::new()
        .put(format!("{gateway}/admin/faults"))
        .json(&faults)
        .send()
        .await
        .and_then(reqwest::Response::error_for_status)
        .expect("the simulator takes the faults");
}

async fn ledger(gateway: &str) -> Value {
    reqwest::get(format!("{gateway}/admin/ledger"))
        .await
        .expect("the simulator's ledger")
        .json()
        .await
        .expect("JSON")
}

#[tokio::test]
async fn the_simulator_answers_a_toss_confirm_probe_not_found_and_charges_nobody() {
    let gateway = simulator().await;
    let adapter = toss::adapter(&gateway);
    assert!(adapter.answers_confirm(PROBE).await);
    let ledger = ledger(&gateway).await;
    assert_eq!(ledger["requestCount"], 0, "{ledger}");
    assert_eq!(ledger["approvals"], json!([]), "{ledger}");
}

#[tokio::test]
async fn a_stalled_confirm_path_leaves_the_confirm_probe_unanswered_not_the_look_up() {
    let gateway = simulator().await;
    let adapter = toss::adapter(&gateway);
    put_faults(&gateway, json!({"mode": "DELAY", "delayMs": 6_000})).await;
    let within = Duration::from_millis(1_000);
    let look_up = tokio::time::timeout(within, adapter.answers(PROBE)).await;
    assert_eq!(look_up, Ok(true), "look-ups answer while confirms stall");
    let confirm = tokio::time::timeout(within, adapter.answers_confirm(PROBE)).await;
    assert!(confirm.is_err(), "the confirm probe stalls: {confirm:?}");
    put_faults(&gateway, json!({"mode": "NORMAL"})).await;
    let confirm = tokio::time::timeout(within, adapter.answers_confirm(PROBE)).await;
    assert_eq!(confirm, Ok(true), "the PG back");
}

#[tokio::test]
async fn a_toss_confirm_probe_that_finds_no_pg_or_a_500_is_not_answered() {
    let gateway = simulator().await;
    put_faults(&gateway, json!({"mode": "ERROR_500"})).await;
    assert!(!toss::adapter(&gateway).answers_confirm(PROBE).await);
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let url = format!("http://{}", closed.local_addr().expect("its address"));
    drop(closed);
    assert!(!toss::adapter(&url).answers_confirm(PROBE).await);
}

#[tokio::test]
async fn a_breaker_probe_is_a_look_up_that_localstripe_answers_not_found() {
    let localstripe = Localstripe::start().await;
    assert!(
        adapter(localstripe.url())
            .answers("probe-0123456789abcdef")
            .await
    );
    // Nothing listening: no answer.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let url = format!("http://{}", closed.local_addr().expect("its address"));
    drop(closed);
    assert!(!adapter(&url).answers("probe-0123456789abcdef").await);
}

/// localstripe answers a confirm of a PaymentIntent it does not hold 404, as Stripe does
/// (Stripe with `resource_missing`; localstripe's body names no code), and makes nothing.
/// What it cannot show: a confirm path that stalls, or Stripe's own 404 body.
#[tokio::test]
async fn a_breaker_confirm_probe_is_a_confirm_that_localstripe_answers_not_found() {
    let localstripe = Localstripe::start().await;
    let stripe = adapter(localstripe.url());
    assert!(stripe.answers_confirm("probe-0123456789abcdef").await);
    assert_eq!(
        all_intents(&localstripe).await,
        Vec::<Value>::new(),
        "nothing made"
    );
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let url = format!("http://{}", closed.local_addr().expect("its address"));
    drop(closed);
    assert!(
        !adapter(&url)
            .answers_confirm("probe-0123456789abcdef")
            .await
    );
}
