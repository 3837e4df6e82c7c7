//! An `.xls` stream's BIFF records, laid out as calamine frames them, and the two things
//! in that layout whose cost to calamine grows with the square of what the file holds.
//!
//! - **Continuations.** calamine takes each CONTINUE of a record off the front of a list
//!   (`Vec::remove(0)`), so a record continued `n` times costs `n²`: 2^18 empty
//!   CONTINUEs after one SST (a 1 MiB stream) took it 30 s. A record may be continued
//!   at most [`MAX_CONTINUES`] times; Excel splits a record every 8,224 bytes, so a
//!   32 MiB stream holds about 4,100 at most.
//! - **Formulas.** calamine writes out the text of every FORMULA when it opens the
//!   workbook, inserting at the front of the text as it goes: one 16 KB formula of
//!   `PtgAttrSpace` tokens (255 spaces each) took it 27 s, and a 32 MiB stream holds
//!   about 500 such. The origin reads a formula's value, never its text, so
//!   [`Layout::formulas`] says where each formula's expression is, to be emptied
//!   before calamine sees it.

/// The most CONTINUE records one record may have after it.
pub const MAX_CONTINUES: usize = 8_192;

const CONTINUE: u16 = 0x003C;
const FORMULA: u16 = 0x0006;
/// Where a FORMULA's expression length (`cce`) is, from the record's start.
const FORMULA_CCE: usize = 4 + 20;

/// The records of a stream, `(type, data)`, up to the first that is cut short.
pub fn records(stream: &[u8]) -> impl Iterator<Item = (u16, &[u8])> {
    let mut rest = stream;
    std::iter::from_fn(move || {
        let kind = u16_at(rest, 0)?;
        let length = usize::from(u16_at(rest, 2)?);
        let data = rest.get(4..4 + length)?;
        rest = rest.get(4 + length..).unwrap_or_default();
        Some((kind, data))
    })
}

/// Where the records of a stream start, and where its formulas' expressions are.
pub struct Layout {
    /// One bit a byte: set where a record starts, or where the last whole one ends.
    starts: Vec<u64>,
    /// The offset of each FORMULA's `cce`, the length of its expression.
    pub formulas: Vec<usize>,
}

impl Layout {
    /// Lays the stream out, or says which record is continued past [`MAX_CONTINUES`].
    pub fn of(stream: &[u8]) -> Result<Layout, String> {
        let mut layout = Layout {
            starts: vec![0; stream.len() / 64 + 1],
            formulas: Vec::new(),
        };
        let mut at = 0usize;
        let mut continued = 0usize;
        for (kind, data) in records(stream) {
            layout.mark(at);
            if kind == CONTINUE {
                continued += 1;
                if continued > MAX_CONTINUES {
                    return Err(format!(
                        "a record is continued more than {MAX_CONTINUES} times"
                    ));
                }
            } else {
                continued = 0;
            }
            if kind == FORMULA && data.len() >= FORMULA_CCE - 4 + 2 {
                layout.formulas.push(at + FORMULA_CCE);
            }
            at += 4 + data.len();
        }
        layout.mark(at);
        Ok(layout)
    }

    /// Whether a record starts at `at` (or the last whole one ends there): calamine
    /// frames a sheet from its offset, so one starting elsewhere would be framed apart.
    pub fn starts_at(&self, at: usize) -> bool {
        self.starts
            .get(at / 64)
            .is_some_and(|bits| bits & (1 << (at % 64)) != 0)
    }

    fn mark(&mut self, at: usize) {
        if let Some(bits) = self.starts.get_mut(at / 64) {
            *bits |= 1 << (at % 64);
        }
    }
}

pub fn u16_at(data: &[u8], at: usize) -> Option<u16> {
    let bytes: [u8; 2] = data.get(at..at + 2)?.try_into().ok()?;
    Some(u16::from_le_bytes(bytes))
}

pub fn u32_at(data: &[u8], at: usize) -> Option<u32> {
    let bytes: [u8; 4] = data.get(at..at + 4)?.try_into().ok()?;
    Some(u32::from_le_bytes(bytes))
}

/// A record of `kind` holding `data`, for the tests.
#[cfg(test)]
pub fn record(kind: u16, data: &[u8]) -> Vec<u8> {
    [
        &kind.to_le_bytes()[..],
        &(data.len() as u16).to_le_bytes(),
        data,
    ]
    .concat()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_stop_at_one_cut_short() {
        let stream = [record(0x000A, &[]), vec![0x03, 0x02, 0xFF, 0x00, 1]].concat();
        assert_eq!(records(&stream).count(), 1);
    }

    #[test]
    fn a_layout_knows_its_records_starts_and_formulas() {
        let formula = record(FORMULA, &[0; 22]);
        let stream = [
            record(0x0809, &[0; 16]),
            formula.clone(),
            record(0x000A, &[]),
        ]
        .concat();
        let layout = Layout::of(&stream).expect("laid out");
        let starts: Vec<usize> = (0..=stream.len())
            .filter(|at| layout.starts_at(*at))
            .collect();
        assert_eq!(starts, [0, 20, 20 + formula.len(), stream.len()]);
        assert_eq!(layout.formulas, [20 + FORMULA_CCE]);
    }

    #[test]
    fn a_record_continued_past_the_cap_is_refused() {
        let continues =
            |n: usize| [record(0x00FC, &[0; 8]), record(CONTINUE, &[]).repeat(n)].concat();
        assert!(Layout::of(&continues(MAX_CONTINUES)).is_ok());
        assert!(Layout::of(&continues(MAX_CONTINUES + 1)).is_err());
    }
}
