# The two commands of the README. Both install what is missing first (pinned).
.PHONY: run test lint

run:
	scripts/run

test:
	scripts/bootstrap --browser --postgres --promtool --stripe --webhooks
	scripts/build-edge
	cargo build --quiet -p origin -p gateway-sim
	cargo fmt --all -- --check
	cargo clippy --quiet --workspace --all-targets -- -D warnings
	cargo test --workspace
	@cat target/test-artifacts/crash-*.txt

lint:
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets -- -D warnings
