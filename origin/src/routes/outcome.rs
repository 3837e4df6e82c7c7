//! What a confirm's gateway call leaves of its payment: the outcome TX 2 records, the
//! PG's id kept before it, and a late approval of a payment already FAILED refunded.

use crate::clock::now_ms;
use crate::gateway::{self, GatewayAnswer, GatewayStatus};
use crate::idempotency::Answer;
use crate::recovery::Applied;
use crate::state::AppState;
use crate::store::transient::retry_transient;
use crate::store::{Outcome, Payment};

use super::gate::payment_answer;

/// A payment a look-up settled FAILED while its confirm's call waited, and which the PG
/// then approved: no money is kept without a sale, so it is refunded as any late approval
/// is (`Recovery::apply`), and answered as it then stands.
pub(super) async fn refund_late_approval(
    state: &AppState,
    payment: Payment,
    approved: gateway::Approval,
) -> Answer {
    tracing::error!(order_id = %payment.order_id, "approved after it was recorded FAILED; refunding");
    match state
        .recovery
        .apply(payment.clone(), GatewayStatus::Approved(approved))
        .await
    {
        Ok(Applied::Refunded(now) | Applied::RefundPending(now)) => payment_answer(&now),
        Ok(_) => payment_answer(&payment),
        Err(err) => {
            tracing::error!(order_id = %payment.order_id, error = %err, "could not mark the late approval for refund: money is held without a sale; an operator must look");
            state.metrics.gateway_needs_operator("pg_disagrees");
            payment_answer(&payment)
        }
    }
}

/// Keeps the PG's id for the payment before TX 2, so that even a crash between the two
/// leaves recovery what it needs to look the payment up.
pub(super) async fn keep_reference(state: &AppState, payment_id: i64, reference: &str) {
    let kept = retry_transient(&state.metrics, "record_reference", || {
        state.store.record_reference(payment_id, reference)
    })
    .await;
    if let Err(err) = kept {
        tracing::error!(payment_id, reference, error = %err, "could not keep the PG's id for a payment");
    }
}
/// What a gateway answer makes of a pending payment. What was not sent is not unknown,
/// and an approval counts only for the order it was asked for.
pub(super) fn outcome_of(answer: &GatewayAnswer, expected: gateway::Expected<'_>) -> Outcome {
    match answer {
        GatewayAnswer::Approved(approval) => match approval.mismatch(expected) {
            None => Outcome::Approved {
                approved_at: approval.approved_at.unwrap_or_else(now_ms),
            },
            Some(flag) => Outcome::Flagged { flag },
        },
        GatewayAnswer::Declined { .. } => Outcome::Failed {
            reason: "DECLINED".into(),
        },
        GatewayAnswer::Rejected { .. } | GatewayAnswer::Throttled { .. } => Outcome::Failed {
            reason: "GATEWAY_REJECTED".into(),
        },
        GatewayAnswer::NotSent => Outcome::Failed {
            reason: "GATEWAY_UNREACHABLE".into(),
        },
        GatewayAnswer::Unknown { .. } => Outcome::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_answer_that_may_have_charged_is_unknown() {
        let expected = gateway::Expected {
            order_id: "order-1",
            amount: 15_000,
            currency: "KRW",
        };
        let approval = |amount| {
            GatewayAnswer::Approved(gateway::Approval {
                order_id: "order-1".into(),
                amount,
                currency: "KRW".into(),
                approved_at: Some(5),
                reference: None,
            })
        };
        let failed = |reason: &str| Outcome::Failed {
            reason: reason.into(),
        };
        let cases = [
            (approval(15_000), Outcome::Approved { approved_at: 5 }),
            (
                approval(15_100),
                Outcome::Flagged {
                    flag: "the PG approved 15100 KRW, the payment was for 15000 KRW".into(),
                },
            ),
            (
                GatewayAnswer::Declined {
                    code: "REJECT_CARD_PAYMENT".into(),
                },
                failed("DECLINED"),
            ),
            (
                GatewayAnswer::Rejected {
                    status: 401,
                    code: "UNAUTHORIZED_KEY".into(),
                },
                failed("GATEWAY_REJECTED"),
            ),
            (
                GatewayAnswer::Throttled {
                    code: "TOO_MANY_REQUESTS".into(),
                },
                failed("GATEWAY_REJECTED"),
            ),
            (GatewayAnswer::NotSent, failed("GATEWAY_UNREACHABLE")),
            (
                GatewayAnswer::Unknown {
                    cause: "timeout".into(),
                },
                Outcome::Unknown,
            ),
        ];
        for (answer, outcome) in cases {
            assert_eq!(outcome_of(&answer, expected), outcome, "{answer:?}");
        }
    }
}
