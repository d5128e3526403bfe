# Mimo — every command a developer needs. Each target installs what it needs first
# (scripts/setup.sh is idempotent and quick when everything is there).
SHELL := /bin/bash
ENV := source scripts/env.sh &&

.PHONY: dev test redteam fuzz bench load chaos demo setup setup-browser worker web extension typescript clean

## make dev: build everything and run the whole system locally on workerd (scripts/dev.ts).
dev: setup worker
	@$(ENV) node scripts/dev.ts

## make test: every test — Rust unit tests, lints, TypeScript checks, integration tests against
## the built worker in miniflare, browser tests in Chromium.
test: setup-browser worker
	@$(ENV) scripts/test.sh

## make redteam: the red team's full matrix (tests/redteam/): every channel an instruction reaches
## the model by × every sink it asks data sent to, with a fooled model in Chromium, judged by what
## reached the attacker's site; and the same pages' ordinary flows, counting needless confirmations.
## Prints `redteam: N attacks, S succeeded, C confirmations asked`, a table by channel and sink,
## and `benign: N tasks, K needless confirmations`. (Its fast subset runs in `make test`.)
redteam: setup-browser worker extension
	@$(ENV) MIMO_TEST_PREBUILT=1 node --test --test-concurrency=1 tests/redteam/*.test.ts

## make fuzz: every parser's property tests for 3 minutes per target, about 30 minutes in all
## (socket frames, tool arguments, both LLM stream parsers, signed URLs, artifact keys and ids,
## the local bridge's command and path checks, a SKILL.md's front matter;
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

## make load: N simulated extensions (socket clients speaking the real protocol) serving 2N
## tasks at once on workerd, for N = 10, 50, 200 (LOAD_SIZES): dispatch latency and round trip
## p50/p99, throughput, errors, and the messages each kind of object handles per second.
load: setup worker
	@$(ENV) node tests/load/run.ts

## make chaos: CHAOS_RUNS (200) seeded agent tasks under injected faults; counts actions lost
## or doubled and unclear endings, prints failing seeds (CHAOS_SEED=<seed> CHAOS_RUNS=1 replays one).
chaos: setup-browser worker
	@$(ENV) node tests/chaos/run.ts

setup:
	@scripts/setup.sh

setup-browser:
	@scripts/setup.sh browser

RUST_SOURCES := $(shell find protocol agent durable worker objects r2-artifacts -name '*.rs' -o -name Cargo.toml) Cargo.toml Cargo.lock

## The two Worker scripts: the route worker (worker/build: JS shim + wasm) and the Durable
## Objects' own (objects/build). Also run by wrangler's [build] commands.
worker: worker/build/index.js objects/build/index.js web

# worker-build keeps the wasm name section (it passes --debuginfo to wasm-opt): a tenth of the
# gzipped bundle, dropped here. Panics still say their message and file:line; stack frames show
# function indexes. -Oz once more, for size (the features are the ones the Rust toolchain's
# wasm32 output uses, all of which workerd runs).
WASM_SHRINK := "$$WASM_OPT_BIN" -Oz --strip-debug --enable-bulk-memory --enable-nontrapping-float-to-int \
	--enable-sign-ext --enable-mutable-globals --enable-reference-types --enable-multivalue

worker/build/index.js: $(RUST_SOURCES)
	@$(ENV) cd worker && worker-build --release
	@$(ENV) $(WASM_SHRINK) worker/build/index_bg.wasm -o worker/build/index_bg.wasm

objects/build/index.js: $(RUST_SOURCES)
	@$(ENV) cd objects && worker-build --release
	@$(ENV) $(WASM_SHRINK) objects/build/index_bg.wasm -o objects/build/index_bg.wasm

web:
	@$(ENV) node web/build.mjs

extension:
	@$(ENV) node extension/build.mjs

## Regenerate protocol/ts/protocol.ts from the Rust protocol types.
typescript:
	@$(ENV) cargo run -q -p mimo-protocol --bin gen-ts

clean:
	rm -rf target worker/build objects/build web/dist extension/dist
