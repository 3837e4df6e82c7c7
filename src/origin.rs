//! The signed call to the origin (`docs/design/edge-trust.md`), and its answer passed back unchanged.

use rules::pass::{Gate, PASS_HEADER};
use rules::paused;
use rules::signing::{
    SignedRequest, IDEMPOTENCY_KEY_HEADER, NONCE_HEADER, REQUEST_ID_HEADER, SIGNATURE_HEADER,
    TIMESTAMP_HEADER, USER_HEADER,
};
use worker::js_sys::Uint8Array;
use worker::{AbortSignal, Fetch, Headers, Method, Request, RequestInit, Response};

use crate::config::EdgeConfig;
use crate::error::ApiError;
use crate::random;

/// Response headers of the origin that mean something to the client.
const PASSED_BACK_HEADERS: [&str; 3] = ["content-type", "retry-after", "idempotent-replayed"];

/// A request for the origin, on behalf of an authenticated user.
pub struct OriginCall<'a> {
    pub method: Method,
    /// Built by the edge from validated parts, so it is signed exactly as sent.
    pub path: String,
    pub user_id: &'a str,
    pub idempotency_key: Option<&'a str>,
    pub body: Option<Vec<u8>>,
    /// The request's id, signed and sent to the origin, and logged here with its answer.
    pub request_id: &'a str,
    /// What the payment gate said of a confirm (`rules::pass`), signed.
    pub gate: Gate,
}

impl OriginCall<'_> {
    /// Signs and sends the call, and passes the origin's status, body and meaningful
    /// headers back unchanged.
    pub async fn forward(self, config: &EdgeConfig, now_ms: i64) -> Result<Response, ApiError> {
        self.answer(config, now_ms).await?.into_response()
    }

    /// Signs and sends the call, and reads the origin's whole answer.
    pub async fn answer(self, config: &EdgeConfig, now_ms: i64) -> Result<OriginAnswer, ApiError> {
        let (request_id, method, path) = (self.request_id, self.method.clone(), self.path.clone());
        let sent = self.send(config, now_ms).await;
        let status = sent.as_ref().map_or(0, Response::status_code);
        worker::console_log!("request {request_id}: {method:?} {path} -> origin {status}");
        OriginAnswer::read(&mut sent?).await
    }

    /// Signs the call at `now_ms`, sends it, and returns the origin's raw answer.
    async fn send(self, config: &EdgeConfig, now_ms: i64) -> Result<Response, ApiError> {
        let nonce = random::id()?;
        let body = self.body.unwrap_or_default();
        let pass = self.gate.field();
        let signature = SignedRequest {
            method: self.method.as_ref(),
            path_and_query: &self.path,
            timestamp_ms: now_ms,
            nonce: &nonce,
            user_id: self.user_id,
            idempotency_key: self.idempotency_key.unwrap_or_default(),
            request_id: self.request_id,
            pass: &pass,
            body: &body,
        }
        .sign(&config.origin_secret)
        .map_err(ApiError::internal)?;

        let headers = Headers::new();
        headers.set(USER_HEADER, self.user_id)?;
        headers.set(TIMESTAMP_HEADER, &now_ms.to_string())?;
        headers.set(NONCE_HEADER, &nonce)?;
        headers.set(SIGNATURE_HEADER, &signature)?;
        headers.set(REQUEST_ID_HEADER, self.request_id)?;
        if let Some(key) = self.idempotency_key {
            headers.set(IDEMPOTENCY_KEY_HEADER, key)?;
        }
        if !pass.is_empty() {
            headers.set(PASS_HEADER, &pass)?;
        }
        if !body.is_empty() {
            headers.set("content-type", "application/json")?;
        }
        let mut init = RequestInit::new();
        init.with_method(self.method).with_headers(headers);
        if !body.is_empty() {
            init.with_body(Some(Uint8Array::from(body.as_slice()).into()));
        }
        let url = format!("{}{}", config.origin_url, self.path);
        let request = Request::new_with_init(&url, &init)?;
        let deadline: AbortSignal =
            worker::web_sys::AbortSignal::timeout_with_u32(config.origin_timeout_ms).into();
        Fetch::Request(request)
            .send_with_signal(&deadline)
            .await
            .map_err(|err| {
                if deadline.aborted() {
                    worker::console_error!("origin did not answer {url} in time");
                    ApiError::new(
                        504,
                        "ORIGIN_TIMEOUT",
                        "the payment service did not answer in time",
                    )
                } else {
                    worker::console_error!("origin unreachable at {url}: {err}");
                    unavailable()
                }
            })
    }
}

/// The origin's answer, read: what the client will get back unchanged.
pub struct OriginAnswer {
    pub status: u16,
    pub body: Vec<u8>,
    headers: Vec<(&'static str, String)>,
    /// How long the origin expects payments to stay paused (`rules::paused`); not passed on.
    pub paused_for_ms: Option<u64>,
}

impl OriginAnswer {
    async fn read(raw: &mut Response) -> Result<Self, ApiError> {
        let body = raw.bytes().await.map_err(|err| {
            worker::console_error!("origin answer unreadable: {err}");
            unavailable()
        })?;
        let mut headers = Vec::new();
        for name in PASSED_BACK_HEADERS {
            if let Some(value) = raw.headers().get(name)? {
                headers.push((name, value));
            }
        }
        let paused_for_ms = raw
            .headers()
            .get(paused::PAYMENTS_PAUSED_HEADER)?
            .as_deref()
            .and_then(paused::parse);
        Ok(Self {
            status: raw.status_code(),
            body,
            headers,
            paused_for_ms,
        })
    }

    /// Whether the origin answered from an Idempotency-Key's stored answer
    /// (`Idempotent-Replayed: true`): nothing was done for this request.
    pub fn replayed(&self) -> bool {
        self.headers
            .iter()
            .any(|(name, value)| *name == "idempotent-replayed" && value == "true")
    }

    /// The status, body and meaningful headers, unchanged.
    pub fn into_response(self) -> Result<Response, ApiError> {
        let headers = Headers::new();
        for (name, value) in &self.headers {
            headers.set(name, value)?;
        }
        Ok(Response::from_bytes(self.body)?
            .with_status(self.status)
            .with_headers(headers))
    }
}

pub fn unavailable() -> ApiError {
    ApiError::new(
        502,
        "ORIGIN_UNAVAILABLE",
        "the payment service did not answer",
    )
}
