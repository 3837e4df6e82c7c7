//! A confirm as it arrived: its `Idempotency-Key`, its `Queue-Ticket` if any, and its
//! body, read with a bound and parsed — read before the caller's session is asked;
//! refused for being malformed only where it always was, after the caller is
//! authenticated.

use rules::confirm::{check_idempotency_key, ConfirmRequest};
use rules::signing::IDEMPOTENCY_KEY_HEADER;

use crate::error::ApiError;
use crate::routes::incoming::Incoming;
use crate::routes::queue::TICKET_HEADER;

pub struct ConfirmInput {
    pub idempotency_key: String,
    pub body: Vec<u8>,
    pub confirm: ConfirmRequest,
    /// The caller's queue ticket, for the ticket gate (`ticket_gate.rs`).
    pub ticket: Option<String>,
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
            ticket: req.headers.get(TICKET_HEADER)?,
        })
    }
}
