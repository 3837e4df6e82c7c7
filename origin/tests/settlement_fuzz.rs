//! A fuzzing harness over the settlement parser (issue 37): the seed files in
//! `tests/corpus/settlement/` — CSV, `.xlsx`, `.xls` — mutated as a crafted file would be
//! (`fuzz/mod.rs`) and read to their end: `FUZZ_INPUTS` of them (17,000 by default in
//! `make test`, more than the 60 s this test once took reached), or as many as
//! `FUZZ_SECONDS` allows when it is set (`make soak`: 600); `FUZZ_SEED` repeats a run. Every input must end in entries or a refusal within
//! [`PER_INPUT`], with no panic; an abort ends the process, and so the test. At the end no
//! workbook reader is left running, and the process's peak memory stays under
//! [`MAX_PEAK_BYTES`]. A failing input is written to `target/fuzz-failures/`.
//!
//! `FUZZ_SECONDS=600 cargo test --release -p origin --test settlement_fuzz -- --nocapture`

mod fuzz;

use std::io::Cursor;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use fuzz::{mutate, Rng};
use origin::policy::settlement::parser::{self, ParseError};

/// Inputs read unless `FUZZ_INPUTS` or `FUZZ_SECONDS` says otherwise: more than the
/// 16,600 that 60 s read in the unoptimised build before its parsers were optimised in
/// tests (`docs/testing.md`).
const DEFAULT_INPUTS: u64 = 17_000;

/// The longest one input may take, read to its end.
const PER_INPUT: Duration = Duration::from_secs(20);

/// The most the whole run may hold at its peak (`VmHWM`).
const MAX_PEAK_BYTES: u64 = 2 << 30;

/// How an input ended.
enum Ended {
    Read,
    Refused,
}

/// Reads `input` to its end, as a reconciliation's pass does.
fn read_all(input: Vec<u8>) -> Result<usize, ParseError> {
    let mut entries = parser::open(Cursor::new(input), None)?;
    let mut read = 0;
    for entry in entries.by_ref() {
        entry?;
        read += 1;
    }
    Ok(read)
}

/// Reads `input` on a thread of its own: how it ended, or why that is a failure.
fn try_one(input: &[u8]) -> Result<Ended, String> {
    let (done, ended) = mpsc::channel();
    let input = input.to_vec();
    std::thread::spawn(move || {
        let _ = done.send(catch_unwind(AssertUnwindSafe(|| read_all(input))));
    });
    match ended.recv_timeout(PER_INPUT) {
        Ok(Ok(Ok(_))) => Ok(Ended::Read),
        // The input is in memory: an I/O error could only come from its content, and
        // the route answers it 500, not 400.
        Ok(Ok(Err(ParseError::Io(error)))) => Err(format!("an I/O error: {error}")),
        Ok(Ok(Err(_))) => Ok(Ended::Refused),
        Ok(Err(_)) => Err("a panic".into()),
        Err(_) => Err(format!("no end within {PER_INPUT:?}")),
    }
}

fn corpus() -> Vec<(String, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/settlement");
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .expect("the corpus")
        .filter_map(Result::ok)
        .map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            (name, std::fs::read(entry.path()).expect("a seed"))
        })
        .collect();
    files.sort();
    files
}

fn status(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with(field))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

fn readers() -> usize {
    std::fs::read_dir("/proc/self/task").map_or(0, |tasks| {
        tasks
            .filter_map(Result::ok)
            .filter(|task| {
                std::fs::read_to_string(task.path().join("comm"))
                    .is_ok_and(|name| name.starts_with("settlement-work"))
            })
            .count()
    })
}

#[test]
fn every_mutated_settlement_file_is_read_or_refused_in_bounded_time() {
    let number = |name: &str| std::env::var(name).ok().and_then(|n| n.parse::<u64>().ok());
    let (until, most) = match number("FUZZ_SECONDS") {
        Some(seconds) => (
            Some(Instant::now() + Duration::from_secs(seconds)),
            u64::MAX,
        ),
        None => (None, number("FUZZ_INPUTS").unwrap_or(DEFAULT_INPUTS)),
    };
    let began = Instant::now();
    let seed = std::env::var("FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| std::process::id() as u64 ^ harness::signed::now_ms() as u64);
    let corpus = corpus();
    assert!(corpus.len() >= 5, "the corpus: {} files", corpus.len());
    for (name, bytes) in &corpus {
        assert!(
            try_one(bytes).is_ok_and(|ended| matches!(ended, Ended::Read)),
            "{name} reads"
        );
    }
    let mut rng = Rng::new(seed);
    let (mut inputs, mut refused, mut slowest) = (0u64, 0u64, Duration::ZERO);
    while inputs < most && until.is_none_or(|until| Instant::now() < until) {
        let (name, seed_file) = &corpus[rng.below(corpus.len())];
        let input = mutate(seed_file, &mut rng);
        let started = Instant::now();
        match try_one(&input) {
            Ok(Ended::Refused) => refused += 1,
            Ok(Ended::Read) => {}
            Err(failure) => {
                let kept = Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("../target/fuzz-failures")
                    .join(format!("{seed}-{inputs}-{name}"));
                let _ = std::fs::create_dir_all(kept.parent().expect("a folder"));
                let _ = std::fs::write(&kept, &input);
                panic!(
                    "{failure}: input {inputs} of seed {seed}, from {name}, kept at {}",
                    kept.display()
                );
            }
        }
        slowest = slowest.max(started.elapsed());
        inputs += 1;
    }
    // A reader that answered went on to its end; none is left once they all have.
    let settled = Instant::now() + PER_INPUT;
    while readers() > 0 && Instant::now() < settled {
        std::thread::sleep(Duration::from_millis(50));
    }
    let peak = status("VmHWM:").unwrap_or_default();
    println!(
        "fuzz: seed {seed}, {inputs} inputs in {:.1?} ({refused} refused), slowest {slowest:?}, peak {} MiB",
        began.elapsed(),
        peak >> 20
    );
    assert_eq!(readers(), 0, "workbook readers still running");
    assert!(peak < MAX_PEAK_BYTES, "peak {peak} bytes");
}
