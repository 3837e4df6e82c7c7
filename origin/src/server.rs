//! `origin serve`: opens the store, binds its three listeners (the API, the operator
//! routes, the metrics), and runs until `shutdown`.

use std::future::{Future, IntoFuture};
use std::sync::Arc;

use anyhow::Context as _;
use tokio::net::TcpListener;
use tokio::sync::watch;

use crate::config::OriginConfig;
use crate::edge_signature::{purge_stale_nonces, EdgeVerifier};
use crate::gateway::{self, Gateway};
use crate::guard::{GatewayGuard, GuardConfig, APPROVE_GUARD, RECOVER_GUARD};
use crate::idempotency;
use crate::metrics::Metrics;
use crate::operator_auth::OperatorGate;
use crate::overload::Capacity;
use crate::policy::breaker::BreakerConfig;
use crate::recovery::hints::{self, Hints};
use crate::recovery::Recovery;
use crate::routes::{admin_app, app, metrics_app};
use crate::state::AppState;
use crate::store;
use crate::users::Passwords;

/// PG status questions the recovery job has in flight at most.
const RECOVER_BULKHEAD: u32 = 16;

/// The recovery job over `store`, with a guard of its own: the confirm path's timeout
/// and breaker settings but for slowness — a slow status answer is still an answer, and
/// the recovery breaker is there to stop questions to a PG that gives none, so it judges
/// failures (timeouts among them) only — its own bulkhead, no limiter, and no concurrency
/// limit: a question that goes unanswered costs nobody anything, and the bulkhead bounds
/// how many are out. Its breaker's probes are its questions.
pub fn recovery(
    config: &OriginConfig,
    gateway: Arc<dyn Gateway>,
    store: Arc<dyn store::Store>,
    metrics: Arc<Metrics>,
) -> anyhow::Result<Recovery> {
    let guard = GuardConfig {
        bulkhead: RECOVER_BULKHEAD,
        limiter: crate::policy::limiter::LimiterConfig::Off,
        concurrency: crate::policy::concurrency::LimitMode::Off,
        breaker: config.guard.breaker.map(|breaker| BreakerConfig {
            slow_call_ms: u64::MAX,
            ..breaker
        }),
        ..config.guard
    };
    Ok(Recovery::new(
        store,
        gateway,
        GatewayGuard::new(RECOVER_GUARD, guard, metrics.clone()),
        metrics,
        config.recovery,
    ))
}

