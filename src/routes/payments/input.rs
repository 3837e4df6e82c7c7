//! A confirm as it arrived: its `Idempotency-Key` and its body, read with a bound and
//! parsed — read before the caller's session is asked, so a gated confirm can be refused
//! from the room's snapshot with no object call; refused for being malformed only where
//! it always was, after the caller is authenticated.

use rules::confirm::{check_idempotency_key, ConfirmRequest};
use rules::signing::IDEMPOTENCY_KEY_HEADER;

use crate::error::ApiError;
use crate::routes::incoming::Incoming;

pub struct ConfirmInput {
    pub idempotency_key: String,
    pub body: Vec<u8>,
    pub confirm: ConfirmRequest,
}

impl ConfirmInput {
    /// Reads `req`'s key and body: the confirm, or why it is refused.
    pub async fn read(req: &Incoming) -> Result<Self, ApiError> {
        let key = req.headers.get(IDEMPOTENCY_KEY_HEADER)?;
        let idempotency_key = check_idempotency_key(key.as_deref())?.to_owned();
        let body = req.body().await?;
        let confirm = ConfirmRequest::parse(&body)?;
        Ok(Self {
            idempotency_key,
            body,
            confirm,
        })
    }
}
