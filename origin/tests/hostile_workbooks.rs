//! Settlement files made to take the origin down (issue 37), uploaded to the operator
//! route while payments go on: each is refused `UNREADABLE_WORKBOOK` — none aborts the
//! process, pins a core or leaves a thread behind — and confirms are answered
//! throughout: while every upload is in flight (its body held open), and while each is
//! read. One test, so that no other test's threads come and go in the count.

mod support;

use std::io::{Cursor, Write as _};
use std::ops::Range;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::http::{Request, StatusCode};
use futures_util::{stream, StreamExt as _};
use serde_json::{json, Value};
use support::biff::{bof, bound_sheet, compound, eof, label_sst, one_sheet, record, sst};
use support::settlement::operator;
use support::{signed, Origin};
use tokio::sync::oneshot;

/// An `.xlsx`: its package's relationships naming `xl/workbook.xml`, and `parts`.
fn xlsx(parts: &[(&str, &[u8])]) -> Vec<u8> {
    let rels = br#"<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>"#;
    let mut archive = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default();
    let package = [
        ("[Content_Types].xml", &b"<Types/>"[..]),
        ("_rels/.rels", rels),
    ];
    for (name, bytes) in package.iter().chain(parts) {
        archive.start_file(*name, options).expect("a part");
        archive.write_all(bytes).expect("written");
    }
    archive.finish().expect("an archive").into_inner()
}

/// A 1 KB `.xlsx` whose shared strings claim 10^12 strings (calamine#684: calamine
/// reserves them all before it reads one).
fn trillion_strings() -> Vec<u8> {
    xlsx(&[
        ("xl/workbook.xml", b"<workbook/>"),
        (
            "xl/sharedStrings.xml",
            br#"<sst count="1" uniqueCount="1000000000000"><si><t>a</t></si></sst>"#,
        ),
    ])
}

