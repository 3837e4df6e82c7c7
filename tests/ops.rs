//! The operators' files in `ops/`: the Prometheus alert and recording rules pass
//! `promtool check rules` and their unit tests (`promtool test rules`, an alert that
//! fires and one that does not for each), and every metric the rules and the Grafana
//! dashboard query is one a running origin exports — so neither can drift from the code.

use crate::support;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use sqlx::ConnectOptions as _;
use support::System;

fn ops(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("ops").join(path)
}

fn promtool(args: &[&str]) -> String {
    harness::output_of(
        Command::new("promtool")
            .args(args)
            .current_dir(ops("prometheus")),
        "`scripts/bootstrap --promtool` installs Debian's prometheus",
    )
}

#[test]
fn the_alert_rules_check_and_their_unit_tests_pass() {
    let checked = promtool(&["check", "rules", "origin.rules.yml"]);
    assert!(checked.contains("SUCCESS"), "{checked}");
    let tested = promtool(&["test", "rules", "origin.test.yml"]);
    assert!(tested.contains("SUCCESS"), "{tested}");
    // Every alert has a test of its own, and a runbook.
    let rules = std::fs::read_to_string(ops("prometheus/origin.rules.yml")).expect("the rules");
    let tests = std::fs::read_to_string(ops("prometheus/origin.test.yml")).expect("the tests");
    let alerts: Vec<&str> = rules
        .lines()
        .filter_map(|line| line.trim().strip_prefix("- alert: "))
        .collect();
    assert_eq!(alerts.len(), 14, "{alerts:?}");
    assert_eq!(rules.matches("runbook:").count(), alerts.len());
    for alert in alerts {
        assert!(
            tests.contains(&format!("alertname: {alert}")),
            "no test of {alert}"
        );
    }
}

/// The `origin_…` metric names in a PromQL expression.
fn metric_names(expr: &str, into: &mut BTreeSet<String>) {
    let bytes = expr.as_bytes();
    let mut at = 0;
    while let Some(found) = expr[at..].find("origin_") {
        let start = at + found;
        let before = start.checked_sub(1).map(|i| bytes[i]);
        let mut end = start;
        while end < bytes.len() && (bytes[end].is_ascii_alphanumeric() || bytes[end] == b'_') {
            end += 1;
        }
        if !before.is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b':') {
            into.insert(expr[start..end].to_owned());
        }
        at = end;
    }
}

/// Every sample name the origin's `/metrics` can carry, from its `# TYPE` lines.
fn exported(metrics: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for line in metrics.lines() {
        let Some(rest) = line.strip_prefix("# TYPE ") else {
            continue;
        };
        let mut parts = rest.split_whitespace();
        let (Some(name), Some(kind)) = (parts.next(), parts.next()) else {
            continue;
        };
        let suffixes: &[&str] = match kind {
            "counter" => &["_total", "_created"],
            "histogram" => &["_bucket", "_sum", "_count", "_created"],
            _ => &[""],
        };
        for suffix in suffixes {
            names.insert(format!("{name}{suffix}"));
        }
    }
    names
}

/// Brings about one of each thing the metrics count (a family shows on `/metrics` once
/// it has a series): a payment approved, a PG that refuses connections until the breaker
/// opens, the breaker forced open and a payment refused by it, a transaction re-run after
/// the database was locked, a reconciliation run, a confirm the PG refused unprocessed.
async fn warm_up(system: &System) {
    let (status, _) = system.confirm_order("order-approved").await;
    assert_eq!(status, reqwest::StatusCode::CREATED);
    system
        .set_faults(serde_json::json!({"mode": "NORMAL", "testCode": "UNAUTHORIZED_KEY"}))
        .await;
    system.confirm_order("order-not-sent").await;
    system
        .set_faults(serde_json::json!({"mode": "NORMAL"}))
        .await;

    // The database locked past the store's busy timeout (3 s): the confirm's
    // transaction is re-run once it is free.
    let path = system
        .database_url()
        .strip_prefix("sqlite://")
        .expect("a SQLite origin")
        .to_owned();
    let mut lock = sqlx::sqlite::SqliteConnectOptions::new()
        .filename(&path)
        .connect()
        .await
        .expect("the origin's database");
    sqlx::query("BEGIN EXCLUSIVE")
        .execute(&mut lock)
        .await
        .expect("locked");
    let confirm = system.confirm_order("order-after-the-lock");
    let release = async {
        tokio::time::sleep(std::time::Duration::from_secs(4)).await;
        sqlx::query("COMMIT")
            .execute(&mut lock)
            .await
            .expect("released");
    };
    let ((status, body), ()) = tokio::join!(confirm, release);
    assert_eq!(status, reqwest::StatusCode::CREATED, "{body}");

    // The PG's port closes for 2 s (its admin API with it) and opens again on its own.
    system
        .set_faults(serde_json::json!({"mode": "REFUSE_CONNECTIONS", "durationMs": 2_000}))
        .await;
    for order in ["order-unreachable-1", "order-unreachable-2"] {
        system.confirm_order(order).await;
    }
    tokio::time::sleep(std::time::Duration::from_millis(2_500)).await;

    let forced = system
        .http
        .post(format!("{}/admin/guard/breaker", system.origin_admin))
        .bearer_auth(support::OPERATOR_TOKEN)
        .json(&serde_json::json!({"state": "FORCED_OPEN", "reason": "the dashboard check"}))
        .send()
        .await
        .expect("the origin answers");
    assert!(forced.status().is_success());
    system.confirm_order("order-refused").await;

    let file = system.settlement_file_of_today().await;
    system.reconcile(file).await;
}

#[tokio::test]
async fn every_metric_the_dashboard_and_the_rules_use_is_one_the_origin_exports() {
    let system = System::backend(&[("BREAKER_MIN_CALLS", "2"), ("BREAKER_WINDOW", "2")]).await;
    warm_up(&system).await;
    let exported = exported(&system.origin_metrics().await);

    let dashboard: Value = serde_json::from_str(
        &std::fs::read_to_string(ops("grafana/origin.json")).expect("the dashboard"),
    )
    .expect("the dashboard is JSON");
    let panels = dashboard["panels"].as_array().expect("panels");
    let titles: Vec<&str> = panels.iter().filter_map(|p| p["title"].as_str()).collect();
    for needed in [
        "PG calls in flight",
        "Concurrency limit",
        "Breaker state",
        "Breaker transitions",
        "Payments by status",
        "PG latency",
        "Refusals by reason",
        "Recovery",
        "Reconciliation",
        "HTTP by route and status",
    ] {
        assert!(titles.contains(&needed), "no panel {needed}: {titles:?}");
    }
    let mut used = BTreeSet::new();
    for target in panels
        .iter()
        .flat_map(|p| p["targets"].as_array().into_iter().flatten())
    {
        metric_names(target["expr"].as_str().expect("an expr"), &mut used);
    }
    let rules = std::fs::read_to_string(ops("prometheus/origin.rules.yml")).expect("the rules");
    for line in rules.lines() {
        if let Some(expr) = line.trim().strip_prefix("expr: ") {
            metric_names(expr, &mut used);
        }
    }
    assert!(used.len() >= 10, "{used:?}");
    let unknown: Vec<&String> = used
        .iter()
        .filter(|name| !exported.contains(*name))
        .collect();
    assert!(unknown.is_empty(), "queried but not exported: {unknown:?}");
}