pub async fn serve(
    config: OriginConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let store = store::open(
        &config.database_url,
        config.db_acquire_timeout,
        config.cipher.clone(),
    )
    .await?;
    let metrics = Arc::new(Metrics::default());
    if config.operator_token.is_none() {
        tracing::warn!("OPERATOR_TOKEN is not set: operator routes (/admin/…) are off");
    }
    let gateway = gateway::open(&config.gateway)?;
    tracing::info!(provider = gateway.provider().as_str(), url = %config.gateway.url, "the payment gateway");
    let recovery = Arc::new(recovery(
        &config,
        gateway.clone(),
        store.clone(),
        metrics.clone(),
    )?);
    let (webhooks, hints) = Hints::new();
    // Several instances share a PostgreSQL database: so do their nonces.
    let shared = store::Backend::of(&config.database_url) == Some(store::Backend::Postgres);
    let edge = if shared {
        EdgeVerifier::shared(config.edge_secret.clone(), store.clone())
    } else {
        EdgeVerifier::new(config.edge_secret.clone())
    };
    let purge_nonces = shared.then(|| tokio::spawn(purge_stale_nonces(store.clone())));
    let mut guard = GatewayGuard::new(APPROVE_GUARD, config.guard, metrics.clone());
    // And the PG's budget: `LIMITER_RATE` holds for all of them together.
    if let Some(budget) = store.shared_budget() {
        guard.share_budget(budget).await?;
    }
    let guard = Arc::new(guard);
    // An open breaker learns that the PG is back from look-ups, not from payments.
    let probe = guard.start_probing(gateway.clone());
    let state = AppState {
        store: store.clone(),
        gateway,
        guard,
        edge: Arc::new(edge),
        metrics: metrics.clone(),
        passwords: Arc::new(Passwords::new()?),
        operator: Arc::new(OperatorGate::new(config.operator_token.as_deref())),
        capacity: Capacity::new(config.max_concurrent_requests),
        login_capacity: Capacity::new(config.max_concurrent_logins),
        recovery: recovery.clone(),
        webhooks: webhooks.clone(),
        edge_calls: match std::env::var("EDGE_URL") {
            Ok(_) => Some(Arc::new(crate::edge::Edge::from_env(|name| {
                std::env::var(name).ok()
            })?)),
            Err(_) => None,
        },
        gated_events: Arc::new(config.gated_events.clone()),
        history: Arc::new(crate::history::History::new(crate::clock::now_ms())),
        merchant_webhooks: config.merchant_webhooks.clone().map(Arc::new),
        idempotency_lease: config.idempotency_lease,
    };
    // The operator's setting is in force before the first request is served.
    if let Ok(Some(control)) = store.breaker_control(APPROVE_GUARD).await {
        state.guard.apply_control(control);
    }
    let follow = tokio::spawn(crate::guard::control::follow(
        state.guard.clone(),
        APPROVE_GUARD,
        store.clone(),
    ));
    let backlog = tokio::spawn(crate::backlog::sample_every_interval(
        store.clone(),
        metrics.clone(),
        config.merchant_webhooks.is_some(),
    ));
    let history = tokio::spawn(crate::history::sample_every_interval(
        crate::history::Sources {
            history: state.history.clone(),
            store: store.clone(),
            guard: state.guard.clone(),
            metrics: metrics.clone(),
            edge: state.edge_calls.clone(),
        },
    ));
    let look_up_hints = tokio::spawn(hints::look_up_each(
        webhooks,
        hints,
        recovery.clone(),
        store.clone(),
        metrics.clone(),
        config.webhook_lookup_rate,
    ));
    let deliver = match &config.merchant_webhooks {
        Some(webhooks) => {
            let delivery = crate::outbox::Delivery::new(
                store.clone(),
                metrics.clone(),
                webhooks.clone(),
                state.gateway.currency(),
            )?;
            let delivery = Arc::new(delivery);
            Some((delivery.clone(), tokio::spawn(delivery.run())))
        }
        None => None,
    };
    let purge = tokio::spawn(idempotency::purge_expired(store, metrics.clone()));
    let recover = tokio::spawn(recovery.run_every_interval());
    let api = TcpListener::bind(config.listen)
        .await
        .with_context(|| format!("ORIGIN_LISTEN: cannot bind {}", config.listen))?;
    let admin = TcpListener::bind(config.admin_listen)
        .await
        .with_context(|| format!("ORIGIN_ADMIN_LISTEN: cannot bind {}", config.admin_listen))?;
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
        "origin operator routes listening on http://{}",
        admin.local_addr()?
    );
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
    let api =
        axum::serve(api, app(state.clone())).with_graceful_shutdown(until_stopped(stopped.clone()));
    // The operator routes throttle failed attempts by the peer's address.
    let admin = axum::serve(
        admin,
        admin_app(state).into_make_service_with_connect_info::<std::net::SocketAddr>(),
    )
    .with_graceful_shutdown(until_stopped(stopped.clone()));
    let metrics = axum::serve(metrics_listener, metrics_app(metrics))
        .with_graceful_shutdown(until_stopped(stopped));
    let served = tokio::try_join!(
        api.into_future(),
        admin.into_future(),
        metrics.into_future()
    );
    purge.abort();
    backlog.abort();
    history.abort();
    recover.abort();
    look_up_hints.abort();
    follow.abort();
    if let Some(probe) = probe {
        probe.abort();
    }
    if let Some((delivery, deliver)) = deliver {
        deliver.abort();
        // The loop has stopped (and its flush with it) before this one starts.
        let _ = deliver.await;
        if let Err(err) = delivery.flush().await {
            tracing::warn!(error = %err, "merchant webhooks acknowledged at the stop could not be recorded: they are delivered again after the restart");
        }
    }
    if let Some(purge_nonces) = purge_nonces {
        purge_nonces.abort();
    }
    served?;
    tracing::info!("origin stopped");
    Ok(())
}