/// An `.xlsx` whose 10^5 cells show one shared string of 16 MiB: the origin would copy
/// 1.6 TB of it (calamine lends it, the row's value is a copy).
fn a_long_string_in_every_cell_xlsx() -> Vec<u8> {
    let workbook = br#"<workbook xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="S" sheetId="1" r:id="rId1"/></sheets></workbook>"#;
    let sheets = br#"<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>"#;
    let long = format!(
        "<sst><si><t>{}</t></si></sst>",
        "a".repeat(16 * 1024 * 1024)
    );
    let row = format!("<row>{}</row>", r#"<c t="s"><v>0</v></c>"#.repeat(100));
    let sheet = format!(
        "<worksheet><sheetData>{}</sheetData></worksheet>",
        row.repeat(1_000)
    );
    xlsx(&[
        ("xl/workbook.xml", workbook),
        ("xl/_rels/workbook.xml.rels", sheets),
        ("xl/sharedStrings.xml", long.as_bytes()),
        ("xl/worksheets/sheet1.xml", sheet.as_bytes()),
    ])
}

/// An `.xls` whose 10^6 cells show one shared string of 65,535 characters: calamine
/// would copy it for each, some 196 GB (3 bytes a character).
fn a_long_string_in_every_cell_xls() -> Vec<u8> {
    let cells: Vec<Vec<u8>> = (0..1_000_000u32)
        .map(|n| {
            let (row, column) = (n / 16, n % 16);
            label_sst(row as u16, column as u16, 0)
        })
        .collect();
    let table = sst(&["가".repeat(65_535).as_str()]);
    let globals = bof(0x0005).len() + table.len() + bound_sheet(0).len() + eof().len();
    let at = u32::try_from(globals).expect("short");
    compound(
        &[
            bof(0x0005),
            table,
            bound_sheet(at),
            eof(),
            bof(0x0010),
            cells.concat(),
            eof(),
        ]
        .concat(),
    )
}

/// An `.xls` whose one sheet's DIMENSIONS runs from row 10 back to row 4.
fn reversed_dimensions() -> Vec<u8> {
    let dimensions = [
        &10u32.to_le_bytes()[..],
        &5u32.to_le_bytes(),
        &[0, 0, 2, 0, 0, 0],
    ]
    .concat();
    compound(&one_sheet(&[record(0x0200, &dimensions)]))
}

/// An `.xls` listing 10^6 sheets, each at offset 0: a walk of the whole stream apiece.
fn a_million_sheets() -> Vec<u8> {
    compound(&[bof(0x0005), bound_sheet(0).repeat(1_000_000), eof()].concat())
}

/// An `.xls` listing 1,000 sheets at one 4 MiB sheet with no EOF: walked once by the
/// check, but by calamine once an entry.
fn a_thousand_entries_at_one_sheet() -> Vec<u8> {
    let entries = 1_000;
    let globals = bof(0x0005).len() + entries * bound_sheet(0).len() + eof().len();
    let number = record(0x0203, &[0; 14]);
    let sheet = number.repeat(4 * 1024 * 1024 / number.len());
    let listed = bound_sheet(u32::try_from(globals).expect("short")).repeat(entries);
    compound(&[bof(0x0005), listed, eof(), bof(0x0010), sheet].concat())
}

fn upload_request(body: impl Into<Body>) -> Request<Body> {
    operator(
        "POST",
        "/admin/reconciliations/run?date=2026-11-30",
        "application/octet-stream",
        body,
    )
}

async fn upload(origin: &Origin, file: &[u8]) -> (StatusCode, Value) {
    origin.send(upload_request(file.to_vec())).await
}

/// An upload in flight: the first half of `file` sent, the rest once `release` is.
fn held_upload(file: &[u8]) -> (Request<Body>, oneshot::Sender<()>) {
    let (release, released) = oneshot::channel::<()>();
    let (first, rest) = file.split_at(file.len() / 2);
    let first = Bytes::copy_from_slice(first);
    let rest = Bytes::copy_from_slice(rest);
    let body = stream::once(async move { Ok::<_, std::io::Error>(first) }).chain(stream::once(
        async move {
            released.await.map_err(std::io::Error::other)?;
            Ok(rest)
        },
    ));
    (upload_request(Body::from_stream(body)), release)
}

/// Confirms `orders`, each answered APPROVED; answers how many were.
async fn confirms(origin: &Origin, orders: Range<usize>) -> usize {
    let mut answered = 0;
    for n in orders {
        let order_id = format!("order-{n}");
        let body = json!({"orderId": order_id, "paymentKey": format!("pk-{n}"), "amount": 5000});
        let request = signed(
            "POST",
            "/payments/confirm",
            Some(&order_id),
            &body.to_string(),
        );
        let (status, payment) = origin.send(request).await;
        assert_eq!(
            (status, &payment["status"]),
            (StatusCode::CREATED, &json!("APPROVED"))
        );
        answered += 1;
    }
    answered
}

/// The threads of this process.
fn threads() -> usize {
    std::fs::read_dir("/proc/self/task").map_or(0, |tasks| tasks.count())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_workbooks_are_refused_payments_go_on_and_no_thread_is_left() {
    let origin = Arc::new(support::settlement::origin().await);
    let files = [
        ("a 1 KB .xlsx claiming 10^12 strings", trillion_strings()),
        (
            "an .xls whose DIMENSIONS runs backwards",
            reversed_dimensions(),
        ),
        (
            "an .xls listing 10^6 sheets at offset 0",
            a_million_sheets(),
        ),
        (
            "an .xls listing 1,000 sheets at one 4 MiB sheet with no EOF",
            a_thousand_entries_at_one_sheet(),
        ),
        (
            "an .xls whose 10^6 cells show one 65,535-character string",
            a_long_string_in_every_cell_xls(),
        ),
        (
            "an .xlsx whose 10^5 cells show one 16 MiB string",
            a_long_string_in_every_cell_xlsx(),
        ),
    ];
    assert!(files[0].1.len() < 1024, "{} bytes", files[0].1.len());

    // One upload at a time (the route takes few at once), confirms answered while it
    // is in flight with its body held open, then while the file is read.
    let mut took = Vec::new();
    for (n, (what, file)) in files.iter().enumerate() {
        let (request, release) = held_upload(file);
        let answer = tokio::spawn({
            let origin = origin.clone();
            async move { origin.send(request).await }
        });
        let orders = n * 10..n * 10 + 10;
        assert_eq!(confirms(&origin, orders.start..orders.start + 5).await, 5);
        assert!(!answer.is_finished(), "{what}: the upload is in flight");
        let started = Instant::now();
        release.send(()).expect("the upload waits");
        let read = async {
            let answer = answer.await.expect("an answer");
            (answer, started.elapsed())
        };
        let (((status, refusal), elapsed), answered) =
            tokio::join!(read, confirms(&origin, orders.start + 5..orders.end));
        assert_eq!(answered, 5);
        assert_eq!(
            (status, &refusal["code"]),
            (StatusCode::BAD_REQUEST, &json!("UNREADABLE_WORKBOOK")),
            "{what}: {refusal}"
        );
        took.push((elapsed, refusal["message"].clone()));
    }
    // Far from the hours an unbounded walk takes; the figures are in
    // docs/settlement-files.md.
    for ((what, file), (took, why)) in files.iter().zip(&took) {
        println!("{what} ({} bytes): refused in {took:?}: {why}", file.len());
        assert!(*took < Duration::from_secs(30), "{what}: {took:?}");
    }

    // The slow file a hundred times over, once the runtime's pool of blocking threads
    // has what a run needs: no thread is left walking it.
    let slow = &files[2].1;
    let before = threads();
    for _ in 0..100 {
        assert_eq!(upload(&origin, slow).await.0, StatusCode::BAD_REQUEST);
    }
    // Idle blocking threads are let go after 10 s; a reader still walking never is.
    let deadline = Instant::now() + Duration::from_secs(20);
    while threads() > before && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(
        threads() <= before,
        "{} threads, {before} before",
        threads()
    );
}
