//! The operator console's charts (inline SVG, `origin/src/routes/console/charts.js`) in a
//! real browser: Debian's headless Chromium in Asia/Seoul, driven by playwright-core
//! (`tests/browser/console_charts.mjs`), signs in to a real origin's console whose
//! history, events and drop are answered with known samples
//! (`tests/browser/charts_fixture.mjs`). Every chart is read back from its SVG alone —
//! the scale from its axes' labels — and each sample must be drawn where its value and
//! time put it, with a gap for a null one; the axes from 0 and at the whole five minutes
//! in Seoul's time; the breaker's band in the states and at the times of its transitions,
//! also after a restart; the captions saying the latest values. The screenshot is kept
//! in `target/test-artifacts/console-charts.png`.

use crate::support;

use std::path::Path;
use std::process::Command;

use support::{System, OPERATOR_TOKEN};

#[tokio::test]
async fn the_console_draws_each_sample_where_its_value_and_time_put_it() {
    let system = System::backend(&[]).await;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let artifacts = root.join("target/test-artifacts");
    std::fs::create_dir_all(&artifacts).expect("an artifacts folder");
    let screenshot = artifacts.join("console-charts.png");
    let _ = std::fs::remove_file(&screenshot);

    let run = Command::new("node")
        .arg(root.join("tests/browser/console_charts.mjs"))
        .arg(format!("{}/admin/console", system.origin_admin))
        .arg(OPERATOR_TOKEN)
        .arg(&screenshot)
        .current_dir(root)
        .output()
        .expect("node runs the browser script");
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        run.status.success(),
        "the charts differ from their samples: {stderr}\n{stdout}"
    );
    assert_eq!(
        stdout.lines().collect::<Vec<_>>(),
        [
            "LATENCY ok 348 points in 4 lines",
            "IN_FLIGHT ok 180 points in 1 line",
            "REFUSALS ok 360 points in 2 lines",
            "BAND ok CLOSED OPEN HALF_OPEN CLOSED",
            "DROP ok 892 points in 7 lines",
            "CAPTIONS ok 7 charts",
            "BAND_RESTART ok CLOSED OPEN",
        ],
        "{stderr}"
    );
    assert!(
        screenshot.exists(),
        "no screenshot at {}",
        screenshot.display()
    );
}
