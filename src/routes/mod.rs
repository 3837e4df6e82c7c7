//! Which handler answers which method and path, and the shared steps around them:
//! configuration, the clock, authentication, rate limits, and turning refusals into
//! responses. The handlers, one file per group of routes:
//!
//! - [`auth`] — login, refresh-token rotation, logout, who-am-I.
//! - [`queue`] — enter, status, leave, and the waiting-room page.
//! - [`payments`] — confirm (with the queue-pass gate) and read-back, forwarded.
//! - [`checkout`] — the checkout page: the PG's window opened, the confirm, the receipt.
//! - [`internal`] — what the origin asks of the edge, signed: ending a user's sessions.

pub mod auth;
pub mod checkout;
pub(crate) mod incoming;
pub mod internal;
pub mod payments;
pub mod queue;

use rules::signing::REQUEST_ID_HEADER;
use worker::{web_sys, Context, Env, Headers, Method, Response};

use crate::auth::{authenticate, verify_bearer};
use crate::clock;
use crate::config::EdgeConfig;
use crate::error::ApiError;
use crate::memory;
use crate::rate_limit::{Admission, Limits};
use incoming::Incoming;

/// Answers one request. Every refusal becomes a JSON error body here. `ctx` carries
/// work that must not hold the answer back.
pub async fn dispatch(req: web_sys::Request, env: &Env, ctx: &Context) -> worker::Result<Response> {
    let req = Incoming::new(req);
    let request_id = request_id_of(&req.headers)?;
    let response = match route(req, env, ctx, &request_id).await {
        Ok(response) => response,
        Err(err) => err.into_response()?,
    };
    // Every answer says its request's id.
    if response
        .headers()
        .set(REQUEST_ID_HEADER, &request_id)
        .is_ok()
    {
        return Ok(response);
    }
    // An answer whose headers cannot change: the same, with headers that can.
    let headers = Headers::new();
    for (name, value) in response.headers().entries() {
        headers.set(&name, &value)?;
    }
    headers.set(REQUEST_ID_HEADER, &request_id)?;
    Ok(response.with_headers(headers))
}

/// The request's id: the client's `X-Request-Id` when well formed, else a fresh one.
fn request_id_of(headers: &Headers) -> worker::Result<String> {
    let given = headers.get(REQUEST_ID_HEADER)?;
    match given.filter(|id| rules::request_id::well_formed(id)) {
        Some(id) => Ok(id),
        None => crate::random::id().map_err(|err| worker::Error::RustError(err.message)),
    }
}

