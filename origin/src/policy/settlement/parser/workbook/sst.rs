//! An `.xls`'s shared strings (SST), measured as calamine reads them: how many characters
//! each holds, so that what its cells copy (`copies.rs`) is known before calamine lays the
//! sheets out. calamine reads the workbook's globals up to their first EOF and keeps the
//! last SST there, each string read across the record's CONTINUEs (a string cut by one
//! goes on with a flag byte of its own), its formatting runs and phonetic data skipped.

use super::records::{records, u16_at, u32_at};

const SST: u16 = 0x00FC;
const CONTINUE: u16 = 0x003C;
const EOF: u16 = 0x000A;

/// The characters of each string of the SST calamine keeps; where calamine would fail
/// (and so lay out no sheet), the strings read until then.
pub fn string_lengths(stream: &[u8]) -> Vec<u16> {
    let mut lengths = Vec::new();
    let mut records = records(stream).peekable();
    while let Some((kind, data)) = records.next() {
        match kind {
            EOF => break,
            SST => {
                let mut continues = Vec::new();
                while let Some((_, more)) = records.next_if(|(kind, _)| *kind == CONTINUE) {
                    continues.push(more);
                }
                lengths = strings(data, &continues);
            }
            _ => {}
        }
    }
    lengths
}

/// A record's data and its CONTINUEs, read one after another.
struct Pieces<'a> {
    data: &'a [u8],
    rest: std::slice::Iter<'a, &'a [u8]>,
}

impl Pieces<'_> {
    fn next_piece(&mut self) -> bool {
        self.rest.next().map(|piece| self.data = piece).is_some()
    }

    fn advance(&mut self, bytes: usize) {
        self.data = self.data.get(bytes..).unwrap_or_default();
    }

    fn skip(&mut self, mut bytes: usize) -> Option<()> {
        while bytes > 0 {
            if self.data.is_empty() && !self.next_piece() {
                return None;
            }
            let skipped = bytes.min(self.data.len());
            self.advance(skipped);
            bytes -= skipped;
        }
        Some(())
    }
}

/// calamine's `parse_sst`: the strings after the two counts.
fn strings(sst: &[u8], continues: &[&[u8]]) -> Vec<u16> {
    let mut lengths = Vec::new();
    let Some(data) = sst.get(8..) else {
        return lengths;
    };
    let mut pieces = Pieces {
        data,
        rest: continues.iter(),
    };
    while !pieces.data.is_empty() || pieces.next_piece() {
        match string(&mut pieces) {
            Some(length) => lengths.push(length),
            None => break,
        }
    }
    lengths
}

/// calamine's `read_rich_extended_string`: one string's characters, or `None` where
/// calamine fails.
fn string(pieces: &mut Pieces) -> Option<u16> {
    if pieces.data.is_empty() {
        return Some(0);
    }
    let characters = u16_at(pieces.data, 0)?;
    let flags = *pieces.data.get(2)?;
    pieces.advance(3);
    let mut runs = 0;
    if flags & 0x8 != 0 {
        runs = usize::from(u16_at(pieces.data, 0)?);
        pieces.advance(2);
    }
    let mut extra = 0;
    if flags & 0x4 != 0 {
        // A signed count, as calamine reads it: a negative one skips past the end.
        extra = u32_at(pieces.data, 0)? as i32 as usize;
        pieces.advance(4);
    }
    let mut wide = flags & 0x1 != 0;
    let mut left = usize::from(characters);
    while left > 0 {
        let width = if wide { 2 } else { 1 };
        let read = (pieces.data.len() / width).min(left);
        pieces.advance(read * width);
        left -= read;
        if left > 0 {
            if !pieces.next_piece() {
                return None;
            }
            wide = pieces.data.first()? & 0x1 != 0;
            pieces.advance(1);
        }
    }
    pieces.skip(runs * 4)?;
    pieces.skip(extra)?;
    Some(characters)
}

#[cfg(test)]
mod tests {
    use super::super::records::record;
    use super::*;

    #[test]
    fn strings_are_measured_across_continues_runs_and_phonetics() {
        let counts = [0u8; 8];
        // "ab" compressed; 3 wide characters with one formatting run (4 bytes) and 2
        // bytes of phonetic data, cut after the first character and its run count.
        let first = [
            &counts[..],
            &[2, 0, 0],
            b"ab",
            &[3, 0, 0x1 | 0x8 | 0x4, 1, 0],
        ]
        .concat();
        let first = [&first[..], &2u32.to_le_bytes(), &[0x41, 0]].concat();
        let stream = [
            record(0x0809, &[0; 16]),
            record(SST, &first),
            // The rest, compressed now: 2 characters, then the run and phonetic bytes.
            record(CONTINUE, &[0, b'c', b'd', 0, 0, 0, 0, 9, 9]),
            // A continue with nothing in it: an empty string, as calamine reads it.
            record(CONTINUE, &[]),
            record(CONTINUE, &[1, 0, 0, b'e']),
            record(EOF, &[]),
            record(SST, &[&counts[..], &[9, 0, 0]].concat()),
        ]
        .concat();
        assert_eq!(string_lengths(&stream), [2, 3, 0, 1]);
    }

    #[test]
    fn the_last_sst_before_the_globals_end_is_the_one_kept() {
        let sst = |length: u16| {
            record(
                SST,
                &[
                    &[0; 8][..],
                    &length.to_le_bytes(),
                    &[0],
                    &vec![b'a'; usize::from(length)],
                ]
                .concat(),
            )
        };
        let stream = [sst(5), sst(7), record(EOF, &[]), sst(9)].concat();
        assert_eq!(string_lengths(&stream), [7]);
    }

    #[test]
    fn a_string_cut_short_ends_the_table_as_calamine_fails_there() {
        let stream = record(
            SST,
            &[&[0; 8][..], &[1, 0, 0, b'a', 200, 0, 0, b'b']].concat(),
        );
        assert_eq!(string_lengths(&stream), [1]);
    }
}
