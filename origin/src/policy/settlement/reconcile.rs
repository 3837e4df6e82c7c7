//! Reconciliation as a pure fold: our APPROVED payments of the period on one side, the
//! settlement file's rows on the other, one [`Finding`] per order.
//!
//! | the order is… | category |
//! |---|---|
//! | in both, same amount | `MATCHED` (closed automatically) |
//! | in both, amounts differ | `AMOUNT_MISMATCH` |
//! | only in the file | `EXTERNAL_ONLY` |
//! | only ours | `INTERNAL_ONLY` (reported when the file is finished) |
//!
//! Memory is our side only: the file's rows are decided one at a time as they stream
//! past and never kept, so a file of any length costs the payments of the period.
//! An order the file lists twice is matched once; the second row is `EXTERNAL_ONLY`
//! (the PG claims a charge we do not have).

use std::collections::HashMap;

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Category {
    Matched,
    InternalOnly,
    ExternalOnly,
    AmountMismatch,
}

impl Category {
    pub const ALL: [Category; 4] = [
        Category::Matched,
        Category::InternalOnly,
        Category::ExternalOnly,
        Category::AmountMismatch,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Category::Matched => "MATCHED",
            Category::InternalOnly => "INTERNAL_ONLY",
            Category::ExternalOnly => "EXTERNAL_ONLY",
            Category::AmountMismatch => "AMOUNT_MISMATCH",
        }
    }

    pub fn parse(text: &str) -> Option<Category> {
        Category::ALL
            .into_iter()
            .find(|category| category.as_str() == text)
    }

    /// Whether an operator must look: every category but `MATCHED`.
    pub fn is_exception(self) -> bool {
        self != Self::Matched
    }
}

/// What reconciliation found about one order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Finding {
    pub order_id: String,
    pub category: Category,
    /// Our amount, when we have the payment.
    pub internal_amount: Option<i64>,
    /// The file's amount, when the file lists the order.
    pub external_amount: Option<i64>,
    /// The file's line, when the file lists the order.
    pub line: Option<u64>,
}

/// Our side of the period, and which of it the file has named so far.
#[derive(Debug, Default)]
pub struct Reconciler {
    /// Order id → (our amount, named by the file yet).
    internal: HashMap<String, (i64, bool)>,
}

impl Reconciler {
    /// Starts from our APPROVED payments of the period: `(order id, amount)`.
    pub fn new(approved: impl IntoIterator<Item = (String, i64)>) -> Self {
        Self {
            internal: approved
                .into_iter()
                .map(|(order_id, amount)| (order_id, (amount, false)))
                .collect(),
        }
    }

    /// Decides one row of the file, found at `line`.
    pub fn row(&mut self, line: u64, order_id: &str, amount: i64) -> Finding {
        let (category, internal_amount) = match self.internal.get_mut(order_id) {
            Some((ours, named)) if !*named => {
                *named = true;
                let category = if *ours == amount {
                    Category::Matched
                } else {
                    Category::AmountMismatch
                };
                (category, Some(*ours))
            }
            _ => (Category::ExternalOnly, None),
        };
        Finding {
            order_id: order_id.to_owned(),
            category,
            internal_amount,
            external_amount: Some(amount),
            line: Some(line),
        }
    }

