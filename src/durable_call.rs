//! One call from the Worker to a Durable Object, the way every object here is called:
//! POST the request as JSON, expect 2xx, anything else means the object is unavailable;
//! and the object's side of it, [`read_call`] and [`reply`].
//!
//! The call takes the lightest path workers-rs offers (see docs/edge-cost.md): the stub
//! by name in one step, a request with a method and a string body and no headers, and the
//! answer read as one string and decoded in Rust — not as a stream read chunk by chunk
//! through the wasm boundary, and not as a JavaScript object walked field by field.

use serde::de::DeserializeOwned;
use serde::Serialize;
use worker::wasm_bindgen::{JsCast, JsValue};
use worker::wasm_bindgen_futures::JsFuture;
use worker::{web_sys, worker_sys, Env, Request, Response};

/// The object could not answer: unreachable, erred, or answered outside 2xx.
#[derive(Debug, thiserror::Error)]
#[error("{binding} object unavailable: {cause}")]
pub struct ObjectUnavailable {
    pub binding: &'static str,
    pub cause: String,
}

/// POSTs `request` as JSON to the object named `name` of namespace `binding`, and reads
/// its JSON answer.
pub async fn call_object<T: DeserializeOwned>(
    env: &Env,
    binding: &'static str,
    name: &str,
    request: &impl Serialize,
) -> Result<T, ObjectUnavailable> {
    let text = post(env, binding, name, request).await?;
    serde_json::from_str(&text).map_err(|err| ObjectUnavailable {
        binding,
        cause: format!("unreadable answer: {err}"),
    })
}

/// [`call_object`] for a call whose answer says nothing but that it succeeded.
pub async fn tell_object(
    env: &Env,
    binding: &'static str,
    name: &str,
    request: &impl Serialize,
) -> Result<(), ObjectUnavailable> {
    post(env, binding, name, request).await.map(drop)
}

async fn post(
    env: &Env,
    binding: &'static str,
    name: &str,
    request: &impl Serialize,
) -> Result<String, ObjectUnavailable> {
    let failed = |cause: String| ObjectUnavailable { binding, cause };
    let js_failed = |err: JsValue| failed(format!("{err:?}"));
    let body = serde_json::to_string(request).map_err(|err| failed(err.to_string()))?;
    let stub: worker_sys::DurableObject = env
        .durable_object(binding)
        .and_then(|namespace| namespace.get_by_name(name))
        .map_err(|err| failed(err.to_string()))?
        .into_rpc();
    let init = web_sys::RequestInit::new();
    init.set_method("POST");
    init.set_body(&JsValue::from_str(&body));
    let call =
        web_sys::Request::new_with_str_and_init("https://object/", &init).map_err(js_failed)?;
    let answer: web_sys::Response =
        JsFuture::from(stub.fetch_with_request(&call).map_err(js_failed)?)
            .await
            .map_err(js_failed)?
            .dyn_into()
            .map_err(js_failed)?;
    let status = answer.status();
    let text = JsFuture::from(answer.text().map_err(js_failed)?)
        .await
        .map_err(js_failed)?
        .as_string()
        .unwrap_or_default();
    match status {
        200..=299 => Ok(text),
        status => Err(failed(format!("answered {status}"))),
    }
}

/// The object's side: the call's JSON body, read as one string and decoded in Rust.
pub async fn read_call<T: DeserializeOwned>(req: &mut Request) -> worker::Result<T> {
    let text = req.text().await?;
    serde_json::from_str(&text).map_err(|err| worker::Error::RustError(format!("bad call: {err}")))
}

/// The object's answer: `value` as JSON.
pub fn reply(value: &impl Serialize) -> worker::Result<Response> {
    let text =
        serde_json::to_string(value).map_err(|err| worker::Error::RustError(err.to_string()))?;
    Response::ok(text)
}
