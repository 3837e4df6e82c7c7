//! The waiting rooms of drops operators defined at run time, one row per event: the
//! settings and state the edge's room is handed, and their version.

use rules::drop::{RoomSettings, RoomState, RoomUpdate};
use sqlx::Row;

use super::sql::{decode_error, sql_bounds};
use super::StoreError;

sql_bounds! {
    pub(super) async fn event_room(&self, event_id: &str) -> Result<Option<RoomUpdate>, StoreError> {
        let row = sqlx::query("SELECT settings, state, version FROM event_rooms WHERE event_id = $1")
            .bind(event_id)
            .fetch_optional(self.pool)
            .await?;
        let Some(row) = row else {
            return Ok(None);
        };
        let settings: String = row.try_get("settings")?;
        let state: String = row.try_get("state")?;
        let version: i64 = row.try_get("version")?;
        Ok(Some(RoomUpdate {
            settings: serde_json::from_str(&settings)
                .map_err(|err| decode_error(format!("room settings: {err}")))?,
            state: RoomState::from_name(&state)
                .ok_or_else(|| decode_error(format!("room state {state:?}")))?,
            version: version.unsigned_abs(),
        }))
    }

    pub(super) async fn set_event_room(
        &self,
        event_id: &str,
        settings: &RoomSettings,
        state: RoomState,
        now_ms: i64,
    ) -> Result<RoomUpdate, StoreError> {
        let json = serde_json::to_string(settings)
            .map_err(|err| decode_error(format!("room settings: {err}")))?;
        let version: i64 = sqlx::query_scalar(
            "INSERT INTO event_rooms (event_id, settings, state, version, updated_at) \
             VALUES ($1, $2, $3, 1, $4) ON CONFLICT (event_id) DO UPDATE SET \
             settings = excluded.settings, state = excluded.state, \
             updated_at = excluded.updated_at, version = event_rooms.version + 1 \
             RETURNING version",
        )
        .bind(event_id)
        .bind(json.as_str())
        .bind(state.name())
        .bind(now_ms)
        .fetch_one(self.pool)
        .await?;
        Ok(RoomUpdate {
            settings: settings.clone(),
            state,
            version: version.unsigned_abs(),
        })
    }
}
