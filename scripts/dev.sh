#!/usr/bin/env bash
# Runs the whole system locally on workerd: `wrangler dev` with local Durable Objects and R2
# persisted under .wrangler/, serving the web app. With no LLM configured in .dev.vars, the
# scripted LLM server starts alongside so everything works without a key.
set -euo pipefail
cd "$(dirname "$0")/.."

port="${MIMO_PORT:-8787}"
llm_port="${MIMO_LLM_SERVER_PORT:-8790}"

# The deployment token: generated once, kept in .dev.vars (git-ignored).
touch .dev.vars
if ! grep -q '^MIMO_API_TOKEN=' .dev.vars; then
  echo "MIMO_API_TOKEN=$(node -e 'console.log(require("node:crypto").randomBytes(18).toString("base64url"))')" >> .dev.vars
fi
token=$(grep '^MIMO_API_TOKEN=' .dev.vars | tail -n1 | cut -d= -f2- | tr -d '"')

vars=()
if grep -qE '^MIMO_LLM_(BASE_URL|API_KEY)=' .dev.vars; then
  llm="the provider configured in .dev.vars"
else
  node tests/llm-server/server.ts --port "$llm_port" &
  llm_pid=$!
  trap 'kill $llm_pid 2>/dev/null || true' EXIT
  vars=(--var "MIMO_LLM_PROVIDER:openai_compatible" --var "MIMO_LLM_BASE_URL:http://127.0.0.1:$llm_port/v1" --var "MIMO_LLM_MODEL:mimo-scripted")
  llm="the scripted LLM server on port $llm_port (no key configured; see README to use a real one)"
fi

cat <<MSG

  Mimo is starting on workerd.
    web app:  http://127.0.0.1:$port/
    token:    $token
    LLM:      $llm
    storage:  .wrangler/state (Durable Objects SQLite, R2)

MSG
wrangler dev --ip 127.0.0.1 --port "$port" --persist-to .wrangler/state --show-interactive-dev-session=false "${vars[@]}"
