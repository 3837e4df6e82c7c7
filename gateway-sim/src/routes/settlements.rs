//! `GET /v1/settlements`: the day's settlement file (see [`settlement`]).
//!
//! The simulator's own export, not Toss's settlements API (which answers
//! JSON): it predates the Toss dialect and other tests read it as it is, so it
//! needs no `Authorization` and is not recorded among the ledger's calls.

use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use encoding_rs::EUC_KR;
use serde::Deserialize;

use crate::error::ApiError;
use crate::settlement;
use crate::SimState;

#[derive(Deserialize)]
pub(super) struct SettlementQuery {
    date: Option<String>,
    encoding: Option<String>,
}

/// The settlement file of a UTC day (see [`settlement`]), as an attachment:
/// UTF-8 with a byte order mark (`encoding=utf-8`, the default), or CP949
/// without one (`encoding=cp949`, labelled `charset=EUC-KR`, the WHATWG name
/// under which CP949 is read). A file holding characters CP949 lacks is
/// refused rather than written with substitutes.
pub(super) async fn settlements(
    State(state): State<SimState>,
    query: Result<Query<SettlementQuery>, QueryRejection>,
) -> Result<Response, ApiError> {
    let Query(query) = query.map_err(|rejection| ApiError::BadRequest(rejection.body_text()))?;
    let date = query.date.ok_or_else(|| {
        ApiError::InvalidDate("date is required, as YYYY-MM-DD (a UTC day)".into())
    })?;
    let date = settlement::parse_date(&date).ok_or_else(|| {
        ApiError::InvalidDate(format!(
            "date must be a YYYY-MM-DD calendar date, got {date:?}"
        ))
    })?;
    let cp949 = match query.encoding.as_deref() {
        None => false,
        Some(encoding) if encoding.eq_ignore_ascii_case("utf-8") => false,
        Some(encoding) if encoding.eq_ignore_ascii_case("cp949") => true,
        Some(encoding) => {
            return Err(ApiError::InvalidEncoding(format!(
                "encoding must be utf-8 or cp949, got {encoding:?}"
            )))
        }
    };
    let csv =
        state.with_ledger(|ledger| settlement::settlement_csv(&ledger.snapshot().approvals, date));
    let (charset, body) = if cp949 {
        let (bytes, _, unmappable) = EUC_KR.encode(&csv);
        // Toss's orderIds are ASCII, so no file holds such a character today;
        // a field added later cannot make a file with substitutes.
        if unmappable {
            return Err(ApiError::InvalidEncoding(
                "the file holds characters CP949 cannot encode; ask for utf-8".into(),
            ));
        }
        (EUC_KR.name(), bytes.into_owned())
    } else {
        let mut body = "\u{feff}".as_bytes().to_vec();
        body.extend_from_slice(csv.as_bytes());
        ("utf-8", body)
    };
    let headers = [
        (header::CONTENT_TYPE, format!("text/csv; charset={charset}")),
        (
            header::CONTENT_DISPOSITION,
            format!("attachment; filename=\"{}\"", settlement::file_name(date)),
        ),
    ];
    Ok((headers, body).into_response())
}
