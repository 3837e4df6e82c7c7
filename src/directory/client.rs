//! The Worker's side of the event directory: its listing, kept in the isolate's memory
//! for at most [`FRESH_FOR_MS`], so a confirm costs the directory at most one call a
//! second per isolate. When the directory cannot answer, a copy up to [`STALE_FOR_MS`]
//! old is used; with none, the gate cannot be decided and the confirm is refused (the
//! payment gate never fails open).

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use worker::Env;

use super::object::{DirectoryRequest, Listing, NAME};
use crate::durable_call::{call_object, tell_object, ObjectUnavailable};

/// The Durable Object namespace binding in `wrangler.toml`.
pub const BINDING: &str = "EVENT_DIRECTORY";
const FRESH_FOR_MS: i64 = 1_000;
const STALE_FOR_MS: i64 = 60_000;

/// Each configured event's gating.
pub type Gating = Rc<HashMap<String, bool>>;

thread_local! {
    /// The listing and when it was read.
    static COPY: RefCell<Option<(Gating, i64)>> = const { RefCell::new(None) };
}

/// Records the gating of `event_id` at `version` (an older version changes nothing).
pub async fn set(
    env: &Env,
    event_id: &str,
    gated: bool,
    version: u64,
) -> Result<(), ObjectUnavailable> {
    let request = DirectoryRequest::Set {
        event_id: event_id.to_owned(),
        gated,
        version,
    };
    tell_object(env, BINDING, NAME, &request).await?;
    // This isolate knows at once.
    COPY.with(|copy| copy.borrow_mut().take());
    Ok(())
}

/// Every configured event's gating, at most a second old at `now_ms` (a minute when the
/// directory cannot answer).
pub async fn gating(env: &Env, now_ms: i64) -> Result<Gating, ObjectUnavailable> {
    let kept = COPY.with(|copy| copy.borrow().clone());
    if let Some((gating, read_at)) = &kept {
        if now_ms - read_at < FRESH_FOR_MS {
            return Ok(gating.clone());
        }
    }
    match call_object::<Listing>(env, BINDING, NAME, &DirectoryRequest::List).await {
        Ok(listing) => {
            let gating: Gating = Rc::new(listing.events.into_iter().collect());
            COPY.with(|copy| *copy.borrow_mut() = Some((gating.clone(), now_ms)));
            Ok(gating)
        }
        Err(err) => match kept {
            Some((gating, read_at)) if now_ms - read_at < STALE_FOR_MS => {
                worker::console_error!("{err}; the gating read {}ms ago is used", now_ms - read_at);
                Ok(gating)
            }
            _ => Err(err),
        },
    }
}
