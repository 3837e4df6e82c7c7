//! `/internal/*`: what the origin asks of the edge, signed as the edge signs its own
//! calls to the origin (`rules::signing`, the same shared key; the signed path names
//! the route, so no call of one direction verifies as a call of the other).
//!
//! - `POST /internal/sessions/end` `{before}`: every session the user (`x-edge-user`)
//!   began before `before` (epoch ms) ends — what a password change or `origin user
//!   revoke-sessions` asks. The body fixes the moment, so a replay within the
//!   signature's freshness ends nothing begun since.
//! - `POST /internal/rooms/{eventId}` `RoomUpdate`: an operator's settings for the drop
//!   (`rules::drop`), applied by its room at once and recorded in the event directory
//!   (whether confirms need a pass). Versioned: an older version changes nothing, and
//!   the same version sent again (a retry) is applied once and answered again.
//! - `POST /internal/rooms/{eventId}/report`: the room, for operators.
//!
//! Only the origin holds the key these are signed with: a room's settings that the
//! origin did not sign are refused (401 `SIGNATURE_INVALID`).

use rules::signing::{
    SignedRequest, MAX_SKEW_MS, NONCE_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER, USER_HEADER,
};
use serde::Deserialize;
use worker::{Env, Request, Response};

use rules::confirm::check_event_id;
use rules::drop::RoomUpdate;

use crate::body::read_body;
use crate::config::EdgeConfig;
use crate::directory;
use crate::error::ApiError;
use crate::queue::client as room;
use crate::queue::protocol::Configured;
use crate::session::client::UserSessionClient;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EndSessions {
    before: i64,
}

/// `POST /internal/sessions/end` (signed by the origin): 204 once the user's session
/// object has ended them; 401 `SIGNATURE_INVALID`; 503 `SESSION_UNAVAILABLE`.
pub async fn end_sessions(
    mut req: Request,
    env: &Env,
    config: &EdgeConfig,
    now_ms: i64,
) -> Result<Response, ApiError> {
    let body = read_body(&mut req).await?;
    let user_id = verified_user(&req, &body, config, now_ms)?;
    let EndSessions { before } = serde_json::from_slice(&body).map_err(|_| {
        ApiError::bad_request("INVALID_REQUEST", "the body must be {\"before\": epoch ms}")
    })?;
    if before <= 0 || before > now_ms + MAX_SKEW_MS {
        return Err(ApiError::bad_request(
            "INVALID_REQUEST",
            "`before` must be a past moment, in epoch ms",
        ));
    }
    // A moment ahead of this clock would also end sessions begun after the call.
    let before = before.min(now_ms);
    UserSessionClient::new(env, &user_id)
        .end_all(before)
        .await
        .map_err(super::auth::session_unavailable)?;
    worker::console_log!("every session of {user_id} begun before {before} ended");
    Ok(Response::empty()?.with_status(204))
}

/// `POST /internal/rooms/{eventId}` (signed by the origin): 200 the room's [`Report`]
/// once applied; 400 `INVALID_SETTING` naming the field; 409 `STALE_VERSION` when a newer
/// version is in force; 401 `SIGNATURE_INVALID`; 503 `QUEUE_UNAVAILABLE`.
///
/// [`Report`]: crate::queue::protocol::Report
pub async fn configure_room(
    mut req: Request,
    env: &Env,
    config: &EdgeConfig,
    event_id: &str,
    now_ms: i64,
) -> Result<Response, ApiError> {
    let update: RoomUpdate =
        signed_room_body(&mut req, config, event_id, now_ms, "a RoomUpdate").await?;
    let report = match room::configure(env, event_id, &update)
        .await
        .map_err(room_unavailable)?
    {
        Configured::Applied(report) => report,
        // A retry of the update in force: applied once, answered again.
        Configured::Stale { version } if version == update.version => room::report(env, event_id)
            .await
            .map_err(room_unavailable)?,
        Configured::Stale { version } => {
            return Err(ApiError::new(
                409,
                "STALE_VERSION",
                format!("version {version} is in force; send a newer one"),
            )
            .with_field("version", version.into()))
        }
        Configured::Refused { field, message } => {
            return Err(
                ApiError::bad_request("INVALID_SETTING", format!("{field}: {message}"))
                    .with_field("field", field.into()),
            )
        }
    };
    let settings = &update.settings;
    directory::client::set(
        env,
        event_id,
        settings.gated,
        settings.shard_count(),
        update.version,
    )
    .await
    .map_err(room_unavailable)?;
    worker::console_log!("room {event_id}: version {} applied", update.version);
    Ok(Response::from_json(&report)?)
}

