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
/// an optional leading `₩`, `￦` or `KRW`; or instead of a sign, the whole value in
/// parentheses, accounting's negative (`(1,250,000)` and `(₩1,250,000)` are −1,250,000);
/// digits, with `,` thousands separators only in groups of three (`1,00` may be a
/// decimal comma, so it is refused); an optional fraction of zeros only (`1000.00` is
/// 1000 — the won has no minor unit, so `1000.5` is refused); an optional trailing `원`
/// or `KRW`. Refused as well: a sign and parentheses together (`(-1,000)`, `-(1,000)`),
/// a parenthesis left open, anything else (`$`, `1e5`), no digits at all, and a value
/// outside `i64`.
pub fn parse_amount(text: &str) -> Option<i64> {
    let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    let (negative, number) = match compact.strip_prefix('(') {
        Some(inner) => (true, unsigned(inner.strip_suffix(')')?)?),
        None => signed(&compact),
    };
    whole_won(number, negative)
}

/// A sign before or after the currency mark: whether it is negative, and the number.
fn signed(text: &str) -> (bool, &str) {
    let (sign, rest) = take_sign(text);
    let rest = strip_currency_prefix(rest);
    match sign {
        Some(negative) => (negative, rest),
        None => {
            let (sign, rest) = take_sign(rest);
            (sign.unwrap_or(false), rest)
        }
    }
}

/// Inside parentheses: a currency mark and the number, no sign.
fn unsigned(text: &str) -> Option<&str> {
    let rest = strip_currency_prefix(text);
    let has_sign = |text: &str| take_sign(text).0.is_some();
    (!has_sign(text) && !has_sign(rest)).then_some(rest)
}

/// Digits, grouped, with an optional zero fraction and currency suffix.
fn whole_won(text: &str, negative: bool) -> Option<i64> {
    let rest = strip_currency_suffix(text);
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

/// A workbook's number as Excel shows it in the General format: rounded to 15
/// significant digits (so a formula's `1100.0000000000002` is 1100).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum ExcelNumber {
    /// Whole, below 10^15 in magnitude: exact.
    Whole(i64),
    /// Not whole.
    Fraction(f64),
    /// 10^15 or more in magnitude, or not finite: digits past the 15th are lost.
    Inexact,
}

/// The largest magnitude Excel's 15 significant digits hold exactly, plus one.
const EXACT_LIMIT: f64 = 1e15;

pub(super) fn excel_number(value: f64) -> ExcelNumber {
    let shown: f64 = match format!("{value:.14e}").parse() {
        Ok(shown) => shown,
        Err(_) => return ExcelNumber::Inexact,
    };
    if !shown.is_finite() || shown.abs() >= EXACT_LIMIT {
        ExcelNumber::Inexact
    } else if shown.fract() == 0.0 {
        // Below 10^15 in magnitude and whole: the conversion is exact.
        ExcelNumber::Whole(shown as i64)
    } else {
        ExcelNumber::Fraction(shown)
    }
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
