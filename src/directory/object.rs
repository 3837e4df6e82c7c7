//! The `EventDirectory` Durable Object (class name in `wrangler.toml`): one for the edge,
//! named [`NAME`]. It keeps, per configured event, whether confirms need a pass and the
//! version of the origin's update that said so; an older version never overwrites a
//! newer.

use serde::{Deserialize, Serialize};
use worker::{durable_object, DurableObject, Env, Request, Response, Result, SqlStorage, State};

use crate::durable_call::{read_call, reply};

/// The one directory's name.
pub const NAME: &str = "events";

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS events (
    event_id TEXT    PRIMARY KEY,
    gated    INTEGER NOT NULL,
    version  INTEGER NOT NULL
);
";

/// A call to the directory.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum DirectoryRequest {
    /// Records `gated` for `event_id` unless a newer version did (204).
    Set {
        event_id: String,
        gated: bool,
        version: u64,
    },
    /// Answers [`Listing`].
    List,
}

/// Every configured event's gating.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Listing {
    /// `(event id, gated)`.
    pub events: Vec<(String, bool)>,
}

#[derive(Deserialize)]
struct EventRow {
    event_id: String,
    gated: i64,
}

#[durable_object]
pub struct EventDirectory {
    sql: SqlStorage,
}

impl DurableObject for EventDirectory {
    fn new(state: State, _env: Env) -> Self {
        let sql = state.storage().sql();
        if let Err(err) = sql.exec(SCHEMA, None) {
            worker::console_error!("event directory schema: {err}");
        }
        Self { sql }
    }

    async fn fetch(&self, req: Request) -> Result<Response> {
        match read_call(&req)? {
            DirectoryRequest::Set {
                event_id,
                gated,
                version,
            } => {
                let version = i64::try_from(version)
                    .map_err(|err| worker::Error::RustError(err.to_string()))?;
                self.sql.exec(
                    "INSERT INTO events (event_id, gated, version) VALUES (?, ?, ?) \
                     ON CONFLICT (event_id) DO UPDATE SET gated = excluded.gated, \
                     version = excluded.version WHERE excluded.version > events.version",
                    vec![event_id.into(), i64::from(gated).into(), version.into()],
                )?;
                Response::empty().map(|r| r.with_status(204))
            }
            DirectoryRequest::List => {
                let rows: Vec<EventRow> = self
                    .sql
                    .exec("SELECT event_id, gated FROM events", None)?
                    .to_array()?;
                reply(&Listing {
                    events: rows
                        .into_iter()
                        .map(|row| (row.event_id, row.gated != 0))
                        .collect(),
                })
            }
        }
    }
}
