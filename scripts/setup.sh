#!/usr/bin/env bash
# Installs what building, running and testing Mimo needs, and nothing that is already there.
# Safe to run again: every step checks first, so a second run takes a few seconds.
#   scripts/setup.sh          toolchain for build and dev
#   scripts/setup.sh browser  also Debian's Chromium, for the browser tests
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '\033[1;34m[setup]\033[0m %s\n' "$*"; }

# Rust: the wasm target, and wasm-bindgen-cli at exactly the version in Cargo.lock (worker-build
# would download one from outside the package registries, which fails here).
if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  say "adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi
bindgen_version=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock)
if [ "$(wasm-bindgen --version 2>/dev/null | awk '{print $2}')" != "$bindgen_version" ]; then
  say "installing wasm-bindgen-cli $bindgen_version"
  cargo install --quiet wasm-bindgen-cli --version "=$bindgen_version"
fi
worker_build_version=$(cat scripts/worker-build.version)
if [ "$(worker-build --version 2>/dev/null)" != "$worker_build_version" ]; then
  say "installing worker-build $worker_build_version"
  cargo install --quiet worker-build --version "=$worker_build_version"
fi

# npm packages (wrangler, miniflare, esbuild, binaryen's wasm-opt, Node 22, test tools), from
# package-lock.json. Re-run only when the lock file changed since the last install. No install
# scripts: every binary we use ships in a platform package, and esbuild's postinstall check can
# fail spuriously (ETXTBSY) while npm is still writing the binary it runs.
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  say "installing npm packages"
  npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
fi

# Chromium for the browser tests, and a virtual X display with input and screen tools: Chrome's
# permission dialog only shows in a headed browser, and the tests answer it as a person would
# (tests/support/chrome-dialog.ts). Info-ZIP's unzip reads the evidence archives back in the
# tests (tests/integration/export.test.ts), an implementation other than the one writing them.
if [ "${1:-}" = browser ] && { [ ! -x /usr/bin/chromium ] || ! command -v Xvfb xdotool xwd unzip >/dev/null; }; then
  say "installing Debian's chromium, xvfb, xdotool, x11-apps and unzip"
  if [ "$(id -u)" = 0 ]; then sudo=""; else sudo="sudo"; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium chromium-driver xvfb xdotool x11-apps unzip >/dev/null
fi