/// `POST /internal/rooms/{eventId}/report` (signed by the origin): 200 the room's report.
pub async fn room_report(
    mut req: Request,
    env: &Env,
    config: &EdgeConfig,
    event_id: &str,
    now_ms: i64,
) -> Result<Response, ApiError> {
    signed_room_call(&mut req, config, event_id, now_ms).await?;
    let report = room::report(env, event_id)
        .await
        .map_err(room_unavailable)?;
    Ok(Response::from_json(&report)?)
}

/// The most people one page of a draw lists.
const MAX_DRAWN_PAGE: u32 = 10_000;

/// `POST /internal/rooms/{eventId}/draw` `{from, limit}` (signed by the origin): 200 the
/// draw for audit — the seed and a page of the people in their drawn order.
pub async fn draw_list(
    mut req: Request,
    env: &Env,
    config: &EdgeConfig,
    event_id: &str,
    now_ms: i64,
) -> Result<Response, ApiError> {
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Page {
        from: u64,
        limit: u32,
    }
    let page: Page = signed_room_body(&mut req, config, event_id, now_ms, "{from, limit}").await?;
    if page.limit == 0 || page.limit > MAX_DRAWN_PAGE {
        return Err(ApiError::bad_request(
            "INVALID_REQUEST",
            format!("limit: 1 to {MAX_DRAWN_PAGE}"),
        ));
    }
    let list = room::draw_list(env, event_id, page.from, page.limit)
        .await
        .map_err(room_unavailable)?;
    Ok(Response::from_json(&list)?)
}

/// 503 `QUEUE_UNAVAILABLE`: the room (or the event directory) could not answer; the
/// origin sends the call again.
fn room_unavailable(err: crate::durable_call::ObjectUnavailable) -> ApiError {
    worker::console_error!("{err}");
    ApiError::new(
        503,
        "QUEUE_UNAVAILABLE",
        "the room or the directory cannot answer; send it again",
    )
}

/// The body of a call about `event_id`'s room, once the origin's signature holds.
async fn signed_room_call(
    req: &mut Request,
    config: &EdgeConfig,
    event_id: &str,
    now_ms: i64,
) -> Result<Vec<u8>, ApiError> {
    check_event_id(event_id)?;
    let body = read_body(req).await?;
    verified_user(req, &body, config, now_ms)?;
    Ok(body)
}

/// The body of a call about `event_id`'s room, once the origin's signature holds, read
/// as a `T` (400 `INVALID_REQUEST` saying it `expected` one, otherwise).
async fn signed_room_body<T: serde::de::DeserializeOwned>(
    req: &mut Request,
    config: &EdgeConfig,
    event_id: &str,
    now_ms: i64,
    expected: &str,
) -> Result<T, ApiError> {
    let body = signed_room_call(req, config, event_id, now_ms).await?;
    serde_json::from_slice(&body).map_err(|err| {
        ApiError::bad_request("INVALID_REQUEST", format!("expected {expected}: {err}"))
    })
}

/// The user a request signed by the origin names, once its signature holds.
fn verified_user(
    req: &Request,
    body: &[u8],
    config: &EdgeConfig,
    now_ms: i64,
) -> Result<String, ApiError> {
    let invalid = || ApiError::new(401, "SIGNATURE_INVALID", "not signed by the origin");
    let header = |name: &str| req.headers().get(name).ok().flatten();
    let (Some(user_id), Some(timestamp), Some(nonce), Some(signature)) = (
        header(USER_HEADER),
        header(TIMESTAMP_HEADER),
        header(NONCE_HEADER),
        header(SIGNATURE_HEADER),
    ) else {
        return Err(invalid());
    };
    let timestamp_ms = timestamp.parse::<i64>().map_err(|_| invalid())?;
    let path = req.path();
    SignedRequest {
        method: "POST",
        path_and_query: &path,
        timestamp_ms,
        nonce: &nonce,
        user_id: &user_id,
        idempotency_key: "",
        request_id: "",
        pass: "",
        body,
    }
    .verify(&config.origin_secret, &signature, now_ms)
    .map_err(|_| invalid())?;
    if user_id.is_empty() {
        return Err(invalid());
    }
    Ok(user_id)
}
