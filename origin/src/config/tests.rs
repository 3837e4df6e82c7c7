//! The configuration read from the environment: defaults, names, refusals.

use super::*;

const SECRET: &str = "0123456789abcdef0123456789abcdef";

/// One KEK, all zeros: `vars` may set the keys otherwise.
const KEKS: &str = "v1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=";

fn config(vars: &[(&str, &str)]) -> Result<OriginConfig, ConfigError> {
    let keys = [
        ("ENCRYPTION_KEKS", KEKS),
        ("ENCRYPTION_CURRENT_KEK", "v1"),
        ("GATEWAY_SECRET_KEY", "test_sk_origin_tests"),
    ];
    OriginConfig::from_lookup(|name| {
        vars.iter()
            .chain(&keys)
            .find(|(n, _)| *n == name)
            .map(|(_, v)| (*v).to_owned())
    })
}

#[test]
fn defaults_follow_the_contract() {
    let config = config(&[("EDGE_SIGNING_SECRET", SECRET)]).unwrap();
    assert_eq!(config.listen.to_string(), "127.0.0.1:8080");
    assert_eq!(config.metrics_listen.to_string(), "127.0.0.1:9090");
    assert_eq!(config.gateway.url, "https://api.tosspayments.com");
    assert_eq!(config.webhook_lookup_rate.limit, 20);
    assert_eq!(config.guard, GuardConfig::default());
    assert_eq!(config.db_acquire_timeout, Duration::from_secs(3));
    assert_eq!(config.operator_token, None);
    assert!(config.database_url.starts_with("sqlite://"));
    assert_eq!(config.cipher.current_version(), 1);
    assert!(config.gated_events.is_empty());
    assert_eq!(config.idempotency_lease, Duration::from_secs(60));
}

#[test]
fn a_confirms_lease_on_its_key_is_a_setting_longer_than_the_pg_timeout() {
    let short = config(&[
        ("EDGE_SIGNING_SECRET", SECRET),
        ("GATEWAY_TIMEOUT_MS", "2000"),
        ("IDEMPOTENCY_LEASE_MS", "2001"),
    ])
    .unwrap();
    assert_eq!(short.idempotency_lease, Duration::from_millis(2001));
    let slow_pg = config(&[
        ("EDGE_SIGNING_SECRET", SECRET),
        ("GATEWAY_TIMEOUT_MS", "60000"),
    ])
    .unwrap();
    assert_eq!(slow_pg.idempotency_lease, Duration::from_secs(120));
}

#[test]
fn gated_events_are_read_as_the_edge_reads_them() {
    let config = config(&[
        ("EDGE_SIGNING_SECRET", SECRET),
        ("GATED_EVENTS", "drop-1, drop-2"),
    ])
    .unwrap();
    let named: Vec<&str> = {
        let mut named: Vec<&str> = config.gated_events.iter().map(String::as_str).collect();
        named.sort_unstable();
        named
    };
    assert_eq!(named, ["drop-1", "drop-2"]);
}

#[test]
fn recovery_asks_a_still_processing_pg_again_after_one_interval() {
    let defaults = config(&[("EDGE_SIGNING_SECRET", SECRET)]).unwrap();
    assert_eq!(defaults.recovery.interval, Duration::from_secs(30));
    assert_eq!(defaults.recovery.backoff_base_ms, 15_000);
    let fast = config(&[
        ("EDGE_SIGNING_SECRET", SECRET),
        ("RECOVERY_INTERVAL_MS", "2000"),
    ])
    .unwrap();
    assert_eq!(fast.recovery.backoff_base_ms, 1_000);
    let rare = config(&[
        ("EDGE_SIGNING_SECRET", SECRET),
        ("RECOVERY_INTERVAL_MS", "3600000"),
    ])
    .unwrap();
    assert_eq!(rare.recovery.backoff_base_ms, 30_000);
}

