//! The OpenAPI 3.1 descriptions in `docs/openapi/` and the routers agree: every route the
//! edge answers (`src/routes/mod.rs`) is in `edge.yaml`, every route of the origin's
//! operator listener (`admin_app`, `origin/src/routes/mod.rs`) in `operator.yaml`, and
//! every route of its API and metrics listeners (`app`, `metrics_app`) in `origin.yaml` —
//! and every described route exists. Routes are read from the routers' source, so a new
//! route without its description fails here. `docs.rs` reads the same files to check the
//! routes the Markdown names.

use std::collections::BTreeSet;
use std::path::Path;

pub(crate) fn read(path: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(path))
        .unwrap_or_else(|err| panic!("{path}: {err}"))
}

/// `{event_id}`, `{eventId}` → `{eventid}`: parameters compared by name alone.
fn normal(segment: &str) -> String {
    match segment.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
        Some(name) => format!("{{{}}}", name.replace('_', "").to_lowercase()),
        None => segment.to_owned(),
    }
}

pub(crate) fn route(method: &str, path: &str) -> String {
    let path: Vec<String> = path.split('/').map(normal).collect();
    format!("{} {}", method.to_uppercase(), path.join("/"))
}

/// `METHOD /path` of every path and operation of an OpenAPI document.
pub(crate) fn described(yaml: &str) -> BTreeSet<String> {
    let mut routes = BTreeSet::new();
    let mut in_paths = false;
    let mut path = None;
    for line in yaml.lines() {
        if line.trim().is_empty() {
            continue; // a blank line inside a block scalar ends nothing
        }
        if !line.starts_with(' ') {
            in_paths = line.trim_end() == "paths:";
            continue;
        }
        if !in_paths {
            continue;
        }
        if let Some(p) = line.strip_prefix("  /") {
            path = p.strip_suffix(':').map(|p| format!("/{p}"));
        } else if let (Some(p), Some(op)) = (&path, line.strip_prefix("    ")) {
            let op = op.trim_end().trim_end_matches(':');
            if ["get", "post", "put", "patch", "delete"].contains(&op) {
                routes.insert(route(op, p));
            }
        }
    }
    routes
}

/// The edge's routes: the `(Method::X, [segments])` arms of its router.
fn edge_routes(source: &str) -> BTreeSet<String> {
    let mut routes = BTreeSet::new();
    for (at, _) in source.match_indices("(Method::") {
        let rest = &source[at + "(Method::".len()..];
        let Some((method, rest)) = rest.split_once(", [") else {
            continue;
        };
        let Some((segments, _)) = rest.split_once(']') else {
            continue;
        };
        let path: Vec<String> = segments
            .split(',')
            .map(str::trim)
            .map(|segment| match segment.strip_prefix('"') {
                Some(literal) => literal.trim_end_matches('"').to_owned(),
                None => format!("{{{segment}}}"),
            })
            .collect();
        routes.insert(route(method, &format!("/{}", path.join("/"))));
    }
    routes
}

/// The routes of `.route("/path", method(…))` calls in `source`.
pub(crate) fn axum_routes(source: &str) -> BTreeSet<String> {
    let mut routes = BTreeSet::new();
    for (at, _) in source.match_indices(".route(") {
        let rest = &source[at + ".route(".len()..];
        let Some(rest) = rest.trim_start().strip_prefix('"') else {
            continue;
        };
        let Some((path, rest)) = rest.split_once('"') else {
            continue;
        };
        let call = rest.split("\n        .").next().unwrap_or(rest);
        for method in ["get", "post", "put", "patch", "delete"] {
            if call.contains(&format!("{method}(")) {
                routes.insert(route(method, path));
            }
        }
    }
    routes
}

fn agree(code: BTreeSet<String>, doc: BTreeSet<String>, what: &str) {
    let undescribed: Vec<&String> = code.difference(&doc).collect();
    let missing: Vec<&String> = doc.difference(&code).collect();
    assert!(
        undescribed.is_empty() && missing.is_empty(),
        "{what}: answered but not described {undescribed:?}; described but not answered {missing:?}"
    );
}

#[test]
fn every_edge_route_is_described_and_every_described_one_answered() {
    let code = edge_routes(&read("src/routes/mod.rs"));
    assert!(code.contains("POST /queue/{eventid}/enter"), "{code:?}");
    assert!(code.len() >= 15, "{code:?}");
    agree(code, described(&read("docs/openapi/edge.yaml")), "the edge");
}

#[test]
fn every_operator_route_is_described_and_every_described_one_answered() {
    let source = read("origin/src/routes/mod.rs");
    let admin = source
        .split_once("pub fn admin_app")
        .and_then(|(_, rest)| rest.split_once("pub fn metrics_app"))
        .map(|(admin, _)| admin)
        .expect("admin_app in the origin's router");
    let code = axum_routes(admin);
    assert!(
        code.contains("POST /admin/events/{eventid}/{action}"),
        "{code:?}"
    );
    agree(
        code,
        described(&read("docs/openapi/operator.yaml")),
        "the operator listener",
    );
}

#[test]
fn every_api_and_metrics_route_is_described_and_every_described_one_answered() {
    let source = read("origin/src/routes/mod.rs");
    let api = source
        .split_once("pub fn app(")
        .and_then(|(_, rest)| rest.split_once("pub fn admin_app"))
        .map(|(api, _)| api)
        .expect("app in the origin's router");
    let metrics = source
        .split_once("pub fn metrics_app")
        .map(|(_, rest)| rest)
        .expect("metrics_app in the origin's router");
    let mut code = axum_routes(api);
    assert!(code.contains("POST /payments/confirm"), "{code:?}");
    code.extend(axum_routes(metrics));
    assert!(code.contains("GET /metrics"), "{code:?}");
    agree(
        code,
        described(&read("docs/openapi/origin.yaml")),
        "the API and metrics listeners",
    );
}

#[test]
fn every_document_is_openapi_3_1() {
    for doc in [
        "docs/openapi/edge.yaml",
        "docs/openapi/operator.yaml",
        "docs/openapi/origin.yaml",
    ] {
        assert!(read(doc).starts_with("openapi: 3.1.0\n"), "{doc}");
    }
}
