#!/usr/bin/env python3
"""Score what a person sees when a transcript is replayed through `steward replay`.

Usage (Python 3 stdlib only):

    # run the transcript, then score it
    score.py TRANSCRIPT [--model offline|real] [--bin PATH] [--out DIR]
             [--port 17001] [--model-id ID] [--baseline] [--json-out FILE] [--full]
    # score a replay that already ran (the JSON of `steward replay --json`,
    # and its stderr log written with NO_COLOR=1 STEWARD_LOG=steward=info)
    score.py TRANSCRIPT --replay-json OUT.json [--log OUT.log] [--model real] ...

TRANSCRIPT is a `steward replay` transcript whose msg lines may carry, beside
"msg", an "expect" object (and any line may carry a "note" string, dropped):

    {"msg":{...},"expect":{"facts":["sales_2025"],"forbidden":["Lisbon"],
                           "saves":"Portuguese"|["short","Lisbon"]|[["polsk","Polish"]]|null,
                           "asks":true|false,"stores":false}}

  facts      the reply to this line shows every one (a question answered)
  forbidden  the reply shows none of them (another person's data, a retired value)
  saves      text: the reply has a receipt "(id: N)" for each text and record N's
             content contains it, and no receipted record is something else;
             an item that is a list is its wordings, one of which must show;
             null: the reply has no receipt
  asks       whether the reply ends with "Remember this? ... reply yes or no"
  stores     false: no receipt, no "Remember this?", and no record said at this
             line's time (records carry the time of the message they came from)

Matching is case-insensitive and accent-insensitive, and starts at a word
start ("Bo" does not match "about"); texts under 4 characters must match a
whole word. The stripped transcript (pair/msg lines only, same line numbers)
is written to OUT/<name>.stripped.jsonl and replayed from an empty temporary
directory, so no steward.toml is read: with --model offline the STEWARD_LLM__
provider/base_url/model variables are removed (the deterministic rules), with
--model real they point at the OpenAI-compatible server on 127.0.0.1:PORT.
Other STEWARD_* variables of the caller pass through.

Output: a per-turn table (line, speaker, text, ms, model calls by role,
checks, the reply underneath), the memory at the end with records whose
content is not supported by their author's own lines marked FABRICATED,
totals, and a one-line summary. --json-out FILE writes the totals as JSON.
--baseline (real model): for every question line (with "facts"), one bare
chat completion on the same server with the memory live when it was asked as
the system prompt (the same memory the turn had: the agent_notes/org_policy
records, and the asker's own personal records), timed, and the ratio of the
median question turn to the median bare call; then the same with the notes
alone live (the ratio printed on 2026-12-04) and with the notes at the end
for every question (before that). The exit status is 0 whatever the scores.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import unicodedata
import urllib.request

ANSI = re.compile(r"\x1b\[[0-9;]*m")
FIELD = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|\S+)')
RECEIPT = re.compile(r"\(id: (\d+)\)")
ASK = re.compile(r"Remember this\?.*reply yes or no\s*$", re.S)
# A tool call written as text, JSON, or the prompt's frame markup copied back
# (a reply showing "<<<memory:3 agent_notes: …>>>" shows the wrapping, not an answer).
RAW_MARKS = ("```json", "<tool_call>", '{"name"', '"arguments"', "<<<", ">>>")
EVENT_KEYS = {"pair", "msg", "system", "run", "tool", "trim", "relearn", "undo", "review", "roles", "curate", "mcp", "approve_tool"}
DEFAULT_MODEL_ID = "qwen2.5-coder-1.5b-instruct"

# Words a record's content may hold without its author having said them:
# function words, and the words steward (or a model) uses to phrase a record
# ("Prefers ...", "Wants answers in ...", "Their name is ...").
STOPWORDS = set("""
a an the to in on of for and or but be with at by as from into onto about than
then so if it its it's this that these those there here is are was were been being
am do does did done has have had having will would shall should can could may might
must not no yes i me my mine we us our ours you your yours he him his she her hers
they them their theirs themselves himself herself itself myself yourself what which
who whom whose when where why how all any each every some such only also just very
too more most other own same up down out over under again further once now always
please ok okay hi hello thanks thank
prefers prefer preferred preference wants want wanted answers answer answered
introduced said says say name named is are called call calls user speaker person
reply replies respond responds response responses language likes like uses use
times time zone
""".split())


def fold(s):
    """Lower case without accents (português -> portugues)."""
    s = unicodedata.normalize("NFKD", s)
    return "".join(c for c in s if not unicodedata.combining(c)).lower()


def shows(text, needle):
    """Whether `needle` shows in `text` (folded; at a word start; whole word if short)."""
    t, n = fold(text), fold(needle).strip()
    if not n:
        return False
    # A letter of a script written without spaces (9時30分, スタンドアップは09:30に)
    # is no word of its own: it bounds a value as a space does.
    def joined(c):
        return c.isalnum() and not is_cjk(c)

    def written_onto(start):
        # Hebrew and Arabic write a preposition, an article or "and" onto the
        # word (العربي "the Arabic", בעברית "in Hebrew"): the word starts after them.
        head = start
        while head > 0 and joined(t[head - 1]):
            head -= 1
        return 0 < start - head <= 3 and all(c in PROCLITICS for c in t[head:start])

    for m in re.finditer(re.escape(n), t):
        before = t[m.start() - 1] if m.start() > 0 else ""
        after = t[m.end()] if m.end() < len(t) else ""
        if n[0].isalnum() and before and joined(before) and not written_onto(m.start()):
            continue
        if len(n) < 4 and n[-1].isalnum() and after and joined(after):
            continue
        return True
    return False


def shows_fact(text, fact):
    """A fact is a text, or a list of its wordings (`["Friday", "sexta"]` for a
    reply that may be in English or Portuguese): one of them shows."""
    return any(shows(text, f) for f in ([fact] if isinstance(fact, str) else fact))


# A word: letters/digits, joined by . _ : - / @ # so that pg-staging-04.internal,
# sales_2025, 16:00 and vpn.example.com stay whole.
WORD = re.compile(r"[^\W_]+(?:[._:\-/@#][^\W_]+)*")


def words(text):
    return WORD.findall(fold(text))


def content_words(text):
    return [w for w in words(text) if w not in STOPWORDS and not (len(w) == 1 and w.isalpha())]


def support_set(lines):
    """Every word of `lines`, and the pieces of joined words (ops-oncall -> ops, oncall)."""
    out = set()
    for line in lines:
        for w in words(line):
            out.add(w)
            out.update(p for p in re.split(r"[._:\-/@#]", w) if p)
    return out


def joined_of_said(w, wholes):
    """Whether `w` is said words joined (pg-staging-04.internal:5432 of the host and the port)."""
    cuts = [i for i, c in enumerate(w) if c in "._:-/@#"]
    ok = {0}  # positions where a run of whole said words ends
    for end in cuts + [len(w)]:
        if any(w[start:end] in wholes for start in ok if start < end):
            if end == len(w):
                return True
            ok.add(end + 1)
    return False


def is_cjk(c):
    """A character of a script written without spaces between words."""
    return ("\u3040" <= c <= "\u30ff" or "\u3400" <= c <= "\u4dbf" or "\u4e00" <= c <= "\u9fff"
            or "\uac00" <= c <= "\ud7af" or "\uf900" <= c <= "\ufaff")


# Letters Hebrew and Arabic write onto a word's start as a preposition, an
# article or a conjunction (ב ל ה ו כ מ ש; ال ب و ل ف ك).
PROCLITICS = set("בלהוכמש" "البوفك")


def supported(w, said, wholes=()):
    if w in said:
        return True
    if not w.isalpha() and joined_of_said(w, wholes):
        return True
    plain = w.isalpha()
    for s in said:
        # Hebrew and Arabic write a preposition, an article or "and" onto the
        # word (בעברית "in Hebrew", بالعربي "in Arabic"): the word is said.
        if plain and s.endswith(w) and 0 < len(s) - len(w) <= 3 and all(
            c in PROCLITICS for c in s[: len(s) - len(w)]
        ):
            return True
        if plain and s.isalpha():
            # A shared stem of 5+ characters covering all but the last 3 of the
            # shorter word: plural and verb endings (reviewer/reviewers, archive/archived).
            n = 0
            for a, b in zip(w, s):
                if a != b:
                    break
                n += 1
            if n >= 5 and n >= min(len(w), len(s)) - 3:
                return True
            # Or a word of 4+ letters with an ending of up to 3 (work/works, call/called).
            if n >= 4 and n == min(len(w), len(s)) and abs(len(w) - len(s)) <= 3:
                return True
        elif not plain and len(w) >= 5 and s.startswith(w) and s[len(w)] in "._:-/@#":
            # pg-staging-04 out of pg-staging-04.internal (a whole leading part).
            return True
    return False


def fields(line):
    return {k: v.strip('"') for k, v in FIELD.findall(line)}


# ---------------------------------------------------------------- transcript


def load_transcript(path):
    """(events by line, stripped text). Line numbers are kept: a dropped line becomes empty."""
    events, stripped = [], []
    with open(path, encoding="utf-8") as f:
        for no, raw in enumerate(f, 1):
            if not raw.strip():
                stripped.append("")
                continue
            obj = json.loads(raw)
            expect = obj.pop("expect", None)
            note = obj.pop("note", None)
            kept = {k: v for k, v in obj.items() if k in EVENT_KEYS}
            unknown = set(obj) - EVENT_KEYS
            if unknown:
                raise SystemExit(f"{path}:{no}: unknown keys {sorted(unknown)}")
            stripped.append(json.dumps(kept, ensure_ascii=False) if kept else "")
            if kept:
                events.append({"line": no, "obj": kept, "expect": expect or {}, "note": note})
    return events, "\n".join(stripped) + "\n"


class People:
    def __init__(self, events):
        self.name, self.role, self.lines = {}, {}, {}
        for e in events:
            if "pair" in e["obj"]:
                p = e["obj"]["pair"]
                key = f"{p['channel']}:{p['user']}"
                self.name[key] = p.get("name") or p["user"]
                self.role[key] = p.get("role", "user")
            elif "msg" in e["obj"]:
                m = e["obj"]["msg"]
                if m.get("sender") is not None:
                    self.lines.setdefault(f"{m['channel']}:{m['sender']}", []).append(m["text"])

    def admins(self):
        return [k for k, r in self.role.items() if r == "admin"]


def said_by(e):
    """A msg line, or a run line shown as one: what started it, with its time."""
    if "msg" in e["obj"]:
        return e["obj"]["msg"]
    r = e["obj"]["run"]
    what = r.get("text") or f"skill {r.get('skill')}"
    if r.get("payload"):
        what += f" + payload {r['payload']}"
    return {"text": f"[{r['trigger']} run {r['name']}] {what}", "at": r.get("at"),
            "sender": None, "channel": "run"}


def sender_of(e):
    m = e["obj"].get("msg") or {}
    return f"{m['channel']}:{m['sender']}" if m.get("sender") is not None else None


def norm_time(s):
    """RFC 3339 to 'YYYY-MM-DDTHH:MM:SS' in UTC (replay prints seconds, Z)."""
    if not s:
        return None
    from datetime import datetime, timezone
    try:
        t = datetime.fromisoformat(s.replace("Z", "+00:00"))
    except ValueError:
        return None
    if t.tzinfo is None:
        t = t.replace(tzinfo=timezone.utc)
    return t.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")


# ---------------------------------------------------------------- log


def parse_log(path):
    """Per event line: ms, model calls by role, failed calls, calls after the last event."""
    turns, cur = {}, None

    def fresh():
        return {"roles": {}, "call_ms": 0, "tokens": 0, "failed": 0, "budget": 0}

    cur = fresh()
    if not path or not os.path.exists(path):
        return turns, cur
    call = re.compile(r"\bmodel call\b(?! failed)")
    for raw in open(path, encoding="utf-8", errors="replace"):
        line = ANSI.sub("", raw)
        if "model call failed" in line:
            cur["failed"] += 1
        elif "token budget spent" in line:
            cur["budget"] += 1
        elif (m := call.search(line)):
            f = fields(line[m.end():])
            if "ms" not in f:
                continue
            role = f.get("role", "?")
            cur["roles"][role] = cur["roles"].get(role, 0) + 1
            cur["call_ms"] += int(f["ms"])
            cur["tokens"] += int(f.get("completion_tokens", 0) or 0)
        elif "replay event" in line:
            f = fields(line[line.index("replay event"):])
            cur.update(ms=int(f.get("ms", 0)), event=f.get("event", "?"))
            turns[int(f.get("line", 0))] = cur
            cur = fresh()
    return turns, cur


# ---------------------------------------------------------------- replay


def server_model_id(port):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=10) as r:
            v = json.load(r)
        return (v.get("data") or [{}])[0].get("id") or v["models"][0]["name"]
    except Exception:
        return None


def run_replay(args, stripped_path, json_path, log_path, model_id):
    env = dict(os.environ)
    env.update(NO_COLOR="1", STEWARD_LOG=env.get("STEWARD_LOG_EVAL", "steward=info"))
    for k in ("STEWARD_LLM__PROVIDER", "STEWARD_LLM__BASE_URL", "STEWARD_LLM__MODEL"):
        env.pop(k, None)
    if args.model == "real":
        env.update(STEWARD_LLM__PROVIDER="openai",
                   STEWARD_LLM__BASE_URL=f"http://127.0.0.1:{args.port}/v1",
                   STEWARD_LLM__MODEL=model_id)
    work = tempfile.mkdtemp(prefix="steward-eval-")
    t0 = time.monotonic()
    with open(json_path, "w") as out, open(log_path, "w") as err:
        rc = subprocess.call([args.bin, "replay", os.path.abspath(stripped_path), "--json"],
                             cwd=work, env=env, stdout=out, stderr=err)
    wall = time.monotonic() - t0
    try:
        os.rmdir(work)
    except OSError:
        pass
    return rc, wall


def bare_call(port, model_id, system, user):
    body = json.dumps({"model": model_id, "max_tokens": 256,
                       "messages": [{"role": "system", "content": system},
                                    {"role": "user", "content": user}]}).encode()
    req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/chat/completions", data=body,
                                 headers={"Content-Type": "application/json"})
    t0 = time.monotonic()
    try:
        with urllib.request.urlopen(req, timeout=900) as r:
            v = json.load(r)
        text = (v.get("choices") or [{}])[0].get("message", {}).get("content") or ""
        err = None
    except Exception as e:  # a report: note the failure and go on
        text, err = "", str(e)
    return time.monotonic() - t0, text, err


# ---------------------------------------------------------------- scoring


def cut(s, n):
    s = " / ".join(x.strip() for x in s.splitlines() if x.strip())
    return s if len(s) <= n else s[: n - 1] + "…"


# A promise to remember, or to serve the person a way from now on, in the
# first person (English, German, Spanish, French, Portuguese, Italian): only
# memory keeps such a promise, so a reply making one is counted (steward's own
# "Remember this?" and receipts are not promises).
PROMISE = re.compile(
    r"\b(i will(?! not)|i'll|i can(?!'t| not|not)|i am going to|i'm going to|ich werde|werde ich|voy a|te responderé|"
    r"je vais|je vous répondrai|je te répondrai|vou|irei|farò|ti risponderò)\b[^.!?\n]*"
    r"\b(remember|keep (that|this|it) in mind|always|from now on|going forward|in future|"
    r"all my answers|immer|ab jetzt|alle antworten|siempre|toujours|désormais|sempre|d'ora in poi)",
    re.IGNORECASE)


def promises(text):
    """Whether a reply promises something later that only memory could keep."""
    return bool(PROMISE.search(text.replace("’", "'")))


def is_raw(text):
    t = text.strip()
    return any(m in text for m in RAW_MARKS) or t.startswith("{") or t.startswith("[")


def median(xs):
    return statistics.median(xs) if xs else None


def secs(v):
    return "-" if v is None else f"{v:.1f} s"


def score(args, events, replay, log_turns, log_tail, wall, rc):
    people = People(events)
    replies = {}
    for r in replay.get("replies", []):
        replies.setdefault(r.get("line", 0), []).append(r["text"])
    memory = replay.get("memory", [])
    by_id = {m["id"]: m for m in memory}
    # Records said at a line's time came from that line (said_at is the message's time).
    said_lines = {}
    for e in events:
        if "msg" in e["obj"] or "run" in e["obj"]:
            t = norm_time(said_by(e).get("at"))
            if t:
                said_lines.setdefault(t, []).append(e["line"])
    by_line = {e["line"]: e for e in events}

    rows, tot = [], {
        "questions": 0, "answered": 0, "forbidden": 0, "consent_errors": 0,
        "raw_json": 0, "checks": 0, "checks_failed": 0, "stores_errors": 0, "asks_errors": 0,
        "promises": 0,
    }
    calls_total = {}
    turn_ms, question_ms = [], []
    for e in events:
        if "msg" not in e["obj"] and "run" not in e["obj"]:
            continue
        m, x, no = said_by(e), e["expect"], e["line"]
        run = "run" in e["obj"]
        who = sender_of(e)
        text = "\n".join(replies.get(no, []))
        lt = log_turns.get(no)
        fails, passes = [], 0
        ids = [int(i) for i in RECEIPT.findall(text)]

        def check(ok, reason):
            nonlocal passes
            tot["checks"] += 1
            if ok:
                passes += 1
            else:
                tot["checks_failed"] += 1
                fails.append(reason)
            return ok

        if "facts" in x:
            tot["questions"] += 1
            missing = [f for f in x["facts"] if not shows_fact(text, f)]
            if check(not missing, "no reply" if not text else f"missing {missing}"):
                tot["answered"] += 1
            if lt:
                question_ms.append(lt["ms"])
        shown = [f for f in x.get("forbidden", []) if shows(text, f)]
        if "forbidden" in x:
            check(not shown, f"shows forbidden {shown}")
            tot["forbidden"] += len(shown)
        if "saves" in x:
            want = x["saves"]
            if want is None:
                if not check(not ids, f"saved ids {ids} (nothing should be)"):
                    tot["consent_errors"] += len(ids)
            else:
                want = [want] if isinstance(want, str) else list(want)
                recs = [by_id.get(i) for i in ids]
                unknown = [i for i, r in zip(ids, recs) if r is None]
                # An item may be a list of its wordings (["polsk", "Polish"]): one of them shows.
                alts = [[w] if isinstance(w, str) else list(w) for w in want]
                def holds(r, a):
                    return r is not None and any(shows(r["content"], w) for w in a)
                missing = [a[0] if len(a) == 1 else a for a in alts if not any(holds(r, a) for r in recs)]
                other = [r for r in recs if r and not any(holds(r, a) for a in alts)]
                reasons = []
                if not ids:
                    reasons.append(f"no receipt (expected {want})")
                elif missing:
                    reasons.append(f"no saved record with {missing}")
                if other:
                    reasons.append("saved something else: " + "; ".join(
                        f"#{r['id']} {cut(r['content'], 40)!r}" for r in other))
                if unknown:
                    reasons.append(f"receipt ids {unknown} not in memory")
                if not check(not reasons, ", ".join(reasons)):
                    tot["consent_errors"] += (1 if missing or not ids else 0) + len(other) + len(unknown)
        if "asks" in x:
            asked = bool(ASK.search(text.strip()))
            if not check(asked == bool(x["asks"]),
                         "asks 'Remember this?'" if asked else "does not ask 'Remember this?'"):
                tot["asks_errors"] += 1
        if x.get("stores") is False:
            here = said_lines.get(norm_time(m.get("at")), [])
            # Only when no other line has this time (else the record's line is unknown).
            # A run may leave only unverified records (for review), whatever their source.
            made = [r for r in memory
                    if here == [no] and norm_time(r.get("said_at")) == norm_time(m.get("at"))
                    and (r["status"] in ("active", "pending") if run
                         else r["source"].split(":", 1)[0] in ("live", "proposal"))]
            reasons = []
            if ids:
                reasons.append(f"receipt {ids}")
                if "saves" not in x:  # counted above when saves is given
                    tot["consent_errors"] += len(ids)
            if ASK.search(text.strip()) and "asks" not in x:
                reasons.append("asks 'Remember this?'")
            if made:
                reasons.append("stored " + "; ".join(
                    f"#{r['id']} {r['status']} {cut(r['content'], 40)!r}" for r in made))
            if not check(not reasons, ", ".join(reasons)):
                tot["stores_errors"] += 1
        if text and promises(text):
            tot["promises"] += 1
            fails.append("promises to remember")
        raw = is_raw(text) if text else False
        if raw:
            tot["raw_json"] += 1
            fails.append("raw tool-call/JSON reply")
        roles = dict(lt["roles"]) if lt else {}
        for k, v in roles.items():
            calls_total[k] = calls_total.get(k, 0) + v
        if lt:
            turn_ms.append(lt["ms"])
        rows.append({
            "line": no, "speaker": people.name.get(who, m.get("sender") or ("system" if run else "?")),
            "admin": people.role.get(who) == "admin", "group": m.get("kind") == "group",
            "text": m["text"], "ms": lt["ms"] if lt else None, "roles": roles,
            "failed_calls": lt["failed"] if lt else 0,
            "passed": passes, "fails": fails, "reply": text, "receipts": ids,
        })

    # Fabricated records: content words their author never said.
    fabricated, authority = [], []
    admin_lines = [l for k in people.admins() for l in people.lines.get(k, [])]
    for r in memory:
        owner = r.get("owner")
        said = said_lines.get(norm_time(r.get("said_at")), [])
        by_line_of = said[0] if len(said) == 1 else None
        if owner and r["scope"] in ("personal", "person"):
            author = owner
            basis = people.lines.get(owner, []) + [people.name.get(owner, "")]
        elif r["scope"] == "role":
            # A role entry's words are those its curators proposed ("curate" lines).
            author = "curators"
            basis = [e["obj"]["curate"]["text"] for e in events if "curate" in e["obj"]]
        else:
            author = "admins"
            basis = admin_lines + [people.name.get(k, "") for k in people.admins()]
            if by_line_of and r["scope"] in ("agent_notes", "org_policy"):
                who = sender_of(by_line[by_line_of])
                if who and people.role.get(who) != "admin" and r["status"] in ("active", "pending"):
                    authority.append((r, by_line_of, who))
        said_words = support_set(basis)
        wholes = {w for line in basis for w in words(line)}
        missing = []
        # Chinese and Japanese have no spaces: a word of theirs is supported
        # when the author's lines hold it anywhere ("日本語" in "これからは日本語で…").
        said_text = fold(" ".join(basis))
        for w in content_words(r["content"]):
            if any(is_cjk(c) for c in w) and w in said_text:
                continue
            if not supported(w, said_words, wholes) and w not in missing:
                missing.append(w)
        r["_unsupported"] = missing
        r["_line"] = by_line_of
        r["_author"] = author
        if missing:
            fabricated.append(r)

    # Baseline: bare chat completions with the notes as the system prompt.
    baseline = None
    if args.baseline:
        if args.model != "real":
            print("note: --baseline needs --model real; skipped", file=sys.stderr)
        else:
            # The same memory as the turn had: the notes live when the question
            # was asked (a superseded note until its replacement was said), in
            # the order they were written, so a bare call also pays for the
            # notes that changed since the one before it, and the asker's own
            # personal records live then (a language preference, a nickname:
            # without them a bare call answers another question, in another
            # language). Two more figures are run beside it: the notes alone
            # (the figure of 2026-12-04) and the notes at the end for every
            # question (the figure before that).
            shared = [r for r in memory if r["scope"] in ("agent_notes", "org_policy")]
            personal = [r for r in memory if r["scope"] == "personal"]
            replaced_at = {}
            for rv in replay.get("revisions", []):
                rep = by_id.get(rv.get("replacing_id"))
                if rep is not None and not rv.get("undone"):
                    replaced_at[rv.get("retired_id")] = rep.get("_line")

            def live(r, line):
                return (r.get("_line") is not None and r["_line"] < line
                        and (r["status"] == "active"
                             or (r["status"] == "superseded"
                                 and (replaced_at.get(r["id"]) or 0) >= line)))

            def notes_live(e):
                return "\n".join(r["content"] for r in sorted(shared, key=lambda r: r["id"])
                                 if live(r, e["line"]))

            def memory_live(e):
                own = [r["content"] for r in sorted(personal, key=lambda r: r["id"])
                       if r.get("owner") == sender_of(e) and live(r, e["line"])]
                about = ("\nWhat the person asking asked you to remember about them:\n"
                         + "\n".join(own)) if own else ""
                return notes_live(e) + about

            final = "\n".join(r["content"] for r in shared if r["status"] == "active")
            head = "You are a helpful assistant. Answer from these notes:\n"
            mq = median(question_ms)

            def run(memory_for):
                calls = []
                for e in events:
                    if "facts" in e["expect"] and "msg" in e["obj"]:
                        q = e["obj"]["msg"]["text"]
                        s, text, err = bare_call(args.port, args.model_id, head + memory_for(e), q)
                        ok = (not err) and all(shows_fact(text, f) for f in e["expect"]["facts"])
                        calls.append({"line": e["line"], "s": s, "text": text, "error": err,
                                      "answered": ok})
                mb = median([c["s"] for c in calls if not c["error"]])
                return {"calls": calls, "median_bare_s": mb,
                        "answered": sum(c["answered"] for c in calls), "questions": len(calls),
                        "ratio": (mq / 1000 / mb) if (mq is not None and mb) else None}

            baseline = run(memory_live)
            baseline["notes_only"] = run(notes_live)
            baseline["final_notes"] = run(lambda _e: final)

    summary = {
        "transcript": os.path.basename(args.transcript), "model": args.model,
        "model_id": args.model_id if args.model == "real" else "offline",
        "replay_exit": rc, "wall_s": round(wall, 1) if wall is not None else None,
        "questions": tot["questions"], "answered": tot["answered"],
        "answered_pct": round(100 * tot["answered"] / tot["questions"]) if tot["questions"] else None,
        "forbidden_shown": tot["forbidden"], "fabricated": len(fabricated),
        "consent_errors": tot["consent_errors"], "stores_errors": tot["stores_errors"],
        "asks_errors": tot["asks_errors"], "authority_errors": len(authority),
        "raw_json": tot["raw_json"], "checks": tot["checks"], "checks_failed": tot["checks_failed"],
        "false_promises": tot["promises"],
        "calls": sum(calls_total.values()), "calls_by_role": calls_total,
        "failed_calls": sum(r["failed_calls"] for r in rows),
        "turns_timed": len(turn_ms),
        "median_turn_s": median(turn_ms) / 1000 if turn_ms else None,
        "max_turn_s": max(turn_ms) / 1000 if turn_ms else None,
        "median_question_s": median(question_ms) / 1000 if question_ms else None,
        "fabricated_records": [{"id": r["id"], "scope": r["scope"], "status": r["status"],
                                "content": r["content"], "unsupported": r["_unsupported"]}
                               for r in fabricated],
        "failures": [{"line": r["line"], "fails": r["fails"], "reply": r["reply"]}
                     for r in rows if r["fails"]],
    }
    if baseline:
        summary["baseline"] = baseline
        summary["median_bare_s"] = baseline["median_bare_s"]
        summary["question_to_bare_ratio"] = baseline["ratio"]
    return rows, memory, fabricated, authority, summary, log_tail


def report_skills(skills):
    """The skills at the end (only when the replay made any): a model's or a
    person's draft is only ever `proposed`; `active` needs an approver."""
    if not skills:
        return
    print(f"-- skills at the end ({len(skills)} revisions)")
    for k in skills:
        by = f", approved by {k['approved_by']}" if k.get("approved_by") else ""
        steps = " / ".join(l[2:] for l in k["body"].splitlines() if l.startswith("- "))
        print(f"  #{k['id']:<3} {k['status']:<10} {k['slug']}@{k['rev']} "
              f"(proposed by {k['proposed_by']}{by}): {cut(steps, 90)}")
    unapproved = [k for k in skills if k["status"] == "active" and not k.get("approved_by")]
    print(f"skills in force without an approver: {len(unapproved)}")


