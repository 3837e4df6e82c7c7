//! The requests a test makes of the origin and the simulator on a [`System`]: signed as
//! the edge signs them, to the operator listener, or to the simulator's controls.

use harness::signed::{fresh_nonce, now_ms, signed_request};
use rules::signing::SignedRequest;

use super::{order_body, System, EDGE_SECRET, OPERATOR_TOKEN};

/// `Payments-Paused-For-Ms` of an origin's answer, read as the edge reads it.
pub fn paused_for(response: &reqwest::Response) -> Option<u64> {
    let value = response
        .headers()
        .get(rules::paused::PAYMENTS_PAUSED_HEADER)?;
    rules::paused::parse(value.to_str().ok()?)
}

impl System {
    /// A request to the origin carrying `request` and the edge's signature of it.
    pub fn signed_origin_request(&self, request: SignedRequest<'_>) -> reqwest::RequestBuilder {
        self.signed_request_to(&self.origin, request)
    }

    /// [`System::signed_origin_request`] to the origin instance at `base`.
    pub fn signed_request_to(
        &self,
        base: &str,
        request: SignedRequest<'_>,
    ) -> reqwest::RequestBuilder {
        signed_request(&self.http, base, EDGE_SECRET.as_bytes(), &request).expect("signable")
    }

    /// `POST /payments/confirm` straight to the origin for `user`, signed as the edge
    /// signs it, with a fresh nonce.
    pub async fn confirm_at_origin(
        &self,
        user: &str,
        key: Option<&str>,
        body: &str,
    ) -> reqwest::Response {
        self.try_confirm_at_origin(user, key, body)
            .await
            .expect("the origin answers")
    }

    /// [`System::confirm_at_origin`], for an origin that may not answer.
    pub async fn try_confirm_at_origin(
        &self,
        user: &str,
        key: Option<&str>,
        body: &str,
    ) -> reqwest::Result<reqwest::Response> {
        self.try_confirm_at(&self.origin, user, key, body).await
    }

    /// `order_id`'s confirm as user-1 at the origin, its order id for its key: the
    /// response whole, headers and all.
    pub async fn confirm_response(&self, order_id: &str) -> reqwest::Response {
        self.try_confirm_at_origin("user-1", Some(order_id), &order_body(order_id))
            .await
            .expect("the origin answers")
    }

    /// [`System::try_confirm_at_origin`], to the origin instance at `base`.
    pub async fn try_confirm_at(
        &self,
        base: &str,
        user: &str,
        key: Option<&str>,
        body: &str,
    ) -> reqwest::Result<reqwest::Response> {
        let nonce = fresh_nonce();
        self.signed_request_to(
            base,
            SignedRequest {
                method: "POST",
                path_and_query: "/payments/confirm",
                timestamp_ms: now_ms(),
                nonce: &nonce,
                user_id: user,
                idempotency_key: key.unwrap_or_default(),
                request_id: "",
                pass: "",
                body: body.as_bytes(),
            },
        )
        .send()
        .await
    }

    /// A signed `GET path` at the origin for `user`, as the edge sends it.
    pub async fn origin_get(&self, user: &str, path: &str) -> reqwest::Response {
        let nonce = fresh_nonce();
        self.signed_origin_request(SignedRequest {
            method: "GET",
            path_and_query: path,
            timestamp_ms: now_ms(),
            nonce: &nonce,
            user_id: user,
            idempotency_key: "",
            request_id: "",
            pass: "",
            body: b"",
        })
        .send()
        .await
        .expect("the origin answers")
    }

    /// Confirms `order_id` (5000, [`order_body`]) at the origin for `user-1`, with a key
    /// of its own: the status and the JSON body.
    pub async fn confirm_order(&self, order_id: &str) -> (reqwest::StatusCode, serde_json::Value) {
        let key = format!("key-{order_id}");
        let response = self
            .confirm_at_origin("user-1", Some(&key), &order_body(order_id))
            .await;
        let status = response.status();
        (status, response.json().await.expect("a JSON body"))
    }

    /// Sets the simulator's faults (`PUT /admin/faults`).
    pub async fn set_faults(&self, faults: serde_json::Value) {
        let response = self
            .http
            .put(format!("{}/admin/faults", self.gateway))
            .json(&faults)
            .send()
            .await
            .expect("the simulator answers");
        assert!(
            response.status().is_success(),
            "faults {faults} refused: {}",
            response.text().await.unwrap_or_default()
        );
    }

    /// An operator route of the origin, with the operator's token.
    pub async fn operator_get(&self, path: &str) -> serde_json::Value {
        self.operator_get_at(&self.origin, path).await
    }

