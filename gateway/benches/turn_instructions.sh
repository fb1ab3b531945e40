#!/usr/bin/env bash
# Instructions a signed Teams turn costs `steward serve`, counted by callgrind:
# a figure that holds on a shared machine where times and rates do not.
#
# teams_load runs twice with the server under callgrind, once sending
# TURNS_SMALL turns and once TURNS_LARGE (`STEWARD_LOAD_TURNS`); the
# difference of the two profiles divided by the difference of the turns is
# one turn's cost, start-up (migrations, compiling the credential rules) and
# shutdown subtracted. Prints the instructions a turn and the functions that
# cost most a turn, by their own instructions and with what they call.
#
#   gateway/benches/turn_instructions.sh                                # this build
#   STEWARD_LOAD_BIN=/path/to/other/steward gateway/benches/turn_instructions.sh
#
# TURNS_SMALL (100), TURNS_LARGE (500), TURNS_TOP (30 functions),
# TURNS_BENCH (a teams_load binary built before, run instead of `cargo bench`:
# to measure two builds in one sitting while the tree changes),
# TURNS_OUT (the directory the profiles are kept in; a fresh one by default),
# and teams_load's own knobs (STEWARD_LOAD_CONNECTIONS, default 8 here;
# STEWARD_LOAD_RECORDS, STEWARD_LOAD_USERS; STEWARD_LOAD_SEEDED=FILE, by default
# seeded in TURNS_OUT for the two runs).
set -euo pipefail

small=${TURNS_SMALL:-100}
large=${TURNS_LARGE:-500}
top=${TURNS_TOP:-30}
out=${TURNS_OUT:-$(mktemp -d /tmp/turn-instructions.XXXXXX)}
mkdir -p "$out"
export STEWARD_LOAD_CONNECTIONS=${STEWARD_LOAD_CONNECTIONS:-8}
# Seeded once for both runs (100k records take a minute).
export STEWARD_LOAD_SEEDED=${STEWARD_LOAD_SEEDED:-$out/seed.db}
cd "$(dirname "$0")/../.."

# TURNS_ANNOTATE_ONLY=1: only read the profiles already in TURNS_OUT.
for n in "$small" "$large"; do
    [ -n "${TURNS_ANNOTATE_ONLY:-}" ] && break
    STEWARD_LOAD_TURNS=$n \
        STEWARD_LOAD_WRAP="valgrind --tool=callgrind --callgrind-out-file=$out/callgrind.$n" \
        ${TURNS_BENCH:-cargo bench -p steward --bench teams_load} 2>"$out/stderr.$n" | tee "$out/stdout.$n"
done
for n in "$small" "$large"; do
    for mode in no yes; do
        callgrind_annotate --auto=no --inclusive=$mode --threshold=100 "$out/callgrind.$n" \
            >"$out/annotate.$n.$mode" 2>/dev/null
    done
done

python3 - "$out" "$small" "$large" "$top" <<'EOF'
import re, sys
out, small, large, top = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
line = re.compile(r"^\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(.*)$")

def acked(n):
    # teams_load's count of answered turns: the divisor, not the request.
    for l in open(f"{out}/stdout.{n}"):
        m = re.match(r"acknowledged turns: (\d+)", l)
        if m:
            return int(m.group(1))
    sys.exit(f"no acknowledged turns in {out}/stdout.{n}")

def costs(n, mode):
    total, funcs = 0, {}
    for l in open(f"{out}/annotate.{n}.{mode}"):
        m = line.match(l)
        if not m or "=>" in l:
            continue
        ir, name = int(m.group(1).replace(",", "")), m.group(2).strip()
        if name.startswith("PROGRAM TOTALS"):
            total = ir
        else:
            # One entry a function, whatever object file it sits in.
            name = re.sub(r"\s+\[[^\]]*\]$", "", name)
            funcs[name] = funcs.get(name, 0) + ir
    return total, funcs

def calibration(inclusive):
    # quanta (the rate limiter's clock) calibrates its TSC at start-up for a
    # fixed wall time: its instructions depend on how fast the machine ran
    # then, and left in they moved the per-turn figure of one build by up
    # to 90k between two sittings. Out, the same build counts the same to
    # within some dozen instructions a turn.
    return max((ir for name, ir in inclusive.items() if name.endswith("quanta::Clock::new")), default=0)

turns = acked(large) - acked(small)
(t_small, own_small), (t_large, own_large) = costs(small, "no"), costs(large, "no")
_, inc_small = costs(small, "yes")
_, inc_large = costs(large, "yes")
c_small, c_large = calibration(inc_small), calibration(inc_large)
per_turn = ((t_large - c_large) - (t_small - c_small)) / turns
print(f"\n{acked(small)} and {acked(large)} turns: {t_small:,} and {t_large:,} instructions"
      f" ({c_small:,} and {c_large:,} of them the clock's calibration)")
print(f"instructions a turn: {per_turn:,.0f}")

def show(title, a, b, only_ours):
    rows = []
    for name in set(a) | set(b):
        if only_ours and not re.search(r"steward|memory::|pairing::|adapters::|prompts::", name):
            continue
        rows.append(((b.get(name, 0) - a.get(name, 0)) / turns, name))
    rows.sort(reverse=True)
    print(f"\n{title}")
    for ir, name in rows[:top]:
        print(f"{ir:>10,.0f}  {100 * ir / per_turn:5.1f}%  {name[:150]}")

show("own instructions a turn, by function", own_small, own_large, False)
show("with what they call (inclusive), steward's functions", inc_small, inc_large, True)
print(f"\nprofiles and annotations in {out}")
EOF
