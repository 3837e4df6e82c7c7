//! The metrics as Prometheus text: names, labels, what each event counts.

use super::*;

#[test]
fn what_the_guard_and_confirm_report_is_rendered() {
    let metrics = Metrics::default();
    metrics.payment_settled("APPROVED");
    let call = metrics.gateway_call_started("approve");
    metrics.guard_refused("approve", "CIRCUIT_OPEN");
    metrics.breaker_transition(
        "approve",
        &Transition {
            from: BreakerState::Closed,
            to: BreakerState::Open,
            at_ms: 1,
        },
    );
    metrics.gateway_call_finished("approve", "approved", Duration::from_millis(20));
    metrics.http_answered("POST", "/payments/confirm", 201);
    let text = metrics.render();
    for line in [
        r#"origin_payments_total{status="APPROVED"} 1"#,
        r#"origin_gateway_in_flight{guard="approve"} 1"#,
        r#"origin_guard_refusals_total{guard="approve",reason="CIRCUIT_OPEN"} 1"#,
        r#"origin_breaker_state{guard="approve",state="OPEN"} 1"#,
        r#"origin_breaker_state{guard="approve",state="CLOSED"} 0"#,
        r#"origin_breaker_transitions_total{guard="approve",from="CLOSED",to="OPEN"} 1"#,
        r#"origin_gateway_call_duration_seconds_count{guard="approve",result="approved"} 1"#,
        r#"origin_http_requests_total{method="POST",route="/payments/confirm",status="201"} 1"#,
    ] {
        assert!(text.contains(line), "{line} missing from\n{text}");
    }
    drop(call);
    assert!(metrics
        .render()
        .contains(r#"origin_gateway_in_flight{guard="approve"} 0"#));
}
