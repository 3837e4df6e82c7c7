//! The exception queue: every finding an operator must look at (INTERNAL_ONLY,
//! EXTERNAL_ONLY, AMOUNT_MISMATCH) waits here as PENDING until it is resolved with a note.
//!
//! An item is one distinct finding, known by its [`fingerprint`]: the category, the
//! order id and both amounts. The same finding found again — the same file uploaded
//! twice, or an overlapping period — is not queued again, nor is one an operator has
//! resolved. A finding that changes (the PG corrects an amount) is a new item. When a
//! later file matches an order, its pending AMOUNT_MISMATCH or INTERNAL_ONLY item is
//! closed automatically.

use serde::Serialize;

use super::period::Period;
use super::reconcile::{Category, Finding};

/// The note on an item that a later file closed.
pub const CLOSED_BY_A_MATCH: &str = "closed automatically: a later settlement file matched it";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ItemStatus {
    Pending,
    Resolved,
}

impl ItemStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ItemStatus::Pending => "PENDING",
            ItemStatus::Resolved => "RESOLVED",
        }
    }

    pub fn parse(text: &str) -> Option<ItemStatus> {
        [ItemStatus::Pending, ItemStatus::Resolved]
            .into_iter()
            .find(|status| status.as_str() == text)
    }
}

/// A queued finding, as stored and as operators see it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Item {
    pub id: i64,
    pub order_id: String,
    pub category: Category,
    pub internal_amount: Option<i64>,
    pub external_amount: Option<i64>,
    /// The file's line, for a finding the file named.
    pub line: Option<u64>,
    /// The period of the reconciliation that first found it.
    pub period: Period,
    pub status: ItemStatus,
    pub note: Option<String>,
    pub created_at: i64,
    pub resolved_at: Option<i64>,
}

/// What resolving an item did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolution {
    Resolved(Item),
    /// It had been resolved before; it is left as it was.
    AlreadyResolved(Item),
    NotFound,
}

/// What makes two findings the same finding.
pub fn fingerprint(finding: &Finding) -> String {
    let amount = |amount: Option<i64>| amount.map_or_else(|| "-".to_owned(), |a| a.to_string());
    format!(
        "{}|{}|{}|{}",
        finding.category.as_str(),
        amount(finding.internal_amount),
        amount(finding.external_amount),
        finding.order_id,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(category: Category, internal: Option<i64>, external: Option<i64>) -> Finding {
        Finding {
            order_id: "o|1".into(),
            category,
            internal_amount: internal,
            external_amount: external,
            line: Some(7),
        }
    }

    #[test]
    fn the_same_finding_on_another_line_is_the_same_finding() {
        let first = finding(Category::AmountMismatch, Some(1_000), Some(1_500));
        let again = Finding {
            line: Some(9),
            ..first.clone()
        };
        assert_eq!(fingerprint(&first), fingerprint(&again));
        assert_eq!(fingerprint(&first), "AMOUNT_MISMATCH|1000|1500|o|1");
    }

    #[test]
    fn another_category_or_amount_is_another_finding() {
        let prints = [
            finding(Category::AmountMismatch, Some(1_000), Some(1_500)),
            finding(Category::AmountMismatch, Some(1_000), Some(1_600)),
            finding(Category::InternalOnly, Some(1_000), None),
            finding(Category::ExternalOnly, None, Some(1_000)),
            finding(Category::ExternalOnly, None, Some(-1_000)),
        ]
        .map(|finding| fingerprint(&finding));
        let distinct: std::collections::HashSet<_> = prints.iter().collect();
        assert_eq!(distinct.len(), prints.len());
    }

    #[test]
    fn statuses_read_back() {
        for status in [ItemStatus::Pending, ItemStatus::Resolved] {
            assert_eq!(ItemStatus::parse(status.as_str()), Some(status));
        }
        assert_eq!(ItemStatus::parse("pending"), None);
        for category in Category::ALL {
            assert_eq!(Category::parse(category.as_str()), Some(category));
        }
    }
}
