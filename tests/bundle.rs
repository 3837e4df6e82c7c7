//! The deployable bundle, checked offline: `wrangler deploy --dry-run --outdir` on the
//! Worker `scripts/build-edge` builds (wrangler runs it as its build command) bundles
//! every module and binding without a network, and the bundle stays within Cloudflare's
//! limit on a Worker's compressed size (3 MB on the free plan; 10 MB paid).

use std::path::Path;
use std::process::Command;

/// Cloudflare's limit on a Worker's size after compression, on the free plan.
const FREE_PLAN_GZIP_KIB: f64 = 3.0 * 1024.0;

/// `Total Upload: 1385.41 KiB / gzip: 426.65 KiB` → (1385.41, 426.65).
fn sizes(log: &str) -> Option<(f64, f64)> {
    let line = log.lines().find(|line| line.contains("Total Upload:"))?;
    let (raw, gzip) = line.split_once("Total Upload:")?.1.split_once("/ gzip:")?;
    let kib = |text: &str| text.trim().strip_suffix("KiB")?.trim().parse::<f64>().ok();
    Some((kib(raw)?, kib(gzip)?))
}

#[test]
fn the_worker_bundles_offline_within_cloudflares_size_limit() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = tempfile::tempdir().expect("a folder");
    let log = harness::output_of(
        Command::new(root.join("node_modules/.bin/wrangler"))
            .args(["deploy", "--dry-run", "--outdir"])
            .arg(out.path())
            .current_dir(root)
            .env("WRANGLER_SEND_METRICS", "false"),
        "scripts/bootstrap installs wrangler",
    );
    for binding in [
        "USER_SESSIONS",
        "GLOBAL_LIMITER",
        "WAITING_ROOMS",
        "EVENT_DIRECTORY",
    ] {
        assert!(
            log.contains(&format!("env.{binding}")),
            "no {binding} in:\n{log}"
        );
    }
    let files: Vec<String> = std::fs::read_dir(out.path())
        .expect("the bundle")
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(files.iter().any(|f| f == "index.js"), "{files:?}");
    assert!(files.iter().any(|f| f.ends_with(".wasm")), "{files:?}");
    let (raw, gzip) = sizes(&log).unwrap_or_else(|| panic!("no sizes in:\n{log}"));
    println!("bundle: {raw:.0} KiB raw, {gzip:.0} KiB gzip");
    assert!(gzip < FREE_PLAN_GZIP_KIB, "{gzip} KiB compressed");
}

#[test]
fn the_sizes_are_read_from_wranglers_line() {
    assert_eq!(
        sizes("x\nTotal Upload: 1385.41 KiB / gzip: 426.65 KiB\ny"),
        Some((1385.41, 426.65))
    );
    assert_eq!(sizes("nothing"), None);
}
