//! Settlement reconciliation end to end through the operator API: the real `origin`
//! binary on SQLite, 100,000 APPROVED payments, and a 100,000-row settlement file as the
//! simulator writes it (Korean header, BOM, quoted amounts, a `합계` row) with a few
//! differences, uploaded to `POST /admin/reconciliations/run`. Reports rows per second
//! and the origin's peak memory during the run (`VmHWM`, reset before the upload), then
//! does it again with the file five times over (500,000 rows against the same payments)
//! to show that memory follows the payments of the period, not the file, and once more
//! with the same 100,000 rows as an `.xlsx` workbook (amounts stored as numbers), as a
//! PG's console exports it.
//!
//! `cargo bench -p origin --bench reconcile`

#[path = "../tests/support/keys.rs"]
mod keys;

use std::process::{Child, Command, Stdio};

use gateway_sim::settlement::{self, HEADER, PAYMENT_METHOD};
use std::time::{Duration, Instant};

use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{ConnectOptions as _, Connection as _};

const PAYMENTS: usize = 100_000;
/// 2026-11-30 00:00 UTC.
const DAY_START_MS: i64 = 1_795_996_800_000;
const TOKEN: &str = "bench-operator-token-0123456789abcdef";

#[tokio::main]
async fn main() {
    for (copies, kind) in [(1, Kind::Csv), (5, Kind::Csv), (1, Kind::Xlsx)] {
        measure(copies, kind).await;
    }
}

/// The settlement file's kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Csv,
    Xlsx,
}

async fn measure(copies: usize, kind: Kind) {
    let dir = tempfile::tempdir().expect("a folder");
    let database = dir.path().join("bench.sqlite3");
    let url = format!("sqlite://{}", database.display());
    // Migrate, then write the payments in one transaction.
    drop(
        origin::store::open(&url, Duration::from_secs(3), keys::cipher("v1"))
            .await
            .expect("a store"),
    );
    insert_payments(&url, &keys::cipher("v1")).await;
    let rows = settlement_rows(copies);
    let file = match kind {
        Kind::Csv => csv(&rows),
        Kind::Xlsx => xlsx(&rows),
    };
    let rows = PAYMENTS * copies;

    let [port, metrics_port, admin_port] = [free_port(), free_port(), free_port()];
    let mut origin = Origin(
        Command::new(env!("CARGO_BIN_EXE_origin"))
            .arg("serve")
            .env("ORIGIN_LISTEN", format!("127.0.0.1:{port}"))
            .env("ORIGIN_METRICS_LISTEN", format!("127.0.0.1:{metrics_port}"))
            .env("ORIGIN_ADMIN_LISTEN", format!("127.0.0.1:{admin_port}"))
            .env("DATABASE_URL", &url)
            .env("EDGE_SIGNING_SECRET", "bench-edge-secret-0123456789abcdef")
            .env("GATEWAY_URL", "http://127.0.0.1:9")
            .env(
                "GATEWAY_SECRET_KEY",
                gateway_sim::config::DEFAULT_SECRET_KEY,
            )
            .env("OPERATOR_TOKEN", TOKEN)
            .env("ENCRYPTION_KEKS", keys::KEKS)
            .env("ENCRYPTION_CURRENT_KEK", "v1")
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .spawn()
            .expect("the origin starts"),
    );
    let base = format!("http://127.0.0.1:{port}");
    let http = reqwest::Client::new();
    wait_until_healthy(&http, &base).await;
    // The start's own peak (argon2's dummy hash takes 19 MiB) is not the run's: reset
    // the high-water mark to the resident set now.
    std::fs::write(format!("/proc/{}/clear_refs", origin.0.id()), "5").expect("the peak is reset");
    let resident = memory_kib(origin.0.id(), "VmRSS");

    let started = Instant::now();
    let response = http
        .post(format!(
            "http://127.0.0.1:{admin_port}/admin/reconciliations/run"
        ))
        .bearer_auth(TOKEN)
        .header("content-type", "application/octet-stream")
        .body(file.clone())
        .send()
        .await
        .expect("the origin answers");
    let took = started.elapsed();
    assert!(
        response.status().is_success(),
        "{:?}",
        response.text().await
    );
    let report: serde_json::Value = response.json().await.expect("a report");
    let after = memory_kib(origin.0.id(), "VmHWM");
    assert_eq!(report["external"].as_u64(), Some(rows as u64), "{report}");
    println!(
        "{kind:?}, {rows} rows ({:.1} MB, {PAYMENTS} payments): {:.2} s, {:.0} rows/s; \
         origin resident {} MiB before the upload, peak {} MiB during it; \
         matched {}, amountMismatch {}, internalOnly {}, externalOnly {}, skipped {}",
        file.len() as f64 / 1e6,
        took.as_secs_f64(),
        rows as f64 / took.as_secs_f64(),
        resident / 1024,
        after / 1024,
        report["matched"],
        report["amountMismatch"],
        report["internalOnly"],
        report["externalOnly"],
        report["skipped"],
    );
    origin.stop();
}

