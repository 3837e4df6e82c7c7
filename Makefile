# The two commands of the README. Both install what is missing first (pinned).
.PHONY: run test lint soak

run:
	scripts/run

test:
	scripts/test

# The real-time lengths `make test` shortens, at full length (docs/testing.md): the
# merchant's receiver down five minutes, and the settlement parser fuzzed for ten.
soak:
	scripts/bootstrap --webhooks
	cargo build --quiet -p origin -p gateway-sim
	WEBHOOK_OUTAGE_SECONDS=300 cargo test --test e2e -- --exact --nocapture \
	  merchant_webhooks_outage::a_receiver_down_for_sixty_retry_caps_gets_everything_once_it_is_back
	FUZZ_SECONDS=600 cargo test --release -p origin --test settlement_fuzz -- --nocapture

lint:
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets -- -D warnings
