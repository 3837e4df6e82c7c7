//! The capnp configuration workerd serves a Worker with, generated from the facts of its
//! `wrangler.toml`.

use std::fmt::Write as _;
use std::path::Path;

use super::beside::{driver_worker, objects_down_worker, twin_worker, Beside};

/// The edge's Durable Object namespaces, (binding, class) (`wrangler.toml`:
/// `[[durable_objects.bindings]]`, every class in `new_sqlite_classes`).
pub const EDGE_OBJECTS: [(&str, &str); 5] = [
    ("USER_SESSIONS", "UserSession"),
    ("GLOBAL_LIMITER", "GlobalLimiter"),
    ("WAITING_ROOMS", "WaitingRoom"),
    ("EVENT_DIRECTORY", "EventDirectory"),
    ("ARRIVAL_SHARDS", "ArrivalShard"),
];

/// The service whose objects stand in for the Worker's own when
/// [`Config::objects_down`] names bindings.
const OBJECTS_DOWN: &str = "objects-down";
/// The Worker's build, beside the configuration: its `modules`.
pub(super) const BUILD_MODULES: &str = r#"  modules = [
    (name = "index.js", esModule = embed "index.js"),
    (name = "index_bg.wasm", wasm = embed "index_bg.wasm"),
  ],"#;
/// The data centre's cache the Worker's `caches.default` goes to.
const CACHE: &str = include_str!("cache.js");

/// What the configuration of one Worker is made of.
pub(crate) struct Config<'a> {
    /// Its one HTTP socket is `127.0.0.1:{port}`.
    pub(crate) port: u16,
    /// `wrangler.toml`'s `compatibility_date`.
    pub(crate) compatibility_date: &'a str,
    /// The folder its objects' SQLite files are kept in.
    pub(crate) storage: &'a Path,
    /// Its variables, each a text binding.
    pub(crate) vars: &'a [(&'a str, String)],
    /// Its Durable Object namespaces, (binding, class), every class SQLite-backed.
    pub(crate) durable_objects: &'a [(&'a str, &'a str)],
    /// The bindings (of `durable_objects`) bound to the classes of a stand-in service
    /// whose objects fail every call, not to the Worker's own: what the Worker does when
    /// those objects cannot answer.
    pub(crate) objects_down: &'a [&'a str],
    /// A second Worker beside it, on its own socket, bound to the Worker's namespaces.
    pub(crate) driver: Option<Driver<'a>>,
    /// A second isolate of the Worker on `127.0.0.1:{twin}`: another machine of the same
    /// data centre — its own memory, the same objects and cache.
    pub(crate) twin: Option<u16>,
    /// CA certificates (PEM) the loopback network's TLS trusts; none when empty.
    pub(crate) trusted_certificates: &'a [String],
}

/// A Worker served beside the one under test that calls its objects directly: a bench's
/// way into an object without the Worker's own routes.
#[derive(Debug, Clone, Copy)]
pub struct Driver<'a> {
    /// Its socket is `127.0.0.1:{port}`.
    pub port: u16,
    /// Its ES module's source.
    pub module: &'a str,
}

/// The `compatibility_date` of `wrangler.toml`'s text.
pub(crate) fn compatibility_date(wrangler_toml: &str) -> Option<String> {
    wrangler_toml.lines().find_map(|line| {
        let (key, value) = line.split_once('=')?;
        if key.trim() != "compatibility_date" {
            return None;
        }
        let date = value.trim().strip_prefix('"')?.split('"').next()?;
        let well_formed = date.len() == 10
            && date.bytes().enumerate().all(|(i, b)| {
                if i == 4 || i == 7 {
                    b == b'-'
                } else {
                    b.is_ascii_digit()
                }
            });
        well_formed.then(|| date.to_owned())
    })
}

