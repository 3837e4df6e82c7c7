//! The Worker's side of the session object: exactly one call per request.

use serde::de::DeserializeOwned;
use worker::{Env, Headers, Method, Request, RequestInit};

use super::protocol::{Authorized, Revocation, RotateOutcome, SessionRequest};
use crate::rate_windows::WindowCheck;

/// The Durable Object namespace binding in `wrangler.toml`.
pub const BINDING: &str = "USER_SESSIONS";

/// The object could not answer: unreachable, erred, or answered nonsense.
#[derive(Debug, thiserror::Error)]
#[error("user session object unavailable: {0}")]
pub struct SessionUnavailable(String);

/// The session object of one user.
pub struct UserSessionClient<'a> {
    env: &'a Env,
    user_id: &'a str,
}

impl<'a> UserSessionClient<'a> {
    pub fn new(env: &'a Env, user_id: &'a str) -> Self {
        Self { env, user_id }
    }

    pub async fn authorize(
        &self,
        jti: &str,
        family: Option<&str>,
        limit: Option<WindowCheck>,
    ) -> Result<Authorized, SessionUnavailable> {
        let request = SessionRequest::Authorize {
            jti: jti.to_owned(),
            family: family.map(str::to_owned),
            limit,
        };
        self.call(&request).await
    }

    pub async fn release(&self, key: &str, at_ms: i64) -> Result<(), SessionUnavailable> {
        let request = SessionRequest::Release {
            key: key.to_owned(),
            at_ms,
        };
        self.send(&request).await.map(drop)
    }

    pub async fn open(
        &self,
        family: &str,
        token_hash: &str,
        expires_at_ms: i64,
    ) -> Result<(), SessionUnavailable> {
        let request = SessionRequest::Open {
            family: family.to_owned(),
            token_hash: token_hash.to_owned(),
            expires_at_ms,
        };
        self.send(&request).await.map(drop)
    }

    pub async fn rotate(
        &self,
        token_hash: &str,
        successor_hash: &str,
        successor_expires_at_ms: i64,
    ) -> Result<RotateOutcome, SessionUnavailable> {
        self.call(&SessionRequest::Rotate {
            token_hash: token_hash.to_owned(),
            successor_hash: successor_hash.to_owned(),
            successor_expires_at_ms,
        })
        .await
    }

    pub async fn logout(
        &self,
        jti: &str,
        expires_at_ms: i64,
        family: Option<&str>,
    ) -> Result<Revocation, SessionUnavailable> {
        self.call(&SessionRequest::Logout {
            jti: jti.to_owned(),
            expires_at_ms,
            family: family.map(str::to_owned),
        })
        .await
    }

    async fn call<T: DeserializeOwned>(
        &self,
        request: &SessionRequest,
    ) -> Result<T, SessionUnavailable> {
        let mut response = self.send(request).await?;
        response.json().await.map_err(unavailable)
    }

    async fn send(&self, request: &SessionRequest) -> Result<worker::Response, SessionUnavailable> {
        let stub = self
            .env
            .durable_object(BINDING)
            .and_then(|namespace| namespace.id_from_name(self.user_id)?.get_stub())
            .map_err(unavailable)?;
        let body = serde_json::to_string(request).map_err(unavailable)?;
        let headers = Headers::new();
        headers
            .set("content-type", "application/json")
            .map_err(unavailable)?;
        let mut init = RequestInit::new();
        init.with_method(Method::Post)
            .with_headers(headers)
            .with_body(Some(body.into()));
        let call = Request::new_with_init("https://user-session/", &init).map_err(unavailable)?;
        let response = stub.fetch_with_request(call).await.map_err(unavailable)?;
        if !(200..300).contains(&response.status_code()) {
            return Err(SessionUnavailable(format!(
                "answered {}",
                response.status_code()
            )));
        }
        Ok(response)
    }
}

fn unavailable(err: impl std::fmt::Display) -> SessionUnavailable {
    SessionUnavailable(err.to_string())
}
