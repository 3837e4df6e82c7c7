//! An `.xlsx`'s package, checked before calamine reads it: its main part must be
//! `xl/workbook.xml`, and every part is unpacked into nothing first, counting its real
//! size, so a ZIP bomb is refused before anything is held (see the module above).

use std::io::{self, Read, Seek, SeekFrom};

use zip::result::ZipError;
use zip::ZipArchive;

use super::{WorkbookProblem, MAX_PART_BYTES, MAX_UNPACKED_BYTES};
use crate::policy::settlement::parser::ParseError;

/// The most `_rels/.rels`, which names the main part, may unpack to.
const MAX_RELS_BYTES: u64 = 1024 * 1024;

/// The shared strings' part as calamine looks it up, under the main part's `xl/`.
const SHARED_STRINGS: &str = "xl/sharedstrings.xml";

/// The fewest bytes a shared string takes in its part: `<si/>`.
const MIN_STRING_BYTES: u64 = 5;

/// Checks that the main part is `xl/workbook.xml`, then unpacks every part of the
/// archive into nothing, counting its real size; answers the bytes unpacked in all.
pub(super) fn check<R: Read + Seek>(reader: &mut R) -> Result<u64, ParseError> {
    let mut archive = ZipArchive::new(&mut *reader).map_err(zip_problem)?;
    check_main_part(&mut archive)?;
    let mut total: u64 = 0;
    for index in 0..archive.len() {
        let mut part = archive.by_index(index).map_err(zip_problem)?;
        let name = part.name().map_err(zip_problem)?.into_owned();
        // As calamine looks parts up: `\` as `/`, whatever the case.
        let streamed = lookup_name(&name).starts_with("xl/worksheets/");
        let left = MAX_UNPACKED_BYTES.saturating_sub(total);
        let limit = if streamed {
            left
        } else {
            left.min(MAX_PART_BYTES)
        };
        let mut counted = Counted::new((&mut part).take(limit + 1));
        let claimed = if lookup_name(&name) == SHARED_STRINGS {
            unique_count(&mut counted)
        } else {
            None
        };
        io::copy(&mut counted, &mut io::sink())
            .map_err(|error| WorkbookProblem::Corrupt(format!("{name}: {error}")))?;
        let unpacked = counted.read;
        if unpacked > limit {
            let whole = limit == left;
            return Err(WorkbookProblem::TooLarge {
                part: if whole { "contents".into() } else { name },
                limit: if whole {
                    MAX_UNPACKED_BYTES
                } else {
                    MAX_PART_BYTES
                },
            }
            .into());
        }
        if let Some(claimed) = claimed.filter(|n| *n > unpacked / MIN_STRING_BYTES) {
            // calamine reserves room for that many strings before it reads one.
            return Err(WorkbookProblem::Corrupt(format!(
                "{name} claims {claimed} strings, more than its {unpacked} bytes can hold"
            ))
            .into());
        }
        total += unpacked;
    }
    drop(archive);
    reader.seek(SeekFrom::Start(0))?;
    Ok(total)
}

/// calamine reads the main part's folder from `_rels/.rels` and the parts it holds in
/// memory from there: only `xl/` keeps them out of `xl/worksheets/`.
fn check_main_part<R: Read + Seek>(archive: &mut ZipArchive<R>) -> Result<(), ParseError> {
    let index = (0..archive.len())
        .find(|&index| {
            archive
                .name_for_index(index)
                .is_some_and(|name| name.is_ok_and(|name| lookup_name(&name) == "_rels/.rels"))
        })
        .ok_or(WorkbookProblem::NotExcel)?;
    let mut rels = String::new();
    archive
        .by_index(index)
        .map_err(zip_problem)?
        .take(MAX_RELS_BYTES)
        .read_to_string(&mut rels)
        .map_err(|error| WorkbookProblem::Corrupt(format!("_rels/.rels: {error}")))?;
    let main = main_part(&rels).map(|target| lookup_name(target.trim_start_matches('/')));
    if main.as_deref() == Some("xl/workbook.xml") {
        Ok(())
    } else {
        Err(WorkbookProblem::NotExcel.into())
    }
}

/// The target of the first `officeDocument` relationship, as calamine takes it.
fn main_part(rels: &str) -> Option<&str> {
    rels.split('<')
        .filter(|element| {
            element.starts_with("Relationship") && !element.starts_with("Relationships")
        })
        .find(|element| {
            attribute(element, "Type")
                .is_some_and(|kind| kind.ends_with("/relationships/officeDocument"))
        })
        .and_then(|element| attribute(element, "Target"))
}

/// The value of attribute `name` in an element's text (`Type="…"` or `Type='…'`).
fn attribute<'a>(element: &'a str, name: &str) -> Option<&'a str> {
    let mut rest = element;
    while let Some(at) = rest.find(name) {
        let before = rest.get(..at).and_then(|text| text.chars().last());
        let after = rest.get(at + name.len()..)?.trim_start();
        rest = rest.get(at + name.len()..)?;
        if !before.is_some_and(char::is_whitespace) {
            continue;
        }
        let Some(value) = after.strip_prefix('=') else {
            continue;
        };
        let value = value.trim_start();
        let quote = value.chars().next().filter(|c| matches!(c, '"' | '\''))?;
        let value = value.get(1..)?;
        return value.find(quote).and_then(|end| value.get(..end));
    }
    None
}

/// A part's name as calamine looks it up.
fn lookup_name(name: &str) -> String {
    name.replace('\\', "/").to_ascii_lowercase()
}

fn zip_problem(error: ZipError) -> ParseError {
    match error {
        ZipError::UnsupportedArchive(message) if message.contains("assword") => {
            WorkbookProblem::Encrypted.into()
        }
        ZipError::InvalidPassword => WorkbookProblem::Encrypted.into(),
        other => WorkbookProblem::Corrupt(other.to_string()).into(),
    }
}

/// The `uniqueCount` of the part's `<sst>`, read as calamine reads it (the first start
/// tag named `sst`, digits only); `None` when it has none calamine would use.
fn unique_count(part: impl Read) -> Option<u64> {
    let mut xml = quick_xml::Reader::from_reader(io::BufReader::new(part));
    let mut buffer = Vec::new();
    loop {
        buffer.clear();
        match xml.read_event_into(&mut buffer).ok()? {
            quick_xml::events::Event::Start(tag) if tag.local_name().as_ref() == "sst" => {
                let count = tag.try_get_attribute("uniqueCount").ok()??;
                return count.value.parse().ok();
            }
            quick_xml::events::Event::Eof => return None,
            _ => {}
        }
    }
}

/// A reader that counts the bytes read through it.
struct Counted<R> {
    inner: R,
    read: u64,
}

impl<R> Counted<R> {
    fn new(inner: R) -> Self {
        Self { inner, read: 0 }
    }
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        let read = self.inner.read(buffer)?;
        self.read += read as u64;
        Ok(read)
    }
}
