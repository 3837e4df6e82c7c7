//! `lab`: the seed's resilience experiments against the real processes, each run
//! several times, each writing a Markdown report (the seed's figures beside ours) and
//! SVG charts, and `docs/experiments.md` gathering the latest report of each.
//!
//! ```text
//! cargo run --release -p lab -- run breaker          # one experiment
//! cargo run --release -p lab -- run all --runs 3     # every one
//! cargo run --release -p lab -- run spike --edge-build /tmp/edge   # an edge build of your own
//! cargo run --release -p lab -- cost                 # what each edge route costs
//! cargo run --release -p lab -- room                 # one waiting room at 10^6
//! cargo run --release -p lab -- draw                 # a prequeue of 10^6 drawn
//! cargo run --release -p lab -- shards               # 10^6 arrivals over many shards
//! cargo run --release -p lab -- cost --profile       # where a request's CPU goes, by route
//! cargo run --release -p lab -- cost --refusals      # refusals from memory beside /healthz, 5 runs
//! ```

mod chart;
mod cost;
mod edge;
mod experiments;
mod load;
mod observe;
mod process;
mod room;
mod shards;
mod stack;
mod stats;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::{Parser, Subcommand};
use experiments::Report;

/// Every experiment, in the seed's order, then ours.
const EXPERIMENTS: [&str; 9] = [
    "isolation",
    "retries",
    "breaker",
    "breaker-warm",
    "limiter",
    "bulkhead",
    "spike",
    "outage-drop",
    "concurrency",
];

#[derive(Parser)]
#[command(
    name = "lab",
    about = "The resilience experiments, against the real processes"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run experiments: isolation, retries, breaker, breaker-warm, limiter, bulkhead,
    /// spike, outage-drop, concurrency, or all.
    Run {
        #[arg(required = true)]
        experiments: Vec<String>,
        /// Runs of each configuration; the reports give min–max over them.
        #[arg(long, default_value_t = 3)]
        runs: u32,
        /// Where the reports and charts go.
        #[arg(long, default_value = "docs/experiments")]
        out: PathBuf,
        /// Run this edge build (a folder with index.js and index_bg.wasm, e.g. a copy of
        /// build/) in the experiments through the edge (limiter, spike, outage-drop),
        /// instead of building build/.
        #[arg(long)]
        edge_build: Option<PathBuf>,
    },
    /// One waiting room filled to 10^6 straight through its object, in workerd: memory,
    /// enters/s, status latency, the snapshot, a restart (docs/room-at-a-million.md).
    Room {
        #[arg(long, default_value = "docs/room-at-a-million.md")]
        out: PathBuf,
    },
    /// A drop's prequeue drawn at its opening at 10^4 and 10^6, in workerd: how long it
    /// held the room, its CPU, and the order re-derived (docs/draw-at-a-million.md).
    Draw {
        #[arg(long, default_value = "docs/draw-at-a-million.md")]
        out: PathBuf,
    },
    /// One event's arrivals over 1, 8 and 64 shards: the native simulation at 10^6
    /// arrivals in 60 s, and the drop driven in workerd (docs/shards-at-a-million.md).
    Shards {
        #[arg(long, default_value = "docs/shards-at-a-million.md")]
        out: PathBuf,
        /// Arrivals per drop driven in workerd.
        #[arg(long, default_value_t = 100_000)]
        driven: u64,
        /// The arrivals a second it is driven at.
        #[arg(long, default_value_t = 1_000)]
        rate: u64,
    },
    /// Measure what each route of the edge costs in workerd, beside baseline Workers
    /// (docs/edge-cost.md).
    Cost {
        /// Where the page goes [default: docs/edge-cost.md, with --profile
        /// docs/edge-profile.md].
        #[arg(long)]
        out: Option<PathBuf>,
        /// Measure this edge build (a folder with index.js and index_bg.wasm) instead
        /// of build/.
        #[arg(long, conflicts_with = "profile")]
        edge_build: Option<PathBuf>,
        /// Instead, sample where the CPU of /healthz, a status poll with its ticket and
        /// without, a waiting ticket holder's confirm refused from the snapshot and an
        /// admitted confirm goes, with V8's profiler.
        #[arg(long)]
        profile: bool,
        /// Instead, the refusals answered from memory beside /healthz, over --runs runs
        /// (docs/edge-refusals.md).
        #[arg(long, conflicts_with_all = ["profile", "edge_build"])]
        refusals: bool,
        /// Runs of --refusals.
        #[arg(long, default_value_t = 5)]
        runs: u32,
    },
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let (experiments, runs, out, edge_build) = match Cli::parse().command {
        Command::Run {
            experiments,
            runs,
            out,
            edge_build,
        } => (experiments, runs, out, edge_build),
        Command::Room { out } => return room::report(&out).await,
        Command::Draw { out } => return room::draw::report(&out).await,
        Command::Shards { out, driven, rate } => return shards::report(&out, driven, rate).await,
        Command::Cost {
            out,
            edge_build,
            profile,
            refusals,
            runs,
        } => {
            stack::build()?;
            if refusals {
                let out = out.unwrap_or_else(|| "docs/edge-refusals.md".into());
                return cost::refusals::report(runs, &out).await;
            }
            return match profile {
                true => {
                    let out = out.unwrap_or_else(|| "docs/edge-profile.md".into());
                    cost::profile::report(&out).await
                }
                false => {
                    let out = out.unwrap_or_else(|| "docs/edge-cost.md".into());
                    cost::report(&out, edge_build).await
                }
            };
        }
    };
    let names: Vec<&str> = if experiments.iter().any(|name| name == "all") {
        EXPERIMENTS.to_vec()
    } else {
        experiments.iter().map(String::as_str).collect()
    };
    if let Some(unknown) = names.iter().find(|name| !EXPERIMENTS.contains(name)) {
        anyhow::bail!(
            "no experiment `{unknown}`: choose from {} or all",
            EXPERIMENTS.join(", ")
        );
    }
    stack::build()?;
    std::fs::create_dir_all(&out)?;
    for name in names {
        let progress = indicatif::ProgressBar::new_spinner();
        progress.set_style(
            indicatif::ProgressStyle::with_template("{spinner} {msg} — {elapsed}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
        );
        progress.set_message(format!("{name}: {runs} run(s) of each configuration"));
        progress.enable_steady_tick(Duration::from_millis(200));
        let started = Instant::now();
        let report = run(name, runs, &out, edge_build.as_deref()).await?;
        progress.finish_and_clear();
        let path = out.join(format!("{name}.md"));
        std::fs::write(&path, report.markdown(""))?;
        println!(
            "{name}: done in {:.0} s, report {}",
            started.elapsed().as_secs_f64(),
            path.display()
        );
    }
    write_index(&out)?;
    Ok(())
}

