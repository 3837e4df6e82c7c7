//! A settlement reconciliation run: a file on disk through the parser and the
//! reconciler (`crate::policy::settlement`) into the exception queue
//! (`docs/design/settlement.md`).

mod progress;
pub mod run;
