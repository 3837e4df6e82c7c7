//! `origin serve`: opens the store, binds both listeners, and runs until `shutdown`.

use std::future::{Future, IntoFuture};
use std::sync::Arc;

use anyhow::Context as _;
use tokio::net::TcpListener;
use tokio::sync::watch;

use crate::app::{app, metrics_app, AppState};
use crate::config::OriginConfig;
use crate::edge_signature::EdgeVerifier;
use crate::gateway::GatewayClient;
use crate::metrics::Metrics;
use crate::store::sqlite::SqliteStore;
use crate::users::Passwords;

pub async fn serve(
    config: OriginConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let store = SqliteStore::open(&config.database_url)
        .await
        .with_context(|| format!("DATABASE_URL: cannot open {}", config.database_url))?;
    let metrics = Arc::new(Metrics::default());
    let state = AppState {
        store: Arc::new(store),
        gateway: GatewayClient::new(&config.gateway_url, config.gateway_timeout)?,
        edge: Arc::new(EdgeVerifier::new(config.edge_secret.clone())),
        metrics: metrics.clone(),
        passwords: Arc::new(Passwords::new()?),
    };
    let api = TcpListener::bind(config.listen)
        .await
        .with_context(|| format!("ORIGIN_LISTEN: cannot bind {}", config.listen))?;
    let metrics_listener = TcpListener::bind(config.metrics_listen)
        .await
        .with_context(|| {
            format!(
                "ORIGIN_METRICS_LISTEN: cannot bind {}",
                config.metrics_listen
            )
        })?;
    tracing::info!("origin API listening on http://{}", api.local_addr()?);
    tracing::info!(
        "origin metrics listening on http://{}",
        metrics_listener.local_addr()?
    );

    let (stop, stopped) = watch::channel(false);
    tokio::spawn(async move {
        shutdown.await;
        let _ = stop.send(true);
    });
    let until_stopped = |mut stopped: watch::Receiver<bool>| async move {
        let _ = stopped.wait_for(|stop| *stop).await;
    };
    let api = axum::serve(api, app(state)).with_graceful_shutdown(until_stopped(stopped.clone()));
    let metrics = axum::serve(metrics_listener, metrics_app(metrics))
        .with_graceful_shutdown(until_stopped(stopped));
    tokio::try_join!(api.into_future(), metrics.into_future())?;
    tracing::info!("origin stopped");
    Ok(())
}
