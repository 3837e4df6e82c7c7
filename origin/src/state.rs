//! What every handler is given: the store, the gateway and its guard, the recovery job,
//! the edge's verifier, the metrics and the operator's settings. The router (`app.rs`)
//! hands it to the handlers; the handlers name it here, never the router.

use std::collections::HashSet;
use std::sync::Arc;

use crate::edge_signature::EdgeVerifier;
use crate::gateway::Gateway;
use crate::guard::GatewayGuard;
use crate::metrics::Metrics;
use crate::operator_auth::OperatorGate;
use crate::overload::Capacity;
use crate::recovery::Recovery;
use crate::store::Store;
use crate::users::Passwords;

#[derive(Clone)]
pub struct AppState {
    pub store: Arc<dyn Store>,
    /// The PG, behind its port.
    pub gateway: Arc<dyn Gateway>,
    /// The guard in front of every approval call.
    pub guard: Arc<GatewayGuard>,
    pub edge: Arc<EdgeVerifier>,
    pub metrics: Arc<Metrics>,
    pub passwords: Arc<Passwords>,
    /// `OPERATOR_TOKEN` (`None` turns the operator routes off) and the failed attempts.
    pub operator: Arc<OperatorGate>,
    /// Requests the API handles at once.
    pub capacity: Capacity,
    /// Credential checks handled at once, apart from [`AppState::capacity`].
    pub login_capacity: Capacity,
    /// The recovery job, also what a PG webhook's look-up converges a payment through.
    pub recovery: Arc<Recovery>,
    /// The PG's webhooks, each a hint: looked up at a bounded rate.
    pub webhooks: Arc<crate::recovery::hints::Hints>,
    /// The edge, for the drops' rooms (`EDGE_URL`); `None` refuses to define one.
    pub edge_calls: Option<Arc<crate::edge::Edge>>,
    /// `GATED_EVENTS`: events gated when no room of theirs is stored.
    pub gated_events: Arc<HashSet<String>>,
    /// The last 15 minutes, for the console's charts.
    pub history: Arc<crate::history::History>,
    /// The merchant's endpoint, where webhooks are pushed (`None`: pull only).
    pub merchant_webhooks: Option<Arc<crate::outbox::config::MerchantWebhooks>>,
    /// `IDEMPOTENCY_LEASE_MS`: how long a confirm in flight holds its key.
    pub idempotency_lease: std::time::Duration,
}
