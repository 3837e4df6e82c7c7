//! The header row: which columns hold the order id, the amount and the date, found by
//! their names, and what is wrong when they are not there.

use super::row::RowView;
use super::{normalize, MAX_LEADING_ROWS, MAX_ROW_BYTES};

/// Names of the order id column, normalised (see [`normalize`]): `orderNo`, `order_no`,
/// `Order-ID`, `merchant_uid`, `주문번호`, `주문ID` and so on; in English exports also
/// the merchant's own reference, `Invoice Number` / `Invoice ID` (PayPal's activity and
/// settlement reports) and `Merchant Reference` (Adyen's). Not included: `거래번호`,
/// `tid`, `paymentKey`, `Transaction ID` — those are the PG's own transaction ids, never
/// our order id, and matching them would make every row look unknown to us.
pub const ORDER_ID_HEADERS: &[&str] = &[
    "orderno",
    "orderid",
    "ordernumber",
    "merchantuid",
    "merchantorderid",
    "merchantreference",
    "invoicenumber",
    "invoiceid",
    "주문번호",
    "주문id",
    "주문no",
    "가맹점주문번호",
    "상점주문번호",
];

/// Names of the amount column, normalised (see [`normalize`]): `amount`,
/// `settle_amount`, `결제금액`, `정산금액(원)` and so on; in English exports `Gross` /
/// `Gross Amount`, the charged amount as PayPal's and Stripe's reports name it. Not
/// included: the net (`Net`, `payOutAmount`, `지급금액` — the charge less fees), fees
/// (`Fee`, `수수료`), VAT (`부가세`), `totalAmount` (often a running or grand total).
pub const AMOUNT_HEADERS: &[&str] = &[
    "amount",
    "settleamount",
    "settlementamount",
    "approvedamount",
    "approvalamount",
    "paymentamount",
    "gross",
    "grossamount",
    "금액",
    "결제금액",
    "정산금액",
    "승인금액",
    "거래금액",
];

/// Names of the transaction date column, normalised (see [`normalize`]): `거래일시`,
/// `승인일자`, `approvedAt`, `transaction_date`, `date` and so on. Optional: it tells
/// which days a file covers when the operator does not say. Not included: the settlement
/// date (`정산일`, `settlementDate`) — the day the money moves, often days after the charge.
pub const DATE_HEADERS: &[&str] = &[
    "거래일시",
    "거래일자",
    "거래일",
    "승인일시",
    "승인일자",
    "결제일시",
    "결제일자",
    "결제일",
    "date",
    "transactiondate",
    "transactiontime",
    "transactedat",
    "tradedate",
    "approvedat",
    "approvaldate",
    "approveddate",
    "paidat",
    "paymentdate",
    "createdutc",
    // Stripe's dashboard exports: "Created (UTC)", the bracket read as a unit.
    "created",
    "transactioninitiationdate",
];

/// What is wrong with the header row: the first row that names an order id column or an
/// amount column (or else the first row that is not blank), when no row names both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum HeaderProblem {
    #[error("no header row: the file is empty, or its first {MAX_LEADING_ROWS} rows are blank")]
    NoHeader,
    #[error("the header row has neither an order id column nor an amount column")]
    NoOrderIdOrAmountColumn,
    #[error("the header row has no order id column")]
    NoOrderIdColumn,
    #[error("the header row has no amount column")]
    NoAmountColumn,
    #[error("the header row opens a quote that is never closed")]
    UnterminatedQuote,
    #[error("the header row is longer than {MAX_ROW_BYTES} bytes")]
    TooLong,
}

/// The header row, and the two columns found in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// The physical line (1-based) on which the header starts.
    pub line: u64,
    pub order_id: Column,
    pub amount: Column,
    /// The transaction date column, if the file has one.
    pub date: Option<Column>,
}

/// A column found by its name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    /// 0-based position in the row.
    pub index: usize,
    /// The name as written, trimmed.
    pub name: String,
}

impl Header {
    /// The header, when `row` names an order id column and an amount column.
    pub(super) fn find(row: &impl RowView) -> Result<Header, HeaderProblem> {
        let mut order_id = None;
        let mut amount = None;
        let mut date = None;
        for index in 0..row.width() {
            let Some(name) = row.text(index) else {
                continue;
            };
            let normal = normalize(&name);
            let column = || Column {
                index,
                name: name.trim().to_owned(),
            };
            if order_id.is_none() && ORDER_ID_HEADERS.contains(&normal.as_str()) {
                order_id = Some(column());
            } else if amount.is_none() && AMOUNT_HEADERS.contains(&normal.as_str()) {
                amount = Some(column());
            } else if date.is_none() && DATE_HEADERS.contains(&normal.as_str()) {
                date = Some(column());
            }
        }
        match (order_id, amount) {
            (Some(order_id), Some(amount)) => Ok(Header {
                line: row.line(),
                order_id,
                amount,
                date,
            }),
            (None, None) => Err(HeaderProblem::NoOrderIdOrAmountColumn),
            (None, Some(_)) => Err(HeaderProblem::NoOrderIdColumn),
            (Some(_), None) => Err(HeaderProblem::NoAmountColumn),
        }
    }
}
