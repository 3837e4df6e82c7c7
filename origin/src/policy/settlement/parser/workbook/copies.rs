//! The cells' copies of shared strings, bounded by the workbook's own size. A cell that
//! shows a shared string gets a copy of it of its own — calamine's, when it lays out an
//! `.xls` (LABELSST), and the origin's, when it takes an `.xlsx` cell's value — so one
//! string of 65,535 characters and 2·10^6 cells that show it, an `.xls` under 32 MiB,
//! would ask for some 130 GB and abort the process; an `.xlsx` with one 60 MiB string
//! and 10^6 such cells, a few hundred kilobytes zipped, would copy 60 TB.

use super::WorkbookProblem;

/// The copies may take this many times the workbook's bytes (an `.xls`'s stream, an
/// `.xlsx`'s unpacked parts)…
const FACTOR: u64 = 4;

/// …or this many bytes, when that is more: a small workbook may repeat a long string.
const FLOOR: u64 = 64 * 1024 * 1024;

/// The bytes the cells' copies of shared strings take, against their bound.
#[derive(Debug)]
pub struct Copies {
    copied: u64,
    limit: u64,
}

impl Copies {
    /// For a workbook of `bytes` bytes.
    pub fn new(bytes: u64) -> Self {
        Copies {
            copied: 0,
            limit: bytes.saturating_mul(FACTOR).max(FLOOR),
        }
    }

    /// Counts one cell's copy of `bytes`: refused past the bound.
    pub fn charge(&mut self, bytes: u64) -> Result<(), WorkbookProblem> {
        self.copied = self.copied.saturating_add(bytes);
        if self.copied > self.limit {
            return Err(WorkbookProblem::SharedStringCopies { limit: self.limit });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_may_take_four_times_the_workbook_or_64_mib() {
        let mut small = Copies::new(1024);
        assert_eq!(small.charge(FLOOR), Ok(()));
        assert!(small.charge(1).is_err());
        let mut large = Copies::new(32 * 1024 * 1024);
        assert_eq!(large.charge(128 * 1024 * 1024), Ok(()));
        assert_eq!(
            large.charge(1),
            Err(WorkbookProblem::SharedStringCopies {
                limit: 128 * 1024 * 1024
            })
        );
    }
}
