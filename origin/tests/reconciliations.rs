//! Settlement reconciliation through the operator routes, in process: uploads as
//! `text/csv` and as a multipart form, the period named or read from the file, the
//! refusals, and the exception queue listed and resolved.

use crate::support;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use serde_json::{json, Value};
use support::settlement::{operator, origin, queue};
use support::Origin;

/// The file as the PG writes it: o-2 at another amount, o-3 missing, a ghost, a total.
const FILE: &str = "\u{feff}거래일시,가맹점ID,주문번호,결제수단,결제금액,수수료,정산금액\r\n\
    2026-11-30 12:00:00,M,o-1,\"카드,일시불\",\"1,000원\",25원,975원\r\n\
    2026-11-30 12:00:00,M,o-2,\"카드,일시불\",\"2,500원\",62원,\"2,438원\"\r\n\
    2026-11-30 12:00:01,M,o-4,\"카드,일시불\",\"4,000원\",100원,\"3,900원\"\r\n\
    2026-11-30 12:00:02,M,ghost,\"카드,일시불\",700원,17원,683원\r\n\
    합계,,,,\"8,200원\",204원,\"7,996원\"\r\n";

async fn upload(origin: &Origin, query: &str, file: &str) -> (StatusCode, Value) {
    let path = format!("/admin/reconciliations/run{query}");
    origin
        .send(operator("POST", &path, "text/csv", file.to_owned()))
        .await
}

async fn resolve(origin: &Origin, id: &Value, body: Value) -> (StatusCode, Value) {
    let path = format!("/admin/reconciliations/{id}/resolve");
    origin
        .send(operator(
            "POST",
            &path,
            "application/json",
            body.to_string(),
        ))
        .await
}

fn counts(report: &Value) -> [u64; 7] {
    [
        "external",
        "matched",
        "internalOnly",
        "externalOnly",
        "amountMismatch",
        "skipped",
        "pending",
    ]
    .map(|name| {
        report[name]
            .as_u64()
            .unwrap_or_else(|| panic!("{name} in {report}"))
    })
}

#[tokio::test]
async fn a_file_reconciles_over_the_days_it_covers_and_its_exceptions_wait_in_the_queue() {
    let origin = origin().await;
    let (status, report) = upload(&origin, "", FILE).await;
    assert_eq!(status, StatusCode::OK, "{report}");
    // external, matched, internalOnly, externalOnly, amountMismatch, skipped, pending
    assert_eq!(counts(&report), [4, 2, 1, 1, 1, 1, 3], "{report}");
    assert_eq!(
        report["period"],
        json!({"first": "2026-11-30", "last": "2026-11-30"})
    );
    assert_eq!(
        report["skippedLines"],
        json!([{"line": 6, "reason": "SUMMARY_ROW", "detail": "summary row"}])
    );
    assert_eq!(report["encoding"], "UTF-8 with BOM");
    assert_eq!(report["queued"], 3);

    let pending = queue(&origin, "?status=PENDING").await;
    let found: Vec<_> = pending
        .iter()
        .map(|item| {
            (
                item["orderId"].as_str().unwrap_or_default(),
                item["category"].as_str().unwrap_or_default(),
                item["internalAmount"].clone(),
                item["externalAmount"].clone(),
                item["line"].clone(),
            )
        })
        .collect();
    assert_eq!(
        found,
        [
            (
                "o-2",
                "AMOUNT_MISMATCH",
                json!(2_000),
                json!(2_500),
                json!(3)
            ),
            ("ghost", "EXTERNAL_ONLY", Value::Null, json!(700), json!(5)),
            (
                "o-3",
                "INTERNAL_ONLY",
                json!(3_000),
                Value::Null,
                Value::Null
            ),
        ]
    );
    assert!(pending.iter().all(|item| item["status"] == "PENDING"));

    let (status, again) = upload(&origin, "", FILE).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        counts(&again),
        counts(&report),
        "the same file, the same answer"
    );
    assert_eq!(again["queued"], 0, "nothing is queued twice");
    assert_eq!(queue(&origin, "?status=PENDING").await, pending);

    let metrics = origin.metrics_text().await;
    assert!(
        metrics.contains("origin_reconciliation_findings_total{outcome=\"MATCHED\"} 4"),
        "{metrics}"
    );
}

#[tokio::test]
async fn resolving_takes_an_item_out_of_the_queue_once() {
    let origin = origin().await;
    upload(&origin, "", FILE).await;
    let pending = queue(&origin, "?status=PENDING").await;
    let ghost = &pending[1]["id"];

    let (status, item) = resolve(
        &origin,
        ghost,
        json!({"note": "a test charge, refunded by the PG"}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{item}");
    assert_eq!(item["status"], "RESOLVED");
    assert_eq!(item["note"], "a test charge, refunded by the PG");
    assert_eq!(queue(&origin, "?status=PENDING").await.len(), 2);
    assert_eq!(queue(&origin, "?status=RESOLVED").await, [item]);
    assert_eq!(queue(&origin, "").await.len(), 3);

    let (status, body) = resolve(&origin, ghost, json!({"note": "again"})).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (StatusCode::CONFLICT, Some("ALREADY_RESOLVED"))
    );
    let (status, body) = resolve(&origin, &json!(9_999), json!({"note": "x"})).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("RECONCILIATION_ITEM_NOT_FOUND"))
    );
    let (status, body) = resolve(&origin, &json!("abc"), json!({"note": "x"})).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    let other = &pending[0]["id"];
    for bad in [
        json!({"note": "  "}),
        json!({}),
        json!({"note": "x", "by": "me"}),
    ] {
        let (status, body) = resolve(&origin, other, bad.clone()).await;
        assert_eq!(
            (status, body["code"].as_str()),
            (StatusCode::BAD_REQUEST, Some("INVALID_REQUEST")),
            "{bad}"
        );
    }

    let (_, report) = upload(&origin, "", FILE).await;
    assert_eq!(
        report["pending"], 2,
        "a resolved finding does not come back: {report}"
    );
}

