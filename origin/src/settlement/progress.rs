//! How far a reconciliation is through its file: told to whoever watches (`origin
//! reconcile FILE` draws a bar), as the furthest byte read. And the run's end: once its
//! [`Stop`] is dropped (the run finished, passed its deadline, or its caller went away),
//! every read of the file fails, so whatever thread still reads it — the parser's, a
//! workbook's reader — stops at its next read instead of outliving the run.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Told how far a run is through the file.
pub trait Progress: Send + Sync + 'static {
    /// A pass over the file begins: `stage` says what it is for.
    fn pass(&self, _stage: &'static str, _file_bytes: u64) {}
    /// `bytes` more of the file were read.
    fn read(&self, _bytes: u64) {}
}

/// No one is watching.
impl Progress for () {}

/// The file from its start, telling `progress` how far into it reading has come (a
/// workbook is read out of order: the furthest byte read counts).
pub(super) struct Counted {
    file: File,
    progress: Arc<dyn Progress>,
    position: u64,
    furthest: u64,
    stopped: Arc<AtomicBool>,
}

impl Counted {
    /// Reads `file` until the run's [`Stop`] (whose [`Stop::flag`] `stopped` is) is dropped.
    pub(super) fn new(
        mut file: File,
        progress: Arc<dyn Progress>,
        stopped: Arc<AtomicBool>,
    ) -> io::Result<Self> {
        file.seek(SeekFrom::Start(0))?;
        Ok(Self {
            file,
            progress,
            position: 0,
            furthest: 0,
            stopped,
        })
    }
}

/// A run's hold on its file's reads: dropped, they fail. Only the run holds it; its
/// readers hold its flag.
#[derive(Debug, Default)]
pub(super) struct Stop(Arc<AtomicBool>);

impl Stop {
    pub(super) fn flag(&self) -> Arc<AtomicBool> {
        self.0.clone()
    }
}

impl Drop for Stop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

impl Read for Counted {
    fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        if self.stopped.load(Ordering::Relaxed) {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the run is over (its deadline passed or its caller went away)",
            ));
        }
        let read = self.file.read(buffer)?;
        self.position += read as u64;
        if self.position > self.furthest {
            self.progress.read(self.position - self.furthest);
            self.furthest = self.position;
        }
        Ok(read)
    }
}

impl Seek for Counted {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        self.position = self.file.seek(to)?;
        Ok(self.position)
    }
}
