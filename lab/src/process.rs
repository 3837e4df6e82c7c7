//! What `/proc` says of a process the lab started: its CPU time and resident memory.

use std::path::Path;
use std::time::Duration;

/// The CPU time process `pid` has used so far, all its threads together (Linux
/// `/proc/{pid}/task/*/schedstat`); `None` where that cannot be read.
pub fn cpu_time(pid: u32) -> Option<Duration> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
    Some(
        tasks
            .flatten()
            .filter_map(|task| run_time(&task.path().join("schedstat")))
            .sum(),
    )
}

/// The CPU time of process `pid`'s main thread alone — in workerd, the thread its
/// isolates run on (`/proc/{pid}/task/{pid}/schedstat`).
pub fn main_thread_cpu_time(pid: u32) -> Option<Duration> {
    run_time(Path::new(&format!("/proc/{pid}/task/{pid}/schedstat")))
}

/// A thread's time on the CPU, the first field of its `schedstat` (nanoseconds).
fn run_time(schedstat: &Path) -> Option<Duration> {
    let line = std::fs::read_to_string(schedstat).ok()?;
    Some(Duration::from_nanos(
        line.split_whitespace().next()?.parse().ok()?,
    ))
}

/// Process `pid`'s resident memory (`VmRSS`), in MB.
pub fn resident_mb(pid: u32) -> Option<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kb: f64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kb / 1024.0)
}
