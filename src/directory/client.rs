//! The Worker's side of the event directory: its listing (each configured event's gating
//! and arrival shards), kept in the isolate's memory
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

/// The directory as read: each configured event's gating, and the shards of those with
/// more than one.
#[derive(Clone, Default)]
pub struct Events {
    pub gating: Gating,
    pub shards: Rc<HashMap<String, u32>>,
}

thread_local! {
    /// The listing and when it was read.
    static COPY: RefCell<Option<(Events, i64)>> = const { RefCell::new(None) };
}

/// Records the gating and shards of `event_id` at `version` (an older version changes
/// nothing).
pub async fn set(
    env: &Env,
    event_id: &str,
    gated: bool,
    shards: u32,
    version: u64,
) -> Result<(), ObjectUnavailable> {
    let request = DirectoryRequest::Set {
        event_id: event_id.to_owned(),
        gated,
        shards,
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
    Ok(events(env, now_ms).await?.gating)
}

/// The arrival shards of `event_id`: 1 unless an operator gave it more.
pub async fn shards(env: &Env, event_id: &str, now_ms: i64) -> Result<u32, ObjectUnavailable> {
    let events = events(env, now_ms).await?;
    Ok(events.shards.get(event_id).copied().unwrap_or(1))
}

async fn events(env: &Env, now_ms: i64) -> Result<Events, ObjectUnavailable> {
    let kept = COPY.with(|copy| copy.borrow().clone());
    if let Some((events, read_at)) = &kept {
        if now_ms - read_at < FRESH_FOR_MS {
            return Ok(events.clone());
        }
    }
    match call_object::<Listing>(env, BINDING, NAME, &DirectoryRequest::List).await {
        Ok(listing) => {
            let events = Events {
                gating: Rc::new(listing.events.into_iter().collect()),
                shards: Rc::new(listing.shards.into_iter().collect()),
            };
            COPY.with(|copy| *copy.borrow_mut() = Some((events.clone(), now_ms)));
            Ok(events)
        }
        Err(err) => match kept {
            Some((events, read_at)) if now_ms - read_at < STALE_FOR_MS => {
                worker::console_error!(
                    "{err}; the directory read {}ms ago is used",
                    now_ms - read_at
                );
                Ok(events)
            }
            _ => Err(err),
        },
    }
}
