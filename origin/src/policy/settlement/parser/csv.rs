//! RFC 4180 rows from bytes, read leniently and a chunk at a time, counting physical
//! lines (see the parser's documentation for the rules), and read as the rules read a
//! row: in the file's encoding.

use std::borrow::Cow;
use std::io::{self, Read};

use super::encoding::Decided;
use super::row::{Cell, RowView, Rows};
use super::{ParseError, SkipReason, MAX_ROW_BYTES, READ_CHUNK, UTF8_BOM};

/// A CSV file's rows, each in the file's encoding as far as it is decided.
pub(super) struct CsvRows<R> {
    reader: CsvReader<R>,
    record: Record,
    encoding: Decided,
}

impl<R: Read> CsvRows<R> {
    pub(super) fn new(reader: R) -> io::Result<Self> {
        let mut reader = CsvReader::new(reader);
        let encoding = if reader.strip_bom()? {
            Decided::Utf8WithBom
        } else {
            Decided::Undecided
        };
        Ok(CsvRows {
            reader,
            record: Record::default(),
            encoding,
        })
    }
}

impl<R> CsvRows<R> {
    pub(super) fn encoding(&self) -> Decided {
        self.encoding
    }

    /// The buffers' capacities: (bytes, field ends).
    #[cfg(test)]
    pub(super) fn held_capacity(&self) -> (usize, usize) {
        (self.record.data.capacity(), self.record.ends.capacity())
    }
}

impl<R: Read> Rows for CsvRows<R> {
    type Row = Self;

    fn advance(&mut self) -> Result<bool, ParseError> {
        let read = self.reader.read_record(&mut self.record)?;
        if read {
            self.encoding.decide(&self.record);
        }
        Ok(read)
    }

    fn row(&self) -> &Self {
        self
    }
}

impl<R> RowView for CsvRows<R> {
    fn line(&self) -> u64 {
        self.record.line
    }

    fn width(&self) -> usize {
        self.record.len()
    }

    fn damage(&self) -> Option<SkipReason> {
        if self.record.unterminated {
            Some(SkipReason::UnterminatedQuote)
        } else if self.record.too_long {
            Some(SkipReason::RowTooLong)
        } else {
            None
        }
    }

    fn is_blank(&self) -> bool {
        self.record.is_blank()
    }

    fn cell(&self, index: usize) -> Option<Cell<'_>> {
        let bytes = self.record.field(index)?;
        Some(match self.encoding.decode(bytes) {
            Some(text) => Cell::Text(text),
            None => Cell::Undecodable,
        })
    }

    fn text(&self, index: usize) -> Option<Cow<'_, str>> {
        Some(self.encoding.decode_lossy(self.record.field(index)?))
    }
}

/// One row's fields, in one buffer; reused from row to row.
#[derive(Debug, Default)]
pub(super) struct Record {
    /// The physical line on which the row starts.
    pub(super) line: u64,
    /// The fields' bytes, unquoted, one after the other.
    pub(super) data: Vec<u8>,
    /// Where each field ends in `data`.
    pub(super) ends: Vec<usize>,
    /// Bytes of the file read for this row.
    pub(super) read: usize,
    /// Past [`MAX_ROW_BYTES`]: `data` and `ends` stopped growing.
    pub(super) too_long: bool,
    /// The input ended inside a quoted field.
    pub(super) unterminated: bool,
    /// A byte outside ASCII in a field.
    pub(super) non_ascii: bool,
}

impl Record {
    fn clear(&mut self, line: u64) {
        self.line = line;
        self.data.clear();
        self.ends.clear();
        self.read = 0;
        self.too_long = false;
        self.unterminated = false;
        self.non_ascii = false;
    }

    /// Counts one byte of the file.
    fn consumed(&mut self) {
        self.read += 1;
        if self.read > MAX_ROW_BYTES {
            self.too_long = true;
        }
    }

    fn push(&mut self, byte: u8) {
        self.non_ascii |= !byte.is_ascii();
        if !self.too_long {
            self.data.push(byte);
        }
    }

    fn end_field(&mut self) {
        if !self.too_long {
            self.ends.push(self.data.len());
        }
    }

    pub(super) fn len(&self) -> usize {
        self.ends.len()
    }

    pub(super) fn field(&self, index: usize) -> Option<&[u8]> {
        let start = match index.checked_sub(1) {
            Some(previous) => *self.ends.get(previous)?,
            None => 0,
        };
        let end = *self.ends.get(index)?;
        self.data.get(start..end)
    }

    pub(super) fn fields(&self) -> impl Iterator<Item = &[u8]> {
        (0..self.len()).filter_map(|index| self.field(index))
    }

