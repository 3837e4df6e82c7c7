//! Content-Security-Policy sources for a page's own inline blocks: each `<script>` or
//! `<style>` allowed by its SHA-256, never `'unsafe-inline'` — computed from the page
//! itself, so an edit to it cannot leave its policy behind. The edge's waiting-room page
//! and the origin's operator console use it.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use sha2::{Digest, Sha256};

/// The CSP sources of every `<tag>…</tag>` block of `page`: `'sha256-…'` each, or
/// `'none'` when it has none.
pub fn inline_hashes(page: &str, tag: &str) -> String {
    let (open, close) = (format!("<{tag}>"), format!("</{tag}>"));
    let mut sources = Vec::new();
    let mut rest = page;
    while let Some((_, after)) = rest.split_once(&open) {
        let Some((body, after)) = after.split_once(&close) else {
            break;
        };
        sources.push(format!(
            "'sha256-{}'",
            STANDARD.encode(Sha256::digest(body))
        ));
        rest = after;
    }
    if sources.is_empty() {
        "'none'".to_owned()
    } else {
        sources.join(" ")
    }
}

/// The policy of a page with nothing but its own inline script and style, calling only
/// its own origin: never framed, no `<base>`, no form posts.
pub fn page_policy(page: &str) -> String {
    format!(
        "default-src 'none'; script-src {}; style-src {}; connect-src 'self'; \
         frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
        inline_hashes(page, "script"),
        inline_hashes(page, "style")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_inline_block_is_allowed_by_its_hash_and_nothing_inline_else() {
        let page = "<style>a{}</style><script>one()</script><p>x</p><script>two()</script>";
        let hash = |text: &str| format!("'sha256-{}'", STANDARD.encode(Sha256::digest(text)));
        assert_eq!(
            inline_hashes(page, "script"),
            format!("{} {}", hash("one()"), hash("two()"))
        );
        assert_eq!(inline_hashes(page, "style"), hash("a{}"));
        assert_eq!(inline_hashes("<p>none</p>", "script"), "'none'");
        let policy = page_policy(page);
        assert!(!policy.contains("unsafe-inline"), "{policy}");
        for directive in [
            "frame-ancestors 'none'",
            "base-uri 'none'",
            "default-src 'none'",
        ] {
            assert!(policy.contains(directive), "{policy}");
        }
    }
}
