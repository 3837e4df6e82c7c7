//! The rules the layout keeps (ARCHITECTURE.md, "Pure rules"), read off the sources:
//!
//! - the origin's pure modules decide, and do no I/O: each may name only other pure
//!   modules of the crate, never an adapter (the store, the gateway client, the metrics,
//!   the HTTP side), and none reaches for the clock, randomness, the network, files or
//!   the database;
//! - no two of the origin's top-level modules need each other, however indirectly.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The pure modules, as paths in the crate (`a::b` covers `a::b` and everything in it).
const PURE: &[&str] = &["policy", "guard::answer"];

/// What a pure module never names, outside its tests: I/O, the clock, randomness.
const FORBIDDEN: &[&str] = &[
    "tokio",
    "sqlx",
    "reqwest",
    "axum",
    "hyper",
    "getrandom",
    "std::fs",
    "std::net",
    "std::env",
    "std::process",
    "SystemTime",
    "Instant::now",
];

#[test]
fn pure_modules_name_no_adapter_and_do_no_io() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut broken = Vec::new();
    let mut files = 0;
    for file in rust_files(&src) {
        let module = module_path(&src, &file);
        if !is_pure(&module) || module.last().is_some_and(|name| name == "tests") {
            continue;
        }
        files += 1;
        let text = fs::read_to_string(&file).expect("a source file");
        for (number, line) in code_lines(&text) {
            for path in named_paths(line, &module) {
                if !is_pure(&path) {
                    broken.push(format!(
                        "{}:{number} names crate::{}, not a pure module",
                        file.display(),
                        path.join("::")
                    ));
                }
            }
            for word in FORBIDDEN {
                if line.contains(word) {
                    broken.push(format!("{}:{number} names {word}", file.display()));
                }
            }
        }
    }
    assert!(files >= PURE.len(), "only {files} pure files found");
    assert!(
        broken.is_empty(),
        "the purity rule is broken:\n{}",
        broken.join("\n")
    );
}

#[test]
fn no_top_level_module_needs_itself_through_the_others() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut needs: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in rust_files(&src) {
        let module = module_path(&src, &file);
        let Some(top) = module
            .first()
            .filter(|top| !matches!(top.as_str(), "lib" | "main"))
        else {
            continue;
        };
        if module.iter().any(|part| part == "tests") {
            continue;
        }
        let text = fs::read_to_string(&file).expect("a source file");
        for (_, line) in code_lines(&text) {
            for path in named_paths(line, &module) {
                if let Some(other) = path.first().filter(|other| *other != top) {
                    needs.entry(top.clone()).or_default().insert(other.clone());
                }
            }
        }
    }
    let circles: Vec<String> = needs
        .keys()
        .filter_map(|start| circle_through(start, &needs))
        .collect();
    assert!(
        circles.is_empty(),
        "circles between top-level modules:\n{}",
        circles.join("\n")
    );
}

/// A path of needs from `start` back to itself, if there is one.
fn circle_through(start: &str, needs: &BTreeMap<String, BTreeSet<String>>) -> Option<String> {
    let mut path = vec![start.to_owned()];
    let mut seen = BTreeSet::new();
    fn walk(
        start: &str,
        path: &mut Vec<String>,
        seen: &mut BTreeSet<String>,
        needs: &BTreeMap<String, BTreeSet<String>>,
    ) -> bool {
        let Some(last) = path.last().cloned() else {
            return false;
        };
        for next in needs.get(&last).into_iter().flatten() {
            if next == start {
                path.push(next.clone());
                return true;
            }
            if seen.insert(next.clone()) {
                path.push(next.clone());
                if walk(start, path, seen, needs) {
                    return true;
                }
                path.pop();
            }
        }
        false
    }
    walk(start, &mut path, &mut seen, needs).then(|| path.join(" → "))
}