#[test]
fn the_guard_is_configured_by_its_names() {
    let config = config(&[
        ("EDGE_SIGNING_SECRET", SECRET),
        ("GATEWAY_TIMEOUT_MS", "500"),
        ("BULKHEAD_MAX_CONCURRENT", "0"),
        ("BREAKER_WINDOW", "8"),
        ("BREAKER_MIN_CALLS", "4"),
        ("BREAKER_FAILURE_RATE", "40"),
        ("BREAKER_SLOW_CALL_MS", "300"),
        ("BREAKER_SLOW_CALL_RATE", "60"),
        ("BREAKER_OPEN_MS", "1500"),
        ("BREAKER_HALF_OPEN_CALLS", "2"),
        ("LIMITER", "sliding-window"),
        ("LIMITER_RATE", "20/500ms"),
        ("GATEWAY_CONCURRENCY_MIN", "3"),
        ("GATEWAY_CONCURRENCY_MAX", "30"),
        ("GATEWAY_CONCURRENCY_MAX_WAIT_MS", "750"),
        ("DB_ACQUIRE_TIMEOUT_MS", "250"),
        ("ORIGIN_MAX_CONCURRENT_REQUESTS", "7"),
        ("ORIGIN_MAX_CONCURRENT_LOGINS", "3"),
        ("OPERATOR_TOKEN", SECRET),
    ])
    .unwrap();
    let expected = GuardConfig {
        timeout: Duration::from_millis(500),
        bulkhead: 0,
        breaker: Some(BreakerConfig {
            window: 8,
            min_calls: 4,
            failure_rate: 40,
            slow_call_ms: 300,
            slow_call_rate: 60,
            open_ms: 1_500,
            half_open_calls: 2,
        }),
        concurrency: LimitMode::Adaptive {
            floor: 3,
            ceiling: 30,
        },
        max_wait: Duration::from_millis(750),
        limiter: LimiterConfig::SlidingWindow(rules::sliding_window::Rate {
            limit: 20,
            window_ms: 500,
        }),
    };
    assert_eq!(config.guard, expected);
    assert_eq!(config.db_acquire_timeout, Duration::from_millis(250));
    assert_eq!(config.max_concurrent_requests, 7);
    assert_eq!(config.max_concurrent_logins, 3);
    assert_eq!(config.operator_token.as_deref(), Some(SECRET));
    let off = self::config(&[
        ("EDGE_SIGNING_SECRET", SECRET),
        ("BREAKER_ENABLED", "false"),
    ]);
    assert_eq!(off.unwrap().guard.breaker, None);
}

#[test]
fn the_concurrency_limit_is_adaptive_fixed_or_off() {
    let mode = |value: Option<&str>| {
        let mut vars = vec![("EDGE_SIGNING_SECRET", SECRET)];
        vars.extend(value.map(|v| ("GATEWAY_CONCURRENCY", v)));
        let config = config(&vars).unwrap();
        (config.guard.concurrency, config.guard.max_wait)
    };
    let adaptive = LimitMode::Adaptive {
        floor: 2,
        ceiling: 50,
    };
    assert_eq!(mode(None), (adaptive, Duration::from_secs(2)));
    assert_eq!(mode(Some("Adaptive")).0, adaptive);
    assert_eq!(mode(Some("fixed:8")).0, LimitMode::Fixed(8));
    assert_eq!(mode(Some("off")).0, LimitMode::Off);
}

#[test]
fn the_database_is_sqlite_or_postgres() {
    let urls = [
        "sqlite://data/origin.sqlite3",
        "sqlite::memory:",
        "postgres://origin:pw@db:5432/pay",
        "postgresql://db/pay",
    ];
    for url in urls {
        let read = database_url(|name| (name == "DATABASE_URL").then(|| url.to_owned()));
        assert_eq!(read.ok().as_deref(), Some(url));
    }
}