#[tokio::test]
async fn a_corrected_file_closes_what_it_now_matches() {
    let origin = origin().await;
    upload(&origin, "", FILE).await;
    let corrected = "orderNo,amount\no-1,1000\no-2,2000\no-3,3000\no-4,4000\n";
    let (status, report) = upload(&origin, "?date=2026-11-30", corrected).await;
    assert_eq!(status, StatusCode::OK, "{report}");
    assert_eq!(counts(&report), [4, 4, 0, 0, 0, 0, 1], "{report}");
    assert_eq!(report["closed"], 2, "o-2's mismatch and o-3's absence");
    let pending = queue(&origin, "?status=PENDING").await;
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0]["orderId"], "ghost");
}

#[tokio::test]
async fn the_period_an_operator_names_decides_our_side() {
    let origin = origin().await;
    let file = "orderNo,amount\no-old,500\n";
    let (_, report) = upload(&origin, "?date=2026-11-29", file).await;
    assert_eq!(counts(&report), [1, 1, 0, 0, 0, 0, 0], "{report}");
    let (_, report) = upload(&origin, "?from=2026-11-29&to=2026-11-30", file).await;
    assert_eq!(counts(&report), [1, 1, 4, 0, 0, 0, 4], "{report}");
}

#[tokio::test]
async fn a_multipart_form_carries_the_file() {
    let origin = origin().await;
    let boundary = "----settlement-boundary";
    let form = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"comment\"\r\n\r\nNovember\r\n\
         --{boundary}\r\nContent-Disposition: form-data; name=\"upload\"; filename=\"settle.csv\"\r\n\
         Content-Type: text/csv\r\n\r\n{FILE}\r\n--{boundary}--\r\n"
    );
    let content_type = format!("multipart/form-data; boundary={boundary}");
    let (status, report) = origin
        .send(operator(
            "POST",
            "/admin/reconciliations/run",
            &content_type,
            form,
        ))
        .await;
    assert_eq!(status, StatusCode::OK, "{report}");
    assert_eq!(counts(&report), [4, 2, 1, 1, 1, 1, 3]);

    let no_file = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"comment\"\r\n\r\nNovember\r\n--{boundary}--\r\n"
    );
    let (status, body) = origin
        .send(operator(
            "POST",
            "/admin/reconciliations/run",
            &content_type,
            no_file,
        ))
        .await;
    assert_eq!(
        (status, body["code"].as_str()),
        (StatusCode::BAD_REQUEST, Some("INVALID_REQUEST")),
        "{body}"
    );
}

#[tokio::test]
async fn what_is_refused_and_why() {
    let origin = origin().await;
    let cases = [
        ("", "memo,note\nx,y\n", "NOT_A_SETTLEMENT_FILE"),
        ("", "", "NOT_A_SETTLEMENT_FILE"),
        ("", "orderNo,amount\no-1,1000\n", "PERIOD_REQUIRED"),
        (
            "",
            "date,orderNo,amount\nsoon,o-1,1000\n",
            "PERIOD_REQUIRED",
        ),
        (
            "",
            "date,orderNo,amount\n2024-01-01,o-1,1\n2026-11-30,o-2,2\n",
            "INVALID_REQUEST",
        ),
        (
            "?date=30.11.2026",
            "orderNo,amount\no-1,1000\n",
            "INVALID_REQUEST",
        ),
        (
            "?from=2026-11-30",
            "orderNo,amount\no-1,1000\n",
            "INVALID_REQUEST",
        ),
        (
            "?date=2026-11-30&to=2026-11-30",
            "orderNo,amount\n",
            "INVALID_REQUEST",
        ),
        ("?day=2026-11-30", "orderNo,amount\n", "INVALID_REQUEST"),
    ];
    for (query, file, code) in cases {
        let (status, body) = upload(&origin, query, file).await;
        assert_eq!(
            (status, body["code"].as_str()),
            (StatusCode::BAD_REQUEST, Some(code)),
            "{query} {file:?}: {body}"
        );
    }
    let (status, body) = origin
        .send(operator(
            "GET",
            "/admin/reconciliations?status=OPEN",
            "text/plain",
            Body::empty(),
        ))
        .await;
    assert_eq!(
        (status, body["code"].as_str()),
        (StatusCode::BAD_REQUEST, Some("INVALID_REQUEST"))
    );
    let unsigned = Request::builder()
        .method("POST")
        .uri("/admin/reconciliations/run")
        .body(Body::from(FILE))
        .unwrap();
    let (status, _) = origin.send(unsigned).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(
        queue(&origin, "").await.is_empty(),
        "a refused file queues nothing"
    );
}
