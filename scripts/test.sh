#!/usr/bin/env bash
# Every test and check of the project, in order of speed. Called by `make test` (which builds
# the worker and the web app first) and so by CI's .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n\033[1;34m== %s\033[0m\n' "$*"; }

step "rustfmt"
cargo fmt --all -- --check

step "clippy (native and wasm32)"
cargo clippy --quiet --workspace --all-targets -- -D warnings
cargo clippy --quiet -p mimo-worker --target wasm32-unknown-unknown -- -D warnings
cargo clippy --quiet -p mimo-objects --target wasm32-unknown-unknown -- -D warnings
cargo clippy --quiet -p mimo-durable --target wasm32-unknown-unknown --tests -- -D warnings

step "Rust unit tests (protocol, agent core and task machine, LLM gateway, artifacts; no import circles between modules)"
cargo test --quiet --workspace

step "wasm32 tests under Node (the task's stores on SQLite, HTTP and frame glue; wasm-bindgen-test)"
CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner \
  cargo test --target wasm32-unknown-unknown -p mimo-durable --lib

step "TypeScript type checks"
tsc --noEmit -p web
tsc --noEmit -p web/test
tsc --noEmit -p extension
tsc --noEmit -p extension/test
tsc --noEmit -p tests

step "import circles in TypeScript (madge; the Rust modules' check is a cargo test: tests/proptest/tests/module_circles.rs)"
madge --circular --no-spinner --extensions ts extension/src extension/test web/src web/test tests scripts

step "extension build"
node extension/build.mjs

step "Node tests: scripted LLM server, extension units, worker in Miniflare, browsers in Chromium, 10 chaos runs"
node --test --test-concurrency=1 \
  tests/llm-server/*.test.ts \
  web/test/*.test.ts \
  extension/test/*.test.ts \
  tests/integration/*.test.ts \
  tests/browser/*.test.ts \
  tests/chaos/*.test.ts

step "benchmark, quick mode (make bench with a few of each measurement: it must run to its end; figures, nothing timed is asserted)"
MIMO_BENCH_QUICK=1 node tests/bench/bench.ts
MIMO_BENCH_QUICK=1 MIMO_TEST_PREBUILT=1 node tests/bench/extension.ts

step "load run, quick mode (make load with 3 extensions: it must run to its end without errors; figures, nothing timed is asserted)"
LOAD_QUICK=1 node tests/load/run.ts
