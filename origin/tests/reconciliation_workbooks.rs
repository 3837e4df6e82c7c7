//! Settlement files as PG consoles export them, through the operator route: title lines
//! above the header, accounting negatives, and Excel workbooks — which reconcile as
//! their CSV twins do — and the workbooks that are refused, queueing nothing.

use crate::support;

use std::io::{Cursor, Read as _, Write as _};

use axum::http::StatusCode;
use rust_xlsxwriter::{ExcelDateTime, Format, Workbook};
use serde_json::{json, Value};
use support::settlement::{operator, origin, queue};
use support::Origin;

const XLSX: &str = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";

/// The export, CSV's way: a title, the period, a blank line, the header; o-1 and o-4
/// match, o-2 at another amount, o-3 missing, a refund of o-5 in accounting notation (we
/// know no o-5 in the period, so it waits in the queue with its amount), a ghost.
const CSV: &str = "정산내역 조회\n조회기간: 2026-11-30 ~ 2026-11-30\n\n\
                   거래일시,주문번호,결제금액\n\
                   2026-11-30,o-1,\"1,000\"\n\
                   2026-11-30,o-2,\"2,500\"\n\
                   2026-11-30,o-4,\"4,000\"\n\
                   2026-11-30,o-5,\"(1,250,000)\"\n\
                   2026-11-30,ghost,700\n";

/// The same export as a workbook: numbers as numbers (the refund shown in accounting's
/// parentheses), dates as Excel dates.
fn workbook() -> Vec<u8> {
    workbook_of(&[
        ("o-1", 1_000.0),
        ("o-2", 2_500.0),
        ("o-4", 4_000.0),
        ("o-5", -1_250_000.0),
        ("ghost", 700.0),
    ])
}

fn workbook_of(rows: &[(&str, f64)]) -> Vec<u8> {
    let mut workbook = Workbook::new();
    let sheet = workbook.add_worksheet();
    sheet.set_name("정산내역").expect("a name");
    let date = Format::new().set_num_format("yyyy-mm-dd");
    let accounting = Format::new().set_num_format("#,##0;(#,##0)");
    let day = ExcelDateTime::from_ymd(2026, 11, 30).expect("a date");
    sheet.write_string(0, 0, "정산내역 조회").expect("a cell");
    sheet
        .write_string(1, 0, "조회기간: 2026-11-30 ~ 2026-11-30")
        .expect("a cell");
    for (column, name) in (0u16..).zip(["거래일시", "주문번호", "결제금액"]) {
        sheet.write_string(3, column, name).expect("a cell");
    }
    for (row, &(order_id, amount)) in (4u32..).zip(rows) {
        sheet
            .write_datetime_with_format(row, 0, &day, &date)
            .expect("a cell");
        sheet.write_string(row, 1, order_id).expect("a cell");
        sheet
            .write_number_with_format(row, 2, amount, &accounting)
            .expect("a cell");
    }
    workbook.save_to_buffer().expect("a workbook")
}

async fn upload(
    origin: &Origin,
    query: &str,
    content_type: &str,
    file: Vec<u8>,
) -> (StatusCode, Value) {
    let path = format!("/admin/reconciliations/run{query}");
    origin
        .send(operator("POST", &path, content_type, file))
        .await
}

/// What a report says of the file's rows, whatever kind of file it was.
fn findings(report: &Value) -> Value {
    let mut findings = report.clone();
    if let Some(fields) = findings.as_object_mut() {
        for format_only in ["format", "encoding", "sheet"] {
            fields.remove(format_only);
        }
    }
    findings
}

#[tokio::test]
async fn title_lines_are_skipped_and_reported_and_every_data_row_reconciles() {
    let origin = origin().await;
    let (status, report) = upload(&origin, "", "text/csv", CSV.into()).await;
    assert_eq!(status, StatusCode::OK, "{report}");
    assert_eq!(
        (report["external"].as_u64(), report["matched"].as_u64()),
        (Some(5), Some(2)),
        "{report}"
    );
    let refund = queue(&origin, "")
        .await
        .into_iter()
        .find(|item| item["orderId"] == "o-5")
        .expect("the refund queued");
    assert_eq!(
        (&refund["externalAmount"], &refund["line"]),
        (&json!(-1_250_000), &json!(8))
    );
    assert_eq!(
        report["skippedLines"],
        json!([
            {"line": 1, "reason": "BEFORE_HEADER", "detail": "before the header"},
            {"line": 2, "reason": "BEFORE_HEADER", "detail": "before the header"},
            {"line": 3, "reason": "BLANK_LINE", "detail": "blank line"},
        ])
    );
    assert_eq!(
        (report["format"].as_str(), report["encoding"].as_str()),
        (Some("CSV"), Some("UTF-8"))
    );
}

