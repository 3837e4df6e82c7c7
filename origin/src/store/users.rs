//! The users who log in through the edge: their names and password hashes.

use sqlx::Row;

use super::sql::{sql_bounds, unique_violation_as, Written as _};
use super::{StoreError, User};

sql_bounds! {
    pub(super) async fn insert_user(&mut self, user: &User, now_ms: i64) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO users (id, username, password_hash, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, $4)",
        )
        .bind(user.id.as_str())
        .bind(user.username.as_str())
        .bind(user.password_hash.as_str())
        .bind(now_ms)
        .execute(&mut *self.conn)
        .await
        .map_err(|err| unique_violation_as(err, StoreError::DuplicateUser))?;
        Ok(())
    }

    pub(super) async fn set_password_hash(
        &mut self,
        username: &str,
        password_hash: &str,
        now_ms: i64,
    ) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "UPDATE users SET password_hash = $1, updated_at = $2 WHERE username = $3",
        )
        .bind(password_hash)
        .bind(now_ms)
        .bind(username)
        .execute(&mut *self.conn)
        .await?;
        Ok(done.rows() == 1)
    }

    pub(super) async fn user_by_name(&mut self, username: &str) -> Result<Option<User>, StoreError> {
        let row = sqlx::query("SELECT id, username, password_hash FROM users WHERE username = $1")
            .bind(username)
            .fetch_optional(&mut *self.conn)
            .await?;
        row.map(|row| {
            Ok(User {
                id: row.try_get("id")?,
                username: row.try_get("username")?,
                password_hash: row.try_get("password_hash")?,
            })
        })
        .transpose()
    }
}
