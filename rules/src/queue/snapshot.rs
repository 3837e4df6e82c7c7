//! The room's line as a compact, versioned snapshot: enough for anyone holding a ticket
//! (an arrival sequence number) to read their exact position, whether they are admitted,
//! and their pass's expiry — without asking the room (`docs/design/queue.md`).
//!
//! A presence bitmap over the sequence numbers from the oldest still in line to the next
//! to be drawn, one bit per arrival, and per 64-bit word the count of people before it:
//! a position is that count plus the bits below one's own, plus one — O(1). Beside it the
//! passes (sequence number, expiry) and the state every answer needs: the admit limit,
//! sold out, a pause, the admission rate. 10^6 people in line take about 125 KB.
//!
//! [`Snapshot::encode`] and [`Snapshot::decode`] are a little-endian layout of their own,
//! versioned by its first byte; a snapshot that does not decode is never half believed.

use super::ticket::Held;
use super::EventQueue;

const FORMAT: u8 = 2;
/// The largest snapshot decoded: 2^27 arrivals' bits and as many passes as the limit allows.
const MAX_WORDS: usize = 1 << 21;
const MAX_PASSES: usize = 1 << 20;

/// One holder's place, read from a snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SnapshotPlace {
    pub position: u64,
    pub admitted: bool,
    pub pass_expires_at: Option<i64>,
}

/// The line as of `as_of`.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    /// The room's identity: a ticket of another room names no one here.
    pub room: u64,
    /// Grows with every change of the line.
    pub version: u64,
    /// Epoch ms the snapshot is exact at.
    pub as_of: i64,
    pub admit_limit: u32,
    pub sold_out: bool,
    /// An operator holds the room: no new pass.
    pub held: bool,
    /// The drop is closed.
    pub closed: bool,
    /// The end of the pause in force at `as_of`, if one is.
    pub paused_until: Option<i64>,
    /// Admissions per second lately, if known (for the wait estimate).
    pub rate_per_second: Option<f64>,
    /// The sequence number of bit 0.
    base: u64,
    bits: Vec<u64>,
    /// People before each word.
    before: Vec<u32>,
    /// `(seq, expires_at)` of every pass, by `seq`.
    passes: Vec<(u64, i64)>,
}

/// What the shell adds to the queue's own state.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SnapshotOf {
    pub room: u64,
    pub version: u64,
    pub as_of: i64,
    pub rate_per_second: Option<f64>,
}

impl EventQueue {
    /// The line as it stands now, for the snapshot readers.
    pub fn snapshot(&self, of: SnapshotOf) -> Snapshot {
        let (base, words) = self.line.words();
        let mut passes: Vec<(u64, i64)> = self.pass_of.iter().map(|(s, at)| (*s, *at)).collect();
        passes.sort_unstable();
        Snapshot {
            room: of.room,
            version: of.version,
            as_of: of.as_of,
            admit_limit: self.config.admit_limit,
            sold_out: self.sold_out,
            held: self.held,
            closed: self.closed,
            paused_until: self.paused_until(of.as_of),
            rate_per_second: of.rate_per_second,
            base,
            before: counts_before(words),
            bits: words.to_vec(),
            passes,
        }
    }
}

impl Snapshot {
    /// Where the holder of a ticket stands, if it is this room's and they are in line: a
    /// ticket of a room that was reset names no one.
    pub fn place_held(&self, held: Held) -> Option<SnapshotPlace> {
        (self.room == held.room)
            .then(|| self.place(held.seq))
            .flatten()
    }

    /// Where the holder of `seq` stands, if they are in line.
    pub fn place(&self, seq: u64) -> Option<SnapshotPlace> {
        let offset = seq.checked_sub(self.base)?;
        let word = usize::try_from(offset / 64).ok()?;
        let bit = offset % 64;
        let bits = *self.bits.get(word)?;
        if bits & (1 << bit) == 0 {
            return None;
        }
        let below = (bits & ((1u64 << bit) - 1)).count_ones();
        let position = u64::from(self.before[word]) + u64::from(below) + 1;
        let pass_expires_at = self
            .passes
            .binary_search_by_key(&seq, |(seq, _)| *seq)
            .ok()
            .map(|at| self.passes[at].1);
        Some(SnapshotPlace {
            position,
            admitted: position <= u64::from(self.admit_limit) && pass_expires_at.is_some(),
            pass_expires_at,
        })
    }

