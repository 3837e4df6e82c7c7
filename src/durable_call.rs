//! One call from the Worker to a Durable Object, the way every object here is called —
//! the request's JSON in the URL, the answer's JSON in a header, 2xx expected, anything
//! else meaning the object is unavailable — and the object's side of it, [`read_call`]
//! and [`reply`].
//!
//! This is the lightest path workers-rs offers (docs/edge-performance.md has the
//! figures): the stub by name in one step; `fetch(url)` with no `RequestInit`, headers or
//! body; the answer read from a header in one synchronous step, not as a body stream read
//! chunk by chunk through the wasm boundary; JSON encoded and decoded by serde in wasm,
//! never walked field by field as a JavaScript object. Both carry base64url, so they stay
//! ASCII whatever a user id holds, and they are a few hundred bytes, far below URL and
//! header limits. Every call is a GET, state-changing ones too: an object's `fetch`
//! receives whatever its caller sends, and nothing between them caches or retries.
//!
//! A call too big for a URL — a shard's batch of up to a thousand users, and its answer —
//! goes in the bodies instead ([`call_object_in_body`], [`read_call_in_body`],
//! [`reply_in_body`]): a POST of the JSON, the answer's JSON as its body. An object may
//! refuse such a call for good ([`refuse_in_body`]: 422, the reason its body), which its
//! caller tells apart from an object it could not reach: sending it again changes nothing.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use serde::de::DeserializeOwned;
use serde::Serialize;
use worker::wasm_bindgen::{JsCast, JsValue};
use worker::wasm_bindgen_futures::JsFuture;
use worker::{web_sys, worker_sys, Env, Request, Response};

/// Every call is a GET of this URL followed by the request: base64url of its JSON.
const CALL_URL: &str = "https://object/";
/// The header an object's answer comes in: base64url of its JSON.
const ANSWER_HEADER: &str = "x-answer";

/// The object could not answer: unreachable, erred, or answered outside 2xx.
#[derive(Debug, thiserror::Error)]
#[error("{binding} object unavailable: {cause}")]
pub struct ObjectUnavailable {
    pub binding: &'static str,
    pub cause: String,
}

/// Sends `request` to the object named `name` of namespace `binding`, and reads its
/// answer.
pub async fn call_object<T: DeserializeOwned>(
    env: &Env,
    binding: &'static str,
    name: &str,
    request: &impl Serialize,
) -> Result<T, ObjectUnavailable> {
    let failed = |cause: String| ObjectUnavailable { binding, cause };
    let answer = send(env, binding, name, request).await?;
    let Some(encoded) = answer
        .headers()
        .get(ANSWER_HEADER)
        .map_err(|err| failed(format!("{err:?}")))?
    else {
        return Err(failed(format!("answered without {ANSWER_HEADER}")));
    };
    let json = URL_SAFE_NO_PAD
        .decode(encoded)
        .map_err(|err| failed(format!("an answer that is not base64url: {err}")))?;
    serde_json::from_slice(&json).map_err(|err| failed(format!("unreadable answer: {err}")))
}

/// [`call_object`] for an answer too large for a header: its body, as bytes.
pub async fn call_object_for_body(
    env: &Env,
    binding: &'static str,
    name: &str,
    request: &impl Serialize,
) -> Result<Vec<u8>, ObjectUnavailable> {
    let failed = |err: JsValue| ObjectUnavailable {
        binding,
        cause: format!("{err:?}"),
    };
    let answer = send(env, binding, name, request).await?;
    let body = JsFuture::from(answer.array_buffer().map_err(failed)?)
        .await
        .map_err(failed)?;
    Ok(worker::js_sys::Uint8Array::new(&body).to_vec())
}

/// [`call_object`] for a call whose answer says nothing but that it succeeded.
pub async fn tell_object(
    env: &Env,
    binding: &'static str,
    name: &str,
    request: &impl Serialize,
) -> Result<(), ObjectUnavailable> {
    send(env, binding, name, request).await.map(drop)
}

