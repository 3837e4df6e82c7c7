//! Payment routes: confirm and read-back, forwarded to the origin once the caller is
//! authenticated and the request is known to be well formed.

mod input;
mod pass;
pub mod ticket_gate;

pub use input::ConfirmInput;

use rules::confirm::check_order_id;
use rules::pass::Gate;
use rules::token::AccessClaims;
use worker::{Context, Env, Method, Response};

use crate::config::EdgeConfig;
use crate::directory;
use crate::error::ApiError;
use crate::memory;
use crate::origin::{OriginAnswer, OriginCall};
use crate::queue::client::{self, WaitingRoomClient};
use crate::rate_limit::{Admission, UserAdmitted};
use pass::{consume_later, not_told, pass_for, settlement, untie, Passage, Settlement};

/// Where a confirm is handled: the Worker's environment, and the request's caller, clock
/// and id.
pub struct Confirming<'a> {
    pub env: &'a Env,
    pub ctx: &'a Context,
    pub config: &'a EdgeConfig,
    pub caller: &'a AccessClaims,
    pub now_ms: i64,
    pub request_id: &'a str,
}

/// `POST /payments/confirm`: validated here, decided by the origin. A `SOLD_OUT` answer
/// for an event also closes that event's queue, after the answer has left.
///
/// For a gated event the gate goes first: a claimed pass is signed into the request
/// (`rules::pass`), and only then does the confirm count in the global window
/// (`admitted`, the user's window's admission). A confirm with no pass to claim — none
/// live, payments paused, the drop not open — goes on as a replay only: the origin
/// answers it from what exists (the approved retry whose pass is spent) or refuses it,
/// and it neither spends nor frees a pass. One whose ticket's place waits never came
/// this far (`ticket_gate`).
pub async fn confirm(
    input: ConfirmInput,
    at: Confirming<'_>,
    admitted: Option<UserAdmitted<'_>>,
) -> Result<Response, ApiError> {
    let Confirming {
        env,
        ctx,
        config,
        caller,
        now_ms,
        request_id,
    } = at;
    let ConfirmInput {
        idempotency_key,
        body,
        confirm,
        ticket: _,
    } = input;
    let order_id = confirm.order_id.as_str();
    let gated = match confirm.event_id.as_deref() {
        Some(event_id) if is_gated(env, config, event_id, now_ms).await? => Some(event_id),
        _ => None,
    };
    let room = gated
        .map(|event_id| WaitingRoomClient::new(env, &config.ticket_key, event_id, &caller.sub));
    let passage = match (gated, &room) {
        (Some(event_id), Some(room)) => pass_for(room, event_id, order_id, now_ms).await?,
        _ => Passage::ungated(),
    };
    let Passage {
        gate,
        refusal,
        fresh,
    } = passage;
    // The claim this very confirm made, undone if it comes to nothing.
    let tied = room.as_ref().filter(|_| fresh);
    // A replay is answered from the origin's records: not counted as a payment served.
    let admission = match admitted {
        Some(admitted) if refusal.is_none() => match admitted.global(env, now_ms).await {
            Ok(admission) => admission,
            Err(refused) => {
                // Never sent: the pass goes back to how it was.
                if let Some(room) = tied {
                    untie(room, order_id).await;
                }
                return Err(refused);
            }
        },
        _ => Admission::unlimited(),
    };
    let claimed = matches!(gate, Gate::Claimed { .. });
    let answer = OriginCall {
        method: Method::Post,
        path: "/payments/confirm".into(),
        user_id: &caller.sub,
        idempotency_key: Some(&idempotency_key),
        body: Some(body),
        request_id,
        gate,
    }
    .answer(config, now_ms)
    .await?;
    if let Some(refusal) = refusal.filter(|_| nothing_to_replay(&answer)) {
        return Err(refusal);
    }
    if let Some(for_ms) = answer.paused_for_ms {
        pause_gated_rooms(ctx, env, config, now_ms, for_ms);
    }
    if let Some(event_id) = confirm.event_id.as_deref().filter(|_| is_sold_out(&answer)) {
        if !memory::told_sold_out(event_id, now_ms) {
            close_queue_later(ctx, env.clone(), event_id.to_owned(), now_ms);
        }
    }
    if let (Some(room), Some(event_id)) = (room.as_ref().filter(|_| claimed), gated) {
        // An approval spends the pass and the buyer leaves the line — told once the
        // answer has gone, so the answer waits for one durable write (the claim), not
        // two; a retry meanwhile finds the pass claimed by this very order and is
        // replayed. A failure at the PG of this very order frees the pass for another,
        // before the answer, so the buyer's next order finds it free. An answer from an
        // order that existed before — replayed, or `ORDER_EXISTS` — neither spends nor
        // frees it: a claim this confirm made afresh is undone, one it found is kept.
        // Anything else keeps it with this order, which may still go through, or be sent
        // again. If the room cannot be told, the pass expires on its own.
        match settlement(&answer, order_id) {
            Settlement::Approved => consume_later(ctx, env, config, event_id, &caller.sub),
            Settlement::NothingBought => {
                if let Err(err) = room.release_claim(order_id).await {
                    not_told(err);
                }
            }
            Settlement::NothingNew if fresh => untie(room, order_id).await,
            Settlement::NothingNew | Settlement::Kept => {}
        }
    }
    admission.decorate(answer.into_response()?)
}

