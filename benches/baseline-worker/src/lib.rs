//! The baselines of the edge's cost benchmark (`lab cost`): the least a workers-rs
//! Worker can do per request, built from the same workers-rs and wasm-bindgen as the
//! edge and run in the same workerd, so the edge's routes can be read as ratios to them.
//!
//! - `GET /` — no object: the runtime's own floor for a Rust Worker.
//! - `GET /object` — one call to an object that does nothing.
//! - `GET /object/write` — one call to an object that writes one SQLite row.
//!
//! Each call is the plainest workers-rs offers: a stub by name, `fetch_with_str`, an
//! empty answer.

use worker::{
    durable_object, event, Context, DurableObject, Env, Request, Response, Result, SqlStorage,
    State,
};

#[event(fetch)]
async fn fetch(req: Request, env: Env, _ctx: Context) -> Result<Response> {
    match req.path().as_str() {
        "/object" => call(&env, "NOOP").await,
        "/object/write" => call(&env, "WRITER").await,
        _ => Response::ok("ok"),
    }
}

async fn call(env: &Env, binding: &str) -> Result<Response> {
    let stub = env.durable_object(binding)?.get_by_name("baseline")?;
    stub.fetch_with_str("https://object/").await?;
    Response::ok("ok")
}

/// Answers every call with an empty 200.
#[durable_object]
pub struct Noop {}

impl DurableObject for Noop {
    fn new(_state: State, _env: Env) -> Self {
        Self {}
    }

    async fn fetch(&self, _req: Request) -> Result<Response> {
        Response::empty()
    }
}

/// Writes one row per call (the same row, so its storage stays one row).
#[durable_object]
pub struct Writer {
    sql: SqlStorage,
}

impl DurableObject for Writer {
    fn new(state: State, _env: Env) -> Self {
        let sql = state.storage().sql();
        if let Err(err) = sql.exec(
            "CREATE TABLE IF NOT EXISTS calls (id INTEGER PRIMARY KEY CHECK (id = 0), n INTEGER NOT NULL)",
            None,
        ) {
            worker::console_error!("baseline writer schema: {err}");
        }
        Self { sql }
    }

    async fn fetch(&self, _req: Request) -> Result<Response> {
        self.sql.exec(
            "INSERT INTO calls (id, n) VALUES (0, 1) ON CONFLICT (id) DO UPDATE SET n = n + 1",
            None,
        )?;
        Response::empty()
    }
}
