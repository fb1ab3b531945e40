"""Per-turn figures from a `steward replay` log (STEWARD_LOG=steward=info)."""
import re
import sys

ANSI = re.compile(r"\x1b\[[0-9;]*m")
FIELD = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|\S+)')


def fields(line):
    return {k: v.strip('"') for k, v in FIELD.findall(line)}


def main(path):
    rows, cur = [], None

    def fresh():
        return {"calls": 0, "roles": {}, "tokens": 0, "length": 0,
                "repairs": 0, "skipped": 0, "budget": 0, "failed": 0, "call_ms": 0}

    cur = fresh()
    for raw in open(path, encoding="utf-8", errors="replace"):
        line = ANSI.sub("", raw)
        f = fields(line)
        if "token budget spent" in line:
            cur["budget"] += 1
        elif "model call failed" in line:
            cur["failed"] += 1
        elif "model call" in line and "ms" in f:
            cur["calls"] += 1
            role = f.get("role", "?")
            cur["roles"][role] = cur["roles"].get(role, 0) + 1
            cur["tokens"] += int(f.get("completion_tokens", 0))
            cur["call_ms"] += int(f["ms"])
            if f.get("finish_reason") == "length":
                cur["length"] += 1
        elif "asking once for a repair" in line:
            cur["repairs"] += 1
        elif "after the repair; skipped" in line:
            cur["skipped"] += 1
        elif "replay event" in line:
            cur.update(line=int(f.get("line", 0)), event=f.get("event", "?"), ms=int(f.get("ms", 0)))
            rows.append(cur)
            cur = fresh()
    turns = [r for r in rows if r["event"] != "pair"]
    print(f"{'line':>4} {'ms':>7} {'calls':>5} {'tokens':>6} {'cap':>3} {'rep':>3} {'skip':>4} {'fail':>4}  roles")
    for r in turns:
        roles = ",".join(f"{k}:{v}" for k, v in sorted(r["roles"].items()))
        print(f"{r['line']:>4} {r['ms']:>7} {r['calls']:>5} {r['tokens']:>6} {r['length']:>3} "
              f"{r['repairs']:>3} {r['skipped']:>4} {r['failed']:>4}  {roles}")
    if not turns:
        print("no turns finished")
        return
    total = sum(r["ms"] for r in turns)
    ms = sorted(r["ms"] for r in turns)
    s = lambda k: sum(r[k] for r in turns)
    print(f"turns {len(turns)}  total {total / 1000:.1f} s  mean {total / len(turns) / 1000:.1f} s  "
          f"median {ms[len(ms) // 2] / 1000:.1f} s  max {ms[-1] / 1000:.1f} s")
    print(f"model calls {s('calls')}  answer tokens {s('tokens')}  hit token cap {s('length')}  "
          f"repairs {s('repairs')}  skipped after repair {s('skipped')}  failed (timeout/down) {s('failed')}  "
          f"not sent (turn budget) {s('budget')}")
    if cur["calls"] or cur["failed"]:
        print(f"(after the last finished turn: {cur['calls']} calls, {cur['failed']} failed — run cut short?)")


if __name__ == "__main__":
    main(sys.argv[1])
