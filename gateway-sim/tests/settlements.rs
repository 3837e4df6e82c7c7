//! `GET /v1/settlements`: the day's settlement file, the simulator's own
//! export, unauthenticated as it always was.

use crate::common;

use axum::body::{to_bytes, Body};
use axum::http::{header, Request, StatusCode};
use common::{confirm_body, Sim};
use tower::ServiceExt;

/// A settlement export: the status, the two headers and the raw body.
async fn settlement(sim: &Sim, query: &str) -> (StatusCode, String, String, Vec<u8>) {
    let request = Request::get(format!("/v1/settlements?{query}"))
        .body(Body::empty())
        .expect("valid request");
    let response = sim
        .router()
        .oneshot(request)
        .await
        .expect("router is infallible");
    let header = |name| {
        response
            .headers()
            .get(name)
            .and_then(|value| value.to_str().ok())
            .unwrap_or_default()
            .to_owned()
    };
    let (content_type, disposition) = (
        header(header::CONTENT_TYPE),
        header(header::CONTENT_DISPOSITION),
    );
    let status = response.status();
    let bytes = to_bytes(response.into_body(), usize::MAX)
        .await
        .expect("body readable");
    (status, content_type, disposition, bytes.to_vec())
}

/// The UTC day of the ledger's first approval, as `YYYY-MM-DD`.
async fn approval_day(sim: &Sim) -> String {
    let approved_at = sim.ledger().await["approvals"][0]["approvedAt"]
        .as_i64()
        .expect("approved");
    chrono::DateTime::from_timestamp_millis(approved_at)
        .expect("a representable time")
        .date_naive()
        .to_string()
}

#[tokio::test]
async fn utf8_settlement_has_a_bom_crlf_and_the_day_s_live_approvals() {
    let sim = Sim::new();
    sim.confirm(confirm_body("order-1", "pk-1", 12_345))
        .await
        .assert_ok();
    sim.confirm(confirm_body("order-2", "pk-2", 500))
        .await
        .assert_ok();
    sim.cancel("pk-2").await.assert_ok();
    let day = approval_day(&sim).await;

    let (status, content_type, disposition, body) = settlement(&sim, &format!("date={day}")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(content_type, "text/csv; charset=utf-8");
    assert_eq!(
        disposition,
        format!("attachment; filename=\"settlement-{day}.csv\"")
    );
    let text = body
        .strip_prefix("\u{feff}".as_bytes())
        .and_then(|text| std::str::from_utf8(text).ok())
        .expect("UTF-8 after a byte order mark");
    assert_eq!(text.matches('\n').count(), 3, "{text:?}");
    assert_eq!(text.matches("\r\n").count(), 3, "CRLF only: {text:?}");
    let lines: Vec<_> = text.split_terminator("\r\n").collect();
    assert_eq!(
        lines[0],
        "거래일시,가맹점ID,주문번호,결제수단,결제금액,수수료,정산금액"
    );
    assert!(
        lines[1]
            .ends_with(",M-GATEWAY-SIM,order-1,\"카드,일시불\",\"12,345원\",308원,\"12,037원\""),
        "{}",
        lines[1]
    );
    assert_eq!(lines[2], "합계,,,,\"12,345원\",308원,\"12,037원\"");
}

#[tokio::test]
async fn cp949_settlement_decodes_to_the_same_text_without_a_bom() {
    let sim = Sim::new();
    sim.confirm(confirm_body("order-1", "pk-1", 1000))
        .await
        .assert_ok();
    let day = approval_day(&sim).await;

    let (_, _, _, utf8) = settlement(&sim, &format!("date={day}&encoding=utf-8")).await;
    let (status, content_type, disposition, cp949) =
        settlement(&sim, &format!("date={day}&encoding=cp949")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(content_type, "text/csv; charset=EUC-KR");
    assert_eq!(
        encoding_rs::Encoding::for_label(b"EUC-KR"),
        Some(encoding_rs::EUC_KR)
    );
    assert_eq!(
        disposition,
        format!("attachment; filename=\"settlement-{day}.csv\"")
    );
    assert!(!cp949.starts_with(b"\xEF\xBB\xBF"), "no byte order mark");
    assert!(std::str::from_utf8(&cp949).is_err(), "not UTF-8");
    let (decoded, had_errors) = encoding_rs::EUC_KR.decode_without_bom_handling(&cp949);
    assert!(!had_errors);
    let utf8 = std::str::from_utf8(&utf8).expect("UTF-8");
    assert_eq!(Some(decoded.as_ref()), utf8.strip_prefix('\u{feff}'));
}

#[tokio::test]
async fn settlement_of_an_empty_day_is_the_header_and_a_zero_total() {
    let sim = Sim::new();
    sim.confirm(confirm_body("order-1", "pk-1", 1000))
        .await
        .assert_ok();
    let (status, _, disposition, body) = settlement(&sim, "date=2000-01-01").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        disposition,
        "attachment; filename=\"settlement-2000-01-01.csv\""
    );
    assert_eq!(
        String::from_utf8(body).expect("UTF-8"),
        "\u{feff}거래일시,가맹점ID,주문번호,결제수단,결제금액,수수료,정산금액\r\n합계,,,,0원,0원,0원\r\n"
    );
}

#[tokio::test]
async fn settlement_with_a_bad_date_or_encoding_is_a_json_bad_request() {
    let sim = Sim::new();
    for query in [
        "",
        "date=",
        "date=2024-02-30",
        "date=2024-5-1",
        "date=today",
    ] {
        let response = sim
            .unauthenticated_get(&format!("/v1/settlements?{query}"))
            .await;
        response.assert_error(400, "INVALID_DATE");
    }
    for encoding in ["latin1", "utf-16", ""] {
        let response = sim
            .unauthenticated_get(&format!(
                "/v1/settlements?date=2024-05-01&encoding={encoding}"
            ))
            .await;
        response.assert_error(400, "INVALID_ENCODING");
    }
}
