#!/usr/bin/env bash
# `make fuzz`: the property tests of every parser, run far longer than `cargo test` runs them
# (there each property has a few hundred cases). Each target below runs for FUZZ_SECONDS
# (default 180), in rounds of FUZZ_CASES cases per property (default 20000), each round with a
# new random seed, built with the optimized `fuzz` profile (debug assertions and overflow checks
# kept). The 10 targets take about 30 minutes, after a first build of one or two.
#
#   scripts/fuzz.sh                       every target
#   scripts/fuzz.sh sse_openai signed_urls   some of them
#   FUZZ_SECONDS=30 scripts/fuzz.sh       a quick pass
#
# A failure stops the run with proptest's minimal failing input. Fix the code, then add that
# input as a regular unit test beside the code it broke.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${FUZZ_SECONDS:-180}
cases=${FUZZ_CASES:-20000}

# One line per `cargo test` run of a target: its name, then the packages, test targets and name
# filters that select its properties. A target may have several lines; a round runs them all.
targets='
web_frames        -p mimo-protocol --test properties -- web_frames
extension_frames  -p mimo-protocol --test properties -- extension_frames
tool_arguments    -p mimo-protocol --test properties -- tool_arguments
tool_arguments    -p mimo-agent --lib -- properties::tool_arguments
sse_openai        -p mimo-agent --lib -- properties::sse_openai
sse_anthropic     -p mimo-agent --lib -- properties::sse_anthropic
sse_common        -p mimo-agent --lib -- properties::sse_decoder properties::sse_error
front_matter      -p mimo-agent --lib -- front_matter_
signed_urls       -p mimo-r2-artifacts --test properties -- signed_urls
artifact_keys     -p mimo-r2-artifacts --test properties -- artifact_keys
bridge_checks     -p mimo-bridge --lib -- properties::bridge_checks
'
names=$(awk 'NF { print $1 }' <<<"$targets" | uniq)
selected=${*:-$names}
for name in $selected; do
  grep -qx "$name" <<<"$names" || { echo "unknown target $name; targets: $(echo $names)" >&2; exit 2; }
done

printf 'building the property tests (profile fuzz)…\n'
# One package at a time, as the targets run them (features resolve per invocation).
for package in mimo-protocol mimo-agent mimo-r2-artifacts mimo-bridge; do
  cargo test --quiet --profile fuzz --no-run -p "$package"
done

log=$(mktemp)
trap 'rm -f "$log"' EXIT
for name in $selected; do
  start=$SECONDS
  rounds=0
  properties=0
  while ((rounds == 0 || SECONDS - start < seconds)); do
    properties=0
    while read -r _ args; do
      # shellcheck disable=SC2086 # the arguments are words on purpose
      if ! PROPTEST_CASES=$cases cargo test --quiet --profile fuzz $args >"$log" 2>&1; then
        cat "$log"
        printf '\n%s: FAILED in round %d (see the minimal failing input above)\n' "$name" $((rounds + 1))
        exit 1
      fi
      passed=$(grep -o '[0-9]* passed' "$log" | awk '{ n += $1 } END { print n + 0 }')
      properties=$((properties + passed))
    done < <(awk -v n="$name" '$1 == n' <<<"$targets")
    rounds=$((rounds + 1))
  done
  printf '%-17s %2d properties × %7d cases (%d rounds of %d) in %4d s: ok\n' \
    "$name" "$properties" $((rounds * cases)) "$rounds" "$cases" $((SECONDS - start))
done