    /// Our payments the file never named: `INTERNAL_ONLY`, in order id order.
    pub fn finish(self) -> Vec<Finding> {
        let mut missing: Vec<Finding> = self
            .internal
            .into_iter()
            .filter(|(_, (_, named))| !named)
            .map(|(order_id, (amount, _))| Finding {
                order_id,
                category: Category::InternalOnly,
                internal_amount: Some(amount),
                external_amount: None,
                line: None,
            })
            .collect();
        missing.sort_by(|a, b| a.order_id.cmp(&b.order_id));
        missing
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ours() -> Reconciler {
        Reconciler::new([
            ("o-1".to_owned(), 1_000),
            ("o-2".to_owned(), 2_000),
            ("o-3".to_owned(), 3_000),
            ("o-4".to_owned(), 4_000),
        ])
    }

    #[test]
    fn each_order_falls_in_one_category() {
        let mut reconciler = ours();
        let rows = [
            (2, "o-1", 1_000, Category::Matched),
            (3, "o-2", 2_500, Category::AmountMismatch),
            (4, "ghost", 700, Category::ExternalOnly),
            (5, "o-4", 4_000, Category::Matched),
        ];
        for (line, order_id, amount, category) in rows {
            let finding = reconciler.row(line, order_id, amount);
            assert_eq!(finding.category, category, "{order_id}");
            assert_eq!(finding.line, Some(line));
            assert_eq!(finding.external_amount, Some(amount));
        }
        let missing = reconciler.finish();
        assert_eq!(
            missing,
            [Finding {
                order_id: "o-3".into(),
                category: Category::InternalOnly,
                internal_amount: Some(3_000),
                external_amount: None,
                line: None,
            }]
        );
    }

    #[test]
    fn a_mismatch_shows_both_amounts() {
        let finding = ours().row(9, "o-2", 2_500);
        assert_eq!(
            (finding.internal_amount, finding.external_amount),
            (Some(2_000), Some(2_500))
        );
    }

    #[test]
    fn an_order_listed_twice_is_matched_once() {
        let mut reconciler = ours();
        assert_eq!(reconciler.row(2, "o-1", 1_000).category, Category::Matched);
        let again = reconciler.row(3, "o-1", 1_000);
        assert_eq!(again.category, Category::ExternalOnly);
        assert_eq!(again.internal_amount, None);
    }

    #[test]
    fn a_settlement_file_as_the_pg_writes_it_reconciles_row_by_row() {
        use crate::policy::settlement::parser::{parse, Entry};
        let file = "\u{feff}거래일시,가맹점ID,주문번호,결제수단,결제금액,수수료,정산금액\r\n\
            2026-11-30 03:28:15,M,o-1,\"카드,일시불\",\"1,000원\",25원,975원\r\n\
            2026-11-30 03:28:16,M,o-2,\"카드,일시불\",\"2,500원\",62원,\"2,438원\"\r\n\
            2026-11-30 03:28:17,M,ghost,\"카드,일시불\",700원,17원,683원\r\n\
            합계,,,,\"4,200원\",104원,\"4,096원\"\r\n";
        let mut reconciler = ours();
        let mut found = Vec::new();
        let mut skipped = Vec::new();
        for entry in parse(file.as_bytes()).unwrap() {
            match entry.unwrap() {
                Entry::Row(row) => {
                    let finding = reconciler.row(row.line, &row.order_id, row.amount);
                    found.push((finding.order_id, finding.category));
                }
                Entry::Skipped(row) => skipped.push(row.line),
            }
        }
        found.extend(
            reconciler
                .finish()
                .into_iter()
                .map(|finding| (finding.order_id, finding.category)),
        );
        let expected = [
            ("o-1", Category::Matched),
            ("o-2", Category::AmountMismatch),
            ("ghost", Category::ExternalOnly),
            ("o-3", Category::InternalOnly),
            ("o-4", Category::InternalOnly),
        ]
        .map(|(order_id, category)| (order_id.to_owned(), category));
        assert_eq!(found, expected);
        assert_eq!(skipped, [5], "the 합계 row");
    }

    #[test]
    fn an_empty_file_leaves_everything_internal_only_in_order() {
        let missing = ours().finish();
        let orders: Vec<_> = missing.iter().map(|f| f.order_id.as_str()).collect();
        assert_eq!(orders, ["o-1", "o-2", "o-3", "o-4"]);
        assert!(missing.iter().all(|f| f.category.is_exception()));
        assert!(!Category::Matched.is_exception());
    }
}
