//! The user's logins (refresh-token families) in the `UserSession` object: opened by a
//! login, rotated by a refresh under the single-use rule of `rules::refresh`, revoked by
//! a logout, a reuse, an eviction or the end of every session — each in one
//! uninterrupted call to the object, so nothing interleaves with it.
//!
//! What is kept stays bounded (`docs/design/sessions.md`): at most [`MAX_FAMILIES`] live
//! families (a new one beyond ends the least recently refreshed), each with its last
//! [`RETIRED_KEPT`] retired tokens for reuse detection, and a revoked family's row only
//! while an access token of it can still be accepted.

use rules::refresh::{decide, RefreshDecision, StoredRefreshToken};
use serde::Deserialize;
use worker::Result;

use super::object::{Key, UserSession};
use super::protocol::RotateOutcome;
use crate::rate_windows::{WindowAnswer, WindowCheck};

/// Logins (refresh families) one user may have live at once.
pub const MAX_FAMILIES: i64 = 32;
/// Retired tokens a family keeps, newest first, so that one presented again revokes the
/// family; an older one presented again is just refused, as an unknown token is.
pub const RETIRED_KEPT: i64 = 16;

/// A login to open: its family, its first token, and when its request began.
pub(super) struct Login {
    pub(super) family: String,
    pub(super) token_hash: String,
    pub(super) expires_at_ms: i64,
    pub(super) started_at_ms: i64,
}

#[derive(Deserialize)]
struct StoredToken {
    family: String,
    retired: i64,
    revoked: i64,
    expires_at: i64,
}

impl UserSession {
    /// Opens `login`'s family with its first token — revoked at once if its password was
    /// checked before every session was ended — and ends the least recently refreshed
    /// families beyond [`MAX_FAMILIES`].
    pub(super) async fn open(&self, login: Login, now_ms: i64) -> Result<()> {
        let Login {
            family,
            token_hash,
            expires_at_ms,
            started_at_ms,
        } = login;
        let ended_before = self.with_revoked(|revoked| revoked.ended_before)?;
        if started_at_ms <= ended_before {
            self.sql.exec(
                "INSERT INTO families (family, revoked, expires_at) VALUES (?, 1, ?)",
                vec![family.as_str().into(), (now_ms + self.token_life_ms).into()],
            )?;
            self.with_revoked(|revoked| revoked.families.insert(family))?;
            return self.clean_up_by(now_ms + self.token_life_ms).await;
        }
        self.sql.exec(
            "INSERT INTO families (family, expires_at) VALUES (?, ?)",
            vec![family.as_str().into(), expires_at_ms.into()],
        )?;
        self.sql.exec(
            "INSERT INTO refresh_tokens (hash, family, expires_at) VALUES (?, ?, ?)",
            vec![
                token_hash.into(),
                family.as_str().into(),
                expires_at_ms.into(),
            ],
        )?;
        let beyond: Vec<Key> = self
            .sql
            .exec(
                "SELECT family AS key FROM families WHERE revoked = 0 AND family <> ? \
                 ORDER BY expires_at DESC LIMIT -1 OFFSET ?",
                vec![family.as_str().into(), (MAX_FAMILIES - 1).into()],
            )?
            .to_array()?;
        for oldest in beyond {
            self.revoke_family(&oldest.key, now_ms)?;
        }
        self.clean_up_by(expires_at_ms).await
    }

    /// Ends every session begun before `before_ms`: every family revoked, every refresh
    /// token gone, and the moment kept for the access tokens that name no family.
    pub(super) async fn end_all(&self, before_ms: i64, now_ms: i64) -> Result<()> {
        self.sql.exec("DELETE FROM refresh_tokens", None)?;
        self.sql.exec(
            "UPDATE families SET revoked = 1, expires_at = min(expires_at, ?)",
            vec![(now_ms + self.token_life_ms).into()],
        )?;
        self.sql.exec(
            "INSERT INTO ended (id, before) VALUES (0, ?) \
             ON CONFLICT (id) DO UPDATE SET before = max(before, excluded.before)",
            vec![before_ms.into()],
        )?;
        // Read again on the next check, with every family revoked.
        self.revoked.replace(None);
        self.clean_up_by(now_ms + self.token_life_ms).await
    }

    /// A retired token coming back is a reuse whatever the family's refresh window says:
    /// the window counts, and can refuse, only a rotation.
    pub(super) fn rotate(
        &self,
        token_hash: &str,
        (successor_hash, successor_expires_at_ms): (&str, i64),
        limit: &WindowCheck,
        now_ms: i64,
    ) -> Result<RotateOutcome> {
        let stored: Option<StoredToken> = self
            .sql
            .exec(
                "SELECT t.family, t.retired, f.revoked, t.expires_at FROM refresh_tokens t \
                 JOIN families f ON f.family = t.family WHERE t.hash = ?",
                vec![token_hash.into()],
            )?
            .to_array()?
            .into_iter()
            .next();
        let decision = decide(
            stored.as_ref().map(|token| StoredRefreshToken {
                retired: token.retired != 0,
                family_revoked: token.revoked != 0,
                expires_at_ms: token.expires_at,
            }),
            now_ms,
        );
        match (decision, stored) {
            (RefreshDecision::Rotate, Some(token)) => {
                if let WindowAnswer::Limited { retry_after_ms } =
                    self.windows.check(limit, now_ms)?
                {
                    return Ok(RotateOutcome::Limited { retry_after_ms });
                }
                self.sql.exec(
                    "UPDATE refresh_tokens SET retired = 1 WHERE hash = ?",
                    vec![token_hash.into()],
                )?;
                self.sql.exec(
                    "INSERT INTO refresh_tokens (hash, family, expires_at) VALUES (?, ?, ?)",
                    vec![
                        successor_hash.into(),
                        token.family.as_str().into(),
                        successor_expires_at_ms.into(),
                    ],
                )?;
                self.sql.exec(
                    "UPDATE families SET expires_at = max(expires_at, ?) WHERE family = ?",
                    vec![successor_expires_at_ms.into(), token.family.as_str().into()],
                )?;
                self.sql.exec(
                    "DELETE FROM refresh_tokens WHERE family = ?1 AND retired = 1 AND hash NOT IN \
                     (SELECT hash FROM refresh_tokens WHERE family = ?1 AND retired = 1 \
                      ORDER BY expires_at DESC LIMIT ?2)",
                    vec![token.family.as_str().into(), RETIRED_KEPT.into()],
                )?;
                Ok(RotateOutcome::Rotated {
                    family: token.family,
                })
            }
            (RefreshDecision::RevokeFamily, Some(token)) => {
                worker::console_warn!("refresh token reused; family revoked");
                self.revoke_family(&token.family, now_ms)?;
                Ok(RotateOutcome::Reused)
            }
            _ => Ok(RotateOutcome::Refused),
        }
    }

    /// Revokes `family`: its refresh tokens go at once (unknown now, so refused), and its
    /// row stays only while an access token of it can still be accepted.
    pub(super) fn revoke_family(&self, family: &str, now_ms: i64) -> Result<()> {
        self.sql.exec(
            "DELETE FROM refresh_tokens WHERE family = ?",
            vec![family.into()],
        )?;
        self.sql.exec(
            "UPDATE families SET revoked = 1, expires_at = min(expires_at, ?) WHERE family = ?",
            vec![(now_ms + self.token_life_ms).into(), family.into()],
        )?;
        self.with_revoked(|revoked| revoked.families.insert(family.to_owned()))?;
        Ok(())
    }
}
