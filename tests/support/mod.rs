//! The end-to-end harness: the real gateway simulator, origin and edge on free loopback
//! ports, each in a fresh temporary folder. The edge is the Worker built into `build/`,
//! run by `workerd serve` as the lab runs it (`edge.rs`); `wrangler dev` serves it in
//! one smoke test only ([`System::start_under_wrangler_dev`]).
//!
//! A [`System`] is started per test and stopped when dropped, whatever happened: the
//! workspace's `harness` runs every service in a process group of its own and kills the
//! whole group. When a test fails, each service's log is printed.

pub mod accounts;
pub mod agreement;
pub mod calls;
pub mod confirms;
mod edge;
pub mod gate;
pub mod idp;
pub mod merchant;
mod origin_cli;
pub mod room;
pub mod toss;

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use edge::EdgeRuntime;
use harness::ports::{free_ports, held_socket};
use harness::postgres::TestPostgres;
use harness::services::{Killer, Services};
use harness::signed::now_ms;
use jwt_compact::alg::{Hs256, Hs256Key};
use jwt_compact::{AlgorithmExt as _, Claims, Header};

/// The HMAC key shared by the edge and the origin in tests.
pub const EDGE_SECRET: &str = "e2e-edge-origin-secret-0123456789abcdef";
/// The access-token key of the tests, `kid` [`KID`].
pub const JWT_SECRET: &[u8] = b"e2e-access-token-key-0123456789abcdef";
pub const KID: &str = "e2e-1";
/// The origin's `OPERATOR_TOKEN` in tests.
pub const OPERATOR_TOKEN: &str = "e2e-operator-token-0123456789abcdef";
/// The origin's key-encryption keys in tests: v1 and v2 (v1 current unless a test
/// changes it with [`System::set_origin_env`]).
pub const ENCRYPTION_KEKS: &str = "v1:ERERERERERERERERERERERERERERERERERERERERERE=,\
                                   v2:IiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiI=";
/// The Toss secret key of the tests: the simulator takes it, the origin sends it.
pub const GATEWAY_SECRET_KEY: &str = "test_sk_e2e_0123456789abcdef";
/// The Toss client key the edge's checkout page opens the simulator's window with.
pub const PAYMENT_CLIENT_KEY: &str = "test_ck_e2e_0123456789abcdef";

const READY_TIMEOUT: Duration = Duration::from_secs(90);

/// How the edge of a [`System`] differs from the default.
#[derive(Default)]
pub struct EdgeSetup {
    /// Variables set for the edge, over the harness's own.
    pub vars: Vec<(&'static str, String)>,
    /// Bind the edge's object namespaces to a stand-in Worker whose objects throw, so
    /// every call to them fails: the denylist fail modes are observable.
    pub sessions_down: bool,
    /// Bind only the users' session objects to that stand-in: the denylist and the
    /// session object's user windows fail, every other object answers.
    pub session_objects_down: bool,
    /// Serve a second isolate of the edge ([`System::edge_twin`]): another machine of the
    /// same data centre, with the same objects and cache.
    pub twin: bool,
    /// CA certificates (PEM) the edge's outbound https trusts: a test's https server on
    /// loopback (an identity provider's key set, `tests/jwks.rs`).
    pub trusted_certificates: Vec<String>,
}

pub struct System {
    pub edge: String,
    /// The edge's twin isolate, where [`EdgeSetup::twin`] asked for one.
    pub edge_twin: Option<String>,
    pub origin: String,
    pub origin_metrics: String,
    /// The origin's operator listener (`ORIGIN_ADMIN_LISTEN`): every `/admin/…` route.
    pub origin_admin: String,
    pub gateway: String,
    /// The tests' client ([`harness::workerd::client`]).
    pub http: reqwest::Client,
    services: Services,
    database_url: String,
    /// Every variable the origin runs with, to start it again or run its commands.
    origin_env: Vec<(String, String)>,
    /// A second origin instance on the same database (PostgreSQL systems only).
    pub second_origin: Option<String>,
    /// Its operator listener.
    second_origin_admin: Option<String>,
    /// How the edge was started, to start it again on its storage.
    edge_launch: Option<edge::Launch>,
    _postgres: Option<TestPostgres>,
    _dir: tempfile::TempDir,
}

/// What a [`System`] is made of beyond the simulator and one origin on SQLite.
#[derive(Clone, Copy, Default)]
struct Parts<'a> {
    edge: Option<&'a EdgeSetup>,
    edge_runtime: EdgeRuntime,
    origin_vars: &'a [(&'static str, &'a str)],
    /// The simulator sends the origin Toss's webhooks.
    webhooks: bool,
    /// Two origin instances sharing one PostgreSQL database.
    postgres: bool,
}

impl System {
    /// Starts the three services and waits until each answers its health check.
    pub async fn start() -> System {
        System::start_with(EdgeSetup::default()).await
    }

    /// [`System::start`], with the edge set up as `setup` says. Free ports are found by
    /// binding and releasing them, so another process may take one before a service
    /// binds it; a start that loses that race is thrown away and tried on new ports.
    pub async fn start_with(setup: EdgeSetup) -> System {
        System::start_parts(Parts {
            edge: Some(&setup),
            ..Parts::default()
        })
        .await
    }

