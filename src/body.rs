//! Request bodies, read with a bound: a body declared larger than [`MAX_BODY_BYTES`] is
//! refused before any of it is read, and one that turns out larger — sent without a
//! `Content-Length`, or with a false one — is refused as soon as it passes the bound, with
//! the rest left unread. A body that declares its length within the bound is read in one
//! step (the runtime holds it to that length); one that does not, chunk by chunk.

use futures_util::StreamExt as _;
use rules::confirm::{InvalidConfirm, MAX_BODY_BYTES};
use worker::js_sys::Uint8Array;
use worker::wasm_bindgen_futures::JsFuture;
use worker::{web_sys, Headers, Request};

use crate::error::ApiError;

pub async fn read_body(req: &mut Request) -> Result<Vec<u8>, ApiError> {
    read_raw(req.inner()).await
}

/// The body of the request as the runtime hands it over, without making a workers-rs
/// `Request` of it (which reads `request.cf`) unless it must be read in chunks.
pub async fn read_raw(raw: &web_sys::Request) -> Result<Vec<u8>, ApiError> {
    let declared = Headers(raw.headers()).get("content-length")?;
    let declared = declared.and_then(|len| len.parse::<usize>().ok());
    if declared.is_some_and(|len| len > MAX_BODY_BYTES) {
        return Err(InvalidConfirm::TooLarge.into());
    }
    if raw.body().is_none() {
        return Ok(Vec::new());
    }
    let body = match declared {
        Some(_) => whole(raw).await?,
        // The same JS object (not `Request.clone()`, which tees the body).
        None => in_chunks(&mut Request::from(Clone::clone(raw))).await?,
    };
    if body.len() > MAX_BODY_BYTES {
        return Err(InvalidConfirm::TooLarge.into());
    }
    Ok(body)
}

/// The whole body, in one read.
async fn whole(raw: &web_sys::Request) -> worker::Result<Vec<u8>> {
    let buffer = JsFuture::from(raw.array_buffer()?).await?;
    Ok(Uint8Array::new(&buffer).to_vec())
}

/// The body chunk by chunk, stopped as soon as it passes the bound.
async fn in_chunks(req: &mut Request) -> Result<Vec<u8>, ApiError> {
    let mut chunks = req.stream()?;
    let mut body = Vec::new();
    while let Some(chunk) = chunks.next().await {
        let chunk = chunk?;
        if body.len() + chunk.len() > MAX_BODY_BYTES {
            return Err(InvalidConfirm::TooLarge.into());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}
