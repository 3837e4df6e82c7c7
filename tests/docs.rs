//! The Markdown names only what exists. In every `*.md` of the repository (what git keeps:
//! `target/`, `node_modules/` and the rest of `.gitignore` left out), outside code
//! blocks:
//!
//! - a backticked repository path (`src/routes/mod.rs`, `origin/src/store/`,
//!   `docs/design/queue.md`, `scripts/test`) exists — relative to the repository's root,
//!   to the doc's own folder, or to the directory its section's heading names (the code
//!   map writes `routes/mod.rs` under "`src/`");
//! - a relative link (`[queue](queue.md)`) leads to a file, from the doc's folder;
//! - a route written as `METHOD /path` is one that a router answers: one described in
//!   `docs/openapi/` (which `openapi.rs` holds to the routers), or one of the gateway
//!   simulator's (`gateway-sim/src/routes/mod.rs`); a `{param}`, `*` or `…` segment
//!   matches any segment.
//!
//! No process is started: the files are read from disk. A token is a path when it has a
//! `/` and starts with a top-level entry of the repository, ends in `/`, or ends in a
//! known file ending; or, without a `/`, when it names a `.md` or `.toml` file. Tokens
//! with placeholders (`*`, `…`, `<name>`, `{id}`, `$VAR`, `NAME=`) are examples, not
//! paths. What is left over that truly lives elsewhere is in the two short lists below.

use std::collections::BTreeSet;
use std::path::Path;

use crate::openapi::{axum_routes, described, read};
use words::{links, matches, paths_in, pattern, routes_in, Pattern};

mod words;

/// Paths a doc may name that are not files of the repository.
const NOT_IN_THE_REPOSITORY: &[&str] = &[
    // The folder inside an `.xlsx` archive that holds its sheets (docs/settlement-files.md).
    "xl/worksheets/",
];

/// Routes a doc may name that none of our routers answers: Stripe's own API, which the
/// origin's Stripe adapter calls and localstripe serves (the simulator speaks Toss's only).
const ROUTES_OF_OTHER_SERVICES: &[&str] = &[
    "POST /v1/payment_intents",
    "GET /v1/payment_intents/{}",
    "POST /v1/refunds",
];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The simple entries of every `.gitignore` (no globs there today): the folder each
/// applies in, whether it is anchored there, and the path.
struct Ignored(Vec<(String, bool, String)>);

impl Ignored {
    /// The root's `.gitignore`, then those of the folders it leaves in.
    fn read() -> Self {
        let mut ignored = Self(Vec::new());
        ignored.add("");
        let mut folders = vec![String::new()];
        while let Some(folder) = folders.pop() {
            for entry in entries(&folder) {
                let name = entry.file_name().to_string_lossy().into_owned();
                let path = joined(&folder, &name);
                let is_dir = entry.file_type().expect("a file type").is_dir();
                if is_dir && name != ".git" && !ignored.covers(&path) {
                    if root().join(&path).join(".gitignore").is_file() {
                        ignored.add(&path);
                    }
                    folders.push(path);
                }
            }
        }
        ignored
    }

    fn add(&mut self, folder: &str) {
        let file = read(&joined(folder, ".gitignore"));
        let lines = file.lines().map(str::trim);
        for line in lines.filter(|line| !line.is_empty() && !line.starts_with('#')) {
            if !line.contains('*') {
                let anchored = line.trim_end_matches('/').contains('/');
                let path = line.trim_matches('/').to_owned();
                self.0.push((folder.to_owned(), anchored, path));
            }
        }
    }

    /// Whether git ignores `path` (relative to the root, `/`-separated).
    fn covers(&self, path: &str) -> bool {
        let path = path.trim_end_matches('/');
        self.0.iter().any(|(folder, anchored, entry)| {
            let Some(inside) = (if folder.is_empty() {
                Some(path)
            } else {
                path.strip_prefix(&format!("{folder}/"))
            }) else {
                return false;
            };
            if *anchored {
                inside == entry || inside.starts_with(&format!("{entry}/"))
            } else {
                inside.split('/').any(|part| part == entry)
            }
        })
    }
}

fn joined(folder: &str, name: &str) -> String {
    if folder.is_empty() {
        name.to_owned()
    } else {
        format!("{folder}/{name}")
    }
}

/// A folder's entries (relative to the root), by name.
fn entries(folder: &str) -> Vec<std::fs::DirEntry> {
    let mut entries: Vec<_> = std::fs::read_dir(root().join(folder))
        .unwrap_or_else(|err| panic!("{folder}: {err}"))
        .map(|entry| entry.expect("a directory entry"))
        .collect();
    entries.sort_by_key(|entry| entry.file_name());
    entries
}

