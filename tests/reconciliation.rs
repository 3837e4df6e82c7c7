//! Settlement reconciliation end to end: payments approved through the real origin and
//! simulator, the simulator's settlement file exported, altered as a PG's file goes
//! wrong, and uploaded to the origin's operator route; then the exception queue worked
//! through, and the command line (`origin reconcile FILE`) on the CP949 export.

use crate::support;

use serde_json::{json, Value};
use support::{order_body, System, OPERATOR_TOKEN};

const PAYMENTS: usize = 8;

/// Approves `PAYMENTS` orders through the origin; their ids, and the UTC day the
/// simulator approved them on (the day of the settlement file).
async fn approve(system: &System) -> (Vec<String>, String) {
    let mut orders = Vec::new();
    for n in 0..PAYMENTS {
        let order_id = format!("settle-{n}");
        let response = system
            .confirm_at_origin("user-1", Some(&order_id), &order_body(&order_id))
            .await;
        let body: Value = response.json().await.expect("JSON");
        assert_eq!(body["status"], "APPROVED", "{body}");
        orders.push(order_id);
    }
    let ledger = system.ledger().await;
    let days: std::collections::BTreeSet<String> = ledger["approvals"]
        .as_array()
        .expect("approvals")
        .iter()
        .filter_map(|approval| approval["approvedAt"].as_i64())
        .filter_map(chrono::DateTime::from_timestamp_millis)
        .map(|at| at.date_naive().to_string())
        .collect();
    assert_eq!(days.len(), 1, "approved on one UTC day: {days:?}");
    (orders, days.into_iter().next().unwrap_or_default())
}

async fn export(system: &System, day: &str, encoding: &str) -> Vec<u8> {
    let response = system
        .http
        .get(format!(
            "{}/v1/settlements?date={day}&encoding={encoding}",
            system.gateway
        ))
        .send()
        .await
        .expect("the simulator answers");
    assert!(response.status().is_success());
    response.bytes().await.expect("the file").to_vec()
}

/// The file with `changed`'s amount raised by 500 won, `removed`'s row gone, and a
/// row for an order we never took added before the summary row.
fn alter(file: &[u8], changed: &str, removed: &str) -> String {
    let text = std::str::from_utf8(file).expect("UTF-8");
    let rows: Vec<&str> = text.split_inclusive("\r\n").collect();
    let mut altered = String::new();
    for row in &rows {
        if row.contains(&format!(",{changed},")) {
            assert!(row.contains("\"5,000원\""), "{row}");
            altered.push_str(&row.replacen("\"5,000원\"", "\"5,500원\"", 1));
        } else if row.contains(&format!(",{removed},")) {
            continue;
        } else if row.starts_with("합계") {
            let ghost = rows[1].replacen(",settle-0,", ",ghost-1,", 1);
            assert_ne!(ghost, rows[1]);
            altered.push_str(&ghost);
            altered.push_str(row);
        } else {
            altered.push_str(row);
        }
    }
    altered
}

async fn operator(request: reqwest::RequestBuilder) -> (reqwest::StatusCode, Value) {
    let response = request
        .bearer_auth(OPERATOR_TOKEN)
        .send()
        .await
        .expect("the origin answers");
    let status = response.status();
    (status, response.json().await.unwrap_or(Value::Null))
}

async fn pending(system: &System) -> Vec<Value> {
    let queue = system
        .operator_get("/admin/reconciliations?status=PENDING")
        .await;
    queue["items"].as_array().cloned().expect("items")
}

fn summary(item: &Value) -> (String, String) {
    (
        item["category"].as_str().unwrap_or_default().to_owned(),
        item["orderId"].as_str().unwrap_or_default().to_owned(),
    )
}

#[tokio::test]
async fn an_altered_settlement_file_shows_each_difference_once_and_the_queue_is_worked_through() {
    let system = System::backend(&[]).await;
    let (orders, day) = approve(&system).await;
    let file = alter(
        &export(&system, &day, "utf-8").await,
        &orders[2],
        &orders[5],
    );

    let upload = || {
        system
            .http
            .post(format!("{}/admin/reconciliations/run", system.origin_admin))
            .header("content-type", "text/csv; charset=utf-8")
            .body(file.clone())
    };
    let (status, report) = operator(upload()).await;
    assert_eq!(status, 200, "{report}");
    let counts = |report: &Value| {
        [
            "external",
            "matched",
            "amountMismatch",
            "internalOnly",
            "externalOnly",
            "skipped",
            "pending",
        ]
        .map(|name| report[name].as_u64().unwrap_or(u64::MAX))
    };
    let rows = PAYMENTS as u64; // one row removed, one ghost added
    assert_eq!(
        counts(&report),
        [rows, rows - 2, 1, 1, 1, 1, 3],
        "external, matched, amountMismatch, internalOnly, externalOnly, skipped, pending: {report}"
    );
    assert_eq!(report["skippedLines"][0]["reason"], "SUMMARY_ROW");
    assert_eq!(report["period"], json!({"first": day, "last": day}));

    let mut queue: Vec<_> = pending(&system).await.iter().map(summary).collect();
    queue.sort();
    let expected = [
        ("AMOUNT_MISMATCH", orders[2].as_str()),
        ("EXTERNAL_ONLY", "ghost-1"),
        ("INTERNAL_ONLY", orders[5].as_str()),
    ]
    .map(|(category, order)| (category.to_owned(), order.to_owned()));
    assert_eq!(queue, expected);

    let (_, again) = operator(upload()).await;
    assert_eq!(
        counts(&again),
        counts(&report),
        "a re-upload queues nothing new"
    );
    assert_eq!(pending(&system).await.len(), 3);

    let ghost = pending(&system)
        .await
        .into_iter()
        .find(|item| item["orderId"] == "ghost-1")
        .expect("the ghost is queued");
    let resolve = || {
        system
            .http
            .post(format!(
                "{}/admin/reconciliations/{}/resolve",
                system.origin_admin, ghost["id"]
            ))
            .json(&json!({"note": "a PG test charge, voided by the PG"}))
    };
    let (status, resolved) = operator(resolve()).await;
    assert_eq!(status, 200, "{resolved}");
    assert_eq!(resolved["status"], "RESOLVED");
    assert_eq!(pending(&system).await.len(), 2, "the queue shrinks");
    let (status, body) = operator(resolve()).await;
    assert_eq!(
        (status.as_u16(), &body["code"]),
        (409, &json!("ALREADY_RESOLVED"))
    );

    // The PG's own file, unaltered and in Excel's Korean encoding, through the command
    // line: everything matches, and the two open items close by themselves.
    let cp949 = export(&system, &day, "cp949").await;
    assert!(std::str::from_utf8(&cp949).is_err(), "CP949, not UTF-8");
    let path = std::env::temp_dir().join(format!("settlement-{}.csv", std::process::id()));
    std::fs::write(&path, &cp949).expect("the file is written");
    let printed = system.origin_cli(&["reconcile", path.to_str().expect("a path")]);
    let _ = std::fs::remove_file(&path);
    let report: Value = serde_json::from_str(&printed).expect("a JSON report");
    assert_eq!(counts(&report), [rows, rows, 0, 0, 0, 1, 0], "{report}");
    assert_eq!(
        (report["closed"].as_u64(), report["encoding"].as_str()),
        (Some(2), Some("CP949"))
    );
    assert!(pending(&system).await.is_empty());
}
