//! What a confirm does with the buyer's pass: the gate's word on it (a pass claimed, or a
//! replay only and the refusal to give if nothing exists), and, once the origin has
//! answered, whether that answer spends the pass, frees it, undoes the claim this confirm
//! made, or keeps it with the order.

use rules::pass::Gate;
use rules::paused;
use worker::{Context, Env};

use super::{admission_unavailable, code_of};
use crate::config::EdgeConfig;
use crate::error::ApiError;
use crate::memory;
use crate::origin::OriginAnswer;
use crate::queue::client::WaitingRoomClient;
use crate::queue::protocol::PassClaim;

/// Undoes the claim of `order_id` this confirm made, before the answer, so the buyer's
/// next order finds the pass as it was.
pub(super) async fn untie(room: &WaitingRoomClient<'_>, order_id: &str) {
    if let Err(err) = room.untie_claim(order_id).await {
        not_told(err);
    }
}

/// Tells the room (through the buyer's arrival shard) that `user`'s pass is spent, once
/// the answer has gone.
pub(super) fn consume_later(
    ctx: &Context,
    env: &Env,
    config: &EdgeConfig,
    event_id: &str,
    user: &str,
) {
    let (env, key) = (env.clone(), config.ticket_key);
    let (event_id, user) = (event_id.to_owned(), user.to_owned());
    ctx.wait_until(async move {
        let room = WaitingRoomClient::new(&env, &key, &event_id, &user);
        if let Err(err) = room.consume().await {
            not_told(err);
        }
    });
}

pub(super) fn not_told(err: impl std::fmt::Display) {
    worker::console_warn!("the waiting room was not told how a payment ended: {err}");
}

/// The gate's word on one confirm, and what it means for the pass.
pub(super) struct Passage {
    pub(super) gate: Gate,
    /// When the confirm is a replay only: the refusal to give if the origin has nothing
    /// to replay.
    pub(super) refusal: Option<ApiError>,
    /// The pass was claimed for the order by this very confirm.
    pub(super) fresh: bool,
}

impl Passage {
    pub(super) fn ungated() -> Self {
        Self {
            gate: Gate::Ungated,
            refusal: None,
            fresh: false,
        }
    }

    fn replay_only(refusal: ApiError) -> Self {
        Self {
            gate: Gate::ReplayOnly,
            refusal: Some(refusal),
            fresh: false,
        }
    }
}

/// The gate's word for a confirm of `order_id` in a gated event. It never fails open: a
/// pass that cannot be checked is a refusal.
pub(super) async fn pass_for(
    room: &WaitingRoomClient<'_>,
    event_id: &str,
    order_id: &str,
    now_ms: i64,
) -> Result<Passage, ApiError> {
    if let Some(until) = memory::payments_paused_until(now_ms) {
        return Ok(Passage::replay_only(payments_paused(until, now_ms)));
    }
    let refusal = match room.claim_pass(order_id).await {
        Ok(PassClaim::Granted { room, fresh }) => {
            let gate = Gate::Claimed {
                event_id: event_id.to_owned(),
                room,
                order_id: order_id.to_owned(),
            };
            return Ok(Passage {
                gate,
                refusal: None,
                fresh,
            });
        }
        Ok(PassClaim::Paused { until }) => payments_paused(until, now_ms),
        Ok(PassClaim::NoPass) => pass_required("join its queue and wait for your turn"),
        Ok(PassClaim::NotOpen { opens_at }) => ApiError::new(
            409,
            "NOT_OPEN_YET",
            "this drop has not opened yet: no pass is valid before opensAt",
        )
        .with_field("opensAt", opens_at.into()),
        Ok(PassClaim::InUse) => {
            return Err(ApiError::new(
                409,
                "QUEUE_PASS_IN_USE",
                "your pass is backing another payment; it frees up if that payment fails",
            ))
        }
        Err(err) => return Err(admission_unavailable(err)),
    };
    Ok(Passage::replay_only(refusal))
}

/// 429 `QUEUE_PASS_REQUIRED`, saying what to do (`then`).
fn pass_required(then: &str) -> ApiError {
    ApiError::new(
        429,
        "QUEUE_PASS_REQUIRED",
        format!("this event needs an admission pass: {then}"),
    )
}

/// 503 `PAYMENTS_PAUSED` until `until`: the confirm goes on as a replay only, the pass is
/// kept.
fn payments_paused(until: i64, now_ms: i64) -> ApiError {
    let retry_after = paused::retry_after_seconds(until - now_ms).to_string();
    ApiError::new(
        503,
        "PAYMENTS_PAUSED",
        "payments are paused while the payment provider recovers; your place and pass are kept",
    )
    .with_header("retry-after", &retry_after)
}

/// How a confirm ended, as far as its claimed pass is concerned.
pub(super) enum Settlement {
    Approved,
    /// Definitive about this order: it failed at the PG (201 `FAILED`), or its id belongs
    /// to another buyer's payment (409 `ORDER_ID_TAKEN`) — nothing is bought with it.
    NothingBought,
    /// Answered from what existed before this confirm: a replayed answer
    /// (`Idempotent-Replayed`), or 409 `ORDER_EXISTS`. Nothing was done with the pass.
    NothingNew,
    /// Anything else: an unknown outcome that may still complete, a refusal that says
    /// nothing of the order in flight (a 400 or 422 of a request sent beside it), a
    /// server error. The claim stays with this order.
    Kept,
}

pub(super) fn settlement(answer: &OriginAnswer, order_id: &str) -> Settlement {
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Status {
        status: String,
        order_id: String,
    }
    if answer.replayed() {
        return Settlement::NothingNew;
    }
    let payment = serde_json::from_slice::<Status>(&answer.body).ok();
    let of_this_order = payment.as_ref().filter(|p| p.order_id == order_id);
    match (answer.status, of_this_order.map(|p| p.status.as_str())) {
        (201, Some("APPROVED")) => Settlement::Approved,
        (201, Some("FAILED")) => Settlement::NothingBought,
        (409, _) => match code_of(answer).as_deref() {
            Some("ORDER_ID_TAKEN") => Settlement::NothingBought,
            Some("ORDER_EXISTS") => Settlement::NothingNew,
            _ => Settlement::Kept,
        },
        _ => Settlement::Kept,
    }
}
