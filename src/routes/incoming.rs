//! The request as it arrived, read without building workers-rs's `Request`: that
//! conversion reads `request.cf`, an object the runtime builds for the read — 4–5 % of
//! the busy time of `/healthz` and of a ticket holder's poll in V8's profile in workerd
//! before this module (`lab cost --profile`), none after. What is answered
//! from the isolate's memory — `/healthz`, a ticket holder's poll, a refusal by the
//! limiter's memory, a bad token — needs only the method, the path and the headers; the
//! routes that read a body take the `Request`.

use worker::{web_sys, Headers, Method, Request};

pub struct Incoming {
    raw: web_sys::Request,
    pub method: Method,
    pub headers: Headers,
}

impl Incoming {
    pub fn new(raw: web_sys::Request) -> Self {
        Self {
            method: Method::from(raw.method()),
            headers: Headers(raw.headers()),
            raw,
        }
    }

    /// The URL's path, still percent-encoded, without its query or fragment.
    pub fn path(&self) -> String {
        path_of(&self.raw.url()).to_owned()
    }

    /// The body, read with its bound (`crate::body`), still without the workers-rs
    /// `Request`.
    pub async fn body(&self) -> Result<Vec<u8>, crate::error::ApiError> {
        crate::body::read_raw(&self.raw).await
    }

    /// The workers-rs request, for the routes that read the body.
    pub fn into_request(self) -> Request {
        Request::from(self.raw)
    }
}

/// The path of `url`, an absolute URL as the runtime serialises it (a special scheme's
/// serialisation always has a path, at least `/`).
fn path_of(url: &str) -> &str {
    let after_scheme = url.find("://").map_or(0, |at| at + 3);
    let rest = &url[after_scheme..];
    let Some(start) = rest.find(['/', '?', '#']) else {
        return "/";
    };
    let path = &rest[start..];
    match path.find(['?', '#']) {
        Some(0) => "/",
        Some(end) => &path[..end],
        None => path,
    }
}

#[cfg(test)]
mod tests {
    use super::path_of;

    #[test]
    fn the_path_is_read_as_the_url_standard_reads_it() {
        for (url, path) in [
            ("https://edge.example/", "/"),
            ("https://edge.example/queue/e1/status", "/queue/e1/status"),
            ("https://edge.example/queue?a=1&b=/x", "/queue"),
            ("https://edge.example/a#/frag?x", "/a"),
            ("http://127.0.0.1:8787/healthz", "/healthz"),
            ("https://edge.example/a%3F%23%2Fb?c", "/a%3F%23%2Fb"),
            ("https://edge.example?query/x", "/"),
            ("https://edge.example#frag/x", "/"),
            ("https://edge.example", "/"),
        ] {
            assert_eq!(path_of(url), path, "{url}");
            let parsed = worker::Url::parse(url).map(|url| url.path().to_owned());
            assert_eq!(parsed.as_deref(), Ok(path), "the url crate reads {url}");
        }
    }
}
