# Mimo — every command a developer needs. Each target installs what it needs first
# (scripts/setup.sh is idempotent and quick when everything is there).
SHELL := /bin/bash
ENV := source scripts/env.sh &&

.PHONY: dev test fuzz bench chaos demo setup setup-browser worker web extension typescript clean

## make dev: build everything and run the whole system locally on workerd (scripts/dev.ts).
dev: setup worker
	@$(ENV) node scripts/dev.ts

## make test: every test — Rust unit tests, lints, TypeScript checks, integration tests against
## the built worker in miniflare, browser tests in Chromium.
test: setup-browser worker
	@$(ENV) scripts/test.sh

## make fuzz: every parser's property tests for 3 minutes per target, about 27 minutes in all
## (socket frames, tool arguments, both LLM stream parsers, signed URLs, artifact keys and ids,
## the local bridge's command and path checks;
## `cargo test` runs the same properties with a few hundred cases each). FUZZ_SECONDS sets the
## time per target; FUZZ_TARGETS="sse_openai signed_urls" picks targets (scripts/fuzz.sh).
fuzz:
	@$(ENV) scripts/fuzz.sh $(FUZZ_TARGETS)

## make demo: one browser task end to end, headless and without an API key (scripted model,
## real worker, real extension in Chromium, a fixture shop); prints the event stream.
demo: setup-browser worker
	@$(ENV) node scripts/demo.ts

## make bench: performance figures, measured in one run.
bench: setup-browser worker extension
	@$(ENV) node tests/bench/bench.ts
	@$(ENV) MIMO_TEST_PREBUILT=1 node tests/bench/extension.ts

## make chaos: CHAOS_RUNS (200) seeded agent tasks under injected faults; counts actions lost
## or doubled and unclear endings, prints failing seeds (CHAOS_SEED=<seed> CHAOS_RUNS=1 replays one).
chaos: setup-browser worker
	@$(ENV) node tests/chaos/run.ts

setup:
	@scripts/setup.sh

setup-browser:
	@scripts/setup.sh browser

RUST_SOURCES := $(shell find protocol agent durable worker r2-artifacts -name '*.rs' -o -name Cargo.toml) Cargo.toml Cargo.lock

## The worker bundle (worker/build/index.js + wasm). Also run by wrangler's [build] command.
worker: worker/build/index.js web

worker/build/index.js: $(RUST_SOURCES)
	@$(ENV) cd worker && worker-build --release

web:
	@$(ENV) node web/build.mjs

extension:
	@$(ENV) node extension/build.mjs

## Regenerate protocol/ts/protocol.ts from the Rust protocol types.
typescript:
	@$(ENV) cargo run -q -p mimo-protocol --bin gen-ts

clean:
	rm -rf target worker/build web/dist extension/dist
