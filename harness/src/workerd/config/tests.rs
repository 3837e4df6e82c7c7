//! The generated configuration's text.

use super::*;

/// The edge's configuration, with `GATED_EVENTS` set, and the objects of
/// `objects_down` down.
fn edge(objects_down: &[&str]) -> String {
    config_text(&Config {
        port: 8787,
        compatibility_date: "2026-04-20",
        storage: Path::new("/tmp/do"),
        vars: &[("GATED_EVENTS", "e1".into())],
        durable_objects: &EDGE_OBJECTS,
        objects_down,
        driver: None,
        twin: None,
        trusted_certificates: &[],
    })
}

#[test]
fn loopback_trusts_the_certificates_it_is_given_and_no_others() {
    assert!(edge(&[]).contains(r#"(name = "loopback", network = (allow = ["local"])),"#));
    let pem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n".to_owned();
    let text = config_text(&Config {
        port: 8787,
        compatibility_date: "2026-04-20",
        storage: Path::new("/tmp/do"),
        vars: &[],
        durable_objects: &EDGE_OBJECTS,
        objects_down: &[],
        driver: None,
        twin: None,
        trusted_certificates: std::slice::from_ref(&pem),
    });
    assert!(text.contains(
        r#"(name = "loopback", network = (allow = ["local"], tlsOptions = (trustedCertificates = ["-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"]))),"#
    ));
}

#[test]
fn text_literals_escape_what_capnp_needs() {
    assert_eq!(capnp_text(r#"[{"k":"a\b"}]"#), r#""[{\"k\":\"a\\b\"}]""#);
    assert_eq!(capnp_text("a\nb\u{1}"), r#""a\nb\x01""#);
}

#[test]
fn the_compatibility_date_comes_from_wrangler_toml() {
    let toml = "name = \"x\"\ncompatibility_date = \"2026-04-20\" # pinned\n";
    assert_eq!(compatibility_date(toml).as_deref(), Some("2026-04-20"));
    assert_eq!(compatibility_date("compatibility_date = \"soon\""), None);
    assert_eq!(compatibility_date("name = \"x\""), None);
}

#[test]
fn every_namespace_is_bound_sql_backed_and_on_disk() {
    let text = edge(&[]);
    assert!(text.contains(r#"(name = "GATED_EVENTS", text = "e1"),"#));
    for (binding, class) in EDGE_OBJECTS {
        assert!(text.contains(&format!(
            "(name = \"{binding}\", durableObjectNamespace = \"{class}\")"
        )));
        assert!(text.contains(&format!("className = \"{class}\"")));
    }
    assert_eq!(text.matches("enableSql = true").count(), EDGE_OBJECTS.len());
    assert!(text.contains(r#"disk = (path = "/tmp/do", writable = true)"#));
    assert!(text.contains("durableObjectStorage = (localDisk = \"durable-objects\")"));
    assert!(text.contains("address = \"127.0.0.1:8787\""));
    assert!(text.contains("compatibilityDate = \"2026-04-20\""));
    assert!(!text.contains(OBJECTS_DOWN));
}

#[test]
fn another_worker_has_its_own_namespaces_and_none_of_the_edges() {
    let text = config_text(&Config {
        port: 9000,
        compatibility_date: "2026-04-20",
        storage: Path::new("/tmp/do"),
        vars: &[],
        durable_objects: &[("COUNTERS", "Counter")],
        objects_down: &[],
        driver: None,
        twin: None,
        trusted_certificates: &[],
    });
    assert!(text.contains(r#"(name = "COUNTERS", durableObjectNamespace = "Counter")"#));
    assert!(text.contains(r#"(className = "Counter", uniqueKey = "worker-Counter""#));
    assert_eq!(text.matches("enableSql = true").count(), 1);
    for (binding, class) in EDGE_OBJECTS {
        assert!(!text.contains(binding) && !text.contains(class));
    }
}

#[test]
fn objects_down_binds_every_namespace_to_a_stand_in_that_throws() {
    let all: Vec<&str> = EDGE_OBJECTS.iter().map(|(binding, _)| *binding).collect();
    let text = edge(&all);
    let (worker, stand_in) = text
        .split_once("const objectsDown :Workerd.Worker")
        .expect("the stand-in Worker");
    assert!(text.contains(&format!(
        "(name = \"{OBJECTS_DOWN}\", worker = .objectsDown)"
    )));
    assert!(worker.contains("durableObjectNamespaces = [\n  ],"));
    for (binding, class) in EDGE_OBJECTS {
        assert!(worker.contains(&format!(
            "(name = \"{binding}\", durableObjectNamespace = \
             (className = \"{class}\", serviceName = \"{OBJECTS_DOWN}\"))"
        )));
        assert!(stand_in.contains(&format!(
            "export class {class} {{ fetch() {{ throw new Error(\\\"{class} is down\\\"); }} }}"
        )));
        assert!(stand_in.contains(&format!("className = \"{class}\"")));
    }
}

#[test]
fn objects_down_may_name_one_namespace_and_leave_the_others_the_workers() {
    let text = edge(&["USER_SESSIONS"]);
    let (worker, stand_in) = text
        .split_once("const objectsDown :Workerd.Worker")
        .expect("the stand-in Worker");
    assert!(worker.contains(&format!(
        "(name = \"USER_SESSIONS\", durableObjectNamespace = \
         (className = \"UserSession\", serviceName = \"{OBJECTS_DOWN}\"))"
    )));
    assert!(
        worker.contains("(name = \"GLOBAL_LIMITER\", durableObjectNamespace = \"GlobalLimiter\")")
    );
    assert!(stand_in.contains("export class UserSession"));
    assert!(!stand_in.contains("GlobalLimiter"));
    assert_eq!(text.matches("enableSql = true").count(), EDGE_OBJECTS.len());
}
#[test]
fn a_driver_is_served_on_its_own_socket_bound_to_the_workers_objects() {
    let text = config_text(&Config {
        port: 9000,
        compatibility_date: "2026-04-20",
        storage: Path::new("/tmp/do"),
        vars: &[],
        durable_objects: &EDGE_OBJECTS,
        objects_down: &[],
        driver: Some(Driver {
            port: 9001,
            module: "export default {}",
        }),
        twin: None,
        trusted_certificates: &[],
    });
    assert!(text.contains(
        r#"(name = "driver", address = "127.0.0.1:9001", http = (), service = "driver")"#
    ));
    assert!(text.contains(r#"(name = "driver", worker = .driver)"#));
    assert!(text.contains(
        r#"(name = "WAITING_ROOMS", durableObjectNamespace = (className = "WaitingRoom", serviceName = "worker"))"#
    ));
    assert!(text.contains(r#"esModule = "export default {}""#));
}

#[test]
fn a_twin_runs_the_workers_build_on_its_objects_and_both_share_one_cache() {
    let text = config_text(&Config {
        port: 9000,
        compatibility_date: "2026-04-20",
        storage: Path::new("/tmp/do"),
        vars: &[("GATED_EVENTS", "e1".into())],
        durable_objects: &EDGE_OBJECTS,
        objects_down: &[],
        driver: None,
        twin: Some(9002),
        trusted_certificates: &[],
    });
    let (worker, twin) = text
        .split_once("const twin :Workerd.Worker")
        .expect("the twin's Worker");
    assert!(text
        .contains(r#"(name = "twin", address = "127.0.0.1:9002", http = (), service = "twin")"#));
    assert!(twin.contains(r#"(name = "index_bg.wasm", wasm = embed "index_bg.wasm")"#));
    assert!(twin.contains(r#"(name = "GATED_EVENTS", text = "e1"),"#));
    assert!(twin.contains(
        r#"(name = "WAITING_ROOMS", durableObjectNamespace = (className = "WaitingRoom", serviceName = "worker"))"#
    ));
    assert!(!twin.contains("durableObjectNamespaces"));
    assert_eq!(text.matches(r#"cacheApiOutbound = "cache""#).count(), 2);
    assert!(worker.contains(r#"(name = "cache", worker = (modules = [(name = "cache.js""#));
}