/// The workerd configuration: the Worker (`index.js` and `index_bg.wasm` beside the
/// file), its bindings and Durable Object namespaces, their storage, a loopback-only
/// outbound network, a data centre's cache (`cache.js`, its `caches.default`), and one
/// HTTP socket; the services beside it (`beside.rs`) where asked.
pub(crate) fn config_text(config: &Config<'_>) -> String {
    let &Config {
        port,
        compatibility_date: date,
        storage,
        vars,
        durable_objects,
        objects_down,
        driver,
        twin,
        trusted_certificates,
    } = config;
    let texts = text_bindings(vars);
    let bindings = format!(
        "{texts}{}",
        object_bindings(durable_objects, objects_down, None)
    );
    let mut namespaces = String::new();
    let mut down_namespaces = String::new();
    for (binding, class) in durable_objects {
        let into = match objects_down.contains(binding) {
            true => &mut down_namespaces,
            false => &mut namespaces,
        };
        let _ = writeln!(
            into,
            "    (className = \"{class}\", uniqueKey = \"worker-{class}\", enableSql = true),"
        );
    }
    let (own_namespaces, stand_in_service, stand_in) = if objects_down.is_empty() {
        (namespaces, String::new(), String::new())
    } else {
        let down: Vec<(&str, &str)> = durable_objects
            .iter()
            .filter(|(binding, _)| objects_down.contains(binding))
            .copied()
            .collect();
        (
            namespaces,
            format!("    (name = \"{OBJECTS_DOWN}\", worker = .objectsDown),\n"),
            objects_down_worker(date, &down, &down_namespaces),
        )
    };
    let storage = capnp_text(&storage.to_string_lossy());
    let mut beside = Beside::default();
    if let Some(driver) = driver {
        beside.add(
            "driver",
            driver.port,
            &driver_worker(date, durable_objects, driver.module),
        );
    }
    if let Some(port) = twin {
        let objects = object_bindings(durable_objects, objects_down, Some("worker"));
        beside.add(
            "twin",
            port,
            &twin_worker(date, &format!("{texts}{objects}")),
        );
    }
    let Beside {
        services: beside_services,
        sockets: beside_sockets,
        workers: beside_workers,
    } = beside;
    let cache = capnp_text(CACHE);
    let loopback_tls = tls_options(trusted_certificates);
    format!(
        r#"# Generated by harness/src/workerd/config.rs from the Worker's build and wrangler.toml.
using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [
    (name = "worker", worker = .worker),
{stand_in_service}{beside_services}    (name = "durable-objects", disk = (path = {storage}, writable = true)),
    (name = "loopback", network = (allow = ["local"]{loopback_tls})),
    (name = "cache", worker = (modules = [(name = "cache.js", esModule = {cache})], compatibilityDate = "{date}")),
  ],
  sockets = [
    (name = "http", address = "127.0.0.1:{port}", http = (), service = "worker"){beside_sockets}
  ],
);

const worker :Workerd.Worker = (
{BUILD_MODULES}
  compatibilityDate = "{date}",
  bindings = [
{bindings}  ],
  durableObjectNamespaces = [
{own_namespaces}  ],
  durableObjectStorage = (localDisk = "durable-objects"),
  globalOutbound = "loopback",
  cacheApiOutbound = "cache",
);
{stand_in}{beside_workers}"#
    )
}

/// The loopback network's `tlsOptions` when it trusts `certificates`: `, tlsOptions = …`
/// to follow its `allow`, or nothing.
fn tls_options(certificates: &[String]) -> String {
    if certificates.is_empty() {
        return String::new();
    }
    let list: Vec<String> = certificates.iter().map(|pem| capnp_text(pem)).collect();
    format!(
        ", tlsOptions = (trustedCertificates = [{}])",
        list.join(", ")
    )
}

/// Each variable as a text binding, one per line.
fn text_bindings(vars: &[(&str, String)]) -> String {
    let mut bindings = String::new();
    for (name, value) in vars {
        let _ = writeln!(
            bindings,
            "    (name = {}, text = {}),",
            capnp_text(name),
            capnp_text(value)
        );
    }
    bindings
}

/// Each namespace's binding, one per line: to this Worker's own class, or to the class of
/// the service `in_service`.
pub(super) fn object_bindings(
    durable_objects: &[(&str, &str)],
    down: &[&str],
    in_service: Option<&str>,
) -> String {
    let mut bindings = String::new();
    for (binding, class) in durable_objects {
        let service = match down.contains(binding) {
            true => Some(OBJECTS_DOWN),
            false => in_service,
        };
        let namespace = match service {
            Some(service) => format!("(className = \"{class}\", serviceName = \"{service}\")"),
            None => format!("\"{class}\""),
        };
        let _ = writeln!(
            bindings,
            "    (name = \"{binding}\", durableObjectNamespace = {namespace}),"
        );
    }
    bindings
}

/// `text` as a Cap'n Proto text literal.
pub(super) fn capnp_text(text: &str) -> String {
    let mut literal = String::with_capacity(text.len() + 2);
    literal.push('"');
    for c in text.chars() {
        match c {
            '"' => literal.push_str("\\\""),
            '\\' => literal.push_str("\\\\"),
            '\n' => literal.push_str("\\n"),
            '\t' => literal.push_str("\\t"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                let _ = write!(literal, "\\x{:02x}", c as u32);
            }
            c => literal.push(c),
        }
    }
    literal.push('"');
    literal
}

#[cfg(test)]
mod tests;