/// `order-000000` … approved on 2026-11-30 for 1,000 … won.
async fn insert_payments(url: &str, cipher: &origin::crypto::FieldCipher) {
    let mut connection = url
        .parse::<SqliteConnectOptions>()
        .expect("a URL")
        .connect()
        .await
        .expect("a connection");
    let mut transaction = connection.begin().await.expect("a transaction");
    for n in 0..PAYMENTS {
        let at = DAY_START_MS + (n as i64) * 800;
        sqlx::query(
            "INSERT INTO payments (order_id, user_id, payment_key, amount, status, \
             approved_at, created_at, updated_at) VALUES (?, 'user-1', ?, ?, 'APPROVED', ?, ?, ?)",
        )
        .bind(format!("order-{n:06}"))
        .bind(
            cipher
                .seal(
                    origin::crypto::PAYMENT_KEY,
                    &format!("order-{n:06}"),
                    &format!("pk-{n:06}"),
                )
                .expect("sealed"),
        )
        .bind(amount(n))
        .bind(at)
        .bind(at)
        .bind(at)
        .execute(&mut *transaction)
        .await
        .expect("a payment");
    }
    transaction.commit().await.expect("committed");
}

fn amount(n: usize) -> i64 {
    1_000 + (n as i64 % 500) * 100
}

/// One row of the settlement file.
struct SettlementRow {
    time: String,
    order_id: String,
    amount: i64,
    fee: i64,
}

/// The rows for our payments, `copies` times over: each copy misses 10 orders, names 10
/// at another amount, and adds 10 orders we do not have (the first copy's are new
/// findings; later copies repeat them).
fn settlement_rows(copies: usize) -> Vec<SettlementRow> {
    let mut rows = Vec::new();
    for _ in 0..copies {
        for n in 0..PAYMENTS {
            if n % 10_000 == 1 {
                continue;
            }
            let amount = if n % 10_000 == 2 {
                amount(n) + 10
            } else {
                amount(n)
            };
            rows.push(SettlementRow {
                time: format!(
                    "2026-11-30 {:02}:{:02}:{:02}",
                    (n / 4_500) % 24,
                    (n / 75) % 60,
                    n % 60
                ),
                order_id: format!("order-{n:06}"),
                amount,
                fee: amount / 40,
            });
            if n % 10_000 == 3 {
                rows.push(SettlementRow {
                    time: "2026-11-30 12:00:00".into(),
                    order_id: format!("ghost-{n:06}"),
                    amount: 5_000,
                    fee: 125,
                });
            }
        }
    }
    rows
}

/// The rows as the simulator writes its CSV: a BOM, quoted `"1,000원"` amounts, a total.
fn csv(rows: &[SettlementRow]) -> Vec<u8> {
    let mut file = format!("\u{feff}{}\r\n", HEADER.join(","));
    let won = |value: i64| format!("\"{}\"", settlement::won(value.unsigned_abs()));
    for row in rows {
        file.push_str(&format!(
            "{},M-0001,{},\"{PAYMENT_METHOD}\",{},{},{}\r\n",
            row.time,
            row.order_id,
            won(row.amount),
            won(row.fee),
            won(row.amount - row.fee),
        ));
    }
    let total: i64 = rows.iter().map(|row| row.amount).sum();
    file.push_str(&format!("합계,,,,{},,\r\n", won(total)));
    file.into_bytes()
}

/// The rows as a console's workbook: text cells, amounts stored as numbers, a total.
fn xlsx(rows: &[SettlementRow]) -> Vec<u8> {
    let mut workbook = rust_xlsxwriter::Workbook::new();
    let sheet = workbook.add_worksheet();
    let cell = |written: Result<&mut rust_xlsxwriter::Worksheet, _>| {
        written.map(|_| ()).expect("a cell");
    };
    for (column, name) in (0u16..).zip(HEADER) {
        cell(sheet.write_string(0, column, name));
    }
    for (index, row) in (1u32..).zip(rows) {
        cell(sheet.write_string(index, 0, &row.time));
        cell(sheet.write_string(index, 1, "M-0001"));
        cell(sheet.write_string(index, 2, &row.order_id));
        cell(sheet.write_string(index, 3, PAYMENT_METHOD));
        cell(sheet.write_number(index, 4, row.amount as f64));
        cell(sheet.write_number(index, 5, row.fee as f64));
        cell(sheet.write_number(index, 6, (row.amount - row.fee) as f64));
    }
    let total: i64 = rows.iter().map(|row| row.amount).sum();
    let last = rows.len() as u32 + 1;
    cell(sheet.write_string(last, 0, "합계"));
    cell(sheet.write_number(last, 4, total as f64));
    workbook.save_to_buffer().expect("a workbook")
}

/// The origin process, stopped when dropped.
struct Origin(Child);

impl Origin {
    fn stop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Drop for Origin {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A process's memory figure from `/proc/PID/status` (`VmRSS` resident now, `VmHWM`
/// its peak), in KiB.
fn memory_kib(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .expect("a free port")
}

async fn wait_until_healthy(http: &reqwest::Client, base: &str) {
    for _ in 0..200 {
        if http
            .get(format!("{base}/healthz"))
            .send()
            .await
            .is_ok_and(|response| response.status().is_success())
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the origin did not start");
}
