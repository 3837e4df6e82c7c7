//! The Worker's side of the session object: exactly one call per request.

use rules::token::AccessClaims;

use super::protocol::{Authorized, Revocation, RotateOutcome, SessionRequest};
use crate::durable_call::{call_object, tell_object, ObjectUnavailable};
use crate::memory::Release;
use crate::rate_windows::WindowCheck;

/// The Durable Object namespace binding in `wrangler.toml`.
pub const BINDING: &str = "USER_SESSIONS";

/// The session object of one user.
pub struct UserSessionClient<'a> {
    env: &'a worker::Env,
    user_id: &'a str,
}

impl<'a> UserSessionClient<'a> {
    pub fn new(env: &'a worker::Env, user_id: &'a str) -> Self {
        Self { env, user_id }
    }

    pub async fn authorize(
        &self,
        claims: &AccessClaims,
        limit: Option<WindowCheck>,
        release: Vec<Release>,
    ) -> Result<Authorized, ObjectUnavailable> {
        let request = SessionRequest::Authorize {
            jti: claims.jti.clone(),
            family: claims.sid.clone(),
            issued_at: claims.iat,
            limit,
            release,
        };
        call_object(self.env, BINDING, self.user_id, &request).await
    }

    pub async fn open(
        &self,
        family: &str,
        token_hash: &str,
        expires_at_ms: i64,
        started_at_ms: i64,
    ) -> Result<(), ObjectUnavailable> {
        let request = SessionRequest::Open {
            family: family.to_owned(),
            token_hash: token_hash.to_owned(),
            expires_at_ms,
            started_at_ms,
        };
        tell_object(self.env, BINDING, self.user_id, &request).await
    }

    pub async fn rotate(
        &self,
        token_hash: &str,
        successor_hash: &str,
        successor_expires_at_ms: i64,
        limit: WindowCheck,
    ) -> Result<RotateOutcome, ObjectUnavailable> {
        let request = SessionRequest::Rotate {
            token_hash: token_hash.to_owned(),
            successor_hash: successor_hash.to_owned(),
            successor_expires_at_ms,
            limit,
        };
        call_object(self.env, BINDING, self.user_id, &request).await
    }

    pub async fn end_all(&self, before_ms: i64) -> Result<(), ObjectUnavailable> {
        tell_object(
            self.env,
            BINDING,
            self.user_id,
            &SessionRequest::EndAll { before_ms },
        )
        .await
    }

    pub async fn logout(&self, claims: &AccessClaims) -> Result<Revocation, ObjectUnavailable> {
        let request = SessionRequest::Logout {
            jti: claims.jti.clone(),
            expires_at_ms: claims.exp * 1000,
            family: claims.sid.clone(),
            issued_at: claims.iat,
        };
        call_object(self.env, BINDING, self.user_id, &request).await
    }
}
