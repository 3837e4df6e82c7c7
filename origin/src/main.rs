//! The `origin` command.

use anyhow::Context as _;
use clap::{Parser, Subcommand};
use origin::config::{database_url, OriginConfig};
use origin::crypto::FieldCipher;
use origin::users::UserAdded;
use tracing_subscriber::EnvFilter;

#[derive(Parser)]
#[command(name = "origin", version, about = "The origin payment service")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the API and the metrics listener until SIGINT or SIGTERM.
    Serve,
    /// Converge UNKNOWN and stale PENDING payments by asking the PG: every
    /// RECOVERY_INTERVAL_MS, or one cycle with --once (its report is printed as JSON).
    /// Reads the same configuration as `serve`.
    Recover {
        /// Run one cycle now, print what it changed, and exit.
        #[arg(long)]
        once: bool,
    },
    /// Reconcile a settlement file with our APPROVED payments, queue the exceptions,
    /// and print the counts as JSON. The period is the span of the file's transaction
    /// dates, unless given. Reads the same configuration as `serve`.
    Reconcile {
        /// The PG's settlement file: CSV (UTF-8 or CP949) or an Excel workbook (.xlsx,
        /// .xls), told apart by its content.
        file: std::path::PathBuf,
        /// The workbook's sheet to read (the first that has a header, if not given).
        #[arg(long)]
        sheet: Option<String>,
        /// Reconcile this one day (YYYY-MM-DD, UTC).
        #[arg(long, conflicts_with_all = ["from", "to"])]
        date: Option<String>,
        /// The first day of the period (with --to).
        #[arg(long, requires = "to")]
        from: Option<String>,
        /// The last day of the period (with --from).
        #[arg(long, requires = "from")]
        to: Option<String>,
    },
    /// Manage the key-encryption keys (ENCRYPTION_KEKS, ENCRYPTION_CURRENT_KEK).
    Keys {
        #[command(subcommand)]
        command: KeysCommand,
    },
    /// Manage the users who can log in through the edge.
    User {
        #[command(subcommand)]
        command: UserCommand,
    },
    /// Define and run limited drops (through the running origin's operator routes).
    Event {
        #[command(subcommand)]
        command: origin::event_cli::EventCommand,
    },
}

#[derive(Subcommand)]
enum KeysCommand {
    /// Rewrap every sealed value not on ENCRYPTION_CURRENT_KEK onto it (only the data
    /// keys change), a batch at a time, while the origin serves; resumable, and a second
    /// run changes nothing. Prints a summary as JSON; fails if a value did not open.
    Rewrap {
        /// Values read and replaced per transaction.
        #[arg(long, default_value_t = origin::rotation::BATCH)]
        batch: u32,
    },
}

#[derive(Subcommand)]
enum UserCommand {
    /// Add a user; the password is read from the first line of standard input.
    Add {
        name: String,
        /// When the user exists, set this password instead of failing — and end every
        /// session of the user at the edge (`EDGE_URL`).
        #[arg(long)]
        replace_password: bool,
    },
    /// End every session of a user at the edge (`EDGE_URL`): refresh tokens at once,
    /// access tokens at their next request. Safe to run again.
    RevokeSessions { name: String },
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let logs = tracing_subscriber::fmt()
        .with_env_filter(EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()))
        .with_writer(origin::log_writer::stderr)
        // Its report of a failed write is an `eprintln!`, which panics when standard error
        // is the pipe that failed: the writer drops and counts instead (log_writer.rs).
        .log_internal_errors(false);
    // LOG_FORMAT=json: one JSON object per line, the span's fields (the request id) in it.
    if std::env::var("LOG_FORMAT").is_ok_and(|format| format == "json") {
        logs.json().with_current_span(true).init();
    } else {
        logs.with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .init();
    }
    match Cli::parse().command {
        Command::Serve => {
            let config = OriginConfig::from_env()?;
            origin::server::serve(config, shutdown_signal()).await
        }
        Command::Recover { once } => recover(once).await,
        Command::Reconcile {
            file,
            date,
            from,
            to,
            sheet,
        } => {
            reconcile(
                &file,
                sheet,
                date.as_deref(),
                from.as_deref(),
                to.as_deref(),
            )
            .await
        }
        Command::Keys {
            command: KeysCommand::Rewrap { batch },
        } => rewrap(batch).await,
        Command::User {
            command:
                UserCommand::Add {
                    name,
                    replace_password,
                },
        } => add_user(&name, replace_password).await,
        Command::User {
            command: UserCommand::RevokeSessions { name },
        } => revoke_sessions(&name).await,
        Command::Event { command } => origin::event_cli::run(command).await,
    }
}

async fn recover(once: bool) -> anyhow::Result<()> {
    let config = OriginConfig::from_env()?;
    let store = origin::store::open(
        &config.database_url,
        config.db_acquire_timeout,
        config.cipher.clone(),
    )
    .await?;
    let metrics = std::sync::Arc::new(origin::metrics::Metrics::default());
    let gateway = origin::gateway::open(&config.gateway)?;
    let recovery = std::sync::Arc::new(origin::server::recovery(&config, gateway, store, metrics)?);
    if once {
        let report = recovery.run_cycle().await;
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(());
    }
    tokio::select! {
        () = recovery.run_every_interval() => {}
        () = shutdown_signal() => {}
    }
    Ok(())
}

