//! One reconciliation, from a settlement file on disk to the exception queue — the same
//! for `POST /admin/reconciliations/run` (the upload spooled to a temporary file) and
//! for `origin reconcile FILE`.
//!
//! 1. **The period.** The operator's, or the span of the file's transaction dates: a
//!    first pass reads the file for them (and refuses it early when it is not a
//!    settlement file). A file without dates needs the operator to name the period.
//! 2. **Our side.** The APPROVED payments of the period, loaded into a [`Reconciler`] —
//!    the only thing held in memory that grows, and it grows with the period, not the
//!    file.
//! 3. **The file's side.** A blocking task streams the file through the parser and the
//!    reconciler, and hands the findings to the queue in batches while it reads on.
//!
//! Writing to the queue is idempotent (one item per distinct finding), so a run that
//! fails part way is simply run again.

use std::fs::File;
use std::io;
use std::sync::Arc;

use serde::Serialize;
use tokio::sync::mpsc;

pub use super::progress::Progress;
use super::progress::{Counted, Stop};
use crate::clock::now_ms;
use crate::metrics::Metrics;
use crate::policy::settlement::parser::workbook::WorkbookProblem;
use crate::policy::settlement::parser::{self, Entry, Format, HeaderProblem, ParseError};
use crate::policy::settlement::period::{Period, PeriodError};
use crate::policy::settlement::reconcile::{Category, Finding, Reconciler};
use crate::store::transient::retry_transient;
use crate::store::{Store, StoreError};

/// Skipped rows listed in a report; the count covers them all.
pub const MAX_LISTED_SKIPS: usize = 1_000;

/// Findings handed to the queue at a time.
const BATCH: usize = 500;

/// What a run found, as the operator API answers it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// The file's rows reconciled.
    pub external: u64,
    pub matched: u64,
    pub internal_only: u64,
    pub external_only: u64,
    pub amount_mismatch: u64,
    /// The file's rows skipped, blank ones included.
    pub skipped: u64,
    /// The first [`MAX_LISTED_SKIPS`] skipped rows, in file order.
    pub skipped_lines: Vec<SkippedLine>,
    /// Items PENDING in the exception queue once the run was done (all runs').
    pub pending: u64,
    /// Items this run added to the queue; a finding already queued is not added again.
    pub queued: u64,
    /// Pending items of earlier runs this file matched, closed automatically.
    pub closed: u64,
    pub period: Period,
    /// `CSV`, `XLSX` or `XLS`.
    pub format: &'static str,
    /// A CSV file's encoding (`UTF-8`, `UTF-8 with BOM`, `CP949`); `null` for a workbook.
    pub encoding: Option<&'static str>,
    /// The workbook's sheet that was read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sheet: Option<String>,
}