#[tokio::test]
async fn a_workbook_reconciles_as_its_csv_twin_does() {
    let from_csv = origin().await;
    let (status, csv_report) = upload(&from_csv, "", "text/csv", CSV.into()).await;
    assert_eq!(status, StatusCode::OK, "{csv_report}");
    let from_workbook = origin().await;
    let (status, report) = upload(&from_workbook, "", XLSX, workbook()).await;
    assert_eq!(status, StatusCode::OK, "{report}");

    assert_eq!(findings(&report), findings(&csv_report));
    assert_eq!(
        (&report["format"], &report["encoding"], &report["sheet"]),
        (&json!("XLSX"), &Value::Null, &json!("정산내역"))
    );
    let item = |item: &Value| {
        (
            item["orderId"].clone(),
            item["category"].clone(),
            item["line"].clone(),
        )
    };
    let items = |queue: Vec<Value>| queue.iter().map(item).collect::<Vec<_>>();
    assert_eq!(
        items(queue(&from_workbook, "").await),
        items(queue(&from_csv, "").await)
    );
}

/// A workbook of 3,000 orders we do not know, its sheet cut off at Excel's row 2,500
/// and re-packed: more findings before the damage than the queue takes at a time.
fn damaged_part_way() -> Vec<u8> {
    let ghosts: Vec<String> = (0..3_000).map(|n| format!("ghost-{n}")).collect();
    let rows: Vec<(&str, f64)> = ghosts.iter().map(|id| (id.as_str(), 700.0)).collect();
    let mut archive = zip::ZipArchive::new(Cursor::new(workbook_of(&rows))).expect("an archive");
    let mut repacked = zip::ZipWriter::new(Cursor::new(Vec::new()));
    for index in 0..archive.len() {
        let mut part = archive.by_index(index).expect("a part");
        let name = part.name().expect("a name").into_owned();
        let mut bytes = Vec::new();
        part.read_to_end(&mut bytes).expect("unpacked");
        if name == "xl/worksheets/sheet1.xml" {
            let row = b"<row r=\"2500\"";
            let cut = bytes
                .windows(row.len())
                .position(|window| window == row)
                .expect("row 2,500");
            bytes.truncate(cut);
        }
        repacked
            .start_file(name, zip::write::SimpleFileOptions::default())
            .expect("a part");
        repacked.write_all(&bytes).expect("written");
    }
    repacked.finish().expect("an archive").into_inner()
}

#[tokio::test]
async fn a_workbook_that_cannot_be_read_is_refused_and_queues_nothing() {
    let origin = origin().await;
    let cases = [
        ("", damaged_part_way(), "UNREADABLE_WORKBOOK"),
        // Named, the period would let a CSV's rows be read in one pass; a workbook's are
        // all read before anything is queued.
        (
            "?date=2026-11-30",
            damaged_part_way(),
            "UNREADABLE_WORKBOOK",
        ),
        ("", b"PK\x03\x04 cut short".to_vec(), "UNREADABLE_WORKBOOK"),
        ("?sheet=Sheet9", workbook(), "INVALID_REQUEST"),
        ("?sheet=Sheet1", CSV.as_bytes().to_vec(), "INVALID_REQUEST"),
    ];
    for (query, file, code) in cases {
        let (status, body) = upload(&origin, query, XLSX, file).await;
        assert_eq!(
            (status, body["code"].as_str()),
            (StatusCode::BAD_REQUEST, Some(code)),
            "{query}: {body}"
        );
    }
    assert!(
        queue(&origin, "").await.is_empty(),
        "a refused file queues nothing"
    );
}
