//! `GET /checkout/{eventId}`: the checkout page the waiting room leads to once it is the
//! buyer's turn.
//!
//! The page opens the PG's payment window as Toss's SDK does (`requestPayment`: the
//! order as query parameters of the window's URL, no external script), and is where the
//! window sends the buyer back: on success it confirms through the edge
//! (`POST /payments/confirm`, the order id as the `Idempotency-Key`, so a reload replays
//! the first answer) and shows the receipt, the decline, or — while the outcome is
//! unknown — that the payment is being confirmed, asking `GET /payments/{orderId}` until
//! it settles. The window's URL and the client key are the edge's configuration, carried
//! in the page's attributes: the page's inline blocks, and so its hash-only policy, do not
//! depend on them.

use rules::confirm::check_event_id;
use worker::Response;

use crate::config::{EdgeConfig, PaymentWindow};
use crate::error::ApiError;

/// The page, with `{{windowUrl}}` and `{{clientKey}}` where the configuration goes.
const PAGE: &str = include_str!("checkout.html");

/// `GET /checkout/{eventId}`: the page, whether or not a payment window is configured
/// (without one it says so).
pub fn page(config: &EdgeConfig, event_id: &str) -> Result<Response, ApiError> {
    check_event_id(event_id)?;
    let response = Response::from_html(render(config.payment_window.as_ref()))?;
    let headers = response.headers();
    headers.set("cache-control", "no-store")?;
    headers.set("content-security-policy", page_policy())?;
    headers.set("x-frame-options", "DENY")?;
    headers.set("x-content-type-options", "nosniff")?;
    // The window and the receipt's URL carry the order: no other site is told of it.
    headers.set("referrer-policy", "no-referrer")?;
    Ok(response)
}

/// The page with the window's configuration in its attributes (empty when none).
fn render(window: Option<&PaymentWindow>) -> String {
    let (url, key) = window.map_or(("", ""), |w| (w.url.as_str(), w.client_key.as_str()));
    PAGE.replacen("{{windowUrl}}", &attribute(url), 1)
        .replacen("{{clientKey}}", &attribute(key), 1)
}

/// `text` as a double-quoted attribute's value. Configuration is checked at start, but
/// an attribute is escaped whatever it holds.
fn attribute(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The page's `Content-Security-Policy` (`rules::csp`): its own script and style, calls
/// to its own origin. The configuration lies outside both blocks, so the policy of the
/// template is the policy of every page rendered from it.
fn page_policy() -> &'static str {
    static POLICY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    POLICY.get_or_init(|| rules::csp::page_policy(PAGE))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(url: &str) -> PaymentWindow {
        PaymentWindow {
            url: url.into(),
            client_key: "test_ck_abc".into(),
        }
    }

    #[test]
    fn the_configuration_is_in_attributes_and_leaves_the_policy_as_it_is() {
        let page = render(Some(&window("http://127.0.0.1:9/window?a=1&b=2")));
        assert!(page.contains(r#"data-window-url="http://127.0.0.1:9/window?a=1&amp;b=2""#));
        assert!(page.contains(r#"data-client-key="test_ck_abc""#));
        assert_eq!(rules::csp::page_policy(&page), page_policy());
        assert_eq!(
            page_policy().matches("'sha256-").count(),
            2,
            "{}",
            page_policy()
        );
        assert!(!page_policy().contains("unsafe-inline"));
    }

    #[test]
    fn without_a_window_the_attributes_are_empty() {
        let page = render(None);
        assert!(page.contains(r#"data-window-url="""#), "{page}");
        assert!(!page.contains("{{"), "a placeholder is left");
    }

    #[test]
    fn an_attribute_cannot_be_left() {
        let page = render(Some(&window(r#"https://x/"><script>"#)));
        assert!(page.contains("https://x/&quot;&gt;&lt;script&gt;"));
    }
}
