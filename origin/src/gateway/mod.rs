//! The payment gateway (PG) over HTTP: the one place that speaks its protocol.
//!
//! Every answer is classified by what we know afterwards. A request that never left
//! (no connection) was not sent, so it cannot have charged anyone. A request that left
//! and got no clear answer (timeout, 5xx, unreadable body) may have charged someone:
//! its outcome is unknown until the PG is asked again. Approvals are never retried.

use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use crate::policy::answers::{CancelAnswer, GatewayAnswer, GatewayStatus};

/// A connection not made in this long is a PG that is not there: the request was not
/// sent. The whole call is bounded by the guard's timeout.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(1);

#[derive(Clone)]
pub struct GatewayClient {
    http: reqwest::Client,
    base_url: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ConfirmBody<'a> {
    payment_key: &'a str,
    order_id: &'a str,
    amount: i64,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct StatusReply {
    status: String,
    amount: i64,
    approved_at: Option<i64>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ConfirmReply {
    status: String,
    approved_at: Option<i64>,
}

impl GatewayClient {
    /// Calls are not bounded here but by the guard that makes them (see
    /// [`crate::guard`]); only the connect phase has its own bound.
    pub fn new(base_url: &str) -> reqwest::Result<Self> {
        let http = reqwest::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .build()?;
        Ok(Self {
            http,
            base_url: base_url.trim_end_matches('/').to_owned(),
        })
    }

    /// Asks the PG to approve a payment, once.
    pub async fn confirm(&self, order_id: &str, payment_key: &str, amount: i64) -> GatewayAnswer {
        let url = format!("{}/v1/payments/confirm", self.base_url);
        let body = ConfirmBody {
            payment_key,
            order_id,
            amount,
        };
        let response = match self.http.post(&url).json(&body).send().await {
            Ok(response) => response,
            Err(err) if err.is_connect() => return GatewayAnswer::NotSent,
            Err(err) => {
                return GatewayAnswer::Unknown {
                    cause: describe(&err),
                }
            }
        };
        let status = response.status();
        if status.is_server_error() {
            return GatewayAnswer::Unknown {
                cause: format!("gateway answered {status}"),
            };
        }
        if !status.is_success() {
            return GatewayAnswer::Rejected {
                status: status.as_u16(),
            };
        }
        match response.json::<ConfirmReply>().await {
            Ok(ConfirmReply {
                status,
                approved_at: Some(approved_at),
            }) if status == "APPROVED" => GatewayAnswer::Approved { approved_at },
            Ok(ConfirmReply { status, .. }) if status == "DECLINED" => GatewayAnswer::Declined,
            Ok(ConfirmReply { status, .. }) => GatewayAnswer::Unknown {
                cause: format!("unexpected gateway status {status}"),
            },
            Err(err) => GatewayAnswer::Unknown {
                cause: describe(&err),
            },
        }
    }
}

impl GatewayClient {
    /// Asks the PG what became of an order (`GET /v1/payments/{orderId}`). Safe to ask
    /// any number of times; bounded by the caller's guard.
    pub async fn status(&self, order_id: &str) -> GatewayStatus {
        let unavailable = |cause: String| GatewayStatus::Unavailable { cause };
        let Some(order) = path_segment(order_id) else {
            return unavailable(format!("order id {order_id:?} cannot be a path segment"));
        };
        let url = format!("{}/v1/payments/{order}", self.base_url);
        let response = match self.http.get(&url).send().await {
            Ok(response) => response,
            Err(err) => return unavailable(describe(&err)),
        };
        match response.status().as_u16() {
            404 => return GatewayStatus::NotFound,
            200 => {}
            other => return unavailable(format!("gateway answered {other}")),
        }
        match response.json::<StatusReply>().await {
            Ok(reply) => match reply.status.as_str() {
                "APPROVED" => GatewayStatus::Approved {
                    approved_at: reply.approved_at,
                    amount: reply.amount,
                },
                "DECLINED" => GatewayStatus::Declined,
                "PENDING" => GatewayStatus::Pending,
                "CANCELLED" => GatewayStatus::Cancelled,
                other => unavailable(format!("unexpected gateway status {other}")),
            },
            Err(err) => unavailable(describe(&err)),
        }
    }
}

impl GatewayClient {
    /// Cancels the charge of an order (`POST /v1/payments/{orderId}/cancel`); the PG
    /// answers a repeat alike, so it is safe to send again.
    pub async fn cancel(&self, order_id: &str) -> CancelAnswer {
        let Some(order) = path_segment(order_id) else {
            return CancelAnswer::Unavailable {
                cause: format!("order id {order_id:?} cannot be a path segment"),
            };
        };
        let url = format!("{}/v1/payments/{order}/cancel", self.base_url);
        let response = match self.http.post(&url).send().await {
            Ok(response) => response,
            Err(err) => {
                return CancelAnswer::Unavailable {
                    cause: describe(&err),
                }
            }
        };
        let status = response.status();
        if status.is_success() {
            return CancelAnswer::Cancelled;
        }
        if status.is_server_error() {
            return CancelAnswer::Unavailable {
                cause: format!("gateway answered {status}"),
            };
        }
        let code = response
            .json::<serde_json::Value>()
            .await
            .ok()
            .and_then(|body| body["code"].as_str().map(str::to_owned))
            .unwrap_or_default();
        CancelAnswer::Refused {
            status: status.as_u16(),
            code,
        }
    }
}

/// `value` as one URL path segment: every byte but RFC 3986's unreserved ones
/// percent-encoded. `None` for what no encoding keeps one segment — empty, `.` or `..`,
/// which URL parsers (WHATWG's too, through `%2E`) resolve against the path instead.
fn path_segment(value: &str) -> Option<String> {
    if value.is_empty() || value.bytes().all(|b| b == b'.') && value.len() <= 2 {
        return None;
    }
    let mut segment = String::with_capacity(value.len());
    for byte in value.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            segment.push(char::from(byte));
        } else {
            segment.push_str(&format!("%{byte:02X}"));
        }
    }
    Some(segment)
}

fn describe(err: &reqwest::Error) -> String {
    if err.is_timeout() {
        "gateway call timed out".to_owned()
    } else {
        format!("gateway call failed: {err}")
    }
}

#[cfg(test)]
mod tests {
    use super::path_segment;

    #[test]
    fn an_order_id_is_one_percent_encoded_segment_or_none() {
        assert_eq!(
            path_segment("order-1.a_b~c").as_deref(),
            Some("order-1.a_b~c")
        );
        assert_eq!(path_segment("a/b?c#d").as_deref(), Some("a%2Fb%3Fc%23d"));
        assert_eq!(path_segment("%2e%2e").as_deref(), Some("%252e%252e"));
        assert_eq!(path_segment("주문").as_deref(), Some("%EC%A3%BC%EB%AC%B8"));
        assert_eq!(path_segment("...").as_deref(), Some("..."));
        for refused in ["", ".", ".."] {
            assert_eq!(path_segment(refused), None, "{refused:?}");
        }
    }
}
