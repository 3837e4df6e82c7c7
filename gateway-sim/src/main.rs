//! `gateway-sim` binary: reads configuration, binds, and serves until
//! SIGINT/SIGTERM so test harnesses can stop it cleanly.

use std::io::IsTerminal;

use anyhow::Context;
use gateway_sim::config::Config;
use gateway_sim::{serve, SimState};
use tracing_subscriber::EnvFilter;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let logs = tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr);
    // LOG_FORMAT=json: one JSON object per line. Harnesses capture stderr to files and
    // grep the listen line, in either format.
    if std::env::var("LOG_FORMAT").is_ok_and(|format| format == "json") {
        logs.json().init();
    } else {
        logs.with_ansi(std::io::stderr().is_terminal()).init();
    }

    let config = Config::from_env()?;
    let state = SimState::new(config.secret_key, config.webhooks)?;
    let listener = tokio::net::TcpListener::bind(config.listen)
        .await
        .with_context(|| format!("binding {}", config.listen))?;
    serve(listener, state, shutdown_signal())
        .await
        .context("serving")?;
    tracing::info!("gateway-sim stopped");
    Ok(())
}

/// Resolves on ctrl-c/SIGINT or, on Unix, SIGTERM (what process supervisors
/// and `kill` send).
async fn shutdown_signal() {
    let ctrl_c = async {
        if let Err(err) = tokio::signal::ctrl_c().await {
            tracing::error!("cannot listen for ctrl-c: {err}");
            std::future::pending::<()>().await;
        }
    };

    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(err) => {
                tracing::error!("cannot listen for SIGTERM: {err}");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();

    tokio::select! {
        () = ctrl_c => {}
        () = terminate => {}
    }
    tracing::info!("shutdown requested");
}