/// Routes that need a verified caller. A confirm carries its request (`Body`) until the
/// refusals that need no body are done, then what reading its body made of it.
enum Authenticated<'p, Body> {
    Me,
    LogoutAll,
    Confirm(Body),
    Payment(&'p str),
    QueueEnter(&'p str),
    QueueStatus(&'p str),
    QueueLeave(&'p str),
}

/// A confirm as read, or why it is refused — said only once the caller is known.
type ConfirmRead = Box<Result<payments::ConfirmInput, ApiError>>;

impl<'p> Authenticated<'p, Incoming> {
    /// The same route, a confirm's body read.
    async fn read_confirm(self) -> Authenticated<'p, ConfirmRead> {
        match self {
            Authenticated::Confirm(req) => {
                Authenticated::Confirm(Box::new(payments::ConfirmInput::read(&req).await))
            }
            Authenticated::Me => Authenticated::Me,
            Authenticated::LogoutAll => Authenticated::LogoutAll,
            Authenticated::Payment(order_id) => Authenticated::Payment(order_id),
            Authenticated::QueueEnter(event_id) => Authenticated::QueueEnter(event_id),
            Authenticated::QueueStatus(event_id) => Authenticated::QueueStatus(event_id),
            Authenticated::QueueLeave(event_id) => Authenticated::QueueLeave(event_id),
        }
    }
}

async fn route(
    req: Incoming,
    env: &Env,
    ctx: &Context,
    request_id: &str,
) -> Result<Response, ApiError> {
    let path = req.path();
    let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
    let method = req.method.clone();
    let headers = req.headers.clone();
    if let (Method::Get, ["healthz"]) = (&method, segments.as_slice()) {
        let snapshots = crate::queue::snapshots::counts();
        let body = serde_json::json!({
            "status": "ok",
            "refusedFromMemory": memory::refused_count(),
            "roomCalls": crate::queue::client::calls(),
            "snapshotsRead": snapshots.read,
            "snapshotsFetched": snapshots.fetched,
            "snapshotsFailed": snapshots.failed,
            "snapshotsShared": snapshots.shared,
            "wasmMemoryBytes": wasm_memory_bytes(),
        });
        return Ok(Response::from_json(&body)?);
    }
    let config = EdgeConfig::of(env).map_err(|err| {
        worker::console_error!("configuration: {err}");
        ApiError::new(500, "MISCONFIGURED", "the edge is not configured")
    })?;
    let now_ms = clock::now_ms();
    let authenticated = match (&method, segments.as_slice()) {
        (Method::Post, ["auth", "login"]) => {
            return auth::login(req.into_request(), env, &config, now_ms, request_id).await
        }
        (Method::Post, ["auth", "refresh"]) => {
            return auth::refresh(req.into_request(), env, &config, now_ms).await
        }
        (Method::Post, ["auth", "logout"]) => {
            return auth::logout(&req.headers, env, &config, now_ms).await
        }
        (Method::Post, ["auth", "logout-all"]) => Authenticated::LogoutAll,
        (Method::Post, ["internal", "sessions", "end"]) => {
            return internal::end_sessions(req.into_request(), env, &config, now_ms).await
        }
        (Method::Post, ["internal", "rooms", event_id]) => {
            return internal::configure_room(req.into_request(), env, &config, event_id, now_ms)
                .await
        }
        (Method::Post, ["internal", "rooms", event_id, "report"]) => {
            return internal::room_report(req.into_request(), env, &config, event_id, now_ms).await
        }
        (Method::Post, ["internal", "rooms", event_id, "draw"]) => {
            return internal::draw_list(req.into_request(), env, &config, event_id, now_ms).await
        }
        (Method::Get, ["auth", "me"]) => Authenticated::Me,
        (Method::Post, ["payments", "confirm"]) => Authenticated::Confirm(req),
        (Method::Get, ["payments", order_id]) => Authenticated::Payment(order_id),
        (Method::Post, ["queue", event_id, "enter"]) => Authenticated::QueueEnter(event_id),
        (Method::Get, ["queue", event_id, "status"]) => Authenticated::QueueStatus(event_id),
        (Method::Post, ["queue", event_id, "leave"]) => Authenticated::QueueLeave(event_id),
        (Method::Get, ["queue", event_id]) if wants_html(&req.headers)? => {
            return queue::page(event_id)
        }
        (Method::Get, ["queue", event_id]) => Authenticated::QueueStatus(event_id),
        (Method::Get, ["checkout", event_id]) => return checkout::page(&config, event_id),
        (
            _,
            ["healthz"]
            | ["auth", "login" | "refresh" | "logout" | "logout-all" | "me"]
            | ["internal", "sessions", "end"]
            | ["internal", "rooms", _]
            | ["internal", "rooms", _, "report" | "draw"]
            | ["payments", _]
            | ["queue", _]
            | ["queue", _, "enter" | "status" | "leave"]
            | ["checkout", _],
        ) => return Err(ApiError::method_not_allowed()),
        _ => return Err(ApiError::not_found()),
    };

    let claims = verify_bearer(&headers, &config, now_ms).await?;
    let route = config.rate_limits.for_request(method.as_ref(), &path);
    // A ticket holder's poll is answered from the room's snapshot: no object call.
    if let (Authenticated::QueueStatus(event_id), None) = (&authenticated, route) {
        if let Some(ticket) = headers.get(queue::TICKET_HEADER)? {
            return queue::status_from_ticket(env, &config, event_id, &claims, &ticket, now_ms)
                .await;
        }
    }
    if let Authenticated::QueueEnter(event_id)
    | Authenticated::QueueStatus(event_id)
    | Authenticated::QueueLeave(event_id) = &authenticated
    {
        // Nothing — no room, no line, no window — exists for an event nobody defined
        // (a ticket holder's poll, above, has a ticket only for a room that exists).
        queue::check_defined(env, &config, event_id, now_ms).await?;
    }
    let limits = match route {
        Some(route) => {
            let room = match &authenticated {
                Authenticated::QueueEnter(event_id) => {
                    Some(queue::enter_window(env, &config, event_id, &claims.sub, now_ms).await?)
                }
                _ => None,
            };
            Some(Limits::new(route, &claims.sub, config.global_shards, room)?)
        }
        None => None,
    };
    if let Some(limits) = &limits {
        limits.refuse_from_memory(now_ms)?;
    }
    if let Authenticated::Confirm(_) = &authenticated {
        payments::ticket_gate::refuse_waiting_unread(env, &config, &claims, &headers, now_ms)
            .await?;
    }
    let authenticated = authenticated.read_confirm().await;
    if let Authenticated::Confirm(input) = &authenticated {
        if let Ok(input) = input.as_ref() {
            payments::ticket_gate::refuse_waiting(env, &config, &claims, input, now_ms).await?;
        }
    }
    let window = limits.as_ref().map(Limits::user_check);
    let caller = authenticate(env, &config, claims, window, now_ms).await?;
    let user_admitted = match limits {
        Some(limits) => Some(limits.user_admitted(caller.window, now_ms)?),
        None => None,
    };
    // A confirm counts in the global window only once it can be served: its handler
    // asks the window after the gate, and says the quotas itself.
    let (admission, confirm_admitted) = match (&authenticated, user_admitted) {
        (Authenticated::Confirm(_), admitted) => (Admission::unlimited(), admitted),
        (_, Some(admitted)) => (admitted.global(env, now_ms).await?, None),
        (_, None) => (Admission::unlimited(), None),
    };
    let response = match authenticated {
        Authenticated::Me => auth::me(&caller.claims),
        Authenticated::LogoutAll => auth::logout_all(env, &caller.claims, now_ms).await,
        Authenticated::Confirm(input) => {
            let at = payments::Confirming {
                env,
                ctx,
                config: &config,
                caller: &caller.claims,
                now_ms,
                request_id,
            };
            payments::confirm((*input)?, at, confirm_admitted).await
        }
        Authenticated::QueueEnter(event_id) => {
            queue::enter(env, &config, event_id, &caller.claims, now_ms).await
        }
        Authenticated::QueueStatus(event_id) => {
            queue::status(env, &config, event_id, &caller.claims).await
        }
        Authenticated::QueueLeave(event_id) => {
            queue::leave(env, &config, event_id, &caller.claims).await
        }
        Authenticated::Payment(order_id) => {
            payments::get(order_id, &config, &caller.claims, now_ms, request_id).await
        }
    }?;
    admission.decorate(response)
}

/// The isolate's WebAssembly memory: everything the Rust side holds — the Worker's and
/// every object's of this isolate — at its high-water mark (it never shrinks).
fn wasm_memory_bytes() -> u64 {
    #[cfg(target_arch = "wasm32")]
    let pages = core::arch::wasm32::memory_size(0) as u64;
    #[cfg(not(target_arch = "wasm32"))]
    let pages = 0;
    pages * 65_536
}

/// Whether the client asked for the page rather than JSON.
fn wants_html(headers: &Headers) -> Result<bool, ApiError> {
    let accept = headers.get("accept")?.unwrap_or_default();
    Ok(accept.contains("text/html") && !accept.starts_with("application/json"))
}