def report(args, rows, memory, fabricated, authority, s, log_tail, err_tail):
    w = args.width
    print(f"== {s['transcript']} on {s['model_id']} ({len(rows)} turns; replay exit {s['replay_exit']}"
          + (f", wall {s['wall_s']} s" if s["wall_s"] is not None else "") + ")")
    if s["replay_exit"] not in (0, None):
        print("   replay failed; stderr tail:")
        for l in err_tail:
            print("   | " + l)
    print(f"{'line':>4} {'speaker':<8} {'text':<{w}} {'ms':>7} {'calls':<18} checks")
    for r in rows:
        who = r["speaker"] + ("*" if r["admin"] else "")
        roles = ",".join(f"{k}:{v}" for k, v in sorted(r["roles"].items())) or "-"
        if r["failed_calls"]:
            roles += f",failed:{r['failed_calls']}"
        ms = "-" if r["ms"] is None else str(r["ms"])
        total = r["passed"] + len(r["fails"])
        verdict = ("-" if total == 0 else f"ok {r['passed']}") if not r["fails"] else \
            f"FAIL {len(r['fails'])}/{total}: " + "; ".join(r["fails"])
        tag = "(g) " if r["group"] else ""
        print(f"{r['line']:>4} {who:<8} {cut(tag + r['text'], w):<{w}} {ms:>7} {roles:<18} {verdict}")
        reply = r["reply"]
        if not reply:
            print(f"{'':>14}→ (no reply)")
        elif args.full:
            for l in reply.splitlines():
                print(f"{'':>14}→ {l}")
        else:
            print(f"{'':>14}→ {cut(reply, args.reply_width)}")
    print(f"-- memory at the end ({len(memory)} records; * = not supported by its author's lines)")
    for r in memory:
        mark = "*" if r.get("_unsupported") else " "
        owner = f" of {r['owner']}" if r.get("owner") else ""
        line = f" line {r['_line']}" if r.get("_line") else ""
        print(f" {mark}#{r['id']:<3} {r['status']:<10} {r['scope']}{owner}{line}: {cut(r['content'], 90)}")
        if r.get("_unsupported"):
            print(f"{'':>7}unsupported by {r['_author']}: {', '.join(r['_unsupported'])}")
    for r, line, who in authority:
        print(f"  ! #{r['id']} {r['scope']} {r['status']} came from line {line}, a non-admin ({who})")
    q = s["questions"]
    pct = f" ({s['answered_pct']}%)" if q else ""
    print("-- totals")
    print(f"questions answered with the expected facts: {s['answered']}/{q}{pct}")
    print(f"forbidden text shown: {s['forbidden_shown']}")
    print(f"fabricated records: {s['fabricated']}")
    print(f"consent errors: {s['consent_errors']}   (stores:false lines that stored/asked: "
          f"{s['stores_errors']}, wrong 'Remember this?': {s['asks_errors']}, "
          f"shared records from non-admin lines: {s['authority_errors']})")
    print(f"false promises to remember: {s['false_promises']}")
    print(f"raw tool-call/JSON replies: {s['raw_json']}")
    roles = ", ".join(f"{k} {v}" for k, v in sorted(s["calls_by_role"].items())) or "none"
    timed = max(s["turns_timed"], 1)
    print(f"model calls: {s['calls']} ({roles}); {s['calls'] / timed:.1f} a turn; failed {s['failed_calls']}")
    print(f"turn time: median {secs(s['median_turn_s'])}, max {secs(s['max_turn_s'])}, "
          f"median question {secs(s['median_question_s'])}"
          + ("" if s["turns_timed"] else "  (no 'replay event' lines in the log)"))
    print(f"checks: {s['checks'] - s['checks_failed']}/{s['checks']} passed")
    b = s.get("baseline")
    if b:
        print("-- baseline: bare chat completion with the memory live at the question (notes,"
              " and the asker's own records) as system prompt")
        for c in b["calls"]:
            state = f"error: {c['error']}" if c["error"] else ("ok" if c["answered"] else "missing facts")
            print(f"{c['line']:>4} {c['s']:>6.1f} s  {state:<14} → {cut(c['text'], args.reply_width)}")
        ratio = "-" if b["ratio"] is None else f"{b['ratio']:.1f}x"
        mb = "-" if b["median_bare_s"] is None else f"{b['median_bare_s']:.1f} s"
        print(f"median bare {mb}; median question turn / median bare = {ratio}; "
              f"bare answered {b['answered']}/{b['questions']}")
        for key, what in (("notes_only", "with the notes alone live at the question"),
                          ("final_notes", "with the notes at the end for every question")):
            fb = b.get(key)
            if fb:
                r = "-" if fb["ratio"] is None else f"{fb['ratio']:.1f}x"
                m = "-" if fb["median_bare_s"] is None else f"{fb['median_bare_s']:.1f} s"
                print(f"{what}: median bare {m}; ratio {r}; "
                      f"bare answered {fb['answered']}/{fb['questions']}")
    if log_tail and (log_tail["roles"] or log_tail["failed"]):
        print(f"(after the last finished event: {sum(log_tail['roles'].values())} calls, "
              f"{log_tail['failed']} failed — run cut short?)")
    print(one_line(s))


