//! One fetch of the identity provider's key set, bounded in time and in size: a URL that
//! hangs holds the request that fetches for [`FETCH_TIMEOUT`] at most (and those waiting
//! for it as long), and one that answers without end is read to [`MAX_KEY_SET_BYTES`].
//!
//! The wait is bounded twice: the runtime aborts the fetch at the deadline
//! (`AbortSignal.timeout`), and the whole of it — the answer's head and its body — is
//! raced against a timer of the request's own, which fires whatever the fetch does.
//! Redirects are not followed: one could lead off https, and the keys that decide who is
//! signed in come from the URL configured or not at all.

use std::time::Duration;

use futures_util::future::{select, Either};
use futures_util::StreamExt as _;
use worker::{AbortSignal, Delay, Fetch, Headers, Method, Request, RequestInit, RequestRedirect};

/// How long one fetch may take, answer and body.
pub const FETCH_TIMEOUT: Duration = Duration::from_secs(3);
/// Providers' key sets are a few kilobytes (with certificate chains, tens).
pub const MAX_KEY_SET_BYTES: usize = 64 * 1024;

/// What the provider answered: the key set's text, and how long it may be kept.
pub struct Fetched {
    pub body: String,
    pub cache_control: Option<String>,
}

/// `GET url`, within [`FETCH_TIMEOUT`] and [`MAX_KEY_SET_BYTES`]; why not, as a phrase
/// for the log.
pub async fn key_set(url: &str) -> Result<Fetched, String> {
    let fetching = Box::pin(fetch(url));
    let deadline = Delay::from(FETCH_TIMEOUT);
    match select(fetching, deadline).await {
        Either::Left((fetched, _)) => fetched,
        Either::Right(_) => Err(no_answer()),
    }
}

fn no_answer() -> String {
    format!("no answer in {} s", FETCH_TIMEOUT.as_secs())
}

async fn fetch(url: &str) -> Result<Fetched, String> {
    let headers = Headers::new();
    headers
        .set("accept", "application/jwk-set+json, application/json")
        .map_err(|err| err.to_string())?;
    let mut init = RequestInit::new();
    init.with_method(Method::Get)
        .with_headers(headers)
        .with_redirect(RequestRedirect::Manual);
    let request = Request::new_with_init(url, &init).map_err(|err| err.to_string())?;
    let timeout = u32::try_from(FETCH_TIMEOUT.as_millis()).unwrap_or(u32::MAX);
    let deadline: AbortSignal = worker::web_sys::AbortSignal::timeout_with_u32(timeout).into();
    let mut response = Fetch::Request(request)
        .send_with_signal(&deadline)
        .await
        .map_err(|err| match deadline.aborted() {
            true => no_answer(),
            false => format!("unreachable ({err})"),
        })?;
    let status = response.status_code();
    if status != 200 {
        let redirect = (300..400).contains(&status);
        return Err(format!(
            "answered {status}{}",
            if redirect {
                " (redirects are not followed)"
            } else {
                ""
            }
        ));
    }
    let header = |name: &str| response.headers().get(name).ok().flatten();
    let cache_control = header("cache-control");
    let declared = header("content-length").and_then(|len| len.parse::<usize>().ok());
    if let Some(len) = declared.filter(|len| *len > MAX_KEY_SET_BYTES) {
        return Err(too_large(len));
    }
    let mut body = Vec::new();
    if let Ok(mut chunks) = response.stream() {
        while let Some(chunk) = chunks.next().await {
            let chunk = chunk.map_err(|err| format!("the answer broke off ({err})"))?;
            if body.len() + chunk.len() > MAX_KEY_SET_BYTES {
                return Err(too_large(body.len() + chunk.len()));
            }
            body.extend_from_slice(&chunk);
        }
    } else {
        body = response.bytes().await.map_err(|err| err.to_string())?;
        if body.len() > MAX_KEY_SET_BYTES {
            return Err(too_large(body.len()));
        }
    }
    let body = String::from_utf8(body).map_err(|_| "the answer is not UTF-8".to_owned())?;
    Ok(Fetched {
        body,
        cache_control,
    })
}

fn too_large(len: usize) -> String {
    format!("the answer is over {MAX_KEY_SET_BYTES} bytes (at least {len})")
}
