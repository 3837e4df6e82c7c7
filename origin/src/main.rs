//! The `origin` command.

use clap::{Parser, Subcommand};
use origin::config::{database_url, OriginConfig};
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
    /// Manage the users who can log in through the edge.
    User {
        #[command(subcommand)]
        command: UserCommand,
    },
}

#[derive(Subcommand)]
enum UserCommand {
    /// Add a user; the password is read from the first line of standard input.
    Add {
        name: String,
        /// When the user exists, set this password instead of failing.
        #[arg(long)]
        replace_password: bool,
    },
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()))
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    match Cli::parse().command {
        Command::Serve => {
            let config = OriginConfig::from_env()?;
            origin::server::serve(config, shutdown_signal()).await
        }
        Command::Recover { once } => recover(once).await,
        Command::User {
            command:
                UserCommand::Add {
                    name,
                    replace_password,
                },
        } => add_user(&name, replace_password).await,
    }
}

async fn recover(once: bool) -> anyhow::Result<()> {
    let config = OriginConfig::from_env()?;
    let store = origin::store::open(&config.database_url, config.db_acquire_timeout).await?;
    let metrics = std::sync::Arc::new(origin::metrics::Metrics::default());
    let recovery = std::sync::Arc::new(origin::server::recovery(&config, store, metrics)?);
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

async fn add_user(name: &str, replace_password: bool) -> anyhow::Result<()> {
    let url = database_url(|name| std::env::var(name).ok())?;
    let store = origin::store::open(&url, std::time::Duration::from_secs(3)).await?;
    let mut password = String::new();
    std::io::stdin().read_line(&mut password)?;
    let password = password.strip_suffix('\n').unwrap_or(&password);
    let password = password.strip_suffix('\r').unwrap_or(password);
    match origin::users::add_user(store.as_ref(), name, password, replace_password).await? {
        UserAdded::Created { id } => println!("added user {name} with id {id}"),
        UserAdded::PasswordReplaced => println!("set a new password for user {name}"),
    }
    Ok(())
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