fn is_pure(path: &[String]) -> bool {
    PURE.iter().any(|pure| {
        let pure: Vec<&str> = pure.split("::").collect();
        path.len() >= pure.len() && path.iter().zip(&pure).all(|(a, b)| a == b)
    })
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in fs::read_dir(dir).expect("a folder").flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(rust_files(&path));
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            files.push(path);
        }
    }
    files
}

/// `guard/limiter/mod.rs` is `guard::limiter`, `recovery/decide.rs` is
/// `recovery::decide`.
fn module_path(src: &Path, file: &Path) -> Vec<String> {
    let relative = file.strip_prefix(src).expect("under src");
    let mut path: Vec<String> = relative
        .with_extension("")
        .components()
        .map(|part| part.as_os_str().to_string_lossy().into_owned())
        .collect();
    if path.last().is_some_and(|name| name == "mod") {
        path.pop();
    }
    path
}

/// The lines of code, numbered, without comments and without the items marked
/// `#[cfg(test)]` (a `mod tests;` line, or a whole `mod tests { … }`).
fn code_lines(text: &str) -> Vec<(usize, &str)> {
    let mut lines = Vec::new();
    let mut skipping_test_item = false;
    let mut depth: i64 = 0;
    let mut in_test_block = false;
    for (index, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or_default().trim();
        if in_test_block {
            depth += brace_balance(code);
            if depth <= 0 {
                in_test_block = false;
            }
            continue;
        }
        if code == "#[cfg(test)]" {
            skipping_test_item = true;
            continue;
        }
        if skipping_test_item {
            skipping_test_item = false;
            let balance = brace_balance(code);
            if balance > 0 {
                in_test_block = true;
                depth = balance;
            }
            continue;
        }
        if !code.is_empty() {
            lines.push((index + 1, code));
        }
    }
    lines
}

fn brace_balance(code: &str) -> i64 {
    code.chars()
        .map(|c| match c {
            '{' => 1,
            '}' => -1,
            _ => 0,
        })
        .sum()
}

/// The crate paths a line names, resolved from `module`: `crate::a::b`, `super::x`,
/// `self::y`, and each item of a `{…}` group after one of them.
fn named_paths(line: &str, module: &[String]) -> Vec<Vec<String>> {
    let mut paths = Vec::new();
    for start in ["crate::", "super::", "self::"] {
        let mut rest = line;
        while let Some(at) = rest.find(start) {
            let before = rest.get(..at).and_then(|text| text.chars().last());
            let tail = rest.get(at..).unwrap_or_default();
            rest = rest.get(at + start.len()..).unwrap_or_default();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let (base, after) = resolve(tail, module);
            match after.strip_prefix('{') {
                Some(group) => {
                    let group = group.split('}').next().unwrap_or_default();
                    for item in group.split(',') {
                        let mut path = base.clone();
                        path.extend(segments(item.trim()));
                        paths.push(path);
                    }
                }
                None => paths.push(base),
            }
        }
    }
    paths
}

/// A path's leading `crate`/`super`/`self` segments made absolute, the segments after
/// them, and what follows the path.
fn resolve<'a>(path: &'a str, module: &[String]) -> (Vec<String>, &'a str) {
    let mut base: Vec<String> = module.to_vec();
    let mut rest = path;
    loop {
        if let Some(tail) = rest.strip_prefix("crate::") {
            base.clear();
            rest = tail;
        } else if let Some(tail) = rest.strip_prefix("super::") {
            base.pop();
            rest = tail;
        } else if let Some(tail) = rest.strip_prefix("self::") {
            rest = tail;
        } else {
            break;
        }
    }
    let end = rest
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
        .unwrap_or(rest.len());
    let (named, after) = rest.split_at(end);
    base.extend(segments(named));
    (base, after)
}

/// `a::b::C` as its module segments: lower-case names only (a type or a constant ends
/// the module path).
fn segments(path: &str) -> Vec<String> {
    path.split("::")
        .take_while(|segment| segment.starts_with(|c: char| c.is_ascii_lowercase()))
        .map(str::to_owned)
        .collect()
}
