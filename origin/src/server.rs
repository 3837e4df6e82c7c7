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
use crate::guard::PgGuard;
use crate::idempotency;
use crate::metrics::Metrics;
use crate::overload::Capacity;
use crate::store::sqlite::SqliteStore;
use crate::store::Store;
use crate::users::Passwords;

/// The name of the guard in front of approval calls, in metrics and `/admin/guard`.
pub const APPROVE_GUARD: &str = "approve";

pub async fn serve(
    config: OriginConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let store = SqliteStore::open(&config.database_url, config.db_acquire_timeout)
        .await
        .with_context(|| format!("DATABASE_URL: cannot open {}", config.database_url))?;
    let store: Arc<dyn Store> = Arc::new(store);
    let metrics = Arc::new(Metrics::default());
    if config.operator_token.is_none() {
        tracing::warn!("OPERATOR_TOKEN is not set: operator routes (/admin/…) are off");
    }
    let state = AppState {
        store: store.clone(),
        gateway: GatewayClient::new(&config.gateway_url)?,
        guard: Arc::new(PgGuard::new(APPROVE_GUARD, config.guard, metrics.clone())),
        edge: Arc::new(EdgeVerifier::new(config.edge_secret.clone())),
        metrics: metrics.clone(),
        passwords: Arc::new(Passwords::new()?),
        operator_token: config.operator_token.as_deref().map(Arc::from),
        capacity: Capacity::new(config.max_concurrent_requests),
    };
    let purge = tokio::spawn(idempotency::purge_expired(store, metrics.clone()));
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
    let served = tokio::try_join!(api.into_future(), metrics.into_future());
    purge.abort();
    served?;
    tracing::info!("origin stopped");
    Ok(())
}