/// Experiment `name`; `edge_build`: the edge build the ones through the edge run.
async fn run(
    name: &str,
    runs: u32,
    out: &Path,
    edge_build: Option<&Path>,
) -> anyhow::Result<Report> {
    match name {
        "isolation" => experiments::isolation::report(runs, out).await,
        "retries" => experiments::retries::report(runs, out).await,
        "breaker" => experiments::breaker::report(runs, out).await,
        "breaker-warm" => experiments::breaker::warm::report(runs, out).await,
        "limiter" => experiments::limiter::report(runs, out, edge_build).await,
        "spike" => experiments::spike::report(runs, out, edge_build).await,
        "outage-drop" => experiments::outage_drop::report(runs, out, edge_build).await,
        "concurrency" => experiments::concurrency::report(runs, out).await,
        _ => experiments::bulkhead::report(runs, out).await,
    }
}

/// The paragraphs of a report that state its acceptance checks.
fn acceptance(report: &str) -> Vec<&str> {
    report
        .split("\n\n")
        .map(str::trim)
        .filter(|paragraph| paragraph.starts_with("Acceptance"))
        .collect()
}

/// `docs/experiments.md` (beside `out`): how to reproduce, then the latest report of
/// each experiment found in `out`.
fn write_index(out: &Path) -> anyhow::Result<()> {
    let folder = out
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut text = format!(
        "# Experiments\n\n\
         The resilience experiments of the engineering write-ups this project started from \
         (\"the seed\"), reproduced against the real processes by the `lab` crate. Each configuration runs several times; figures are min–max over \
         the runs, the seed's beside ours; each report says where its figures come from.\n\n\
         Reproduce (each starts and stops its own processes on loopback):\n\n\
         ```sh\n\
         cargo run --release -p lab -- run all            # every experiment, 3 runs each\n\
         cargo run --release -p lab -- run breaker --runs 1\n\
         ```\n\n\
         Each writes `{folder}/<name>.md` and its SVG charts, and rewrites this page.\n\n"
    );
    let reports: Vec<(&str, Option<String>)> = EXPERIMENTS
        .iter()
        .map(|name| {
            let report = std::fs::read_to_string(out.join(format!("{name}.md"))).ok();
            (*name, report)
        })
        .collect();
    text.push_str("## Acceptance at a glance\n\n");
    for (name, report) in &reports {
        let title = report
            .as_deref()
            .and_then(|report| report.lines().next())
            .map_or(*name, |line| line.trim_start_matches("## "));
        let checks = report.as_deref().map(acceptance).unwrap_or_default();
        if report.is_none() {
            let _ = writeln!(text, "- **{title}** — not run yet.");
        } else if checks.is_empty() {
            let _ = writeln!(text, "- **{title}** — no acceptance check.");
        }
        for check in checks {
            let _ = writeln!(text, "- **{title}** — {check}");
        }
    }
    text.push('\n');
    for (name, report) in &reports {
        match report {
            Some(report) => {
                text.push_str(&report.replace("](", &format!("]({folder}/")));
                text.push('\n');
            }
            None => {
                let _ = write!(text, "## {name}\n\nNot run yet.\n\n");
            }
        }
    }
    let index = out
        .parent()
        .unwrap_or(Path::new("."))
        .join("experiments.md");
    std::fs::write(index, text)?;
    Ok(())
}
