//! The signed credential check behind the edge's login: the edge sends what the user
//! typed, the origin answers with the user's id or 401, and never mints a token.

use axum::body::Bytes;
use axum::extract::State;
use axum::Json;
use rules::credentials::Credentials;

use crate::error::ApiError;
use crate::state::AppState;

/// `POST /internal/credentials/verify` (signed): 200 `{userId}` or 401.
pub async fn verify_credentials(
    State(state): State<AppState>,
    body: Bytes,
) -> Result<Json<serde_json::Value>, ApiError> {
    let credentials = Credentials::parse(&body).map_err(|err| ApiError::BadRequest {
        code: "INVALID_REQUEST",
        message: err.to_string(),
    })?;
    let user = state.store.user_by_name(&credentials.username).await?;
    let stored = user.as_ref().map(|user| user.password_hash.clone());
    if !state
        .passwords
        .matches(credentials.password, stored)
        .await?
    {
        tracing::info!(username = %credentials.username, "credentials refused");
        return Err(ApiError::InvalidCredentials);
    }
    let user = user.ok_or_else(|| ApiError::internal("a decoy hash matched"))?;
    Ok(Json(serde_json::json!({ "userId": user.id })))
}
