//! How far a reconciliation is through its file: told to whoever watches (`origin
//! reconcile FILE` draws a bar), as the furthest byte read.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
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
}

impl Counted {
    pub(super) fn new(mut file: File, progress: Arc<dyn Progress>) -> io::Result<Self> {
        file.seek(SeekFrom::Start(0))?;
        Ok(Self {
            file,
            progress,
            position: 0,
            furthest: 0,
        })
    }
}

impl Read for Counted {
    fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
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
