//! Settlement, as rules: the PG's settlement file read and set against our APPROVED
//! payments (`docs/design/settlement.md`); the run that does it is `crate::settlement`.
//!
//! - [`parser`] — the settlement file read as a stream of rows (header by name after
//!   any title lines; a CSV in UTF-8 or CP949 with RFC 4180 quoting, or an Excel
//!   workbook), each row accepted or skipped with its line number and reason. It reads
//!   the bytes it is given and nothing else (a workbook on a thread of its own).
//! - [`reconcile`] — the file's rows set against our APPROVED payments of the period,
//!   one finding per order: MATCHED, AMOUNT_MISMATCH, EXTERNAL_ONLY, INTERNAL_ONLY.
//!   Pure; keeps our side only, so the file streams past.
//! - [`period`] — the days reconciled; [`queue`] — the exception queue's items and
//!   what makes two findings one.

pub mod parser;
pub mod period;
pub mod queue;
pub mod reconcile;