    pub(super) fn is_blank(&self) -> bool {
        self.data.iter().all(u8::is_ascii_whitespace)
    }
}

/// Where the reader is inside a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Nothing of the current field read yet.
    FieldStart,
    Unquoted,
    Quoted,
    /// Just after the closing quote of a quoted field.
    AfterQuote,
}

/// RFC 4180 rows from bytes, counting physical lines.
pub(super) struct CsvReader<R> {
    bytes: ByteReader<R>,
    /// The physical line of the next byte.
    line: u64,
}

impl<R: Read> CsvReader<R> {
    pub(super) fn new(reader: R) -> Self {
        CsvReader {
            bytes: ByteReader::new(reader),
            line: 1,
        }
    }

    /// Skips a UTF-8 byte order mark at the very start; says whether there was one.
    pub(super) fn strip_bom(&mut self) -> io::Result<bool> {
        self.bytes.skip_prefix(UTF8_BOM)
    }

    /// Reads the next row into `record`; `false` at the end of the input.
    pub(super) fn read_record(&mut self, record: &mut Record) -> io::Result<bool> {
        if self.bytes.peek()?.is_none() {
            return Ok(false);
        }
        record.clear(self.line);
        let mut state = State::FieldStart;
        loop {
            let Some(byte) = self.bytes.next()? else {
                record.unterminated = state == State::Quoted;
                record.end_field();
                return Ok(true);
            };
            record.consumed();
            match (state, byte) {
                (State::Quoted, b'"') => {
                    if self.bytes.peek()? == Some(b'"') {
                        self.bytes.next()?;
                        record.consumed();
                        record.push(b'"');
                    } else {
                        state = State::AfterQuote;
                    }
                }
                (State::Quoted, b'\r' | b'\n') => {
                    record.push(byte);
                    if self.line_break(byte, record)? {
                        record.push(b'\n');
                    }
                }
                (State::Quoted, _) => record.push(byte),
                (_, b',') => {
                    record.end_field();
                    state = State::FieldStart;
                }
                (_, b'\r' | b'\n') => {
                    self.line_break(byte, record)?;
                    record.end_field();
                    return Ok(true);
                }
                (State::FieldStart, b'"') => state = State::Quoted,
                (_, _) => {
                    record.push(byte);
                    state = State::Unquoted;
                }
            }
        }
    }

    /// After a CR or LF: takes the LF of a CRLF and counts the line. Says whether it took
    /// an LF.
    fn line_break(&mut self, byte: u8, record: &mut Record) -> io::Result<bool> {
        self.line += 1;
        if byte == b'\r' && self.bytes.peek()? == Some(b'\n') {
            self.bytes.next()?;
            record.consumed();
            return Ok(true);
        }
        Ok(false)
    }
}

/// Bytes from a reader, a chunk at a time, with one byte of look-ahead.
struct ByteReader<R> {
    reader: R,
    buffer: Box<[u8]>,
    start: usize,
    end: usize,
}

impl<R: Read> ByteReader<R> {
    fn new(reader: R) -> Self {
        ByteReader {
            reader,
            buffer: vec![0; READ_CHUNK].into_boxed_slice(),
            start: 0,
            end: 0,
        }
    }

    /// Reads more after the bytes already held; `false` at the end of the input.
    fn fill(&mut self) -> io::Result<bool> {
        self.buffer.copy_within(self.start..self.end, 0);
        self.end -= self.start;
        self.start = 0;
        loop {
            let free = self.buffer.get_mut(self.end..).unwrap_or_default();
            match self.reader.read(free) {
                Ok(0) => return Ok(false),
                Ok(read) => {
                    self.end = (self.end + read).min(self.buffer.len());
                    return Ok(true);
                }
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(error) => return Err(error),
            }
        }
    }

    fn peek(&mut self) -> io::Result<Option<u8>> {
        if self.start == self.end && !self.fill()? {
            return Ok(None);
        }
        Ok(self.buffer.get(self.start).copied())
    }

    fn next(&mut self) -> io::Result<Option<u8>> {
        let byte = self.peek()?;
        if byte.is_some() {
            self.start += 1;
        }
        Ok(byte)
    }

    /// At the start of the input only: skips `prefix` if the input begins with it.
    fn skip_prefix(&mut self, prefix: &[u8]) -> io::Result<bool> {
        while self.end - self.start < prefix.len() && self.fill()? {}
        let held = self.buffer.get(self.start..self.end).unwrap_or_default();
        if held.starts_with(prefix) {
            self.start += prefix.len();
            return Ok(true);
        }
        Ok(false)
    }
}