    /// People in line.
    pub fn len(&self) -> u64 {
        self.before
            .last()
            .zip(self.bits.last())
            .map_or(0, |(before, bits)| {
                u64::from(*before) + u64::from(bits.count_ones())
            })
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(64 + self.bits.len() * 8 + self.passes.len() * 16);
        out.push(FORMAT);
        let flags = [self.sold_out, self.held, self.closed];
        out.push(
            flags
                .iter()
                .rev()
                .fold(0, |bits, flag| bits << 1 | u8::from(*flag)),
        );
        for value in [self.room, self.version, self.base] {
            out.extend_from_slice(&value.to_le_bytes());
        }
        for value in [self.as_of, self.paused_until.unwrap_or(i64::MIN)] {
            out.extend_from_slice(&value.to_le_bytes());
        }
        out.extend_from_slice(&self.admit_limit.to_le_bytes());
        out.extend_from_slice(&self.rate_per_second.unwrap_or(f64::NAN).to_le_bytes());
        out.extend_from_slice(&(self.bits.len() as u64).to_le_bytes());
        out.extend_from_slice(&(self.passes.len() as u64).to_le_bytes());
        for word in &self.bits {
            out.extend_from_slice(&word.to_le_bytes());
        }
        for (seq, expires_at) in &self.passes {
            out.extend_from_slice(&seq.to_le_bytes());
            out.extend_from_slice(&expires_at.to_le_bytes());
        }
        out
    }

    /// The snapshot `bytes` encode; `None` for anything else.
    pub fn decode(bytes: &[u8]) -> Option<Self> {
        let mut input = Reader(bytes);
        if input.take::<1>()? != [FORMAT] {
            return None;
        }
        let [flags] = input.take::<1>()?;
        if flags >> 3 != 0 {
            return None;
        }
        let flag = |bit: u8| flags >> bit & 1 == 1;
        let (room, version, base) = (input.u64()?, input.u64()?, input.u64()?);
        let (as_of, paused_until) = (input.i64()?, input.i64()?);
        let admit_limit = u32::from_le_bytes(input.take()?);
        let rate = f64::from_le_bytes(input.take()?);
        let words = usize::try_from(input.u64()?)
            .ok()
            .filter(|n| *n <= MAX_WORDS)?;
        let passes = usize::try_from(input.u64()?)
            .ok()
            .filter(|n| *n <= MAX_PASSES)?;
        let bits: Vec<u64> = (0..words).map(|_| input.u64()).collect::<Option<_>>()?;
        let passes: Vec<(u64, i64)> = (0..passes)
            .map(|_| Some((input.u64()?, input.i64()?)))
            .collect::<Option<_>>()?;
        if !input.0.is_empty() || !passes.windows(2).all(|pair| pair[0].0 < pair[1].0) {
            return None;
        }
        Some(Self {
            room,
            version,
            as_of,
            admit_limit,
            sold_out: flag(0),
            held: flag(1),
            closed: flag(2),
            paused_until: (paused_until != i64::MIN).then_some(paused_until),
            rate_per_second: (!rate.is_nan()).then_some(rate),
            base,
            before: counts_before(&bits),
            bits,
            passes,
        })
    }
}

/// People before each word of `bits`.
fn counts_before(bits: &[u64]) -> Vec<u32> {
    let mut before = Vec::with_capacity(bits.len());
    let mut count = 0u32;
    for word in bits {
        before.push(count);
        count = count.saturating_add(word.count_ones());
    }
    before
}

/// Bytes read from the front.
struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn take<const N: usize>(&mut self) -> Option<[u8; N]> {
        let (head, rest) = self.0.split_first_chunk::<N>()?;
        self.0 = rest;
        Some(*head)
    }

    fn u64(&mut self) -> Option<u64> {
        self.take().map(u64::from_le_bytes)
    }

    fn i64(&mut self) -> Option<i64> {
        self.take().map(i64::from_le_bytes)
    }
}
