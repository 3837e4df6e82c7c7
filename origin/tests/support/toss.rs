//! The Toss adapter as the tests and benchmarks build it: pointed at a simulator (or a
//! stub) on loopback, with the key the simulator takes by default.

use std::sync::Arc;

use origin::gateway::{self, Gateway, GatewayConfig};

/// Toss's public test key, which the simulator takes when `GATEWAY_SECRET_KEY` is unset.
pub const TEST_KEY: &str = "test_sk_zXLkKEypNArWmo50nX3lmeaxYG5R";

/// The Toss adapter, speaking to `url`.
pub fn adapter(url: &str) -> Arc<dyn Gateway> {
    let config = GatewayConfig::from_lookup(|name| match name {
        "GATEWAY_URL" => Some(url.to_owned()),
        "GATEWAY_SECRET_KEY" => Some(TEST_KEY.to_owned()),
        _ => None,
    })
    .expect("a Toss configuration");
    gateway::open(&config).expect("the Toss adapter")
}
