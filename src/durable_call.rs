//! One JSON call from the Worker to a Durable Object, the way every object here is
//! called: POST the request, expect 2xx, anything else means the object is unavailable.

use serde::Serialize;
use worker::{Env, Headers, Method, Request, RequestInit, Response};

/// The object could not answer: unreachable, erred, or answered outside 2xx.
#[derive(Debug, thiserror::Error)]
#[error("{binding} object unavailable: {cause}")]
pub struct ObjectUnavailable {
    pub binding: &'static str,
    pub cause: String,
}

/// POSTs `request` as JSON to the object named `name` of namespace `binding`.
pub async fn call_object(
    env: &Env,
    binding: &'static str,
    name: &str,
    request: &impl Serialize,
) -> Result<Response, ObjectUnavailable> {
    let failed = |cause: String| ObjectUnavailable { binding, cause };
    let stub = env
        .durable_object(binding)
        .and_then(|namespace| namespace.id_from_name(name)?.get_stub())
        .map_err(|err| failed(err.to_string()))?;
    let body = serde_json::to_string(request).map_err(|err| failed(err.to_string()))?;
    let headers = Headers::new();
    headers
        .set("content-type", "application/json")
        .map_err(|err| failed(err.to_string()))?;
    let mut init = RequestInit::new();
    init.with_method(Method::Post)
        .with_headers(headers)
        .with_body(Some(body.into()));
    let call =
        Request::new_with_init("https://object/", &init).map_err(|err| failed(err.to_string()))?;
    let response = stub
        .fetch_with_request(call)
        .await
        .map_err(|err| failed(err.to_string()))?;
    match response.status_code() {
        200..=299 => Ok(response),
        status => Err(failed(format!("answered {status}"))),
    }
}

/// Reads a 2xx answer's JSON body.
pub async fn answer<T: serde::de::DeserializeOwned>(
    mut response: Response,
    binding: &'static str,
) -> Result<T, ObjectUnavailable> {
    response.json().await.map_err(|err| ObjectUnavailable {
        binding,
        cause: err.to_string(),
    })
}
