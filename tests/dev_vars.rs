//! `scripts/dev-vars`, which `make run` calls first: a `.dev.vars` made by an earlier
//! version (here without `GATEWAY_SECRET_KEY`, without which the origin refuses to
//! start) gets every missing development secret added and said so, while no
//! value that is there changes; a complete file is left alone.

use std::path::Path;
use std::process::Command;

fn dev_vars(file: &Path) -> (String, String) {
    let output = Command::new(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/dev-vars"))
        .env("DEV_VARS_FILE", file)
        .output()
        .expect("scripts/dev-vars runs");
    assert!(output.status.success(), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    (stderr, std::fs::read_to_string(file).expect("the file"))
}

#[test]
fn an_older_dev_vars_gets_what_it_lacks_and_keeps_every_value() {
    let dir = tempfile::tempdir().expect("a folder");
    let file = dir.path().join(".dev.vars");
    let old = "JWT_KEYS='keys'\nJWT_SIGNING_KID='dev-1'\nORIGIN_SIGNING_SECRET='kept'\n\
               OPERATOR_TOKEN='token'\nGATEWAY_CALLBACK_SECRET='an-older-release-s'\nDEMO_PASSWORD='pw'";
    std::fs::write(&file, old).expect("an old file");
    let (said, now) = dev_vars(&file);
    assert!(said.contains("added GATEWAY_SECRET_KEY"), "{said}");
    assert!(
        now.starts_with(old),
        "nothing that was there changed:\n{now}"
    );
    let added = now
        .lines()
        .find_map(|line| line.strip_prefix("GATEWAY_SECRET_KEY='test_sk_"))
        .expect("the secret added on a line of its own");
    assert_eq!(added.trim_end_matches('\'').len(), 24, "{now}");

    let (said, again) = dev_vars(&file);
    assert_eq!(
        (said.as_str(), again.as_str()),
        ("", now.as_str()),
        "complete: left alone"
    );
}

#[test]
fn a_missing_dev_vars_is_made_with_every_secret() {
    let dir = tempfile::tempdir().expect("a folder");
    let file = dir.path().join(".dev.vars");
    let (said, made) = dev_vars(&file);
    assert!(said.contains("created"), "{said}");
    for name in [
        "JWT_KEYS",
        "JWT_SIGNING_KID",
        "ORIGIN_SIGNING_SECRET",
        "OPERATOR_TOKEN",
        "GATEWAY_SECRET_KEY",
        "DEMO_PASSWORD",
    ] {
        assert!(made.contains(&format!("\n{name}='")), "{name} in:\n{made}");
    }
}