async fn send(
    env: &Env,
    binding: &'static str,
    name: &str,
    request: &impl Serialize,
) -> Result<web_sys::Response, ObjectUnavailable> {
    let failed = |cause: String| ObjectUnavailable { binding, cause };
    let js_failed = |err: JsValue| failed(format!("{err:?}"));
    let body = serde_json::to_vec(request).map_err(|err| failed(err.to_string()))?;
    let stub: worker_sys::DurableObject = env
        .durable_object(binding)
        .and_then(|namespace| namespace.get_by_name(name))
        .map_err(|err| failed(err.to_string()))?
        .into_rpc();
    let url = format!("{CALL_URL}{}", URL_SAFE_NO_PAD.encode(body));
    let answer: web_sys::Response = JsFuture::from(stub.fetch_with_str(&url).map_err(js_failed)?)
        .await
        .map_err(js_failed)?
        .dyn_into()
        .map_err(js_failed)?;
    match answer.status() {
        200..=299 => Ok(answer),
        status => Err(failed(format!("answered {status}"))),
    }
}

/// The status an object refuses a call in the body with, for good.
const REFUSED: u16 = 422;

/// An object's answer to a call in the body.
#[derive(Debug)]
pub enum InBody<T> {
    Answered(T),
    /// Refused for good, and why: the same call would be refused again.
    Refused(String),
}

/// Sends `request` to the object named `name` of namespace `binding` in the request's
/// body, and reads its answer from the answer's body.
pub async fn call_object_in_body<T: DeserializeOwned>(
    env: &Env,
    binding: &'static str,
    name: &str,
    request: &impl Serialize,
) -> Result<InBody<T>, ObjectUnavailable> {
    let failed = |cause: String| ObjectUnavailable { binding, cause };
    let body = serde_json::to_string(request).map_err(|err| failed(err.to_string()))?;
    let mut init = worker::RequestInit::new();
    init.with_method(worker::Method::Post)
        .with_body(Some(JsValue::from_str(&body)));
    let call = Request::new_with_init(CALL_URL, &init).map_err(|err| failed(err.to_string()))?;
    let mut answer = env
        .durable_object(binding)
        .and_then(|namespace| namespace.get_by_name(name))
        .map_err(|err| failed(err.to_string()))?
        .fetch_with_request(call)
        .await
        .map_err(|err| failed(err.to_string()))?;
    let status = answer.status_code();
    if status == REFUSED {
        let reason = answer.text().await.unwrap_or_default();
        return Ok(InBody::Refused(reason));
    }
    if !(200..=299).contains(&status) {
        return Err(failed(format!("answered {status}")));
    }
    let bytes = answer
        .bytes()
        .await
        .map_err(|err| failed(err.to_string()))?;
    serde_json::from_slice(&bytes)
        .map(InBody::Answered)
        .map_err(|err| failed(format!("its answer: {err}")))
}

/// The object's refusal of a call in the body, for good: 422, `reason` its body.
pub fn refuse_in_body(reason: &str) -> worker::Result<Response> {
    Ok(Response::ok(reason)?.with_status(REFUSED))
}

/// The object's side of [`call_object_in_body`]: whether `req` carries its call in its
/// body.
pub fn is_call_in_body(req: &Request) -> bool {
    req.method() == worker::Method::Post
}

/// The call `req` carries in its body.
pub async fn read_call_in_body<T: DeserializeOwned>(req: &mut Request) -> worker::Result<T> {
    let bytes = req.bytes().await?;
    serde_json::from_slice(&bytes)
        .map_err(|err| worker::Error::RustError(format!("bad call: {err}")))
}

/// The answer to a call in the body: `value` as JSON, the answer's body.
pub fn reply_in_body(value: &impl Serialize) -> worker::Result<Response> {
    let json =
        serde_json::to_vec(value).map_err(|err| worker::Error::RustError(err.to_string()))?;
    Response::from_bytes(json)
}

/// The object's side: the call, decoded in Rust from the URL it came on.
pub fn read_call<T: DeserializeOwned>(req: &Request) -> worker::Result<T> {
    let bad = |why: String| worker::Error::RustError(format!("bad call: {why}"));
    let url = req.inner().url();
    let encoded = url
        .strip_prefix(CALL_URL)
        .ok_or_else(|| bad("not a call URL".into()))?;
    let bytes = URL_SAFE_NO_PAD
        .decode(encoded)
        .map_err(|err| bad(err.to_string()))?;
    serde_json::from_slice(&bytes).map_err(|err| bad(err.to_string()))
}

/// The object's answer: `value` as JSON, in the `ANSWER_HEADER` header.
pub fn reply(value: &impl Serialize) -> worker::Result<Response> {
    let json =
        serde_json::to_vec(value).map_err(|err| worker::Error::RustError(err.to_string()))?;
    let response = Response::empty()?;
    response
        .headers()
        .set(ANSWER_HEADER, &URL_SAFE_NO_PAD.encode(json))?;
    Ok(response)
}