    /// [`System::start_with`], the origin configured with `origin_vars` over the harness's
    /// own.
    pub async fn start_with_origin(
        setup: EdgeSetup,
        origin_vars: &[(&'static str, &str)],
    ) -> System {
        System::start_parts(Parts {
            edge: Some(&setup),
            origin_vars,
            ..Parts::default()
        })
        .await
    }

    /// [`System::start`], with the edge under `wrangler dev` (as `make run` serves it)
    /// instead of workerd: for the one smoke test of that path.
    pub async fn start_under_wrangler_dev() -> System {
        System::start_parts(Parts {
            edge: Some(&EdgeSetup::default()),
            edge_runtime: EdgeRuntime::WranglerDev,
            ..Parts::default()
        })
        .await
    }

    /// The simulator and the origin only, the origin configured with `origin_vars` over
    /// the harness's own: for what the origin does with the PG, without an edge.
    pub async fn backend(origin_vars: &[(&'static str, &str)]) -> System {
        System::start_parts(Parts {
            origin_vars,
            ..Parts::default()
        })
        .await
    }

    /// [`System::backend`], with the simulator sending the origin Toss's webhooks.
    pub async fn backend_with_webhooks(origin_vars: &[(&'static str, &str)]) -> System {
        System::start_parts(Parts {
            origin_vars,
            webhooks: true,
            ..Parts::default()
        })
        .await
    }

    /// [`System::backend`] with two origin instances ([`System::origin`] and
    /// [`System::second_origin`]) sharing a throwaway PostgreSQL database.
    pub async fn backend_on_postgres(origin_vars: &[(&'static str, &str)]) -> System {
        System::start_parts(Parts {
            origin_vars,
            postgres: true,
            ..Parts::default()
        })
        .await
    }

    async fn start_parts(parts: Parts<'_>) -> System {
        let mut last_failure = String::new();
        for _ in 0..3 {
            match System::try_start(parts).await {
                Ok(system) => return system,
                Err(failure) => last_failure = failure,
            }
        }
        panic!("the system did not start three times; last: {last_failure}");
    }

    async fn try_start(parts: Parts<'_>) -> Result<System, String> {
        let Parts {
            edge: edge_setup,
            edge_runtime,
            origin_vars,
            webhooks,
            postgres,
        } = parts;
        let dir = tempfile::tempdir().expect("a temporary folder");
        let base = dir.path().to_owned();
        let [origin_port, metrics_port, admin_port, gateway_port, second_port, second_metrics, second_admin] =
            free_ports().map_err(|err| err.to_string())?;
        // Held from here until the edge's process has it (see `edge::command`).
        let edge_socket = held_socket().map_err(|err| err.to_string())?;
        let edge_port = edge_socket.local_addr().expect("a bound socket").port();
        let server = postgres.then(TestPostgres::start);
        let gateway = format!("http://127.0.0.1:{gateway_port}");
        let origin = format!("http://127.0.0.1:{origin_port}");
        let mut system = System {
            edge: format!("http://127.0.0.1:{edge_port}"),
            edge_twin: None,
            origin: origin.clone(),
            origin_metrics: format!("http://127.0.0.1:{metrics_port}"),
            origin_admin: format!("http://127.0.0.1:{admin_port}"),
            gateway: gateway.clone(),
            http: harness::workerd::client()
                .build()
                .expect("a reqwest client"),
            services: Services::new(&base),
            database_url: server.as_ref().map_or_else(
                || format!("sqlite://{}", base.join("origin.sqlite3").display()),
                |server| server.url().to_owned(),
            ),
            origin_env: Vec::new(),
            second_origin: None,
            second_origin_admin: None,
            edge_launch: None,
            _postgres: server,
            _dir: dir,
        };

        let mut sim = Command::new(binary("gateway-sim"));
        sim.env("GATEWAY_SIM_LISTEN", format!("127.0.0.1:{gateway_port}"))
            .env("GATEWAY_SECRET_KEY", GATEWAY_SECRET_KEY);
        if webhooks {
            sim.env(
                "GATEWAY_WEBHOOK_URL",
                format!("{origin}/gateway/webhooks/toss"),
            );
        }
        system.spawn("gateway-sim", sim);

        let own = [
            ("ORIGIN_LISTEN", format!("127.0.0.1:{origin_port}")),
            ("ORIGIN_METRICS_LISTEN", format!("127.0.0.1:{metrics_port}")),
            ("ORIGIN_ADMIN_LISTEN", format!("127.0.0.1:{admin_port}")),
            ("DATABASE_URL", system.database_url.clone()),
            ("EDGE_SIGNING_SECRET", EDGE_SECRET.to_owned()),
            ("GATEWAY_URL", gateway.clone()),
            ("OPERATOR_TOKEN", OPERATOR_TOKEN.to_owned()),
            ("GATEWAY_SECRET_KEY", GATEWAY_SECRET_KEY.to_owned()),
            ("ENCRYPTION_KEKS", ENCRYPTION_KEKS.to_owned()),
            ("ENCRYPTION_CURRENT_KEK", "v1".to_owned()),
            // The edge is there once started: the origin hands the drops' rooms to it.
            ("EDGE_URL", system.edge.clone()),
        ];
        // The events the edge gates by `GATED_EVENTS` are gated at the origin too.
        let gated = edge_setup
            .into_iter()
            .flat_map(|setup| &setup.vars)
            .filter(|(name, _)| *name == "GATED_EVENTS")
            .map(|(name, value)| ((*name).to_owned(), value.clone()));
        system.origin_env = own
            .into_iter()
            .map(|(name, value)| (name.to_owned(), value))
            .chain(gated)
            .chain(
                origin_vars
                    .iter()
                    .map(|(n, v)| ((*n).to_owned(), (*v).to_owned())),
            )
            .collect();
        let origin_cmd = system.origin_command(&["serve"]);
        system.spawn("origin", origin_cmd);
        if postgres {
            let second = format!("http://127.0.0.1:{second_port}");
            let mut second_cmd = system.origin_command(&["serve"]);
            second_cmd
                .env("ORIGIN_LISTEN", format!("127.0.0.1:{second_port}"))
                .env(
                    "ORIGIN_METRICS_LISTEN",
                    format!("127.0.0.1:{second_metrics}"),
                )
                .env("ORIGIN_ADMIN_LISTEN", format!("127.0.0.1:{second_admin}"));
            system.spawn("origin-2", second_cmd);
            system.second_origin = Some(second);
            system.second_origin_admin = Some(format!("http://127.0.0.1:{second_admin}"));
        }
        let backend = [
            &system.gateway,
            &system.origin,
            &system.origin_metrics,
            &system.origin_admin,
        ]
        .into_iter()
        .chain(&system.second_origin)
        .chain(&system.second_origin_admin)
        .map(|base| format!("{base}/healthz"))
        .collect::<Vec<_>>();
        for url in backend {
            system.wait_until_healthy(&url).await?;
        }
        let Some(setup) = edge_setup else {
            return Ok(system);
        };

        system
            .start_edge(setup, edge_runtime, base, origin, edge_socket)
            .await?;
        Ok(system)
    }

    /// Starts service `name` (a service of that name still running is killed first).
    fn spawn(&mut self, name: &str, command: Command) {
        self.services
            .spawn(name, command)
            .unwrap_or_else(|err| panic!("cannot start {name}: {err:#}"));
    }

    /// Waits for `url`; an error when a service exited first (it may have lost its port),
    /// with the logs kept in the error for the final report.
    async fn wait_until_healthy(&mut self, url: &str) -> Result<(), String> {
        self.services
            .wait_until_healthy(&self.http, url, READY_TIMEOUT)
            .await
            .map_err(|err| format!("{err:#}"))
    }

    /// What kills service `name` with SIGKILL later, while the system is in use (the
    /// harness reaps it afterwards).
    pub fn killer(&self, name: &str) -> Killer {
        self.services.killer(name).expect("a service")
    }

    /// The process id of service `name` while it runs (`origin`, `gateway-sim`, …): to
    /// read its memory from `/proc`.
    pub fn pid(&self, name: &str) -> Option<u32> {
        self.services.pid(name)
    }

    /// What service `name` has logged so far.
    pub fn log(&self, name: &str) -> String {
        self.services.log(name)
    }

    /// Kills one service (`gateway-sim`, `origin` or `edge`) and waits until it is gone.
    pub fn kill(&mut self, name: &str) {
        self.services.kill(name).expect("a service");
    }

    /// An access token for `user`, valid for `ttl_secs` from now (negative: expired).
    pub fn token(&self, user: &str, ttl_secs: i64) -> String {
        let now = now_ms() / 1000;
        let mut claims =
            Claims::new(serde_json::json!({ "sub": user, "jti": format!("jti-{now}-{user}") }));
        claims.expiration = chrono::DateTime::from_timestamp(now + ttl_secs, 0);
        Hs256
            .token(
                &Header::empty().with_key_id(KID),
                &claims,
                &Hs256Key::new(JWT_SECRET),
            )
            .expect("a signed token")
    }
}

impl Drop for System {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("{}", self.services.logs());
        }
    }
}

/// A confirm body for `order_id`: 5000, with a payment key of its own.
pub fn order_body(order_id: &str) -> String {
    serde_json::json!({ "orderId": order_id, "paymentKey": format!("pk-{order_id}"), "amount": 5000 })
        .to_string()
}

/// The path of a workspace binary: in `E2E_BIN_DIR` when set (the benchmarks use release
/// builds), else the debug build that `make test` makes before the tests run.
fn binary(name: &str) -> PathBuf {
    let path = std::env::var_os("E2E_BIN_DIR").map_or_else(
        || harness::binary("debug", name),
        |dir| harness::workspace().join(dir).join(name),
    );
    assert!(
        path.exists(),
        "{} is missing: run `make test`, or `cargo build -p origin -p gateway-sim` first",
        path.display()
    );
    path
}
