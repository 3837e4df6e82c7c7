//! The `EventDirectory` Durable Object (class name in `wrangler.toml`): one for the edge,
//! named [`NAME`]. It keeps, per configured event, whether confirms need a pass, the
//! arrival shards its enters go to, and the version of the origin's update that said so;
//! an older version never overwrites a newer.

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
CREATE TABLE IF NOT EXISTS shards (
    event_id TEXT    PRIMARY KEY,
    shards   INTEGER NOT NULL
);
";

/// A call to the directory.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum DirectoryRequest {
    /// Records `gated` and `shards` for `event_id` unless a newer version did (204).
    Set {
        event_id: String,
        gated: bool,
        #[serde(default = "one")]
        shards: u32,
        version: u64,
    },
    /// Answers [`Listing`].
    List,
}

fn one() -> u32 {
    1
}

/// Every configured event's gating and shards.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Listing {
    /// `(event id, gated)`.
    pub events: Vec<(String, bool)>,
    /// `(event id, shards)`, for events with more than one.
    #[serde(default)]
    pub shards: Vec<(String, u32)>,
}

#[derive(Deserialize)]
struct EventRow {
    event_id: String,
    gated: i64,
}

#[derive(Deserialize)]
struct ShardsRow {
    event_id: String,
    shards: i64,
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
                shards,
                version,
            } => {
                let version = i64::try_from(version)
                    .map_err(|err| worker::Error::RustError(err.to_string()))?;
                let newer: Vec<EventRow> = self
                    .sql
                    .exec(
                        "INSERT INTO events (event_id, gated, version) VALUES (?, ?, ?) \
                         ON CONFLICT (event_id) DO UPDATE SET gated = excluded.gated, \
                         version = excluded.version WHERE excluded.version > events.version \
                         RETURNING event_id, gated",
                        vec![
                            event_id.clone().into(),
                            i64::from(gated).into(),
                            version.into(),
                        ],
                    )?
                    .to_array()?;
                if !newer.is_empty() {
                    self.sql.exec(
                        "INSERT INTO shards (event_id, shards) VALUES (?, ?) \
                         ON CONFLICT (event_id) DO UPDATE SET shards = excluded.shards",
                        vec![event_id.into(), i64::from(shards).into()],
                    )?;
                }
                Response::empty().map(|r| r.with_status(204))
            }
            DirectoryRequest::List => {
                let rows: Vec<EventRow> = self
                    .sql
                    .exec("SELECT event_id, gated FROM events", None)?
                    .to_array()?;
                let shards: Vec<ShardsRow> = self
                    .sql
                    .exec("SELECT event_id, shards FROM shards WHERE shards > 1", None)?
                    .to_array()?;
                reply(&Listing {
                    events: rows
                        .into_iter()
                        .map(|row| (row.event_id, row.gated != 0))
                        .collect(),
                    shards: shards
                        .into_iter()
                        .map(|row| (row.event_id, u32::try_from(row.shards).unwrap_or(1)))
                        .collect(),
                })
            }
        }
    }
}
