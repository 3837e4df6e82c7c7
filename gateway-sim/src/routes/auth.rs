//! In front of every Toss API route: the request recorded as it arrived, then
//! `Authorization: Basic base64(secretKey + ":")` checked.
//!
//! A missing header, another scheme, text that is not base64 (standard
//! alphabet, padded) or decodes to no `key:password` pair is
//! `INCORRECT_BASIC_AUTH_FORMAT`; a well-formed header naming another key, or
//! a password after the colon, is `401 UNAUTHORIZED_KEY`. The comparison is
//! exact, so a key with a stray byte order mark (base64 `77u/…`) is another
//! key, as Toss treats it.

use axum::extract::{Request, State};
use axum::http::header::AUTHORIZATION;
use axum::http::{HeaderMap, HeaderValue};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use base64::engine::general_purpose::STANDARD;
use base64::Engine;

use crate::codes;
use crate::config::SecretKey;
use crate::error::ApiError;
use crate::ledger::Call;
use crate::routes::confirm::TEST_CODE_HEADER;
use crate::routes::idempotency::IDEMPOTENCY_KEY;
use crate::{now_ms, SimState};

pub(super) async fn toss_api(
    State(state): State<SimState>,
    request: Request,
    next: Next,
) -> Response {
    let headers = request.headers();
    let authorized = authorize(headers.get(AUTHORIZATION), state.secret_key());
    let call = Call {
        method: request.method().to_string(),
        path: request.uri().path().to_owned(),
        idempotency_key: header_text(headers, IDEMPOTENCY_KEY),
        authorized: authorized.is_ok(),
        test_code: header_text(headers, TEST_CODE_HEADER),
        received_at: now_ms(),
    };
    state.with_ledger(|ledger| ledger.record_call(call));
    match authorized {
        Ok(()) => next.run(request).await,
        Err(refusal) => {
            tracing::info!(code = refusal.code(), "Toss API call refused");
            refusal.into_response()
        }
    }
}

fn authorize(header: Option<&HeaderValue>, key: &SecretKey) -> Result<(), ApiError> {
    let format = || ApiError::Toss(codes::INCORRECT_BASIC_AUTH_FORMAT);
    let text = header
        .and_then(|value| value.to_str().ok())
        .ok_or_else(format)?;
    let (scheme, encoded) = text.trim().split_once(' ').ok_or_else(format)?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return Err(format());
    }
    let decoded = STANDARD.decode(encoded.trim()).map_err(|_| format())?;
    let decoded = String::from_utf8(decoded).map_err(|_| format())?;
    let (user, password) = decoded.split_once(':').ok_or_else(format)?;
    if user == key.as_str() && password.is_empty() {
        Ok(())
    } else {
        Err(ApiError::Toss(codes::UNAUTHORIZED_KEY))
    }
}

/// A header as the ledger records it: its text, any bytes that are not
/// UTF-8 replaced.
fn header_text(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get(name)
        .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(header: Option<&str>) -> Result<(), &'static str> {
        let value = header.map(|text| HeaderValue::from_str(text).expect("header text"));
        authorize(value.as_ref(), &SecretKey::default()).map_err(|refusal| match refusal {
            ApiError::Toss(code) => code.code,
            _ => "OTHER",
        })
    }

    fn basic(credentials: &str) -> String {
        format!("Basic {}", STANDARD.encode(credentials))
    }

    #[test]
    fn the_configured_key_with_its_colon_is_authorized() {
        let key = crate::config::DEFAULT_SECRET_KEY;
        assert_eq!(check(Some(&basic(&format!("{key}:")))), Ok(()));
        assert_eq!(
            check(Some(&format!(
                "basic  {}",
                STANDARD.encode(format!("{key}:"))
            ))),
            Ok(())
        );
    }

    #[test]
    fn malformed_headers_are_an_incorrect_format() {
        let key = crate::config::DEFAULT_SECRET_KEY;
        for header in [
            None,
            Some(String::new()),
            Some(format!("Bearer {}", STANDARD.encode(format!("{key}:")))),
            Some(basic(key)),
            Some("Basic not*base64".to_owned()),
            Some(format!("Basic {}", STANDARD.encode([0xff, b':']))),
            Some("Basic".to_owned()),
        ] {
            assert_eq!(
                check(header.as_deref()),
                Err("INCORRECT_BASIC_AUTH_FORMAT"),
                "{header:?}"
            );
        }
    }

    #[test]
    fn another_key_or_a_password_is_unauthorized() {
        let key = crate::config::DEFAULT_SECRET_KEY;
        for credentials in [
            "test_sk_other:".to_owned(),
            format!("{key}:password"),
            format!("\u{feff}{key}:"),
            // The authorization page's own doc bug: ` + ` before the colon.
            format!("{key} + :"),
        ] {
            assert_eq!(
                check(Some(&basic(&credentials))),
                Err("UNAUTHORIZED_KEY"),
                "{credentials:?}"
            );
        }
    }
}
