//! What both adapters do over HTTP alike: the client, a request sent and its answer read
//! whole but bounded, and an id made one URL path segment.

use std::time::Duration;

/// A connection not made in this long is a PG that is not there: the request was not
/// sent. The whole call is bounded by the guard's timeout.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(1);

/// The most of a PG's answer that is read: a Payment object is a few KiB.
const ANSWER_LIMIT: usize = 256 * 1024;

/// Calls are not bounded here but by the guard that makes them (see [`crate::guard`]);
/// only the connect phase has its own bound.
pub fn client() -> reqwest::Result<reqwest::Client> {
    reqwest::Client::builder()
        .connect_timeout(CONNECT_TIMEOUT)
        // A redirect would turn a confirm's POST into a GET somewhere else.
        .redirect(reqwest::redirect::Policy::none())
        .build()
}

/// How one call went, as far as the wire tells.
#[derive(Debug)]
pub enum Sent {
    /// No connection was made: the PG never saw the request.
    Unconnected(String),
    /// It left, and no whole answer came back: it may have been processed.
    NoAnswer(String),
    /// The status and the body, read whole.
    Answered { status: u16, body: Vec<u8> },
}

/// Sends a look-up `request` and says whether the PG answered it as a working PG does:
/// anything but no answer, a 5xx or a 429 ([`super::Gateway::answers`]).
pub async fn answers(request: reqwest::RequestBuilder) -> bool {
    match send(request).await {
        Sent::Answered { status, .. } => status < 500 && status != 429,
        Sent::Unconnected(_) | Sent::NoAnswer(_) => false,
    }
}

/// Sends `request` and reads its answer, at most [`ANSWER_LIMIT`] bytes of it.
pub async fn send(request: reqwest::RequestBuilder) -> Sent {
    let mut response = match request.send().await {
        Ok(response) => response,
        // Not connected, or not even built (a header that cannot be sent): it never left.
        Err(err) if err.is_connect() || err.is_builder() => {
            return Sent::Unconnected(describe(&err))
        }
        Err(err) => return Sent::NoAnswer(describe(&err)),
    };
    let status = response.status().as_u16();
    let mut body = Vec::new();
    loop {
        match response.chunk().await {
            Ok(None) => return Sent::Answered { status, body },
            Ok(Some(chunk)) if body.len() + chunk.len() <= ANSWER_LIMIT => {
                body.extend_from_slice(&chunk);
            }
            Ok(Some(_)) => {
                return Sent::NoAnswer(format!(
                    "the PG's answer ({status}) is over {ANSWER_LIMIT} bytes"
                ))
            }
            Err(err) => {
                return Sent::NoAnswer(format!(
                    "the PG's answer ({status}) broke off: {}",
                    describe(&err)
                ))
            }
        }
    }
}

fn describe(err: &reqwest::Error) -> String {
    if err.is_timeout() {
        "gateway call timed out".to_owned()
    } else {
        format!("gateway call failed: {err}")
    }
}

/// `value` as one URL path segment: every byte but RFC 3986's unreserved ones
/// percent-encoded. `None` for what no encoding keeps one segment — empty, `.` or `..`,
/// which URL parsers (WHATWG's too, through `%2E`) resolve against the path instead.
pub fn path_segment(value: &str) -> Option<String> {
    if value.is_empty() || value.bytes().all(|b| b == b'.') && value.len() <= 2 {
        return None;
    }
    let mut segment = String::with_capacity(value.len());
    for byte in value.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            segment.push(char::from(byte));
        } else {
            segment.push_str(&format!("%{byte:02X}"));
        }
    }
    Some(segment)
}

#[cfg(test)]
mod tests {
    use super::{client, path_segment, send, Sent};
    use tokio::io::AsyncReadExt as _;

    /// Toss's and Stripe's APIs are https: the client opens a TLS session (its first
    /// record a handshake, 0x16), and a peer that never completes it is a call that
    /// was not sent.
    #[tokio::test]
    async fn an_https_url_is_spoken_to_in_tls_and_a_failed_handshake_is_not_sent() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let peer = tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut first = [0u8; 1];
            socket.read_exact(&mut first).await.unwrap();
            first[0]
        });
        let http = client().unwrap();
        let sent = send(http.get(format!("https://127.0.0.1:{port}/v1/payments/x"))).await;
        assert_eq!(peer.await.unwrap(), 0x16, "a TLS handshake record");
        assert!(matches!(sent, Sent::Unconnected(_)), "{sent:?}");
    }

    #[test]
    fn an_id_is_one_percent_encoded_segment_or_none() {
        assert_eq!(
            path_segment("order-1.a_b~c").as_deref(),
            Some("order-1.a_b~c")
        );
        assert_eq!(path_segment("a/b?c#d").as_deref(), Some("a%2Fb%3Fc%23d"));
        assert_eq!(path_segment("%2e%2e").as_deref(), Some("%252e%252e"));
        assert_eq!(path_segment("주문").as_deref(), Some("%EC%A3%BC%EB%AC%B8"));
        assert_eq!(path_segment("...").as_deref(), Some("..."));
        for refused in ["", ".", ".."] {
            assert_eq!(path_segment(refused), None, "{refused:?}");
        }
    }
}