/// Whether the origin found nothing to answer a replay-only confirm with.
fn nothing_to_replay(answer: &OriginAnswer) -> bool {
    answer.status == 403 && code_of(answer).as_deref() == Some("QUEUE_PASS_REQUIRED")
}

fn code_of(answer: &OriginAnswer) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Refusal {
        code: String,
    }
    serde_json::from_slice::<Refusal>(&answer.body)
        .ok()
        .map(|body| body.code)
}

/// Whether confirms for `event_id` need a pass: as an operator set it at run time (the
/// event directory), else as `GATED_EVENTS` says. Never fails open: when the directory
/// cannot say for an event `GATED_EVENTS` does not gate, the confirm is refused.
pub(super) async fn is_gated(
    env: &Env,
    config: &EdgeConfig,
    event_id: &str,
    now_ms: i64,
) -> Result<bool, ApiError> {
    let by_default = config.gated_events.contains(event_id);
    match directory::client::gating(env, now_ms).await {
        Ok(gating) => Ok(gating.get(event_id).copied().unwrap_or(by_default)),
        Err(_) if by_default => Ok(true),
        Err(err) => Err(admission_unavailable(err)),
    }
}

fn admission_unavailable(err: impl std::fmt::Display) -> ApiError {
    worker::console_error!("admission not checkable, confirm refused: {err}");
    ApiError::new(
        503,
        "QUEUE_UNAVAILABLE",
        "admission cannot be checked now; try again shortly",
    )
    .with_header("retry-after", "2")
}

/// The origin's PG guard refuses payments for `for_ms` more: every gated room holds that
/// long — no new pass, live passes extended, confirms refused here — told once the answer
/// has gone. A pause this isolate has told them of already is not told again.
fn pause_gated_rooms(ctx: &Context, env: &Env, config: &EdgeConfig, now_ms: i64, for_ms: u64) {
    let until = now_ms.saturating_add(i64::try_from(for_ms).unwrap_or(i64::MAX));
    if memory::payments_paused_until(now_ms).is_some_and(|told| told >= until) {
        return;
    }
    memory::remember_told_paused(until);
    let (env, mut events) = (env.clone(), config.gated_events.clone());
    ctx.wait_until(async move {
        // The events gated at run time too, as far as the directory can say.
        if let Ok(gating) = directory::client::gating(&env, now_ms).await {
            for (event_id, gated) in gating.iter() {
                if *gated {
                    events.insert(event_id.clone());
                } else {
                    events.remove(event_id);
                }
            }
        }
        for event_id in events {
            if let Err(err) = client::pause_payments(&env, &event_id, for_ms).await {
                worker::console_error!("the queue of {event_id} was not paused: {err}");
            }
        }
    });
}

/// Marks the event's queue sold out once the answer has gone, so the client waits for
/// nothing but the origin. A room that cannot be told is logged, and told by the next
/// `SOLD_OUT`; one that was told is not told again by this isolate.
fn close_queue_later(ctx: &Context, env: Env, event_id: String, now_ms: i64) {
    ctx.wait_until(async move {
        match client::mark_sold_out(&env, &event_id).await {
            Ok(()) => memory::remember_told_sold_out(&event_id, now_ms),
            Err(err) => {
                worker::console_error!("the queue of {event_id} was not marked sold out: {err}")
            }
        }
    });
}

/// Whether the origin refused the confirm because the event has no unit left.
fn is_sold_out(answer: &OriginAnswer) -> bool {
    answer.status == 409 && code_of(answer).as_deref() == Some("SOLD_OUT")
}

/// `GET /payments/{orderId}`: the caller's own payment, as the origin has it.
pub async fn get(
    order_id: &str,
    config: &EdgeConfig,
    caller: &AccessClaims,
    now_ms: i64,
    request_id: &str,
) -> Result<Response, ApiError> {
    check_order_id(order_id)?;
    OriginCall {
        method: Method::Get,
        path: format!("/payments/{order_id}"),
        user_id: &caller.sub,
        idempotency_key: None,
        body: None,
        request_id,
        gate: Gate::Ungated,
    }
    .forward(config, now_ms)
    .await
}
