//! The operator's reconciliation routes (`docs/design/settlement.md`): upload a settlement file and get
//! the counts at once; list the exception queue; resolve an item with a note.
//!
//! An upload is spooled to an anonymous temporary file as it arrives (never held in
//! memory), then reconciled from there by [`settlement::run`](crate::settlement::run).

use std::io;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::rejection::QueryRejection;
use axum::extract::{FromRequest, Multipart, Path, Query, Request, State};
use axum::http::{header, StatusCode};
use axum::Json;
use futures_util::{Stream, StreamExt as _};
use serde::Deserialize;
use tokio::io::AsyncWriteExt as _;

use crate::clock::now_ms;
use crate::error::ApiError;
use crate::policy::settlement::period::Period;
use crate::policy::settlement::queue::{Item, ItemStatus, Resolution};
use crate::settlement::run::{reconcile, Report, RunError, Settlement};
use crate::state::AppState;

/// The largest settlement file accepted: a month of a busy shop is tens of megabytes.
pub const MAX_FILE_BYTES: u64 = 512 * 1024 * 1024;

/// Reconciliations run at once by one instance; more are answered 503 `BUSY`.
pub const RUNS_AT_ONCE: u32 = 2;

/// How long an upload and its reconciliation may take (other requests get 30 s).
pub const RUN_DEADLINE: Duration = Duration::from_secs(10 * 60);

/// The most queue items listed at once.
const MAX_LISTED: u32 = 1_000;

/// The longest resolution note, in characters.
const MAX_NOTE_CHARS: usize = 2_000;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunQuery {
    date: Option<String>,
    from: Option<String>,
    to: Option<String>,
    sheet: Option<String>,
}

