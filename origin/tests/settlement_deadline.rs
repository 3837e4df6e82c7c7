//! A reconciliation cut short — its deadline passed or its caller gone, so its future is
//! dropped — stops reading its file at the next read, whichever thread reads it: no
//! blocking task or workbook reader outlives its run (issue 37).

use crate::support;

use std::io::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use origin::metrics::Metrics;
use origin::settlement::run::{self, Progress, Settlement};

/// Counts the bytes of the file read.
#[derive(Default)]
struct Read(AtomicU64);

impl Progress for Read {
    fn read(&self, bytes: u64) {
        self.0.fetch_add(bytes, Ordering::SeqCst);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_dropped_part_way_stops_reading_its_file() {
    let origin = support::settlement::origin().await;
    // 200 MB of dated rows: with no period named, the first pass reads them all for it.
    let mut file = tempfile::tempfile().expect("a file");
    file.write_all(b"orderNo,amount,date\n").expect("written");
    let rows = b"o-9,1000,2026-11-30\n".repeat(1 << 20);
    for _ in 0..10 {
        file.write_all(&rows).expect("written");
    }
    let length = file.metadata().expect("its length").len();
    let read = Arc::new(Read::default());
    let metrics = Metrics::default();
    let run = run::reconcile(
        origin.store.clone(),
        &metrics,
        Settlement { file, sheet: None },
        None,
        read.clone(),
    );
    let cut = tokio::time::timeout(Duration::from_millis(300), run).await;
    assert!(cut.is_err(), "the run was still reading at its deadline");
    // The read under way when it was dropped ends; nothing is read after.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let stopped_at = read.0.load(Ordering::SeqCst);
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(read.0.load(Ordering::SeqCst), stopped_at, "still reading");
    assert!(
        stopped_at < length,
        "{stopped_at} of {length} bytes: read to its end"
    );
}