impl Report {
    /// The findings by category, and the skipped rows, as the metrics count them.
    pub fn findings(&self) -> [(&'static str, u64); 5] {
        [
            ("MATCHED", self.matched),
            ("AMOUNT_MISMATCH", self.amount_mismatch),
            ("EXTERNAL_ONLY", self.external_only),
            ("INTERNAL_ONLY", self.internal_only),
            ("SKIPPED", self.skipped),
        ]
    }
}

/// A skipped row: its line and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkippedLine {
    pub line: u64,
    /// The stable code (`SUMMARY_ROW`, `UNPARSABLE_AMOUNT`, …).
    pub reason: &'static str,
    /// The same, for people, with the detail (`unparsable amount "12.5"`).
    pub detail: String,
}

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("not a settlement file: {0}")]
    NotASettlementFile(HeaderProblem),
    #[error("unreadable workbook: {0}")]
    UnreadableWorkbook(WorkbookProblem),
    /// The sheet asked for is not there (the message says which there are).
    #[error("{0}")]
    NoSuchSheet(String),
    #[error(
        "the file has no transaction dates to take the period from: name it with \
         date=YYYY-MM-DD, or from= and to="
    )]
    NoPeriod,
    #[error("the period: {0}")]
    Period(#[from] PeriodError),
    #[error("reading the settlement file: {0}")]
    Io(#[from] io::Error),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<ParseError> for RunError {
    fn from(error: ParseError) -> Self {
        match error {
            ParseError::NotASettlementFile { reason } => RunError::NotASettlementFile(reason),
            ParseError::UnreadableWorkbook { reason } => RunError::UnreadableWorkbook(reason),
            error @ ParseError::NoSuchSheet { .. } => RunError::NoSuchSheet(error.to_string()),
            ParseError::Io(error) => RunError::Io(error),
        }
    }
}

/// The file to reconcile and how to read it.
#[derive(Debug)]
pub struct Settlement {
    pub file: File,
    /// A workbook's sheet to read; the first with a header when not named.
    pub sheet: Option<String>,
}

/// Reconciles the settlement file over `period`, or over the days its transaction
/// dates span.
pub async fn reconcile(
    store: Arc<dyn Store>,
    metrics: &Metrics,
    settlement: Settlement,
    period: Option<Period>,
    progress: Arc<dyn Progress>,
) -> Result<Report, RunError> {
    let Settlement { file, sheet } = settlement;
    let length = file.metadata()?.len();
    // Dropped with this future: a run cut short by its deadline stops reading.
    let run = Stop::default();
    let scan = {
        let (file, sheet, progress) = (file.try_clone()?, sheet.clone(), progress.clone());
        let file = Counted::new(file, progress.clone(), run.flag())?;
        tokio::task::spawn_blocking(move || scan(file, sheet.as_deref(), period, length, progress))
    };
    let period = scan.await.map_err(io::Error::other)??;
    let (from_ms, to_ms) = period.millis();
    let approved = retry_transient(metrics, "approved_between", || {
        store.approved_between(from_ms, to_ms)
    })
    .await?;
    let reconciler = Reconciler::new(approved);

    let (batches, mut received) = mpsc::channel::<Batch>(4);
    let file = Counted::new(file, progress.clone(), run.flag())?;
    let reading = tokio::task::spawn_blocking(move || {
        read(
            file,
            sheet.as_deref(),
            reconciler,
            length,
            progress,
            &batches,
        )
    });
    let mut queued = 0;
    let mut closed = 0;
    let mut failed = None;
    while let Some(batch) = received.recv().await {
        match write(store.as_ref(), metrics, &batch, &period).await {
            Ok((added, matched)) => {
                queued += added;
                closed += matched;
            }
            Err(error) => {
                failed = Some(error);
                break;
            }
        }
    }
    // Dropping the receiver stops the reader at its next batch.
    drop(received);
    let counted = reading.await.map_err(io::Error::other)?;
    if let Some(error) = failed {
        return Err(error.into());
    }
    let read = counted?;
    let pending = retry_transient(metrics, "pending_reconciliation_items", || {
        store.pending_reconciliation_items()
    })
    .await?;
    Ok(Report {
        external: read.count(Category::Matched)
            + read.count(Category::ExternalOnly)
            + read.count(Category::AmountMismatch),
        matched: read.count(Category::Matched),
        internal_only: read.count(Category::InternalOnly),
        external_only: read.count(Category::ExternalOnly),
        amount_mismatch: read.count(Category::AmountMismatch),
        skipped: read.skipped,
        skipped_lines: read.skipped_lines,
        pending,
        queued,
        closed,
        period,
        format: read.format.name(),
        encoding: read.format.encoding().map(|encoding| encoding.as_str()),
        sheet: read.format.sheet().map(str::to_owned),
    })
}

/// Checks the header, and finds the period when the operator did not name it. A
/// workbook is read to its end here, so one damaged part way is refused before anything
/// is queued (a CSV's every row is accepted or skipped, so it cannot be).
fn scan(
    file: Counted,
    sheet: Option<&str>,
    period: Option<Period>,
    length: u64,
    progress: Arc<dyn Progress>,
) -> Result<Period, RunError> {
    let mut entries = parser::open(file, sheet)?;
    let is_csv = matches!(entries.summary().format, Format::Csv(_));
    match period {
        Some(period) if is_csv => return Ok(period),
        Some(period) => {
            progress.pass("checking the workbook", length);
            for entry in entries.by_ref() {
                entry?;
            }
            return Ok(period);
        }
        None if entries.header().date.is_none() => return Err(RunError::NoPeriod),
        None => {}
    }
    progress.pass("finding the period", length);
    let mut span: Option<Period> = None;
    for entry in entries.by_ref() {
        if let Entry::Row(row) = entry? {
            if let Some(date) = row.date {
                span = Some(Period::cover(span, date));
            }
        }
    }
    let span = span.ok_or(RunError::NoPeriod)?;
    Ok(Period::new(span.first, span.last)?)
}

/// What the reader hands the queue.
#[derive(Debug, Default)]
struct Batch {
    exceptions: Vec<Finding>,
    matched: Vec<String>,
}

impl Batch {
    fn is_full(&self) -> bool {
        self.exceptions.len() + self.matched.len() >= BATCH
    }
}

/// What the reader counted.
#[derive(Debug)]
struct Counts {
    /// Findings per category, in [`Category::ALL`]'s order.
    counts: [u64; 4],
    skipped: u64,
    skipped_lines: Vec<SkippedLine>,
    format: Format,
}

impl Counts {
    fn count(&self, category: Category) -> u64 {
        Category::ALL
            .iter()
            .position(|known| *known == category)
            .map_or(0, |index| self.counts[index])
    }

    fn add(&mut self, category: Category) {
        if let Some(index) = Category::ALL.iter().position(|known| *known == category) {
            self.counts[index] += 1;
        }
    }
}

/// Streams the file through the reconciler, handing findings over in batches. Stops
/// early, with what it counted, when the queue's side has gone.
fn read(
    file: Counted,
    sheet: Option<&str>,
    mut reconciler: Reconciler,
    length: u64,
    progress: Arc<dyn Progress>,
    batches: &mpsc::Sender<Batch>,
) -> Result<Counts, RunError> {
    progress.pass("reconciling", length);
    let mut entries = parser::open(file, sheet)?;
    let mut read = Counts {
        counts: [0; 4],
        skipped: 0,
        skipped_lines: Vec::new(),
        format: entries.summary().format,
    };
    let mut batch = Batch::default();
    let hand_over = |batch: &mut Batch| batches.blocking_send(std::mem::take(batch)).is_ok();
    for entry in entries.by_ref() {
        match entry? {
            Entry::Row(row) => {
                let finding = reconciler.row(row.line, &row.order_id, row.amount);
                read.add(finding.category);
                if finding.category.is_exception() {
                    batch.exceptions.push(finding);
                } else {
                    batch.matched.push(finding.order_id);
                }
            }
            Entry::Skipped(skipped) => {
                read.skipped += 1;
                if read.skipped_lines.len() < MAX_LISTED_SKIPS {
                    read.skipped_lines.push(SkippedLine {
                        line: skipped.line,
                        reason: skipped.reason.code(),
                        detail: skipped.reason.to_string(),
                    });
                }
            }
        }
        if batch.is_full() && !hand_over(&mut batch) {
            return Ok(read);
        }
    }
    read.format = entries.summary().format;
    for finding in reconciler.finish() {
        read.add(finding.category);
        batch.exceptions.push(finding);
        if batch.is_full() && !hand_over(&mut batch) {
            return Ok(read);
        }
    }
    hand_over(&mut batch);
    Ok(read)
}

/// Queues a batch's exceptions and closes what its matches settle: (added, closed).
async fn write(
    store: &dyn Store,
    metrics: &Metrics,
    batch: &Batch,
    period: &Period,
) -> Result<(u64, u64), StoreError> {
    let now = now_ms();
    let added = if batch.exceptions.is_empty() {
        0
    } else {
        retry_transient(metrics, "queue_exceptions", || {
            store.queue_exceptions(&batch.exceptions, period, now)
        })
        .await?
    };
    let closed = if batch.matched.is_empty() {
        0
    } else {
        retry_transient(metrics, "close_matched", || {
            store.close_matched(&batch.matched, now)
        })
        .await?
    };
    Ok((added, closed))
}
