//! The services a configuration may serve beside the Worker under test: a driver that
//! calls its objects directly, a twin isolate of the Worker, and the stand-in whose
//! objects fail.

use std::fmt::Write as _;

use super::config::{capnp_text, object_bindings, BUILD_MODULES};

/// Services beside the Worker, each with its own socket and Worker constant.
#[derive(Default)]
pub(super) struct Beside {
    /// Lines of the configuration's `services`.
    pub(super) services: String,
    /// Entries of its `sockets`, each after a comma.
    pub(super) sockets: String,
    /// The Workers' constants.
    pub(super) workers: String,
}

impl Beside {
    /// The service `name` (its Worker the constant `name`), served on `127.0.0.1:{port}`.
    pub(super) fn add(&mut self, name: &str, port: u16, worker: &str) {
        let _ = writeln!(self.services, "    (name = \"{name}\", worker = .{name}),");
        let _ = write!(
            self.sockets,
            ",\n    (name = \"{name}\", address = \"127.0.0.1:{port}\", http = (), service = \"{name}\")"
        );
        self.workers.push_str(worker);
    }
}

/// The driver Worker: its module, bound to every namespace of the Worker under test.
pub(super) fn driver_worker(date: &str, durable_objects: &[(&str, &str)], module: &str) -> String {
    let bindings = object_bindings(durable_objects, &[], Some("worker"));
    let module = capnp_text(module);
    format!(
        r#"
const driver :Workerd.Worker = (
  modules = [(name = "driver.js", esModule = {module})],
  compatibilityDate = "{date}",
  bindings = [
{bindings}  ],
);
"#
    )
}

/// The twin: the Worker's own modules and `bindings`, its namespaces the Worker's (it
/// runs none of its own), the same network and cache.
pub(super) fn twin_worker(date: &str, bindings: &str) -> String {
    format!(
        r#"
const twin :Workerd.Worker = (
{BUILD_MODULES}
  compatibilityDate = "{date}",
  bindings = [
{bindings}  ],
  globalOutbound = "loopback",
  cacheApiOutbound = "cache",
);
"#
    )
}

/// The stand-in Worker of `objects_down`: an ES module exporting each class, whose
/// `fetch` throws, so every call to one of its objects fails.
pub(super) fn objects_down_worker(
    date: &str,
    durable_objects: &[(&str, &str)],
    namespaces: &str,
) -> String {
    let mut module = String::new();
    for (_, class) in durable_objects {
        let _ = writeln!(
            module,
            "export class {class} {{ fetch() {{ throw new Error(\"{class} is down\"); }} }}"
        );
    }
    let module = capnp_text(&module);
    format!(
        r#"
const objectsDown :Workerd.Worker = (
  modules = [(name = "objects-down.js", esModule = {module})],
  compatibilityDate = "{date}",
  durableObjectNamespaces = [
{namespaces}  ],
  durableObjectStorage = (localDisk = "durable-objects"),
);
"#
    )
}