    /// The operator listener of the origin instance whose API is at `base`.
    pub fn admin_of(&self, base: &str) -> &str {
        if self.second_origin.as_deref() == Some(base) {
            self.second_origin_admin.as_deref().unwrap_or_default()
        } else {
            &self.origin_admin
        }
    }

    /// `request` to an operator route, with the operator's token: status and JSON body.
    pub async fn operator_call(
        &self,
        request: reqwest::RequestBuilder,
    ) -> (reqwest::StatusCode, serde_json::Value) {
        let response = request
            .bearer_auth(OPERATOR_TOKEN)
            .send()
            .await
            .expect("the origin answers");
        let status = response.status();
        (status, response.json().await.expect("JSON"))
    }

    /// Polls the origin's `GET /admin/guard` until `done` holds (10 s at most).
    pub async fn guard_until(
        &self,
        done: impl Fn(&serde_json::Value) -> bool,
    ) -> serde_json::Value {
        harness::eventually::eventually(
            "the guard got there",
            std::time::Duration::from_secs(10),
            std::time::Duration::from_millis(50),
            || async {
                let guard = self.operator_get("/admin/guard").await;
                if done(&guard) {
                    Ok(guard)
                } else {
                    Err(guard.to_string())
                }
            },
        )
        .await
    }

    /// [`System::operator_get`] at the origin instance whose API is at `base`.
    pub async fn operator_get_at(&self, base: &str, path: &str) -> serde_json::Value {
        let url = format!("{}{path}", self.admin_of(base));
        self.operator_call(self.http.get(url)).await.1
    }

    /// `POST /admin/recovery/run` at the origin instance at `base`: the cycle's report.
    pub async fn run_recovery_at(&self, base: &str) -> serde_json::Value {
        let url = format!("{}/admin/recovery/run", self.admin_of(base));
        self.operator_call(self.http.post(url)).await.1
    }

    /// `POST /admin/events` with `event` (`{eventId, stock, amount}`): status and body.
    pub async fn set_event(
        &self,
        event: serde_json::Value,
    ) -> (reqwest::StatusCode, serde_json::Value) {
        let url = format!("{}/admin/events", self.origin_admin);
        self.operator_call(self.http.post(url).json(&event)).await
    }

    /// The origin's metrics, from its own listener.
    pub async fn origin_metrics(&self) -> String {
        self.http
            .get(format!("{}/metrics", self.origin_metrics))
            .send()
            .await
            .expect("the metrics listener answers")
            .text()
            .await
            .expect("text")
    }

    /// Every payment the origin at `base` holds, by order id, as operators list them.
    pub async fn payments_at(
        &self,
        base: &str,
    ) -> std::collections::BTreeMap<String, serde_json::Value> {
        let mut all = std::collections::BTreeMap::new();
        for status in ["PENDING", "APPROVED", "FAILED", "UNKNOWN", "REFUNDED"] {
            let listed = self
                .operator_get_at(base, &format!("/admin/payments?status={status}&limit=1000"))
                .await;
            for payment in listed["payments"].as_array().expect("a list") {
                let order_id = payment["orderId"].as_str().expect("an order");
                all.insert(order_id.to_owned(), payment.clone());
            }
        }
        all
    }

    /// The simulator's ledger.
    pub async fn ledger(&self) -> serde_json::Value {
        self.http
            .get(format!("{}/admin/ledger", self.gateway))
            .send()
            .await
            .expect("the ledger answers")
            .json()
            .await
            .expect("the ledger is JSON")
    }

    /// The simulator's settlement file of today (UTC), as CSV text.
    pub async fn settlement_file_of_today(&self) -> String {
        let day = chrono::DateTime::from_timestamp_millis(harness::signed::now_ms())
            .expect("now")
            .date_naive();
        self.http
            .get(format!(
                "{}/v1/settlements?date={day}&encoding=utf-8",
                self.gateway
            ))
            .send()
            .await
            .expect("the simulator answers")
            .text()
            .await
            .expect("the file")
    }

    /// Reconciles the settlement `file` (CSV) at the origin: its report.
    pub async fn reconcile(&self, file: String) -> serde_json::Value {
        let request = self
            .http
            .post(format!("{}/admin/reconciliations/run", self.origin_admin))
            .header("content-type", "text/csv; charset=utf-8")
            .body(file);
        let (status, report) = self.operator_call(request).await;
        assert!(
            status.is_success(),
            "reconciliation refused: {status} {report}"
        );
        report
    }
}
