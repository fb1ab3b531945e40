#!/usr/bin/env bash
# The pages `steward serve` reads and writes a signed Teams turn, by the file
# they go to (the store, its write-ahead log, a statement journal SQLite
# spilled to a temporary file): the system calls the kernel's share of a
# turn is made of, which callgrind does not count.
#
# teams_load runs for PAGE_IO_SECONDS (25); after PAGE_IO_WARM seconds (6)
# `perf record` counts the server's pread64 and pwrite64 calls for
# PAGE_IO_SAMPLE seconds (8), each resolved to its file through /proc; the
# turns in that window are the run's mean rate times its length.
#
#   STEWARD_LOAD_BIN=/path/to/steward STEWARD_LOAD_SEEDED=/tmp/seed.db gateway/benches/page_io.sh
#
# PAGE_IO_BENCH: a teams_load binary built before (else `cargo bench`);
# teams_load's own knobs pass through (STEWARD_LOAD_CONNECTIONS, …). Needs
# `perf` and the permission to trace the server's system calls.
set -euo pipefail

secs=${PAGE_IO_SECONDS:-25}
warm=${PAGE_IO_WARM:-6}
sample=${PAGE_IO_SAMPLE:-8}
out=$(mktemp -d /tmp/page-io.XXXXXX)
cd "$(dirname "$0")/../.."

STEWARD_LOAD_SECONDS=$secs \
    ${PAGE_IO_BENCH:-cargo bench -p steward --bench teams_load} >"$out/run" 2>&1 &
load=$!
pid=
for _ in $(seq 1 600); do
    pid=$(pgrep -f -n "steward.* serve" || true)
    [ -n "$pid" ] && break
    sleep 0.2
done
[ -n "$pid" ] || { echo "no steward serve started (see $out/run)" >&2; exit 1; }
sleep "$warm"
ls -l "/proc/$pid/fd" >"$out/fds" 2>/dev/null || true
perf record -q -e syscalls:sys_enter_pwrite64,syscalls:sys_enter_pread64 \
    -p "$pid" -o "$out/perf.data" -- sleep "$sample" 2>/dev/null
wait "$load"
perf script -i "$out/perf.data" -F event,trace 2>/dev/null >"$out/calls"

python3 - "$out" "$sample" <<'PY'
import collections, os, re, sys
out, sample = sys.argv[1], float(sys.argv[2])
files = {}
for l in open(f"{out}/fds"):
    m = re.search(r" (\d+) -> (.*)$", l)
    if m:
        files[int(m.group(1))] = os.path.basename(m.group(2))
run = open(f"{out}/run").read()
rates = re.search(r"turns/s in each 10 s: ([\d ]+)", run)
if not rates:
    sys.exit(f"no rates in {out}/run")
rates = [int(x) for x in rates.group(1).split()]
turns = sum(rates) / len(rates) * sample
counts = collections.Counter()
for l in open(f"{out}/calls"):
    m = re.search(r"sys_enter_(pwrite64|pread64).*fd: (0x[0-9a-f]+).*count: (0x[0-9a-f]+)", l)
    if m:
        fd = int(m.group(2), 16)
        # A file opened after the listing: SQLite's temporary files (a spilled statement journal).
        counts[(m.group(1), files.get(fd, "a file opened later"), int(m.group(3), 16))] += 1
print(f"turns in the window: ~{turns:.0f}; {re.search(r'server per turn: [^;]*', run).group(0)}")
for (call, file, size), n in counts.most_common():
    print(f"{n / turns:8.3f} a turn  {call} {size:>6} bytes  {file}")
PY
