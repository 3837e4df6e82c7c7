//! KEK rotation (`origin keys rewrap`): every payment key not sealed under the current
//! KEK is rewrapped — only its wrapped data key changes, its data part stays byte for
//! byte — a batch at a time, each batch one transaction.
//!
//! - **While serving.** Old versions still open, so the origin serves throughout; a
//!   key is replaced only if it is still the value that was rewrapped.
//! - **Resumable.** The batches walk the payments by id and only ever read keys not yet
//!   on the current version, so a run that was interrupted is simply run again, and a
//!   second run finds nothing to do.
//! - **Plain text from before encryption** is sealed under the current KEK on the way.
//! - **A key that does not open** (altered, moved, or its KEK version no longer
//!   configured) is left as it is and reported; the run goes on with the others.

use serde::Serialize;

use crate::crypto::{FieldCipher, Rewrap, PAYMENT_KEY};
use crate::store::{Replacement, Store, StoreError, StoredPaymentKey};

/// Payment keys read and replaced at a time.
pub const BATCH: u32 = 500;

/// Failures listed in a report; the count covers them all.
const MAX_LISTED_FAILURES: usize = 100;

/// What a rewrap did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RewrapReport {
    /// The KEK version every key should now be on.
    pub current_version: u32,
    /// Keys read that were not on it.
    pub examined: u64,
    /// Keys rewrapped onto it.
    pub rewrapped: u64,
    /// Keys stored in plain text (from before encryption), sealed under it.
    pub sealed: u64,
    /// Of those rewrapped or sealed, keys not replaced because they changed after being
    /// read (another rewrap got there first); the next run looks at them again.
    pub changed_meanwhile: u64,
    /// Keys that did not open, left as they are.
    pub failed: u64,
    /// The first of them.
    pub failures: Vec<Failure>,
}

/// A payment key that did not open.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Failure {
    pub payment_id: i64,
    pub order_id: String,
    pub error: String,
}

/// A rewrap in progress, one batch at a time.
pub struct Rotation<'a> {
    store: &'a dyn Store,
    cipher: &'a FieldCipher,
    batch: u32,
    after_id: i64,
    report: RewrapReport,
}

impl<'a> Rotation<'a> {
    pub fn new(store: &'a dyn Store, cipher: &'a FieldCipher, batch: u32) -> Self {
        Self {
            store,
            cipher,
            batch: batch.max(1),
            after_id: 0,
            report: RewrapReport {
                current_version: cipher.current_version(),
                ..RewrapReport::default()
            },
        }
    }

    /// Keys left to put on the current KEK (failures of earlier runs included).
    pub async fn remaining(&self) -> Result<u64, StoreError> {
        self.store
            .count_payment_keys_not_on(self.report.current_version)
            .await
    }

    /// Rewraps the next batch and commits it; how many keys it read, 0 once done.
    pub async fn next_batch(&mut self) -> Result<u64, StoreError> {
        let keys = self
            .store
            .payment_keys_not_on(self.report.current_version, self.after_id, self.batch)
            .await?;
        let Some(last) = keys.last() else {
            return Ok(0);
        };
        self.after_id = last.payment_id;
        let replacements: Vec<Replacement> = keys
            .iter()
            .filter_map(|key| self.replacement(key))
            .collect();
        let replaced = self.store.replace_payment_keys(&replacements).await?;
        self.report.examined += keys.len() as u64;
        self.report.changed_meanwhile += replacements.len() as u64 - replaced;
        Ok(keys.len() as u64)
    }

    pub fn report(self) -> RewrapReport {
        self.report
    }

    /// What to store instead of `key`, counted; `None` when it is left as it is.
    fn replacement(&mut self, key: &StoredPaymentKey) -> Option<Replacement> {
        let sealed = if key.stored.starts_with("env:") {
            self.cipher
                .rewrap(PAYMENT_KEY, &key.order_id, &key.stored)
                .map(|rewrap| match rewrap {
                    Rewrap::Rewrapped(new) => Some(new),
                    Rewrap::Unchanged => None,
                })
        } else {
            self.cipher
                .seal(PAYMENT_KEY, &key.order_id, &key.stored)
                .map(Some)
        };
        match sealed {
            Ok(Some(new)) => {
                if key.stored.starts_with("env:") {
                    self.report.rewrapped += 1;
                } else {
                    self.report.sealed += 1;
                }
                Some(Replacement {
                    payment_id: key.payment_id,
                    old: key.stored.clone(),
                    new,
                })
            }
            Ok(None) => None,
            Err(error) => {
                self.report.failed += 1;
                if self.report.failures.len() < MAX_LISTED_FAILURES {
                    self.report.failures.push(Failure {
                        payment_id: key.payment_id,
                        order_id: key.order_id.clone(),
                        error: error.to_string(),
                    });
                }
                None
            }
        }
    }
}

/// Puts every payment key on the current KEK; `progress` hears how many keys each
/// batch read.
pub async fn rewrap_payment_keys(
    store: &dyn Store,
    cipher: &FieldCipher,
    batch: u32,
    progress: impl Fn(u64),
) -> Result<RewrapReport, StoreError> {
    let mut rotation = Rotation::new(store, cipher, batch);
    loop {
        let read = rotation.next_batch().await?;
        if read == 0 {
            return Ok(rotation.report());
        }
        progress(read);
    }
}
