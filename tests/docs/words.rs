//! How the docs' lines are read (`docs.rs`): their links, the backticked words that look
//! like repository paths, and the `METHOD /path` routes, matched segment by segment.

use std::collections::BTreeSet;

/// Endings that make a token with a `/` a file's path.
const FILE_ENDINGS: &[&str] = &[
    "rs", "md", "toml", "yaml", "yml", "json", "js", "mjs", "html", "css", "py", "sh", "sql",
    "csv", "lock", "txt", "svg",
];

const METHODS: &[&str] = &["GET", "POST", "PUT", "PATCH", "DELETE"];

/// The `[text](target)` links of a line: where each starts and ends, and its target.
pub(super) fn links(line: &str) -> Vec<(usize, usize, &str)> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(at) = line[from..].find("](").map(|at| from + at) {
        let start = line[from..at].rfind('[').map(|start| from + start);
        let end = line[at + 2..].find(')').map(|end| at + 2 + end);
        match (start, end) {
            (Some(start), Some(end)) => {
                found.push((start, end + 1, &line[at + 2..end]));
                from = end + 1;
            }
            _ => from = at + 2,
        }
    }
    found
}

/// The line without its links, text and all (a link's target is checked as a link).
fn without_links(line: &str) -> String {
    let mut kept = String::new();
    let mut from = 0;
    for (start, end, _) in links(line) {
        kept.push_str(&line[from..start]);
        from = end;
    }
    kept.push_str(&line[from..]);
    kept
}

/// The words of a line's backticked spans that look like repository paths.
pub(super) fn paths_in(line: &str, top: &BTreeSet<String>) -> Vec<String> {
    let line = without_links(line);
    let spans = line.split('`').skip(1).step_by(2);
    spans
        .flat_map(str::split_whitespace)
        .map(|word| word.trim_end_matches([',', ';', ':', '.', ')']))
        .filter(|word| looks_like_a_path(word, top))
        .map(str::to_owned)
        .collect()
}

fn looks_like_a_path(word: &str, top: &BTreeSet<String>) -> bool {
    if word.is_empty()
        || word.contains("://")
        || word.starts_with(['/', '-'])
        || word.contains(['*', '…', '<', '{', '$', '='])
    {
        return false;
    }
    let file_ending = |name: &str| {
        name.rsplit_once('.')
            .is_some_and(|(stem, ending)| !stem.is_empty() && FILE_ENDINGS.contains(&ending))
    };
    match word.split_once('/') {
        Some((first, _)) => {
            let last = word.rsplit('/').next().unwrap_or_default();
            top.contains(first) || word.ends_with('/') || file_ending(last)
        }
        None => word.ends_with(".md") || word.ends_with(".toml"),
    }
}

/// The `METHOD /path` routes a line names, the path cut where the route ends (at a space,
/// a query, a backtick or punctuation; a `|` only outside `{…}`).
pub(super) fn routes_in(line: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for method in METHODS {
        for (at, _) in line.match_indices(method) {
            let word_start = line[..at]
                .chars()
                .next_back()
                .is_none_or(|c| !c.is_alphanumeric() && c != '_');
            let rest = &line[at + method.len()..];
            let after = rest.trim_start_matches(' ');
            if !word_start || after.len() == rest.len() || !after.starts_with('/') {
                continue;
            }
            let mut depth = 0;
            let end = after
                .char_indices()
                .find(|&(_, c)| {
                    match c {
                        '{' => depth += 1,
                        '}' => depth -= 1,
                        _ => {}
                    }
                    c.is_whitespace() || "`?[),;\"'<>\\".contains(c) || (c == '|' && depth <= 0)
                })
                .map_or(after.len(), |(end, _)| end);
            let path = after[..end].trim_end_matches(['.', ':', '/']);
            if !path.is_empty() {
                found.push((method.to_string(), path.to_owned()));
            }
        }
    }
    found
}

/// A route as segments, each `None` where it matches any segment.
pub(super) type Pattern = (String, Vec<Option<String>>);

pub(super) fn pattern(method: &str, path: &str) -> Pattern {
    let segments = path
        .trim_matches('/')
        .split('/')
        .map(|segment| {
            let any = segment.starts_with('{') || segment.contains(['*', '…']);
            (!any).then(|| segment.to_owned())
        })
        .collect();
    (method.to_uppercase(), segments)
}

pub(super) fn matches(route: &Pattern, known: &Pattern) -> bool {
    route.0 == known.0
        && route.1.len() == known.1.len()
        && route.1.iter().zip(&known.1).all(|pair| match pair {
            (Some(a), Some(b)) => a == b,
            _ => true,
        })
}

#[test]
fn a_path_is_a_backticked_token_that_looks_like_one() {
    let top: BTreeSet<String> = ["src", "docs", "scripts", "Makefile"]
        .map(String::from)
        .into();
    let check =
        |line: &str, expected: &[&str]| assert_eq!(paths_in(line, &top), expected, "{line}");
    check(
        "`src/routes/mod.rs` and `scripts/test --x`",
        &["src/routes/mod.rs", "scripts/test"],
    );
    check(
        "`routes/` (`payments/input.rs`, `lab/drive.js`)",
        &["routes/", "payments/input.rs", "lab/drive.js"],
    );
    check(
        "`queue.md`, `wrangler.toml`, `payments.rs`",
        &["queue.md", "wrangler.toml"],
    );
    check("`COUNT/WINDOW`, `text/csv`, `5/1s`, `user=L/W`", &[]);
    check(
        "`/admin/console`, `http://x/y.md`, `experiments/<name>.md`, `docs/*.md`",
        &[],
    );
    check("`{eventId}/enter`, `test_sk_…/x.rs`, `$DIR/x.rs`", &[]);
    check(
        "[`queue.md`](docs/design/queue.md) and `docs/a.md`.",
        &["docs/a.md"],
    );
}

#[test]
fn a_route_is_a_method_and_a_path() {
    let check = |line: &str, expected: &[(&str, &str)]| {
        let expected: Vec<(String, String)> = expected
            .iter()
            .map(|(method, path)| (method.to_string(), path.to_string()))
            .collect();
        assert_eq!(routes_in(line), expected, "{line}");
    };
    check(
        "`POST /payments/confirm` `{orderId}`",
        &[("POST", "/payments/confirm")],
    );
    check(
        "`GET /admin/payments?status=UNKNOWN`.",
        &[("GET", "/admin/payments")],
    );
    check(
        "`POST /admin/events/{eventId}/pause` \\| `resume`",
        &[("POST", "/admin/events/{eventId}/pause")],
    );
    check(
        "(`POST /gateway/webhooks/{toss|stripe}`)",
        &[("POST", "/gateway/webhooks/{toss|stripe}")],
    );
    check(
        "`GET /checkout/{eventId}[?price=N]`",
        &[("GET", "/checkout/{eventId}")],
    );
    check("TARGET /x, GET http://host/y, a GET request", &[]);
}

#[test]
fn a_parameter_or_a_star_matches_any_segment() {
    let known = pattern("POST", "/queue/{eventid}/enter");
    assert!(matches(&pattern("POST", "/queue/spike-drop/enter"), &known));
    assert!(matches(&pattern("POST", "/queue/*/enter"), &known));
    assert!(matches(&pattern("post", "/queue/{id}/enter"), &known));
    assert!(!matches(&pattern("GET", "/queue/x/enter"), &known));
    assert!(!matches(&pattern("POST", "/queue/x/enter/now"), &known));
    assert!(!matches(&pattern("POST", "/queues/x/enter"), &known));
}
