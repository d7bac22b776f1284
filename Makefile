.PHONY: ci test docs demo bench fmt fuzz

# Exactly what CI runs.
ci:
	bash .ci/run

test:
	scripts/test-all

# The documentation site (docs/site) into docs/site/_build/html.
docs:
	scripts/build-docs

demo:
	cargo run --release -p trellis-cli -- demo

bench:
	cargo run --release -p trellis-repro -- bench --sizes 10,14,18,20 --repeats 3 --marginals

fmt:
	cargo fmt --all

# Every fuzz target for FUZZ_SECONDS (default 120) each; needs the nightly toolchain.
fuzz:
	scripts/fuzz
