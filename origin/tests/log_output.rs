//! The `origin serve` binary with its log output a pipe whose reader has gone (a log
//! shipper that died): payments are still answered, the recovery loop goes on and
//! converges a payment left UNKNOWN, and `/readyz` says so.
//!
//! Before the fix, the first log line written after the reader left made
//! tracing-subscriber report the failed write with `eprintln!`, which panicked on the
//! same closed pipe and ended the task that logged — the confirm got no answer.

use crate::support;

use std::io::Read as _;
use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::time::Duration;

use harness::eventually::eventually;
use serde_json::Value;
use support::edge_headers;

const SECRET: &str = "origin-log-test-secret-0123456789abcdef";

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .expect("a free port")
}

/// The edge's signature headers for a request of `user-1`.
fn signed_headers(method: &str, path: &str, key: &str, body: &[u8]) -> reqwest::header::HeaderMap {
    let mut headers = reqwest::header::HeaderMap::new();
    for (name, value) in edge_headers(SECRET.as_bytes(), method, path, key, body) {
        headers.insert(name, value.parse().expect("a header value"));
    }
    headers
}

async fn confirm(http: &reqwest::Client, origin: &str, order: &str) -> reqwest::Response {
    let body = format!(r#"{{"orderId":"{order}","paymentKey":"pk-{order}","amount":1000}}"#);
    http.post(format!("{origin}/payments/confirm"))
        .headers(signed_headers(
            "POST",
            "/payments/confirm",
            order,
            body.as_bytes(),
        ))
        .header("idempotency-key", order)
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .expect("the origin answers")
}

/// Sets the simulator's fault mode.
async fn set_mode(http: &reqwest::Client, gateway: &str, mode: &str) {
    let faults = serde_json::json!({ "mode": mode });
    let set = http
        .put(format!("{gateway}/admin/faults"))
        .json(&faults)
        .send();
    assert!(set
        .await
        .expect("the simulator answers")
        .status()
        .is_success());
}

async fn metric(http: &reqwest::Client, metrics: &str, name: &str) -> f64 {
    let text = http
        .get(format!("{metrics}/metrics"))
        .send()
        .await
        .expect("the metrics listener answers")
        .text()
        .await
        .expect("metrics text");
    text.lines()
        .find_map(|line| line.strip_prefix(name)?.trim().parse().ok())
        .unwrap_or(0.0)
}

#[tokio::test]
async fn a_closed_log_pipe_stops_neither_payments_nor_recovery() {
    let gateway = support::simulator().await;
    let dir = tempfile::tempdir().expect("a temporary folder");
    let (api, metrics, admin) = (free_port(), free_port(), free_port());
    let mut child = Command::new(env!("CARGO_BIN_EXE_origin"))
        .arg("serve")
        .env("ORIGIN_LISTEN", format!("127.0.0.1:{api}"))
        .env("ORIGIN_METRICS_LISTEN", format!("127.0.0.1:{metrics}"))
        .env("ORIGIN_ADMIN_LISTEN", format!("127.0.0.1:{admin}"))
        .env(
            "DATABASE_URL",
            format!("sqlite://{}", dir.path().join("origin.sqlite3").display()),
        )
        .env("EDGE_SIGNING_SECRET", SECRET)
        .env("GATEWAY_URL", &gateway)
        .env("GATEWAY_SECRET_KEY", support::toss::TEST_KEY)
        .env(
            "ENCRYPTION_KEKS",
            "v1:ERERERERERERERERERERERERERERERERERERERERERE=",
        )
        .env("ENCRYPTION_CURRENT_KEK", "v1")
        .env("RECOVERY_INTERVAL_MS", "200")
        .env("GATEWAY_TIMEOUT_MS", "2000")
        .env("RUST_LOG", "debug")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("origin serve starts");
    let (origin, metrics) = (
        format!("http://127.0.0.1:{api}"),
        format!("http://127.0.0.1:{metrics}"),
    );
    let http = reqwest::Client::new();
    let mut log = child.stderr.take().expect("the log pipe");
    let mut first = [0_u8; 256];
    log.read_exact(&mut first).expect("the origin logs");
    eventually(
        "the origin started",
        Duration::from_secs(30),
        Duration::from_millis(50),
        || async {
            let health = http.get(format!("{origin}/healthz")).send().await;
            health.map(drop).map_err(|error| error.to_string())
        },
    )
    .await;
    // The log shipper dies: from here every log write meets a closed pipe.
    drop(log);
    let cycles_before = metric(&http, &metrics, "origin_recovery_cycles_total").await;

    for order in ["closed-pipe-1", "closed-pipe-2", "closed-pipe-3"] {
        let answer = confirm(&http, &origin, order).await;
        assert_eq!(answer.status(), reqwest::StatusCode::CREATED, "{order}");
        let payment: Value = answer.json().await.expect("a payment");
        assert_eq!(payment["status"], "APPROVED");
    }
    // A PG that approves and never answers: the payment is UNKNOWN, for recovery.
    set_mode(&http, &gateway, "HANG_AFTER_PROCESSING").await;
    let unknown = confirm(&http, &origin, "closed-pipe-unknown").await;
    assert_eq!(unknown.status(), reqwest::StatusCode::ACCEPTED);
    set_mode(&http, &gateway, "NORMAL").await;
    eventually(
        "the UNKNOWN payment converged",
        Duration::from_secs(20),
        Duration::from_millis(100),
        || async {
            let read = http
                .get(format!("{origin}/payments/closed-pipe-unknown"))
                .headers(signed_headers(
                    "GET",
                    "/payments/closed-pipe-unknown",
                    "",
                    b"",
                ))
                .send()
                .await
                .expect("the origin answers");
            let payment: Value = read.json().await.expect("a payment");
            if payment["status"] == "APPROVED" {
                Ok(())
            } else {
                Err(payment.to_string())
            }
        },
    )
    .await;
    assert!(
        metric(&http, &metrics, "origin_recovery_cycles_total").await > cycles_before,
        "the recovery loop goes on"
    );
    let ready = http.get(format!("{origin}/readyz")).send().await;
    assert_eq!(
        ready.expect("the origin answers").status(),
        reqwest::StatusCode::OK
    );
    assert!(metric(&http, &metrics, "origin_log_writes_dropped_total").await > 0.0);
    assert!(
        child.try_wait().expect("a status").is_none(),
        "still serving"
    );
    let _ = child.kill();
    let _ = child.wait();
}
