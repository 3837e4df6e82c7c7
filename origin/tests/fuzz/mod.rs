//! Structure-aware mutations of settlement files: an `.xlsx`'s ZIP entries and XML, an
//! `.xls`'s BIFF records, a CSV's bytes — the counts, dimensions, record lengths and
//! offsets a crafted file would lie about — and plain byte damage for every kind.

use std::io::{Cursor, Read as _, Write as _};

/// A small, seeded generator (xorshift64*): the same seed makes the same inputs.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed.max(1))
    }

    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number below `n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Values a crafted count or size likes to take.
const EXTREMES: [u64; 12] = [
    0,
    1,
    255,
    256,
    65_535,
    65_536,
    1_048_576,
    2_147_483_647,
    4_294_967_295,
    4_294_967_296,
    1_000_000_000_000,
    u64::MAX,
];

/// What a CSV's reader cares about, to insert.
const PIECES: [&[u8]; 7] = [
    b"\"",
    b"\r",
    b"\n",
    b",",
    b"(",
    b"\xEF\xBB\xBF",
    b"\xFF\xFE",
];

/// One mutation of `seed`, by its kind.
pub fn mutate(seed: &[u8], rng: &mut Rng) -> Vec<u8> {
    let structured = match seed {
        [b'P', b'K', ..] if rng.below(4) > 0 => xlsx(seed, rng),
        [0xD0, 0xCF, 0x11, 0xE0, ..] if rng.below(4) > 0 => xls(seed, rng),
        _ => None,
    };
    // Byte damage for a CSV, and now and then on top of a workbook's structure.
    match structured {
        Some(mutated) if rng.below(8) > 0 => mutated,
        Some(mutated) => bytes(mutated, rng),
        None => bytes(seed.to_vec(), rng),
    }
}

/// Byte damage: flips, a truncation, a run repeated, random bytes or quotes inserted.
fn bytes(mut data: Vec<u8>, rng: &mut Rng) -> Vec<u8> {
    let at = rng.below(data.len() + 1);
    match rng.below(6) {
        0 => {
            for _ in 0..=rng.below(8) {
                let at = rng.below(data.len());
                if let Some(byte) = data.get_mut(at) {
                    *byte ^= 1 << rng.below(8);
                }
            }
        }
        1 => data.truncate(at),
        2 => {
            let end = (at + 1 + rng.below(64)).min(data.len());
            let run = data.get(at..end).unwrap_or_default().to_vec();
            let copies = 1 + rng.below(2_000);
            data.splice(at..at, run.repeat(copies));
        }
        3 => {
            let noise: Vec<u8> = (0..1 + rng.below(32)).map(|_| rng.next() as u8).collect();
            data.splice(at..at, noise);
        }
        4 => {
            let piece = *rng.pick(&PIECES);
            data.splice(at..at, piece.iter().copied());
        }
        _ => {
            let number = rng.pick(&EXTREMES).to_string();
            data.splice(at..at, number.into_bytes());
        }
    }
    data
}

/// An `.xlsx` unpacked, one part's XML or the archive's entries changed, packed again.
fn xlsx(seed: &[u8], rng: &mut Rng) -> Option<Vec<u8>> {
    let mut archive = zip::ZipArchive::new(Cursor::new(seed)).ok()?;
    let mut parts = Vec::new();
    for index in 0..archive.len() {
        let mut part = archive.by_index(index).ok()?;
        let mut bytes = Vec::new();
        part.read_to_end(&mut bytes).ok()?;
        parts.push((part.name().ok()?.into_owned(), bytes));
    }
    let at = rng.below(parts.len());
    match rng.below(5) {
        0 => {
            let copy = parts.get(at)?.clone();
            parts.push(copy);
        }
        1 => {
            parts.remove(at);
        }
        2 => {
            let name = &mut parts.get_mut(at)?.0;
            *name = name.to_uppercase().replace('/', "\\");
        }
        _ => {
            let part = &mut parts.get_mut(at)?.1;
            *part = xml(std::mem::take(part), rng);
        }
    }
    let mut packed = zip::ZipWriter::new(Cursor::new(Vec::new()));
    for (name, bytes) in parts {
        let method = if rng.below(2) == 0 {
            zip::CompressionMethod::Stored
        } else {
            zip::CompressionMethod::Deflated
        };
        let options = zip::write::SimpleFileOptions::default().compression_method(method);
        packed.start_file(name, options).ok()?;
        packed.write_all(&bytes).ok()?;
    }
    Some(packed.finish().ok()?.into_inner())
}

/// XML with a number in an attribute swapped for an extreme, a cell reference moved
/// far, an element repeated, or a range cut out.
fn xml(mut text: Vec<u8>, rng: &mut Rng) -> Vec<u8> {
    let quotes: Vec<usize> = text
        .windows(2)
        .enumerate()
        .filter(|(_, pair)| pair == b"=\"")
        .map(|(at, _)| at + 2)
        .collect();
    match rng.below(4) {
        0 | 1 if !quotes.is_empty() => {
            let start = *rng.pick(&quotes);
            let end = text[start..]
                .iter()
                .position(|b| *b == b'"')
                .map_or(start, |n| start + n);
            let value = if rng.below(2) == 0 {
                rng.pick(&EXTREMES).to_string()
            } else {
                rng.pick(&[
                    "XFD1048576",
                    "A1048577",
                    "Z9:A1",
                    "A1:XFD1048576",
                    "-1",
                    "1e308",
                ])
                .to_string()
            };
            text.splice(start..end, value.into_bytes());
        }
        2 => {
            let start = rng.below(text.len());
            let end = (start + rng.below(256)).min(text.len());
            let piece = text[start..end].to_vec();
            text.splice(start..start, piece.repeat(1 + rng.below(500)));
        }
        _ => {
            let start = rng.below(text.len());
            let end = (start + rng.below(512)).min(text.len());
            text.drain(start..end);
        }
    }
    text
}

/// An `.xls`'s Workbook stream as records, one record's field set to an extreme, its
/// length changed, or records repeated or dropped, in a compound file again.
fn xls(seed: &[u8], rng: &mut Rng) -> Option<Vec<u8>> {
    let mut file = cfb::CompoundFile::open(Cursor::new(seed)).ok()?;
    let mut stream = Vec::new();
    file.open_stream("/Workbook")
        .ok()?
        .read_to_end(&mut stream)
        .ok()?;
    let mut records = Vec::new();
    let mut rest = stream.as_slice();
    while rest.len() >= 4 {
        let length = usize::from(u16::from_le_bytes([rest[2], rest[3]]));
        let end = (4 + length).min(rest.len());
        records.push(rest[..end].to_vec());
        rest = &rest[end..];
    }
    let at = rng.below(records.len());
    let record = records.get_mut(at)?;
    match rng.below(5) {
        0 | 1 if record.len() > 4 => {
            // A row, a column, an offset or a count: 2 or 4 bytes of the data.
            let width = if rng.below(2) == 0 { 2 } else { 4 };
            let field = 4 + rng.below(record.len() - 4);
            let value = rng.pick(&EXTREMES).to_le_bytes();
            for (byte, new) in record.iter_mut().skip(field).take(width).zip(value) {
                *byte = new;
            }
        }
        2 => {
            let length = (rng.next() as u16).to_le_bytes();
            record[2..4].copy_from_slice(&length);
        }
        3 => {
            let copy = record.clone();
            let copies = 1 + rng.below(20_000);
            records.splice(at..at, std::iter::repeat_n(copy, copies));
        }
        _ => {
            records.remove(at);
        }
    }
    let mut out = cfb::CompoundFile::create(Cursor::new(Vec::new())).ok()?;
    out.create_stream("Workbook")
        .ok()?
        .write_all(&records.concat())
        .ok()?;
    out.flush().ok()?;
    Some(out.into_inner().into_inner())
}