def one_line(s):
    f = lambda v: "-" if v is None else f"{v:.1f}"
    q = s["questions"]
    pct = f" ({s['answered_pct']}%)" if q else ""
    line = (f"{s['model']} {s['transcript']}: answered {s['answered']}/{q}{pct}, "
            f"forbidden {s['forbidden_shown']}, fabricated {s['fabricated']}, "
            f"consent errors {s['consent_errors']}, false promises {s['false_promises']}, "
            f"raw JSON {s['raw_json']}, calls {s['calls']}, "
            f"median turn {f(s['median_turn_s'])} s, median question {f(s['median_question_s'])} s, "
            f"checks {s['checks'] - s['checks_failed']}/{s['checks']}")
    if s.get("baseline"):
        line += f", median bare {f(s['median_bare_s'])} s, ratio {f(s['question_to_bare_ratio'])}"
    if s["replay_exit"] not in (0, None):
        line += f" [replay exit {s['replay_exit']}]"
    return line


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(root, "target"))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("transcript")
    ap.add_argument("--model", choices=["offline", "real"], default="offline")
    ap.add_argument("--bin", default=os.environ.get("STEWARD_BIN", os.path.join(target, "release", "steward")))
    ap.add_argument("--out", default=os.environ.get("EVAL_OUT", "/tmp/steward-eval"))
    ap.add_argument("--port", type=int, default=int(os.environ.get("CHAT_PORT", 17001)))
    ap.add_argument("--model-id", help="model name sent to the server (default: its /v1/models)")
    ap.add_argument("--baseline", action="store_true", help="bare chat completions per question (real)")
    ap.add_argument("--replay-json", help="score this finished `steward replay --json` output")
    ap.add_argument("--log", help="its stderr log (with --replay-json)")
    ap.add_argument("--json-out", help="write the totals as JSON here")
    ap.add_argument("--full", action="store_true", help="print whole replies")
    ap.add_argument("--width", type=int, default=50, help="message text column width")
    ap.add_argument("--reply-width", type=int, default=110)
    args = ap.parse_args()

    events, stripped = load_transcript(args.transcript)
    name = os.path.splitext(os.path.basename(args.transcript))[0]
    if args.model == "real" and not args.model_id:
        args.model_id = server_model_id(args.port) or DEFAULT_MODEL_ID
    rc, wall, err_tail = None, None, []
    if args.replay_json:
        json_path, log_path = args.replay_json, args.log
    else:
        os.makedirs(args.out, exist_ok=True)
        stripped_path = os.path.join(args.out, f"{name}.stripped.jsonl")
        with open(stripped_path, "w", encoding="utf-8") as f:
            f.write(stripped)
        json_path = os.path.join(args.out, f"{name}.{args.model}.json")
        log_path = os.path.join(args.out, f"{name}.{args.model}.log")
        if not os.access(args.bin, os.X_OK):
            print(f"no steward binary at {args.bin} (cargo build --release -p steward)", file=sys.stderr)
            return 0
        rc, wall = run_replay(args, stripped_path, json_path, log_path, args.model_id)
        if rc != 0:
            err_tail = [ANSI.sub("", l.rstrip()) for l in open(log_path, errors="replace")][-8:]
    try:
        with open(json_path, encoding="utf-8") as f:
            replay = json.load(f)
    except (OSError, ValueError) as e:
        print(f"no replay output ({e}); scoring an empty replay", file=sys.stderr)
        replay = {"replies": [], "memory": [], "revisions": []}
    log_turns, log_tail = parse_log(log_path)
    rows, memory, fabricated, authority, s, tail = score(args, events, replay, log_turns, log_tail, wall, rc)
    s["files"] = {"replay_json": json_path, "log": log_path}
    report(args, rows, memory, fabricated, authority, s, tail, err_tail)
    report_skills(replay.get("skills", []))
    if args.json_out:
        d = os.path.dirname(os.path.abspath(args.json_out))
        os.makedirs(d, exist_ok=True)
        with open(args.json_out, "w", encoding="utf-8") as f:
            json.dump(s, f, indent=2, ensure_ascii=False)
    return 0


if __name__ == "__main__":
    try:
        main()
    except BrokenPipeError:
        pass
    sys.exit(0)
