//! Starting the project's real processes on loopback, for the end-to-end tests, the
//! benchmarks that drive them and the lab's experiments — one harness, so a fix to how a
//! service is started, waited for or stopped reaches all three.
//!
//! - [`services`]: named child processes in process groups, their logs, health waits,
//!   `kill -9`.
//! - [`ports`]: loopback ports and sockets for them, and ports held while their
//!   service is down.
//! - [`workerd`]: a Worker build under `workerd serve`.
//! - [`postgres`]: a throwaway PostgreSQL server.
//! - [`localstripe`]: a throwaway localstripe, the fake Stripe.
//! - [`merchant`]: a merchant's webhook endpoint that verifies every delivery with the
//!   `standardwebhooks` library from PyPI, and misbehaves when told.
//! - [`jwks_server`]: an identity provider's key set over https on loopback, answering
//!   as told.
//! - [`signed`]: requests to the origin signed as the edge signs them.
//! - [`origin`]: the origin's operator commands.
//! - [`eventually`]: waiting for a condition in another process.

pub mod eventually;
pub mod jwks_server;
pub mod localstripe;
pub mod merchant;
pub mod origin;
pub mod ports;
pub mod postgres;
pub mod services;
pub mod signed;
pub mod workerd;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{bail, Context as _};

/// The workspace's root directory.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// The path of the workspace's binary `name` in the `profile` build (`debug`,
/// `release`), under `CARGO_TARGET_DIR` when set.
pub fn binary(profile: &str, name: &str) -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| workspace().join("target"), PathBuf::from);
    workspace().join(target).join(profile).join(name)
}

/// Runs a build step in the workspace and waits for it; its failure is an error.
pub fn run_in_workspace(mut command: Command, what: &str) -> anyhow::Result<()> {
    let status = command
        .current_dir(workspace())
        .stdin(Stdio::null())
        .status()
        .with_context(|| format!("running {what}"))?;
    if !status.success() {
        bail!("{what} failed ({status})");
    }
    Ok(())
}

/// `command`'s stdout and stderr, in that order, once it has ended: its failure (or its
/// not starting at all, with `missing` saying what installs it) fails the test.
pub fn output_of(command: &mut Command, missing: &str) -> String {
    let output = command
        .output()
        .unwrap_or_else(|err| panic!("{command:?} did not start ({missing}): {err}"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "{command:?} failed:\n{text}");
    text
}
