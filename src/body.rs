//! Request bodies, read with a bound: a body declared larger than [`MAX_BODY_BYTES`] is
//! refused before any of it is read, and one that turns out larger — sent without a
//! `Content-Length`, or with a false one — is refused as soon as it passes the bound, with
//! the rest left unread.

use futures_util::StreamExt as _;
use rules::confirm::{InvalidConfirm, MAX_BODY_BYTES};
use worker::Request;

use crate::error::ApiError;

pub async fn read_body(req: &mut Request) -> Result<Vec<u8>, ApiError> {
    let declared = req.headers().get("content-length")?;
    if declared
        .and_then(|len| len.parse::<usize>().ok())
        .is_some_and(|len| len > MAX_BODY_BYTES)
    {
        return Err(InvalidConfirm::TooLarge.into());
    }
    if req.inner().body().is_none() {
        return Ok(Vec::new());
    }
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
