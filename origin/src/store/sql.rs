//! What both databases run alike, written once: one statement text per query (with
//! `$N` placeholders, which sqlx binds by their number on SQLite too) and one row
//! decoder, run on one connection of either database. Each area of the store adds its
//! queries to [`Sql`] in a file of its own (`users.rs`, …); what differs between the
//! databases — opening, locking, the odd statement — stays in `sqlite.rs` and
//! `postgres.rs`. Which connection a query runs on is the store's choice
//! (`sql_store.rs`): a pooled one, or on SQLite, for a write, the writer's own inside
//! its batch (`group_commit.rs`).
//!
//! A statement must bind every `$N` it names: PostgreSQL refuses a wrong count, but
//! SQLite leaves a parameter with no value NULL, so a bind forgotten in a shared
//! statement is caught by the store's contract tests on PostgreSQL.
//!
//! Every area's `impl` repeats [`sql_bounds!`]'s list: sqlx's bounds are not implied
//! by a trait, so the list is what "either database" means here, spelled out once.

use sqlx::postgres::PgQueryResult;
use sqlx::sqlite::SqliteQueryResult;
use sqlx::Database;

use super::StoreError;
use crate::crypto::FieldCipher;

/// A connection to the database, and the cipher its rows are sealed with.
pub struct Sql<'a, DB: Database> {
    pub(super) conn: &'a mut DB::Connection,
    pub(super) cipher: &'a FieldCipher,
}

impl<'a, DB: Database> Sql<'a, DB> {
    pub(super) fn on(conn: &'a mut DB::Connection, cipher: &'a FieldCipher) -> Self {
        Self { conn, cipher }
    }
}

/// What a statement that writes tells, whatever the database.
pub trait Written {
    fn rows(&self) -> u64;
}

impl Written for SqliteQueryResult {
    fn rows(&self) -> u64 {
        self.rows_affected()
    }
}

impl Written for PgQueryResult {
    fn rows(&self) -> u64 {
        self.rows_affected()
    }
}

/// `($first, $first+1, …), (…)`: `rows` rows of `columns` placeholders each, for a
/// statement that writes many rows at once.
pub(super) fn values_list(rows: usize, columns: usize, first: usize) -> String {
    let row = |index: usize| {
        let start = first + index * columns;
        let places: Vec<String> = (start..start + columns).map(|n| format!("${n}")).collect();
        format!("({})", places.join(", "))
    };
    (0..rows).map(row).collect::<Vec<_>>().join(", ")
}

/// A row the store cannot read back as what it wrote.
pub(super) fn decode_error(problem: String) -> StoreError {
    StoreError::Database(sqlx::Error::Decode(problem.into()))
}

/// `duplicate` for a unique-key violation, else the database's error.
pub(super) fn unique_violation_as(err: sqlx::Error, duplicate: StoreError) -> StoreError {
    match &err {
        sqlx::Error::Database(db) if db.is_unique_violation() => duplicate,
        _ => StoreError::Database(err),
    }
}

/// The `impl` of one area's queries for either database: `sql_bounds! { fn … }`. With
/// `@impl (header)` first, the same bounds on another `impl` (the [`Store`] itself).
///
/// [`Store`]: crate::store::Store
macro_rules! sql_bounds {
    (@impl ($($head:tt)*) $($item:item)*) => {
        $($head)*
        where
            DB: sqlx::Database + sqlx::database::HasStatementCache,
            DB::QueryResult: crate::store::sql::Written,
            for<'c> &'c mut DB::Connection: sqlx::Executor<'c, Database = DB>,
            for<'q> <DB as sqlx::Database>::Arguments<'q>: sqlx::IntoArguments<'q, DB>,
            for<'q> i64: sqlx::Encode<'q, DB> + sqlx::Decode<'q, DB> + sqlx::Type<DB>,
            for<'q> Option<i64>: sqlx::Encode<'q, DB> + sqlx::Decode<'q, DB> + sqlx::Type<DB>,
            for<'q> &'q str: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
            for<'q> String: sqlx::Encode<'q, DB>,
            for<'q> Option<&'q str>: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
            for<'q> String: sqlx::Decode<'q, DB> + sqlx::Type<DB>,
            for<'q> Option<String>: sqlx::Decode<'q, DB> + sqlx::Type<DB>,
            for<'q> &'q str: sqlx::ColumnIndex<DB::Row>,
            usize: sqlx::ColumnIndex<DB::Row>,
        {
            $($item)*
        }
    };
    ($($item:item)*) => {
        crate::store::sql::sql_bounds! {
            @impl (impl<DB> crate::store::sql::Sql<'_, DB>)
            $($item)*
        }
    };
}

pub(super) use sql_bounds;
