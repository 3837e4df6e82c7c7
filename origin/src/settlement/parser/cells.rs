//! What one cell says: a header name or summary label made comparable, a date, an
//! amount of won. Lenient about how people and spreadsheets write them, strict about
//! what they mean.

use chrono::NaiveDate;

/// A header name or a summary label made comparable: lower case; white space, `_`, `-`
/// and a byte order mark removed; then a trailing `:` and a trailing `(…)` or `[…]` (a
/// unit, a count) dropped. `Settle_Amount (KRW)` becomes `settleamount`, `주문 번호:`
/// becomes `주문번호`.
pub fn normalize(name: &str) -> String {
    let mut name: String = name
        .chars()
        .filter(|c| !c.is_whitespace() && !matches!(c, '_' | '-' | '\u{feff}'))
        .flat_map(char::to_lowercase)
        .collect();
    while name.ends_with(':') {
        name.pop();
    }
    for (open, close) in [('(', ')'), ('[', ']')] {
        if name.ends_with(close) {
            if let Some(start) = name.rfind(open).filter(|&start| start > 0) {
                name.truncate(start);
            }
        }
    }
    while name.ends_with(':') {
        name.pop();
    }
    name
}

/// The calendar date a date cell starts with, as written (no time zone is applied), or
/// `None`. After leading white space: `YYYY-MM-DD`, `YYYY/MM/DD` or `YYYY.MM.DD` (one- or
/// two-digit month and day), or `YYYYMMDD`; then the end, or anything that is not a digit
/// (` 03:28:15`, `T03:28:15Z`). An impossible date (`2026-02-30`) is `None`.
pub fn parse_date(text: &str) -> Option<NaiveDate> {
    let text = text.trim_start();
    let (year, rest) = digits(text);
    let (year, month, day, rest) = if year.len() == 8 {
        let (year, month_day) = year.split_at(4);
        let (month, day) = month_day.split_at(2);
        (year, month, day, rest)
    } else {
        let separator = rest
            .chars()
            .next()
            .filter(|c| matches!(c, '-' | '/' | '.'))?;
        let (month, rest) = digits(rest.strip_prefix(separator)?);
        let (day, rest) = digits(rest.strip_prefix(separator)?);
        (year, month, day, rest)
    };
    let valid = year.len() == 4
        && (1..=2).contains(&month.len())
        && (1..=2).contains(&day.len())
        && !rest.starts_with(|c: char| c.is_ascii_digit());
    if !valid {
        return None;
    }
    NaiveDate::from_ymd_opt(year.parse().ok()?, month.parse().ok()?, day.parse().ok()?)
}

/// The leading ASCII digits of `text`, and the rest.
fn digits(text: &str) -> (&str, &str) {
    let end = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    text.split_at(end)
}

/// A whole number of won, as settlement files write it, or `None`.
///
/// White space anywhere is ignored. Accepted: an optional sign (`+` or `-`: refunds and
/// corrections are negative, and reconciliation decides what they mean), before or after
/// an optional leading `₩`, `￦` or `KRW`; digits, with `,` thousands separators only in
/// groups of three (`1,00` may be a decimal comma, so it is refused); an optional
/// fraction of zeros only (`1000.00` is 1000 — the won has no minor unit, so `1000.5` is
/// refused); an optional trailing `원` or `KRW`. Refused as well: anything else (`$`,
/// `(1,000)`, `1e5`), no digits at all, and a value outside `i64`.
pub fn parse_amount(text: &str) -> Option<i64> {
    let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    let (mut negative, rest) = take_sign(&compact);
    let rest = strip_currency_prefix(rest);
    let rest = if negative.is_none() {
        let (sign, rest) = take_sign(rest);
        negative = sign;
        rest
    } else {
        rest
    };
    let negative = negative.unwrap_or(false);
    let rest = strip_currency_suffix(rest);
    let integer = match rest.split_once('.') {
        Some((integer, fraction)) => {
            if fraction.is_empty() || fraction.bytes().any(|b| b != b'0') {
                return None;
            }
            integer
        }
        None => rest,
    };
    if !well_grouped(integer) {
        return None;
    }
    let mut value: i64 = 0;
    for digit in integer.bytes().filter(|b| b.is_ascii_digit()) {
        let digit = i64::from(digit - b'0');
        value = value.checked_mul(10)?;
        value = if negative {
            value.checked_sub(digit)?
        } else {
            value.checked_add(digit)?
        };
    }
    Some(value)
}

/// `Some(true)` for a leading `-`, `Some(false)` for `+`, and the rest.
fn take_sign(text: &str) -> (Option<bool>, &str) {
    if let Some(rest) = text.strip_prefix('-') {
        (Some(true), rest)
    } else if let Some(rest) = text.strip_prefix('+') {
        (Some(false), rest)
    } else {
        (None, text)
    }
}

fn strip_currency_prefix(text: &str) -> &str {
    if let Some(rest) = text.strip_prefix(['₩', '￦']) {
        return rest;
    }
    match text.split_at_checked(3) {
        Some((mark, rest)) if mark.eq_ignore_ascii_case("krw") => rest,
        _ => text,
    }
}

fn strip_currency_suffix(text: &str) -> &str {
    if let Some(rest) = text.strip_suffix('원') {
        return rest;
    }
    let split = text
        .len()
        .checked_sub(3)
        .and_then(|cut| text.split_at_checked(cut));
    match split {
        Some((rest, mark)) if mark.eq_ignore_ascii_case("krw") => rest,
        _ => text,
    }
}

/// ASCII digits, at least one; if there are commas, a first group of one to three digits
/// and then groups of exactly three.
fn well_grouped(integer: &str) -> bool {
    let mut groups = integer.split(',');
    let first = groups.next().unwrap_or_default();
    let digits = |group: &str| group.bytes().all(|b| b.is_ascii_digit());
    if first.is_empty() || !digits(first) {
        return false;
    }
    if integer.contains(',') && first.len() > 3 {
        return false;
    }
    groups.all(|group| group.len() == 3 && digits(group))
}
