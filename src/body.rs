//! Request bodies, read with a bound: a body declared or found larger than
//! [`MAX_BODY_BYTES`] is refused before it is parsed.

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
    let body = req.bytes().await?;
    if body.len() > MAX_BODY_BYTES {
        return Err(InvalidConfirm::TooLarge.into());
    }
    Ok(body)
}