async fn reconcile(
    path: &std::path::Path,
    sheet: Option<String>,
    date: Option<&str>,
    from: Option<&str>,
    to: Option<&str>,
) -> anyhow::Result<()> {
    use anyhow::Context as _;
    use origin::policy::settlement::period::Period;
    use origin::settlement::run;
    let period = Period::from_query(date, from, to)?;
    let file = std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let store = open_store().await?;
    let metrics = origin::metrics::Metrics::default();
    let progress = std::sync::Arc::new(ProgressBar {
        bar: indicatif::ProgressBar::new(0),
    });
    let settlement = run::Settlement { file, sheet };
    let report = run::reconcile(store, &metrics, settlement, period, progress.clone()).await;
    progress.bar.finish_and_clear();
    let report = report?;
    println!("{}", serde_json::to_string_pretty(&report)?);
    Ok(())
}

async fn rewrap(batch: u32) -> anyhow::Result<()> {
    use origin::rotation::Rotation;
    let lookup = |name: &str| std::env::var(name).ok();
    let cipher = FieldCipher::from_env(lookup)?;
    let store = origin::store::open(
        &database_url(lookup)?,
        std::time::Duration::from_secs(3),
        cipher.clone(),
    )
    .await?;
    let mut rotation = Rotation::new(store.as_ref(), &cipher, batch);
    let progress = ProgressBar {
        bar: indicatif::ProgressBar::new(0),
    };
    progress.start(
        &format!("rewrapping onto v{}", cipher.current_version()),
        "{msg} [{bar:40}] {pos}/{len} {per_sec} eta {eta}",
        rotation.remaining().await?,
    );
    loop {
        let read = rotation.next_batch().await;
        match read {
            Ok(0) => break,
            Ok(read) => progress.bar.inc(read),
            Err(error) => {
                progress.bar.abandon();
                return Err(anyhow::Error::new(error)
                    .context("rewrap stopped; what was committed stays, run it again to go on"));
            }
        }
    }
    progress.bar.finish_and_clear();
    let report = rotation.report();
    println!("{}", serde_json::to_string_pretty(&report)?);
    anyhow::ensure!(
        report.failed == 0,
        "{} values did not open and were left as they are",
        report.failed
    );
    Ok(())
}

/// A progress bar on standard error (when it is a terminal).
struct ProgressBar {
    bar: indicatif::ProgressBar,
}

impl ProgressBar {
    /// Starts over at 0 of `length`, drawn with `template`.
    fn start(&self, message: &str, template: &str, length: u64) {
        let style = indicatif::ProgressStyle::with_template(template)
            .map(|style| style.progress_chars("=> "))
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
        self.bar.set_style(style);
        self.bar.set_message(message.to_owned());
        self.bar.set_length(length);
        self.bar.set_position(0);
    }
}

impl origin::settlement::run::Progress for ProgressBar {
    fn pass(&self, stage: &'static str, file_bytes: u64) {
        self.start(
            stage,
            "{msg:>18} [{bar:40}] {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
            file_bytes,
        );
    }

    fn read(&self, bytes: u64) {
        self.bar.inc(bytes);
    }
}

async fn add_user(name: &str, replace_password: bool) -> anyhow::Result<()> {
    let store = open_store().await?;
    let mut password = String::new();
    std::io::stdin().read_line(&mut password)?;
    let password = password.strip_suffix('\n').unwrap_or(&password);
    let password = password.strip_suffix('\r').unwrap_or(password);
    match origin::users::add_user(store.as_ref(), name, password, replace_password).await? {
        UserAdded::Created { id } => println!("added user {name} with id {id}"),
        UserAdded::PasswordUnchanged => {
            println!("user {name} has this password already; nothing changed");
        }
        UserAdded::PasswordReplaced => {
            println!("set a new password for user {name}");
            end_sessions(store.as_ref(), name).await.with_context(|| {
                format!(
                    "the password is changed, but the sessions begun with the old one live \
                     on: run `origin user revoke-sessions {name}` once the edge can be reached"
                )
            })?;
        }
    }
    Ok(())
}

async fn revoke_sessions(name: &str) -> anyhow::Result<()> {
    let store = open_store().await?;
    end_sessions(store.as_ref(), name).await
}

/// Ends, at the edge, every session `name` began until now.
async fn end_sessions(store: &dyn origin::store::Store, name: &str) -> anyhow::Result<()> {
    let username = rules::credentials::normalize_username(name)?;
    let user = store
        .user_by_name(&username)
        .await?
        .with_context(|| format!("no user `{username}`"))?;
    let edge = origin::edge::Edge::from_env(|name| std::env::var(name).ok())?;
    edge.end_sessions(&user.id, origin::clock::now_ms()).await?;
    println!("ended every session of user {username} at the edge");
    Ok(())
}

/// The store, for a command that needs only the database and the keys.
async fn open_store() -> anyhow::Result<std::sync::Arc<dyn origin::store::Store>> {
    let lookup = |name: &str| std::env::var(name).ok();
    let url = database_url(lookup)?;
    let cipher = FieldCipher::from_env(lookup)?;
    origin::store::open(&url, std::time::Duration::from_secs(3), cipher).await
}

/// Resolves on the first SIGINT or SIGTERM.
async fn shutdown_signal() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut terminate) => {
                tokio::select! {
                    _ = interrupt => {}
                    _ = terminate.recv() => {}
                }
            }
            Err(_) => {
                let _ = interrupt.await;
            }
        }
    }
    #[cfg(not(unix))]
    let _ = interrupt.await;
}
