//! The `UserSession` Durable Object (class name in `wrangler.toml`; renaming it needs a
//! migration). Its SQLite storage is the truth; what is revoked is also kept in memory,
//! read on the first check after a start or a cleanup and written through, so the check
//! on every request reads nothing.
//!
//! Storage stays bounded, whatever one user does (the bounds, `docs/design/sessions.md`;
//! the logins' own in `families.rs`): every row carries the time after which it means
//! nothing — a denylisted token's own expiry, a refresh token's, a revoked family's last
//! access token's — and an alarm set at the earliest such time deletes what has expired
//! and sets itself again.

use std::cell::RefCell;
use std::collections::HashSet;

use rules::rate_limit::MAX_WINDOW_MS;
use serde::Deserialize;
use worker::{durable_object, DurableObject, Env, Request, Response, Result, SqlStorage, State};

use super::families::Login;
use super::protocol::{Authorized, Revocation, SessionRequest};
use crate::alarm::Alarm;
use crate::clock::now_ms;
use crate::config::EdgeConfig;
use crate::durable_call::{read_call, reply};
use crate::rate_windows::RateWindows;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS denylist (
    jti        TEXT    PRIMARY KEY,
    expires_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS families (
    family     TEXT    PRIMARY KEY,
    revoked    INTEGER NOT NULL DEFAULT 0,
    expires_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS refresh_tokens (
    hash       TEXT    PRIMARY KEY,
    family     TEXT    NOT NULL,
    retired    INTEGER NOT NULL DEFAULT 0,
    expires_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS refresh_tokens_by_family ON refresh_tokens (family);
CREATE TABLE IF NOT EXISTS ended (
    id     INTEGER PRIMARY KEY CHECK (id = 0),
    before INTEGER NOT NULL
);
";

/// [`UserSession::token_life_ms`] when the configuration cannot be read: the default
/// access-token lifetime.
const DEFAULT_TOKEN_LIFE_MS: i64 = 1_800_000;

#[durable_object]
pub struct UserSession {
    state: State,
    /// Its alarm's time, kept in memory.
    alarm: Alarm,
    pub(super) sql: SqlStorage,
    pub(super) windows: RateWindows,
    /// How long an access token issued now can be accepted (its lifetime and the clock
    /// leeway): how long a revoked family must still be known.
    pub(super) token_life_ms: i64,
    /// What is revoked, read from storage on the first check after the object starts and
    /// kept in step with every write after it: a check reads no storage.
    pub(super) revoked: RefCell<Option<Revoked>>,
}

/// The denylisted access tokens and the revoked sessions (refresh families).
#[derive(Default)]
pub(super) struct Revoked {
    pub(super) jtis: HashSet<String>,
    pub(super) families: HashSet<String>,
    /// Every session begun before this (epoch ms) has ended; 0: none has been ended so.
    pub(super) ended_before: i64,
}

#[derive(Deserialize)]
struct Ended {
    before: i64,
}

#[derive(Deserialize)]
pub(super) struct Key {
    pub(super) key: String,
}

#[derive(Deserialize)]
struct Earliest {
    at: Option<i64>,
}

impl DurableObject for UserSession {
    fn new(state: State, env: Env) -> Self {
        let sql = state.storage().sql();
        if let Err(err) = sql.exec(SCHEMA, None) {
            worker::console_error!("user session schema: {err}");
        }
        let windows = RateWindows::new(state.storage().sql());
        let token_life_ms = EdgeConfig::of(&env).map_or(DEFAULT_TOKEN_LIFE_MS, |config| {
            (config.access_ttl_secs + config.policy.leeway_secs) * 1000
        });
        Self {
            state,
            alarm: Alarm::new(),
            sql,
            windows,
            token_life_ms,
            revoked: RefCell::new(None),
        }
    }

    async fn fetch(&self, req: Request) -> Result<Response> {
        let request: SessionRequest = read_call(&req)?;
        let now = now_ms();
        match request {
            SessionRequest::Authorize {
                jti,
                family,
                issued_at,
                limit,
                release,
            } => {
                for owed in release {
                    self.windows.release(&owed.key, owed.at_ms)?;
                }
                let Revocation { revoked } = self.revocation(&jti, family.as_deref(), issued_at)?;
                let limit = match limit {
                    Some(check) if !revoked => Some(self.windows.check(&check, now)?),
                    _ => None,
                };
                reply(&Authorized { revoked, limit })
            }
            SessionRequest::Open {
                family,
                token_hash,
                expires_at_ms,
                started_at_ms,
            } => {
                let login = Login {
                    family,
                    token_hash,
                    expires_at_ms,
                    started_at_ms,
                };
                self.open(login, now).await?;
                Response::empty()
            }
            SessionRequest::Rotate {
                token_hash,
                successor_hash,
                successor_expires_at_ms,
                limit,
            } => {
                let successor = (successor_hash.as_str(), successor_expires_at_ms);
                let outcome = self.rotate(&token_hash, successor, &limit, now)?;
                self.clean_up_by(successor_expires_at_ms).await?;
                reply(&outcome)
            }
            SessionRequest::Logout {
                jti,
                expires_at_ms,
                family,
                issued_at,
            } => {
                let before = self.revocation(&jti, family.as_deref(), issued_at)?;
                self.sql.exec(
                    "INSERT OR IGNORE INTO denylist (jti, expires_at) VALUES (?, ?)",
                    vec![jti.as_str().into(), expires_at_ms.into()],
                )?;
                self.with_revoked(|revoked| revoked.jtis.insert(jti))?;
                if let Some(family) = family {
                    self.revoke_family(&family, now)?;
                }
                self.clean_up_by(expires_at_ms).await?;
                reply(&before)
            }
            SessionRequest::EndAll { before_ms } => {
                self.end_all(before_ms, now).await?;
                Response::empty()
            }
        }
    }

    async fn alarm(&self) -> Result<Response> {
        self.alarm.fired();
        let now = now_ms();
        for table in ["denylist", "refresh_tokens", "families"] {
            self.sql.exec(
                &format!("DELETE FROM {table} WHERE expires_at <= ?"),
                vec![now.into()],
            )?;
        }
        self.windows.forget_before(now - MAX_WINDOW_MS)?;
        // Read again on the next check, without what just expired.
        self.revoked.replace(None);
        let next: Earliest = self
            .sql
            .exec(
                "SELECT min(at) AS at FROM (SELECT min(expires_at) AS at FROM denylist \
                 UNION ALL SELECT min(expires_at) FROM families)",
                None,
            )?
            .one()?;
        if let Some(at) = next.at {
            self.alarm.no_later_than(&self.state.storage(), at).await?;
        }
        Response::empty()
    }
}

impl UserSession {
    /// An access token is revoked when it is denylisted or its session's family is — so
    /// a detected refresh-token reuse ends the thief's access tokens at once too — or
    /// when it was surely issued before every session was ended (`issued_at`, in whole
    /// seconds, is before the second the sessions ended in; a token that does not say
    /// counts as issued before).
    fn revocation(
        &self,
        jti: &str,
        family: Option<&str>,
        issued_at: Option<i64>,
    ) -> Result<Revocation> {
        let revoked = self.with_revoked(|revoked| {
            let before_the_end = revoked.ended_before > 0
                && issued_at.is_none_or(|iat| (iat + 1) * 1000 <= revoked.ended_before);
            revoked.jtis.contains(jti)
                || family.is_some_and(|f| revoked.families.contains(f))
                || before_the_end
        })?;
        Ok(Revocation { revoked })
    }

    /// Runs `f` on what is revoked, read from storage first if this object has not yet.
    pub(super) fn with_revoked<T>(&self, f: impl FnOnce(&mut Revoked) -> T) -> Result<T> {
        let mut cached = self.revoked.borrow_mut();
        let revoked = match cached.as_mut() {
            Some(revoked) => revoked,
            None => cached.insert(self.read_revoked()?),
        };
        Ok(f(revoked))
    }

    fn read_revoked(&self) -> Result<Revoked> {
        let keys = |query: &str| -> Result<HashSet<String>> {
            let rows: Vec<Key> = self.sql.exec(query, None)?.to_array()?;
            Ok(rows.into_iter().map(|row| row.key).collect())
        };
        let ended: Vec<Ended> = self
            .sql
            .exec("SELECT before FROM ended WHERE id = 0", None)?
            .to_array()?;
        Ok(Revoked {
            jtis: keys("SELECT jti AS key FROM denylist")?,
            families: keys("SELECT family AS key FROM families WHERE revoked = 1")?,
            ended_before: ended.first().map_or(0, |ended| ended.before),
        })
    }

    /// The single-use rule of `rules::refresh`, applied in one uninterrupted call.
    /// Makes sure the cleanup alarm fires no later than `expires_at_ms`.
    pub(super) async fn clean_up_by(&self, expires_at_ms: i64) -> Result<()> {
        self.alarm
            .no_later_than(&self.state.storage(), expires_at_ms)
            .await
    }
}