#[test]
fn a_bad_value_names_its_variable() {
    let cases: &[(&[(&str, &str)], &str)] = &[
        (&[], "EDGE_SIGNING_SECRET"),
        (&[("EDGE_SIGNING_SECRET", "short")], "EDGE_SIGNING_SECRET"),
        (&[("ORIGIN_LISTEN", "localhost")], "ORIGIN_LISTEN"),
        (&[("GATEWAY_TIMEOUT_MS", "0")], "GATEWAY_TIMEOUT_MS"),
        (&[("DATABASE_URL", "mysql://x")], "DATABASE_URL"),
        (&[("DATABASE_URL", "data/origin.sqlite3")], "DATABASE_URL"),
        (&[("DATABASE_URL", "postgres:/db")], "DATABASE_URL"),
        (
            &[("BULKHEAD_MAX_CONCURRENT", "-1")],
            "BULKHEAD_MAX_CONCURRENT",
        ),
        (&[("BREAKER_ENABLED", "maybe")], "BREAKER_ENABLED"),
        (&[("BREAKER_FAILURE_RATE", "0")], "BREAKER_FAILURE_RATE"),
        (
            &[("BREAKER_SLOW_CALL_RATE", "101")],
            "BREAKER_SLOW_CALL_RATE",
        ),
        (&[("BREAKER_MIN_CALLS", "30")], "BREAKER_MIN_CALLS"),
        (&[("LIMITER", "leaky-bucket")], "LIMITER"),
        (&[("GATEWAY_CONCURRENCY", "fixed:0")], "GATEWAY_CONCURRENCY"),
        (&[("GATEWAY_CONCURRENCY", "fixed:")], "GATEWAY_CONCURRENCY"),
        (
            &[("GATEWAY_CONCURRENCY", "fixed:10001")],
            "GATEWAY_CONCURRENCY",
        ),
        (
            &[("GATEWAY_CONCURRENCY", "gradient")],
            "GATEWAY_CONCURRENCY",
        ),
        (
            &[("GATEWAY_CONCURRENCY_MIN", "0")],
            "GATEWAY_CONCURRENCY_MIN",
        ),
        (
            &[("GATEWAY_CONCURRENCY_MAX", "100000")],
            "GATEWAY_CONCURRENCY_MAX",
        ),
        (
            &[
                ("GATEWAY_CONCURRENCY_MIN", "10"),
                ("GATEWAY_CONCURRENCY_MAX", "5"),
            ],
            "GATEWAY_CONCURRENCY_MAX",
        ),
        (
            &[("GATEWAY_CONCURRENCY_MAX_WAIT_MS", "600000")],
            "GATEWAY_CONCURRENCY_MAX_WAIT_MS",
        ),
        (
            &[("LIMITER", "token-bucket"), ("LIMITER_RATE", "fast")],
            "LIMITER_RATE",
        ),
        (
            &[("DB_ACQUIRE_TIMEOUT_MS", "soon")],
            "DB_ACQUIRE_TIMEOUT_MS",
        ),
        (
            &[("ORIGIN_MAX_CONCURRENT_REQUESTS", "0")],
            "ORIGIN_MAX_CONCURRENT_REQUESTS",
        ),
        (
            &[("ORIGIN_MAX_CONCURRENT_LOGINS", "0")],
            "ORIGIN_MAX_CONCURRENT_LOGINS",
        ),
        (&[("OPERATOR_TOKEN", "op")], "OPERATOR_TOKEN"),
        (&[("IDEMPOTENCY_LEASE_MS", "soon")], "IDEMPOTENCY_LEASE_MS"),
        (
            &[
                ("GATEWAY_TIMEOUT_MS", "5000"),
                ("IDEMPOTENCY_LEASE_MS", "5000"),
            ],
            "IDEMPOTENCY_LEASE_MS",
        ),
        (&[("ENCRYPTION_KEKS", "")], "ENCRYPTION_KEKS"),
        (&[("ENCRYPTION_KEKS", "v1:c2hvcnQ=")], "ENCRYPTION_KEKS"),
        (
            &[("ENCRYPTION_CURRENT_KEK", "v2")],
            "ENCRYPTION_CURRENT_KEK",
        ),
        (&[("ENCRYPTION_CURRENT_KEK", " ")], "ENCRYPTION_CURRENT_KEK"),
    ];
    for (vars, name) in cases {
        let mut vars = vars.to_vec();
        if !vars.iter().any(|(n, _)| *n == "EDGE_SIGNING_SECRET") && *name != "EDGE_SIGNING_SECRET"
        {
            vars.push(("EDGE_SIGNING_SECRET", SECRET));
        }
        let Err(err) = config(&vars) else {
            panic!("{vars:?} was accepted");
        };
        let err = err.to_string();
        assert!(err.starts_with(name), "{vars:?}: {err}");
    }
}
