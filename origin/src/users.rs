//! Users and their passwords: argon2id hashes (checked by the credential route,
//! `credentials.rs`, behind the edge's login) and the operator's `origin user add`.
//!
//! Hashing is deliberately slow (argon2id with the OWASP parameters of the `argon2`
//! crate's defaults), so it runs on the blocking pool, at most a few at a time; past
//! that a login waits a bounded time and is then refused with 503. An unknown user
//! costs the same hash as a known one, so timing does not tell which names exist.

use std::sync::Arc;
use std::time::Duration;

use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::Argon2;
use rules::credentials::normalize_username;
use tokio::sync::Semaphore;

use crate::clock::now_ms;
use crate::error::ApiError;
use crate::store::{Store, StoreError, User};

/// How long a login may wait for a hashing slot before it is refused.
const HASH_SLOT_WAIT: Duration = Duration::from_secs(3);

/// Runs password hashes with bounded concurrency.
pub struct Passwords {
    slots: Semaphore,
    /// Verified against when the user does not exist, to take the same time.
    decoy_hash: String,
}

impl Passwords {
    pub fn new() -> anyhow::Result<Self> {
        let slots = std::thread::available_parallelism().map_or(2, |n| n.get() * 2);
        let decoy_hash = hash(&random_hex(16)?)?;
        Ok(Self {
            slots: Semaphore::new(slots),
            decoy_hash,
        })
    }

    /// Whether `password` matches `stored` (or, with no user, the decoy — never true).
    pub(crate) async fn matches(
        self: &Arc<Self>,
        password: String,
        stored: Option<String>,
    ) -> Result<bool, ApiError> {
        let _slot = tokio::time::timeout(HASH_SLOT_WAIT, self.slots.acquire())
            .await
            .map_err(|_| ApiError::Busy)?
            .map_err(ApiError::internal)?;
        let passwords = Arc::clone(self);
        tokio::task::spawn_blocking(move || {
            let known = stored.is_some();
            let stored = stored.unwrap_or_else(|| passwords.decoy_hash.clone());
            // Verified first, whoever the user is: `known && verify(…)` would skip the
            // decoy's hash, and the time would tell which names exist.
            let matched = verify(&password, &stored);
            known && matched
        })
        .await
        .map_err(ApiError::internal)
    }
}

/// What `origin user add` did.
#[derive(Debug, PartialEq, Eq)]
pub enum UserAdded {
    Created {
        id: String,
    },
    PasswordReplaced,
    /// The user exists and already has this password: nothing was changed, so the
    /// sessions begun with it stand.
    PasswordUnchanged,
}

/// Adds a user, or with `replace_password` sets an existing user's password — unless it
/// is already the password, which changes nothing.
pub async fn add_user(
    store: &dyn Store,
    username: &str,
    password: &str,
    replace_password: bool,
) -> anyhow::Result<UserAdded> {
    let username = normalize_username(username)?;
    anyhow::ensure!(
        !password.is_empty() && password.len() <= 1024,
        "the password must be 1 to 1024 bytes"
    );
    let password_hash = hash(password)?;
    let user = User {
        id: format!("usr_{}", random_hex(12)?),
        username,
        password_hash,
    };
    match store.insert_user(&user, now_ms()).await {
        Ok(()) => Ok(UserAdded::Created { id: user.id }),
        Err(StoreError::DuplicateUser) if replace_password => {
            let current = store.user_by_name(&user.username).await?;
            if current.is_some_and(|current| verify(password, &current.password_hash)) {
                return Ok(UserAdded::PasswordUnchanged);
            }
            store
                .set_password_hash(&user.username, &user.password_hash, now_ms())
                .await?;
            Ok(UserAdded::PasswordReplaced)
        }
        Err(StoreError::DuplicateUser) => {
            anyhow::bail!(
                "user `{}` exists already (--replace-password sets a new password)",
                user.username
            )
        }
        Err(err) => Err(err.into()),
    }
}

fn hash(password: &str) -> anyhow::Result<String> {
    let mut salt = [0u8; 16];
    getrandom::fill(&mut salt).map_err(|err| anyhow::anyhow!("no randomness: {err}"))?;
    let salt = SaltString::encode_b64(&salt).map_err(|err| anyhow::anyhow!("salt: {err}"))?;
    let hash = Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map_err(|err| anyhow::anyhow!("hashing failed: {err}"))?;
    Ok(hash.to_string())
}

fn verify(password: &str, stored: &str) -> bool {
    PasswordHash::new(stored).is_ok_and(|parsed| {
        Argon2::default()
            .verify_password(password.as_bytes(), &parsed)
            .is_ok()
    })
}

fn random_hex(bytes: usize) -> anyhow::Result<String> {
    let mut buffer = vec![0u8; bytes];
    getrandom::fill(&mut buffer).map_err(|err| anyhow::anyhow!("no randomness: {err}"))?;
    Ok(hex::encode(buffer))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hash_verifies_its_password_only() {
        let stored = hash("correct horse").unwrap();
        assert!(stored.starts_with("$argon2id$"));
        assert!(verify("correct horse", &stored));
        assert!(!verify("correct horse ", &stored));
        assert!(!verify("correct horse", "not a hash"));
    }
}
