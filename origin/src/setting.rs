//! One setting read from the environment, as the origin's configuration and the
//! merchant webhooks' read theirs: a bounded whole number, the refusal naming the
//! variable.

use std::ops::RangeInclusive;

/// The variable `name`'s `value`, a whole number in `range`; `default` when unset.
/// The error names the variable and says what was expected.
pub fn whole_number(
    value: Option<String>,
    name: &'static str,
    default: u64,
    range: RangeInclusive<u64>,
) -> Result<u64, (&'static str, String)> {
    let value = value.unwrap_or_else(|| default.to_string());
    value
        .parse::<u64>()
        .ok()
        .filter(|n| range.contains(n))
        .ok_or_else(|| {
            let (min, max) = range.into_inner();
            (
                name,
                format!("`{value}` is not a whole number from {min} to {max}"),
            )
        })
}
