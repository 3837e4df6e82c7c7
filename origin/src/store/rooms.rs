//! The waiting rooms of drops operators defined at run time, one row per event: the
//! settings and state the edge's room is handed, and their version. A change may name
//! the version it was made from: it is then written only over that version (0: over no
//! room yet), so an operator's stale page cannot undo another's change.

use rules::drop::{RoomSettings, RoomState, RoomUpdate};
use sqlx::Row;

use super::sql::{decode_error, sql_bounds};
use super::StoreError;

sql_bounds! {
    pub(super) async fn event_room(&mut self, event_id: &str) -> Result<Option<RoomUpdate>, StoreError> {
        let row = sqlx::query("SELECT settings, state, version FROM event_rooms WHERE event_id = $1")
            .bind(event_id)
            .fetch_optional(&mut *self.conn)
            .await?;
        row.as_ref().map(room_of).transpose()
    }

    /// Every room, by event id, at most `limit`.
    pub(super) async fn event_rooms(&mut self, limit: u32) -> Result<Vec<(String, RoomUpdate)>, StoreError> {
        let rows = sqlx::query(
            "SELECT event_id, settings, state, version FROM event_rooms ORDER BY event_id LIMIT $1",
        )
        .bind(i64::from(limit))
        .fetch_all(&mut *self.conn)
        .await?;
        rows.iter()
            .map(|row| Ok((row.try_get("event_id")?, room_of(row)?)))
            .collect()
    }

    /// Writes the room over the version `expected` (any, when `None`):
    /// `StaleVersion` with the version in force when another change came first.
    pub(super) async fn set_event_room(
        &mut self,
        event_id: &str,
        settings: &RoomSettings,
        state: RoomState,
        now_ms: i64,
        expected: Option<u64>,
    ) -> Result<RoomUpdate, StoreError> {
        let json = serde_json::to_string(settings)
            .map_err(|err| decode_error(format!("room settings: {err}")))?;
        let sql = match expected {
            None => {
                "INSERT INTO event_rooms (event_id, settings, state, version, updated_at) \
                 VALUES ($1, $2, $3, 1, $4) ON CONFLICT (event_id) DO UPDATE SET \
                 settings = excluded.settings, state = excluded.state, \
                 updated_at = excluded.updated_at, version = event_rooms.version + 1 \
                 RETURNING version"
            }
            Some(0) => {
                "INSERT INTO event_rooms (event_id, settings, state, version, updated_at) \
                 VALUES ($1, $2, $3, 1, $4) ON CONFLICT (event_id) DO NOTHING RETURNING version"
            }
            Some(_) => {
                "UPDATE event_rooms SET settings = $2, state = $3, updated_at = $4, \
                 version = version + 1 WHERE event_id = $1 AND version = $5 RETURNING version"
            }
        };
        let mut query = sqlx::query_scalar::<_, i64>(sql)
            .bind(event_id)
            .bind(json.as_str())
            .bind(state.name())
            .bind(now_ms);
        if let Some(version @ 1..) = expected {
            query = query.bind(i64::try_from(version).unwrap_or(i64::MAX));
        }
        let version = query.fetch_optional(&mut *self.conn).await?;
        let Some(version) = version else {
            let current = self.event_room(event_id).await?.map_or(0, |room| room.version);
            return Err(StoreError::StaleVersion { current });
        };
        Ok(RoomUpdate {
            settings: settings.clone(),
            state,
            version: version.unsigned_abs(),
        })
    }
}

fn room_of<R: Row>(row: &R) -> Result<RoomUpdate, StoreError>
where
    for<'r> &'r str: sqlx::ColumnIndex<R>,
    for<'r> String: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> i64: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
{
    let settings: String = row.try_get("settings")?;
    let state: String = row.try_get("state")?;
    let version: i64 = row.try_get("version")?;
    Ok(RoomUpdate {
        settings: serde_json::from_str(&settings)
            .map_err(|err| decode_error(format!("room settings: {err}")))?,
        state: RoomState::from_name(&state)
            .ok_or_else(|| decode_error(format!("room state {state:?}")))?,
        version: version.unsigned_abs(),
    })
}