/// Every Markdown file git would keep, relative to the root, in order.
fn markdown_files(ignored: &Ignored) -> Vec<String> {
    fn walk(folder: &str, ignored: &Ignored, found: &mut Vec<String>) {
        for entry in entries(folder) {
            let name = entry.file_name().to_string_lossy().into_owned();
            let path = joined(folder, &name);
            if name == ".git" || ignored.covers(&path) {
                continue;
            }
            if entry.file_type().expect("a file type").is_dir() {
                walk(&path, ignored, found);
            } else if name.ends_with(".md") {
                found.push(path);
            }
        }
    }
    let mut found = Vec::new();
    walk("", ignored, &mut found);
    found
}

/// Every route a router answers, and the allowed routes of other services.
fn known_routes() -> Vec<Pattern> {
    let mut routes = BTreeSet::new();
    for doc in ["edge", "operator", "origin"] {
        routes.extend(described(&read(&format!("docs/openapi/{doc}.yaml"))));
    }
    routes.extend(axum_routes(&read("gateway-sim/src/routes/mod.rs")));
    routes.extend(
        ROUTES_OF_OTHER_SERVICES
            .iter()
            .map(|route| route.to_string()),
    );
    routes
        .iter()
        .filter_map(|route| route.split_once(' '))
        .map(|(method, path)| pattern(method, path))
        .collect()
}

/// What one doc names that does not exist, as `doc:line: what`.
fn problems_of(
    doc: &str,
    text: &str,
    top: &BTreeSet<String>,
    ignored: &Ignored,
    routes: &[Pattern],
) -> (Vec<String>, usize) {
    let folder = Path::new(doc).parent().unwrap_or(Path::new(""));
    let exists = |base: &Path, path: &str| root().join(base).join(path).exists();
    let mut problems = Vec::new();
    let mut checked = 0;
    let mut in_code = false;
    let mut section: Option<String> = None;
    for (number, line) in text.lines().enumerate() {
        let at = format!("{doc}:{}", number + 1);
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code {
            continue;
        }
        if line.starts_with('#') {
            section = line
                .split('`')
                .skip(1)
                .step_by(2)
                .filter(|span| span.ends_with('/') && root().join(span).is_dir())
                .last()
                .map(str::to_owned);
        }
        for (_, _, target) in links(line) {
            let target = target.split('#').next().unwrap_or_default();
            if target.is_empty() || target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            if !exists(folder, target) {
                problems.push(format!("{at}: the link `{target}` leads to no file"));
            }
        }
        for path in paths_in(line, top) {
            if ignored.covers(&path) || NOT_IN_THE_REPOSITORY.contains(&path.as_str()) {
                continue;
            }
            checked += 1;
            let found = exists(Path::new(""), &path)
                || exists(folder, &path)
                || section
                    .as_ref()
                    .is_some_and(|base| exists(Path::new(base), &path));
            if !found {
                problems.push(format!("{at}: `{path}` does not exist"));
            }
        }
        for (method, path) in routes_in(line) {
            checked += 1;
            let route = pattern(&method, &path);
            if !routes.iter().any(|known| matches(&route, known)) {
                problems.push(format!("{at}: no router answers `{method} {path}`"));
            }
        }
    }
    (problems, checked)
}

#[test]
fn every_file_and_route_the_docs_name_exists() {
    let ignored = Ignored::read();
    let docs = markdown_files(&ignored);
    for expected in ["README.md", "ARCHITECTURE.md", "docs/design/queue.md"] {
        assert!(
            docs.iter().any(|doc| doc == expected),
            "{expected} in {docs:?}"
        );
    }
    assert!(
        !docs.iter().any(|doc| doc.starts_with("target/")),
        "{docs:?}"
    );
    let top: BTreeSet<String> = std::fs::read_dir(root())
        .expect("the repository")
        .map(|entry| {
            entry
                .expect("an entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    let routes = known_routes();
    let mut problems = Vec::new();
    let mut checked = 0;
    for doc in &docs {
        let (found, count) = problems_of(doc, &read(doc), &top, &ignored, &routes);
        problems.extend(found);
        checked += count;
    }
    assert!(
        checked > 200,
        "only {checked} names checked: is the reading broken?"
    );
    assert!(
        problems.is_empty(),
        "{} names in the docs that do not exist (fix the doc, or, for what truly lives \
         elsewhere, the lists at the top of tests/docs.rs):\n{}",
        problems.len(),
        problems.join("\n")
    );
}