/// `POST /admin/reconciliations/run[?date=YYYY-MM-DD | ?from=…&to=…][&sheet=NAME]`, the
/// body the settlement file — a CSV or an Excel workbook (`.xlsx`, `.xls`), told apart
/// by its content, never by its name or type — as any non-multipart type, or a
/// `multipart/form-data` form whose file is its first field with a file name, or its
/// field `file`. `sheet` names a workbook's sheet; without it, the first sheet that has
/// a header is read.
pub async fn run(
    State(state): State<AppState>,
    query: Result<Query<RunQuery>, QueryRejection>,
    request: Request,
) -> Result<Json<Report>, ApiError> {
    let Query(query) = query.map_err(|rejection| invalid(rejection.body_text()))?;
    let period = Period::from_query(
        query.date.as_deref(),
        query.from.as_deref(),
        query.to.as_deref(),
    )
    .map_err(|error| invalid(error.to_string()))?;
    let file = spool(&state, request).await?;
    let report = reconcile(
        state.store.clone(),
        &state.metrics,
        Settlement {
            file,
            sheet: query.sheet,
        },
        period,
        Arc::new(()),
    )
    .await
    .map_err(refusal)?;
    tracing::info!(
        period = %report.period,
        external = report.external,
        matched = report.matched,
        internal_only = report.internal_only,
        external_only = report.external_only,
        amount_mismatch = report.amount_mismatch,
        skipped = report.skipped,
        queued = report.queued,
        "settlement file reconciled"
    );
    state.metrics.reconciled(&report.findings());
    Ok(Json(report))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListQuery {
    status: Option<String>,
    limit: Option<u32>,
    after: Option<i64>,
}

/// `GET /admin/reconciliations[?status=PENDING|RESOLVED][&limit=N][&after=ID]`: queue
/// items oldest first, `{items, next}`; `next` is the `after` of the following page.
pub async fn list(
    State(state): State<AppState>,
    query: Result<Query<ListQuery>, QueryRejection>,
) -> Result<Json<serde_json::Value>, ApiError> {
    let Query(query) = query.map_err(|rejection| {
        invalid(format!(
            "expected ?status=PENDING|RESOLVED[&limit=N][&after=ID]: {}",
            rejection.body_text()
        ))
    })?;
    let status =
        match query.status.as_deref() {
            None => None,
            Some(text) => Some(ItemStatus::parse(text).ok_or_else(|| {
                invalid(format!("status must be PENDING or RESOLVED, not `{text}`"))
            })?),
        };
    let limit = query.limit.unwrap_or(100).clamp(1, MAX_LISTED);
    let items = state
        .store
        .reconciliation_items(status, query.after.unwrap_or(0), limit)
        .await?;
    let next = (items.len() == limit as usize)
        .then(|| items.last().map(|item| item.id))
        .flatten();
    Ok(Json(serde_json::json!({ "items": items, "next": next })))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ResolveBody {
    note: String,
}

/// `POST /admin/reconciliations/{id}/resolve` `{note}`: the item leaves the queue.
/// 404 `RECONCILIATION_ITEM_NOT_FOUND`; 409 `ALREADY_RESOLVED` the second time.
pub async fn resolve(
    State(state): State<AppState>,
    id: Result<Path<i64>, axum::extract::rejection::PathRejection>,
    body: Bytes,
) -> Result<Json<Item>, ApiError> {
    let not_found = ApiError::NotFound {
        code: "RECONCILIATION_ITEM_NOT_FOUND",
        message: "no reconciliation item has this id",
    };
    let Ok(Path(id)) = id else {
        return Err(not_found);
    };
    let body: ResolveBody = serde_json::from_slice(&body)
        .map_err(|error| invalid(format!("expected {{\"note\": \"...\"}}: {error}")))?;
    let note = body.note.trim();
    if note.is_empty() {
        return Err(invalid(
            "the note must say how the item was resolved".into(),
        ));
    }
    if note.chars().count() > MAX_NOTE_CHARS {
        return Err(invalid(format!(
            "the note is longer than {MAX_NOTE_CHARS} characters"
        )));
    }
    match state
        .store
        .resolve_reconciliation_item(id, note, now_ms())
        .await?
    {
        Resolution::Resolved(item) => {
            tracing::info!(id, order_id = %item.order_id, category = item.category.as_str(), "reconciliation item resolved");
            Ok(Json(item))
        }
        Resolution::AlreadyResolved(item) => Err(ApiError::Refused {
            status: StatusCode::CONFLICT,
            code: "ALREADY_RESOLVED",
            message: format!(
                "item {id} was resolved before: {}",
                item.note.unwrap_or_default()
            ),
        }),
        Resolution::NotFound => Err(not_found),
    }
}

fn invalid(message: String) -> ApiError {
    ApiError::BadRequest {
        code: "INVALID_REQUEST",
        message,
    }
}

fn refusal(error: RunError) -> ApiError {
    match error {
        RunError::NotASettlementFile(problem) => ApiError::BadRequest {
            code: "NOT_A_SETTLEMENT_FILE",
            message: format!("not a settlement file: {problem}"),
        },
        RunError::UnreadableWorkbook(problem) => ApiError::BadRequest {
            code: "UNREADABLE_WORKBOOK",
            message: format!("unreadable workbook: {problem}"),
        },
        RunError::NoSuchSheet(message) => invalid(message),
        RunError::NoPeriod => ApiError::BadRequest {
            code: "PERIOD_REQUIRED",
            message: RunError::NoPeriod.to_string(),
        },
        RunError::Period(error) => invalid(format!("the file's dates: {error}")),
        RunError::Io(error) => ApiError::internal(format!("reading the spooled file: {error}")),
        RunError::Store(error) => error.into(),
    }
}

/// Writes the uploaded file to an anonymous temporary file, and returns it.
async fn spool(state: &AppState, request: Request) -> Result<std::fs::File, ApiError> {
    let is_multipart = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| {
            value
                .to_ascii_lowercase()
                .starts_with("multipart/form-data")
        });
    let file = tempfile::tempfile().map_err(ApiError::internal)?;
    let mut spooled = tokio::fs::File::from_std(file.try_clone().map_err(ApiError::internal)?);
    if is_multipart {
        let mut form = Multipart::from_request(request, state)
            .await
            .map_err(|rejection| invalid(rejection.body_text()))?;
        loop {
            let field = form
                .next_field()
                .await
                .map_err(|error| invalid(format!("reading the form: {error}")))?
                .ok_or_else(|| invalid("the form has no file field".into()))?;
            if field.file_name().is_some() || field.name() == Some("file") {
                let chunks = field.map(|chunk| chunk.map_err(io::Error::other));
                copy(chunks, &mut spooled).await?;
                break;
            }
        }
    } else {
        let chunks = request
            .into_body()
            .into_data_stream()
            .map(|chunk| chunk.map_err(io::Error::other));
        copy(chunks, &mut spooled).await?;
    }
    spooled.flush().await.map_err(ApiError::internal)?;
    Ok(file)
}

/// Copies an upload into the spool, up to [`MAX_FILE_BYTES`].
async fn copy(
    chunks: impl Stream<Item = io::Result<Bytes>>,
    spooled: &mut tokio::fs::File,
) -> Result<(), ApiError> {
    let mut chunks = std::pin::pin!(chunks);
    let mut written = 0u64;
    while let Some(chunk) = chunks.next().await {
        let chunk = chunk.map_err(|error| invalid(format!("reading the upload: {error}")))?;
        written += chunk.len() as u64;
        if written > MAX_FILE_BYTES {
            return Err(ApiError::Refused {
                status: StatusCode::PAYLOAD_TOO_LARGE,
                code: "FILE_TOO_LARGE",
                message: format!("settlement files are accepted up to {MAX_FILE_BYTES} bytes"),
            });
        }
        spooled
            .write_all(&chunk)
            .await
            .map_err(ApiError::internal)?;
    }
    Ok(())
}
