//! Load benchmark: signed Microsoft Teams outgoing-webhook turns (or, with
//! `STEWARD_LOAD_CHANNEL=slack`, signed Slack Events API direct messages)
//! against a real `steward serve` (this build's binary, embedded defaults:
//! the offline model, no model server) on a SQLite file seeded with 100k
//! memory records.
//!
//! Teams answers in the HTTP response, so an acknowledgement is an answered
//! turn. Slack is acknowledged with an empty `200` once the message is
//! stored, and answered afterwards through `chat.postMessage`: the benchmark
//! serves a fake of that Web API call and counts the answers posted to it
//! (answered turns) beside the acknowledgements.
//!
//! N keep-alive connections (one task each, on one thread) post signed
//! activities — every one a distinct message id and text, from distinct paired
//! users in their own channel threads — for the configured time. Then the
//! server is killed with SIGKILL while the load is still running, and every
//! message that was acknowledged (a 2xx with the turn's answer) is looked up
//! where a reader finds it, its conversation's live history or one of the
//! conversation's archives: one missing fails the run. An acknowledgement sent
//! before its message was committed would show up here.
//!
//! Run: `cargo bench -p steward --bench teams_load`
//!
//! `STEWARD_LOAD_SECONDS` (60), `STEWARD_LOAD_CONNECTIONS` (32),
//! `STEWARD_LOAD_RECORDS` (100000), `STEWARD_LOAD_USERS` (1024).
//! `STEWARD_LOAD_SEEDED=FILE` keeps a backup of the seeded store in FILE and starts from
//! a copy of it next time (same build and settings only).
//! `STEWARD_LOAD_BIN` names another `steward` binary to serve (to compare
//! builds in one sitting). `STEWARD_LOAD_WRAP` runs the server under a command, e.g.
//! `valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.out`; the server is
//! then stopped with SIGINT instead (callgrind writes its profile on exit).
//! `STEWARD_LOAD_SET_<NAME>=v` serves with the setting `STEWARD_<NAME>=v`.
//! `STEWARD_LOAD_TURNS=N` sends N turns in all (shared among the connections)
//! and ends when they are answered, `STEWARD_LOAD_SECONDS` (then an hour) at
//! most: a fixed amount of work, for counting instructions under callgrind
//! (`gateway/benches/turn_instructions.sh`).
//! `STEWARD_LOAD_KEEP=DIR` copies the killed server's store files (database,
//! write-ahead log) to DIR before they are read.
//! `STEWARD_LOAD_POSTGRES_URL=postgres://…` serves from PostgreSQL instead:
//! schema `steward_load` of that server, dropped and seeded afresh each run
//! (`STEWARD_LOAD_SEEDED` is SQLite's); the PostgreSQL server's own CPU (every
//! process named `postgres` on this machine) is printed a turn too.
//! The server's rate limits are raised (the users send far more than 20 a
//! minute each); the limiter still runs on every turn.

// The 100-line limit is for production code; a scenario reads top to bottom.
#![allow(clippy::too_many_lines)]
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use hmac::{Hmac, Mac};
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper_util::rt::TokioIo;
use memory::{Db, NewRecord, Role, Scope, Status};
use pairing::{Pairing, PairingSettings};
use sha2::Sha256;
use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use steward::turn::IDENTITY_UNAVAILABLE;

const ORG: &str = "default";
/// The agent the Teams webhook serves (`POST /teams/<agent>`).
const AGENT: &str = "default";
/// The security token Teams would show (base64 of 32 bytes).
const TOKEN: &str = "c3Rld2FyZC1sb2FkLWJlbmNobWFyay1zZWNyZXQta2V5ISE=";
/// The Slack app's signing secret and bot token the served steward is given.
const SLACK_SECRET: &str = "steward-load-benchmark-slack-signing-secret";
const SLACK_TOKEN: &str = "xoxb-load-benchmark";
/// The Slack workspace every load user is in.
const SLACK_TEAM: &str = "TLOAD";

/// The platform the load speaks (`STEWARD_LOAD_CHANNEL`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Platform {
    /// Signed outgoing-webhook activities, answered in the response.
    Teams,
    /// Signed Events API direct messages, answered through `chat.postMessage`.
    Slack,
}

impl Platform {
    fn from_env() -> Result<Platform, String> {
        match std::env::var("STEWARD_LOAD_CHANNEL").as_deref() {
            Err(_) | Ok("" | "teams") => Ok(Platform::Teams),
            Ok("slack") => Ok(Platform::Slack),
            Ok(other) => Err(format!(
                "STEWARD_LOAD_CHANNEL={other}: `teams` (the default) or `slack`"
            )),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Platform::Teams => "teams",
            Platform::Slack => "slack",
        }
    }

    /// User `u`'s stored id.
    fn user_id(self, u: usize) -> String {
        match self {
            Platform::Teams => format!("teams:aad-load-{u}"),
            Platform::Slack => format!("slack:{SLACK_TEAM}:U{u}"),
        }
    }

    /// User `u`'s own conversation: a Teams channel thread, a Slack direct message.
    fn conversation_of(self, u: usize) -> String {
        match self {
            Platform::Teams => format!("19:load@thread.tacv2;messageid={u}"),
            Platform::Slack => format!("D{u}"),
        }
    }

    /// User `u`'s message `text`, the `seq`th of worker `w` (each user is
    /// one worker's), signed as the platform signs it.
    fn request(
        self,
        addr: &str,
        u: usize,
        (w, seq): (usize, usize),
        text: &str,
    ) -> Result<hyper::Request<Full<Bytes>>, String> {
        let request = hyper::Request::post(match self {
            Platform::Teams => format!("http://{addr}/teams/{AGENT}"),
            Platform::Slack => format!("http://{addr}/slack/events"),
        })
        .header("host", addr)
        .header("content-type", "application/json");
        let request = match self {
            Platform::Teams => {
                let body = activity(self, u, &format!("load-{w}-{seq}"), text);
                let key = STANDARD.decode(TOKEN).map_err(|e| e.to_string())?;
                request
                    .header("authorization", sign(&key, &body))
                    .body(Full::new(Bytes::from(body)))
            }
            Platform::Slack => {
                let now = chrono::Utc::now().timestamp().to_string();
                let body = slack_event(u, seq, text);
                let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(SLACK_SECRET.as_bytes()) else {
                    return Err("the Slack signing key".into());
                };
                mac.update(format!("v0:{now}:").as_bytes());
                mac.update(&body);
                request
                    .header(
                        "x-slack-signature",
                        format!("v0={}", hex::encode(mac.finalize().into_bytes())),
                    )
                    .header("x-slack-request-timestamp", now)
                    .body(Full::new(Bytes::from(body)))
            }
        };
        request.map_err(|e| e.to_string())
    }
}

/// A Slack Events API callback: user `u`'s direct message `text`, the
/// `seq`th of its worker (a message is known by its channel and `ts`).
fn slack_event(u: usize, seq: usize, text: &str) -> Vec<u8> {
    let now = chrono::Utc::now().timestamp();
    serde_json::to_vec(&serde_json::json!({
        "token": "load", "team_id": SLACK_TEAM, "api_app_id": "ALOAD",
        "type": "event_callback", "event_id": format!("EvLOAD{u}x{seq}"),
        "event_time": now,
        "authorizations": [{"team_id": SLACK_TEAM, "user_id": "UBOT", "is_bot": true}],
        "event": {
            "type": "message", "user": format!("U{u}"), "text": text,
            "ts": format!("{now}.{:06}", seq % 1_000_000),
            "channel": format!("D{u}"), "channel_type": "im",
        }
    }))
    .unwrap_or_default()
}

/// A fake of Slack's Web API `chat.postMessage` on 127.0.0.1: the answers
/// posted to it are counted (answered turns). Its base URL and the count.
async fn fake_slack_api() -> Result<(String, Arc<AtomicUsize>), String> {
    let posted = Arc::new(AtomicUsize::new(0));
    let counted = posted.clone();
    let app = axum::Router::new().route(
        "/api/chat.postMessage",
        axum::routing::post(move || {
            let counted = counted.clone();
            async move {
                counted.fetch_add(1, Ordering::Relaxed);
                axum::Json(serde_json::json!({"ok": true, "channel": "D0", "ts": "1.000001"}))
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| e.to_string())?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    Ok((format!("http://{addr}/api"), posted))
}

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

/// A synthetic vocabulary of 2,000 words.
fn word(n: usize) -> String {
    const SYLLABLES: [&str; 20] = [
        "ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "ze", "po", "qu", "da", "fe", "gi", "ho",
        "ju", "ly", "ba", "ce", "wo",
    ];
    let n = n % 2000;
    format!(
        "{}{}{}",
        SYLLABLES[n % 20],
        SYLLABLES[(n / 20) % 20],
        SYLLABLES[(n / 400) % 20]
    )
}

/// Record `i`'s two subject words: each pair once in the first 2M records.
fn subject_words(i: usize) -> (String, String) {
    (word(i), word(1000 + (i / 2000) % 1000))
}

fn note(i: usize) -> NewRecord {
    let (a, b) = subject_words(i);
    NewRecord::said(
        ORG,
        "default",
        Scope::AgentNotes,
        "procedure",
        format!("{a} {b} report"),
        format!("The {a} {b} report uses {}_{i}", word(i * 31 + 7)),
        i as i64,
    )
    .status(Status::Active)
    .source("bench")
}

/// The store the server will open: `records` notes (through the import path:
/// dedupe and the subject rule), the common-token list, `users` paired users.
/// With `keep`, a backup of it is written there (`Db::backup_to`: a copy of
/// the file just after closing it was once found corrupt).
async fn seed(
    store: &Store,
    platform: Platform,
    records: usize,
    users: usize,
    keep: Option<&std::path::Path>,
) -> Result<(), String> {
    let db = store.fresh().await?;
    let started = Instant::now();
    for chunk in (0..records).collect::<Vec<_>>().chunks(5_000) {
        let recs: Vec<NewRecord> = chunk.iter().map(|&i| note(i)).collect();
        db.records()
            .import_records(&recs, "bench-import", 1)
            .await
            .map_err(|e| e.to_string())?;
    }
    db.optimize().await.map_err(|e| e.to_string())?;
    let pairing = Pairing::new(db.clone(), PairingSettings::default());
    for u in 0..users {
        pairing
            .add_user(
                ORG,
                &platform.user_id(u),
                &format!("Load {u}"),
                Role::User,
                "bench",
                1,
            )
            .await
            .map_err(|e| e.to_string())?;
    }
    eprintln!(
        "seeded {records} records and {users} paired users in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let kept = match keep {
        Some(path) => db.backup_to(path).await.map_err(|e| e.to_string()),
        None => Ok(()),
    };
    db.close().await;
    kept
}

/// `steward serve` on `url` with the Teams webhook on, and Slack when
/// `slack_api` (the fake Web API's base) is given; the child and its address.
fn serve(
    dir: &std::path::Path,
    url: &str,
    slack_api: Option<&str>,
) -> Result<(Child, String), String> {
    // Another build's binary, to compare two in one sitting.
    let bin = std::env::var("STEWARD_LOAD_BIN")
        .unwrap_or_else(|_| env!("CARGO_BIN_EXE_steward").to_string());
    let wrap = std::env::var("STEWARD_LOAD_WRAP").unwrap_or_default();
    let mut wrap = wrap.split_whitespace();
    let mut c = match wrap.next() {
        Some(program) => {
            let mut c = Command::new(program);
            c.args(wrap).arg(&bin);
            c
        }
        None => Command::new(&bin),
    };
    c.current_dir(dir);
    for (k, _) in std::env::vars() {
        // Only this run's settings; `STEWARD_LOG` passes (to log statements).
        if k.starts_with("STEWARD_") && k != "STEWARD_LOG" {
            c.env_remove(k);
        }
    }
    // `STEWARD_LOAD_SET_<NAME>=v` serves with `STEWARD_<NAME>=v` (a setting
    // of the served steward, e.g. `STEWARD_LOAD_SET_MEMORY__HISTORY_BUDGET_MESSAGES`).
    for (k, v) in std::env::vars() {
        if let Some(name) = k.strip_prefix("STEWARD_LOAD_SET_") {
            c.env(format!("STEWARD_{name}"), v);
        }
    }
    if let Some(api) = slack_api {
        c.env(
            "STEWARD_SLACK__SIGNING_SECRET_ENV",
            "LOAD_SLACK_SIGNING_SECRET",
        )
        .env("LOAD_SLACK_SIGNING_SECRET", SLACK_SECRET)
        .env("STEWARD_SLACK__BOT_TOKEN_ENV", "LOAD_SLACK_BOT_TOKEN")
        .env("LOAD_SLACK_BOT_TOKEN", SLACK_TOKEN)
        .env("STEWARD_SLACK__API_BASE", api);
    }
    let mut child = c
        .arg("serve")
        .env("STEWARD_DATABASE__URL", url)
        .env("STEWARD_SERVER__LISTEN", "127.0.0.1:0")
        .env("STEWARD_DASHBOARD__ENABLED", "false")
        .env("STEWARD_TEAMS__SECURITY_TOKEN", TOKEN)
        .env("STEWARD_RATE_LIMIT__PER_SENDER_PER_MINUTE", "1000000")
        .env("STEWARD_RATE_LIMIT__SENDER_BURST", "1000000")
        .env("STEWARD_RATE_LIMIT__PER_CONVERSATION_PER_MINUTE", "1000000")
        .env("STEWARD_RATE_LIMIT__CONVERSATION_BURST", "1000000")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("spawn steward serve: {e}"))?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let mut lines = BufReader::new(stdout).lines();
    let base = loop {
        let line = lines
            .next()
            .ok_or("serve exited before printing its address")?
            .map_err(|e| e.to_string())?;
        if let Some(rest) = line.strip_prefix("steward listening on http://") {
            break rest
                .split_whitespace()
                .next()
                .unwrap_or_default()
                .to_string();
        }
    };
    std::thread::spawn(move || for _ in lines {});
    Ok((child, base))
}

/// Where the served store lives: a SQLite file, or a schema of a PostgreSQL server.
enum Store {
    Sqlite { url: String },
    Postgres { server: String },
}

/// The schema of the PostgreSQL server the benchmark serves from.
const SCHEMA: &str = "steward_load";

impl Store {
    /// The URL `steward serve` is given.
    fn url(&self) -> String {
        match self {
            Store::Sqlite { url } => url.clone(),
            Store::Postgres { server } => {
                let sep = if server.contains('?') { '&' } else { '?' };
                format!("{server}{sep}options=-c%20search_path%3D{SCHEMA}%2Cpublic")
            }
        }
    }

    /// The store, empty (PostgreSQL: its schema dropped and made again).
    async fn fresh(&self) -> Result<Db, String> {
        match self {
            Store::Sqlite { url } => Db::connect(url).await,
            Store::Postgres { server } => Db::connect_fresh_schema(server, SCHEMA).await,
        }
        .map_err(|e| e.to_string())
    }

    /// The store as the server left it.
    async fn open(&self) -> Result<Db, String> {
        match self {
            Store::Sqlite { url } => Db::connect(url).await,
            Store::Postgres { server } => Db::connect_kept_schema(server, SCHEMA).await,
        }
        .map_err(|e| e.to_string())
    }
}

/// CPU ticks (user + system) of every process named `postgres` on this
/// machine: the PostgreSQL server's share of a turn (other clients of the
/// same server count too: run it alone).
fn postgres_ticks() -> u64 {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return 0;
    };
    let mut ticks = 0;
    for entry in dir.flatten() {
        let path = entry.path();
        let named =
            std::fs::read_to_string(path.join("comm")).is_ok_and(|c| c.trim() == "postgres");
        if !named {
            continue;
        }
        let Ok(stat) = std::fs::read_to_string(path.join("stat")) else {
            continue;
        };
        let Some((_, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let field = |i: usize| {
            fields
                .get(i)
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(0)
        };
        ticks += field(11) + field(12);
    }
    ticks
}

/// A Teams `message` activity from user `u` in their own channel thread.
fn activity(platform: Platform, u: usize, id: &str, text: &str) -> Vec<u8> {
    let aad = format!("aad-load-{u}");
    serde_json::to_vec(&serde_json::json!({
        "type": "message",
        "id": id,
        "timestamp": chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        "serviceUrl": "https://smba.trafficmanager.net/emea/",
        "channelId": "msteams",
        "from": {"id": format!("29:{aad}"), "name": format!("Load {u}"), "aadObjectId": aad},
        "conversation": {
            "isGroup": true,
            "conversationType": "channel",
            "id": platform.conversation_of(u),
        },
        "textFormat": "plain",
        "text": format!("<at>steward</at> {text}"),
        "channelData": {
            "channel": {"id": "19:load@thread.tacv2"},
            "tenant": {"id": "load-tenant"}
        }
    }))
    .unwrap_or_default()
}

fn sign(key: &[u8], body: &[u8]) -> String {
    let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(key) else {
        return String::new();
    };
    mac.update(body);
    format!("HMAC {}", STANDARD.encode(mac.finalize().into_bytes()))
}

/// The length of one window of `Tally::by_window`.
const WINDOW_SECS: u64 = 10;

#[derive(Default)]
struct Tally {
    /// (user, marker) of each acknowledged message.
    acked: Vec<(usize, String)>,
    latencies_us: Vec<u32>,
    /// Acknowledgements in each 10 s of the run: a rate that falls as the
    /// store grows shows here.
    by_window: Vec<usize>,
    late: usize,
    refused: usize,
    /// Replies that said the store could not be read and nothing was done:
    /// answered, but not acknowledged.
    unavailable: usize,
    failed: BTreeMap<u16, usize>,
}

/// When a worker stops sending: when the run's `flag` is set, or after its
/// share of `STEWARD_LOAD_TURNS` (`after`).
struct Until {
    flag: Arc<AtomicBool>,
    after: Option<usize>,
}

/// What every worker of a run shares: the platform, the server's address,
/// how many workers, users and records, and when the run started.
#[derive(Clone)]
struct Run {
    platform: Platform,
    addr: String,
    workers: usize,
    users: usize,
    records: usize,
    started: Instant,
}

/// One keep-alive connection sending until `stop`; worker `w` of `workers`
/// speaks as the users `u ≡ w (mod workers)`.
async fn worker(run: Run, w: usize, stop: Until) -> Tally {
    let Run {
        platform,
        addr,
        workers,
        users,
        records,
        started: run_started,
    } = run;
    let mut tally = Tally::default();
    let Ok(stream) = tokio::net::TcpStream::connect(&addr).await else {
        return tally;
    };
    let _ = stream.set_nodelay(true);
    let Ok((mut sender, conn)) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await
    else {
        return tally;
    };
    tokio::spawn(conn);
    let mine: Vec<usize> = (w..users).step_by(workers).collect();
    let mut seq = 0usize;
    let mut rng = (w as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    while !stop.flag.load(Ordering::Relaxed) && stop.after.is_none_or(|n| seq < n) {
        seq += 1;
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let u = mine[seq % mine.len().max(1)];
        let (a, b) = subject_words(rng as usize % records.max(1));
        let marker = format!("load {w}x{seq}");
        let text = format!("Produce the {a} {b} report ({marker})");
        let Ok(req) = platform.request(&addr, u, (w, seq), &text) else {
            break;
        };
        let started = Instant::now();
        let Ok(resp) = sender.send_request(req).await else {
            break; // the server is gone
        };
        let status = resp.status().as_u16();
        let Ok(body) = resp.into_body().collect().await else {
            break;
        };
        let elapsed = started.elapsed();
        if !(200..300).contains(&status) {
            *tally.failed.entry(status).or_default() += 1;
            continue;
        }
        let body = body.to_bytes();
        // Slack's acknowledgement is empty: its answer is posted after.
        let reply: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
        let said = reply["text"].as_str().unwrap_or_default();
        if said == IDENTITY_UNAVAILABLE {
            tally.unavailable += 1;
            continue;
        }
        if said.starts_with("Working on it") {
            tally.late += 1;
        } else if said.contains("slow down") {
            tally.refused += 1;
        }
        tally.acked.push((u, marker));
        let window = (run_started.elapsed().as_secs() / WINDOW_SECS) as usize;
        if tally.by_window.len() <= window {
            tally.by_window.resize(window + 1, 0);
        }
        tally.by_window[window] += 1;
        tally
            .latencies_us
            .push(u32::try_from(elapsed.as_micros()).unwrap_or(u32::MAX));
    }
    tally
}

/// CPU time (user, system, in clock ticks) and context switches (voluntary,
/// involuntary) of process `pid`, all its threads summed, from `/proc`: what
/// a turn costs the server, whatever else the machine is doing.
#[derive(Debug, Default, Clone, Copy)]
struct Usage {
    user_ticks: u64,
    system_ticks: u64,
    voluntary: u64,
    involuntary: u64,
    /// Resident memory now and at its peak, kB (`VmRSS`, `VmHWM`).
    rss_kb: u64,
    peak_rss_kb: u64,
}

impl Usage {
    /// `None` where `/proc` is not there to read (not Linux).
    fn of(pid: u32) -> Option<Usage> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // After the command name (in parentheses, which may hold spaces):
        // field 14 is utime and 15 stime, counted from 1.
        let rest = stat.rsplit_once(')')?.1;
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let mut u = Usage {
            user_ticks: fields.get(11)?.parse().ok()?,
            system_ticks: fields.get(12)?.parse().ok()?,
            ..Usage::default()
        };
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
        for line in status.lines() {
            let kb = |prefix: &str| {
                line.strip_prefix(prefix)
                    .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            };
            if let Some(n) = kb("VmRSS:") {
                u.rss_kb = n;
            } else if let Some(n) = kb("VmHWM:") {
                u.peak_rss_kb = n;
            }
        }
        for task in std::fs::read_dir(format!("/proc/{pid}/task"))
            .ok()?
            .flatten()
        {
            let Ok(status) = std::fs::read_to_string(task.path().join("status")) else {
                continue; // a thread that ended
            };
            for line in status.lines() {
                let count = |prefix: &str| {
                    line.strip_prefix(prefix)
                        .and_then(|v| v.trim().parse::<u64>().ok())
                };
                if let Some(n) = count("voluntary_ctxt_switches:") {
                    u.voluntary += n;
                } else if let Some(n) = count("nonvoluntary_ctxt_switches:") {
                    u.involuntary += n;
                }
            }
        }
        Some(u)
    }

    fn since(self, before: Usage) -> Usage {
        Usage {
            user_ticks: self.user_ticks.saturating_sub(before.user_ticks),
            system_ticks: self.system_ticks.saturating_sub(before.system_ticks),
            voluntary: self.voluntary.saturating_sub(before.voluntary),
            involuntary: self.involuntary.saturating_sub(before.involuntary),
            rss_kb: self.rss_kb,
            peak_rss_kb: self.peak_rss_kb,
        }
    }
}

/// What the server and the machine had done by one moment of the load: the
/// server's CPU ticks and bytes sent to storage, the machine's idle (with
/// I/O wait) and total ticks. Read at each window's end, they show whether a
/// falling rate is a turn costing more or the server waiting.
#[derive(Debug, Clone, Copy)]
struct Tick {
    cpu: u64,
    written: u64,
    idle: u64,
    total: u64,
}

impl Tick {
    /// `None` where `/proc` is not there to read (not Linux).
    fn of(pid: u32) -> Option<Tick> {
        let usage = Usage::of(pid)?;
        let io = std::fs::read_to_string(format!("/proc/{pid}/io")).ok()?;
        let written = io
            .lines()
            .find_map(|l| l.strip_prefix("write_bytes:"))?
            .trim()
            .parse()
            .ok()?;
        let stat = std::fs::read_to_string("/proc/stat").ok()?;
        let cpu: Vec<u64> = stat
            .lines()
            .next()?
            .split_whitespace()
            .skip(1)
            .filter_map(|v| v.parse().ok())
            .collect();
        Some(Tick {
            cpu: usage.user_ticks + usage.system_ticks,
            written,
            idle: cpu.get(3)? + cpu.get(4)?,
            total: cpu.iter().sum(),
        })
    }
}

fn percentile(sorted: &[u32], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    f64::from(sorted[i.min(sorted.len() - 1)]) / 1000.0
}

async fn run() -> Result<bool, String> {
    // A fixed number of turns, for counting instructions (callgrind is slow:
    // the time limit is then an hour unless set).
    let turns = std::env::var("STEWARD_LOAD_TURNS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok());
    let seconds = env_or(
        "STEWARD_LOAD_SECONDS",
        if turns.is_some() { 3600 } else { 60 },
    );
    let platform = Platform::from_env()?;
    let connections = env_or("STEWARD_LOAD_CONNECTIONS", 32).max(1);
    let records = env_or("STEWARD_LOAD_RECORDS", 100_000);
    let users = env_or("STEWARD_LOAD_USERS", 1024).max(connections);
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let file = dir.path().join("load.db");
    let store = match std::env::var("STEWARD_LOAD_POSTGRES_URL") {
        Ok(server) if !server.trim().is_empty() => Store::Postgres { server },
        _ => Store::Sqlite {
            url: format!("sqlite:{}", file.display()),
        },
    };
    let url = store.url();
    // A seeded store kept from an earlier run of the same build and settings
    // (`STEWARD_LOAD_SEEDED`): seeding 100k records takes a minute.
    let kept = std::env::var_os("STEWARD_LOAD_SEEDED").map(std::path::PathBuf::from);
    match (&store, &kept) {
        // A backup, never opened since: the file is the whole store.
        (Store::Sqlite { .. }, Some(path)) if path.exists() => {
            std::fs::copy(path, &file)
                .map_err(|e| format!("copy {} to {}: {e}", path.display(), file.display()))?;
        }
        (Store::Sqlite { .. }, _) => {
            seed(&store, platform, records, users, kept.as_deref()).await?
        }
        (Store::Postgres { .. }, _) => seed(&store, platform, records, users, None).await?,
    }
    let postgres = matches!(store, Store::Postgres { .. });

    let slack_api = match platform {
        Platform::Slack => Some(fake_slack_api().await?),
        Platform::Teams => None,
    };
    let (mut server, addr) = serve(
        dir.path(),
        &url,
        slack_api.as_ref().map(|(base, _)| base.as_str()),
    )?;
    let stop = Arc::new(AtomicBool::new(false));
    let started = Instant::now();
    let workers: Vec<_> = (0..connections)
        .map(|w| {
            tokio::spawn(worker(
                Run {
                    platform,
                    addr: addr.clone(),
                    workers: connections,
                    users,
                    records,
                    started,
                },
                w,
                Until {
                    flag: stop.clone(),
                    after: turns.map(|n| n / connections + usize::from(w < n % connections)),
                },
            ))
        })
        .collect();
    let usage_before = Usage::of(server.id());
    let generator_before = Usage::of(std::process::id());
    let postgres_before = postgres.then(postgres_ticks);
    let mut ticks = vec![Tick::of(server.id())];
    let end = started + Duration::from_secs(seconds as u64);
    if turns.is_some() {
        // Until every connection has sent its share (or the time is up).
        while Instant::now() < end && !workers.iter().all(|w| w.is_finished()) {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    } else {
        let mut next = started + Duration::from_secs(WINDOW_SECS);
        while next <= end {
            tokio::time::sleep_until(next.into()).await;
            ticks.push(Tick::of(server.id()));
            next += Duration::from_secs(WINDOW_SECS);
        }
        tokio::time::sleep_until(end.into()).await;
    }
    // The load generator's own CPU shares the machine with the server's.
    let generator = Usage::of(std::process::id())
        .zip(generator_before)
        .map(|(after, before)| after.since(before));
    // The server's usage over the load, read before it is killed (a thread
    // that ended during the load takes its counts with it: none does).
    let usage = Usage::of(server.id())
        .zip(usage_before)
        .map(|(after, before)| after.since(before));
    let postgres_used = postgres_before.map(|before| postgres_ticks().saturating_sub(before));
    // Slack: the answers posted so far (the rest of the acknowledged turns
    // are still being answered when the server is killed).
    let answered = slack_api
        .as_ref()
        .map(|(_, posted)| posted.load(Ordering::Relaxed));
    // Killed mid-load: whatever was acknowledged must already be stored.
    stop.store(true, Ordering::Relaxed);
    let window = started.elapsed();
    let wrapped = std::env::var("STEWARD_LOAD_WRAP").is_ok_and(|w| !w.trim().is_empty());
    if wrapped {
        let pid = i32::try_from(server.id()).map_err(|e| e.to_string())?;
        // SAFETY: kill(2) on our own child's pid; no memory is involved.
        unsafe { libc::kill(pid, libc::SIGINT) };
    } else {
        server.kill().map_err(|e| format!("SIGKILL: {e}"))?;
    }
    server.wait().map_err(|e| e.to_string())?;
    let mut all = Tally::default();
    for w in workers {
        let t = w.await.map_err(|e| e.to_string())?;
        all.acked.extend(t.acked);
        all.latencies_us.extend(t.latencies_us);
        if all.by_window.len() < t.by_window.len() {
            all.by_window.resize(t.by_window.len(), 0);
        }
        for (sum, n) in all.by_window.iter_mut().zip(&t.by_window) {
            *sum += n;
        }
        all.late += t.late;
        all.refused += t.refused;
        all.unavailable += t.unavailable;
        for (s, n) in t.failed {
            *all.failed.entry(s).or_default() += n;
        }
    }
    all.latencies_us.sort_unstable();

    // `STEWARD_LOAD_KEEP=DIR`: the killed server's store files as it left
    // them (database, write-ahead log), to see what the load wrote.
    if let Some(keep) = std::env::var_os("STEWARD_LOAD_KEEP") {
        let keep = std::path::PathBuf::from(keep);
        std::fs::create_dir_all(&keep).map_err(|e| format!("{}: {e}", keep.display()))?;
        for suffix in ["", "-wal", "-shm"] {
            let from = dir.path().join(format!("load.db{suffix}"));
            if from.exists() {
                let to = keep.join(format!("load.db{suffix}"));
                std::fs::copy(&from, &to).map_err(|e| format!("copy to {}: {e}", to.display()))?;
            }
        }
    }
    // Every acknowledged message is stored where a reader finds it.
    let db = store.open().await?;
    let mut by_user: BTreeMap<usize, Vec<String>> = BTreeMap::new();
    for (u, marker) in &all.acked {
        by_user.entry(*u).or_default().push(marker.clone());
    }
    let mut missing = Vec::new();
    for (u, markers) in &by_user {
        // Where a reader finds them: the live history, else an archive.
        let conversation = platform.conversation_of(*u);
        let mut lines = db
            .conversations()
            .history(ORG, AGENT, &conversation)
            .await
            .map_err(|e| e.to_string())?;
        for a in db
            .conversations()
            .archives(ORG, Some(&conversation))
            .await
            .map_err(|e| e.to_string())?
        {
            lines.extend(
                db.conversations()
                    .archive_lines(ORG, a.id)
                    .await
                    .map_err(|e| e.to_string())?,
            );
        }
        let stored: BTreeSet<String> = lines
            .into_iter()
            .filter_map(|m| {
                let (_, rest) = m.text.rsplit_once('(')?;
                Some(rest.trim_end_matches(')').to_string())
            })
            .collect();
        missing.extend(markers.iter().filter(|m| !stored.contains(*m)).cloned());
    }
    let stored_total = db.row_count("messages").await.map_err(|e| e.to_string())?;
    db.close().await;

    let n = all.acked.len();
    let secs = window.as_secs_f64();
    println!(
        "teams_load: {} turns, {connections} connections, {users} users, {records} records, {secs:.1} s, {}",
        platform.name(),
        if postgres { "PostgreSQL" } else { "SQLite" }
    );
    println!(
        "acknowledged turns: {n} ({:.0}/s); late acknowledgements {}; rate-limited {}; store unavailable {}; non-2xx {:?}",
        n as f64 / secs,
        all.late,
        all.refused,
        all.unavailable,
        all.failed
    );
    if let Some(answered) = answered {
        println!(
            "answered turns (posted with chat.postMessage before the kill): {answered} ({:.0}/s)",
            answered as f64 / secs
        );
    }
    println!(
        "latency ms: p50 {:.2}  p95 {:.2}  p99 {:.2}  max {:.2}",
        percentile(&all.latencies_us, 0.50),
        percentile(&all.latencies_us, 0.95),
        percentile(&all.latencies_us, 0.99),
        percentile(&all.latencies_us, 1.0)
    );
    // SAFETY: sysconf(3) reads a constant of the system; no memory is involved.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    // The last window is cut short by the kill: only whole ones are shown.
    let whole = (secs as u64 / WINDOW_SECS) as usize;
    if whole > 0 {
        let rates: Vec<String> = all
            .by_window
            .iter()
            .take(whole)
            .map(|n| format!("{:.0}", *n as f64 / WINDOW_SECS as f64))
            .collect();
        println!("turns/s in each {WINDOW_SECS} s: {}", rates.join(" "));
        let (mut cpu, mut idle, mut written) = (Vec::new(), Vec::new(), Vec::new());
        for (pair, &n) in ticks.windows(2).zip(&all.by_window) {
            let (Some(a), Some(b)) = (pair[0], pair[1]) else {
                continue;
            };
            let total = b.total.saturating_sub(a.total).max(1) as f64;
            cpu.push(format!(
                "{:.2}",
                b.cpu.saturating_sub(a.cpu) as f64 * 1000.0 / hz / n.max(1) as f64
            ));
            idle.push(format!(
                "{:.0}%",
                b.idle.saturating_sub(a.idle) as f64 * 100.0 / total
            ));
            written.push(format!(
                "{:.0}",
                b.written.saturating_sub(a.written) as f64 / 1e6
            ));
        }
        if !cpu.is_empty() {
            println!(
                "server CPU ms a turn in each {WINDOW_SECS} s: {}",
                cpu.join(" ")
            );
            println!("machine idle in each {WINDOW_SECS} s: {}", idle.join(" "));
            println!(
                "server MB sent to storage in each {WINDOW_SECS} s: {}",
                written.join(" ")
            );
        }
    }
    if let Some(u) = usage.filter(|_| n > 0) {
        let per_turn_ms = |t: u64| t as f64 * 1000.0 / hz / n as f64;
        println!(
            "server per turn: {:.3} ms user + {:.3} ms system CPU; {:.1} voluntary + {:.1} involuntary context switches",
            per_turn_ms(u.user_ticks),
            per_turn_ms(u.system_ticks),
            u.voluntary as f64 / n as f64,
            u.involuntary as f64 / n as f64
        );
        if let Some(ticks) = postgres_used {
            println!(
                "PostgreSQL server per turn: {:.3} ms CPU (user + system, every `postgres` process)",
                per_turn_ms(ticks)
            );
        }
        if let Some(g) = generator {
            println!(
                "load generator per turn: {:.3} ms user + {:.3} ms system CPU",
                per_turn_ms(g.user_ticks),
                per_turn_ms(g.system_ticks)
            );
        }
        println!(
            "server memory: {:.0} MB resident at the end, {:.0} MB at the peak",
            u.rss_kb as f64 / 1024.0,
            u.peak_rss_kb as f64 / 1024.0
        );
    }
    println!(
        "stored check (after {}): {} of {n} acknowledged messages stored, {} missing ({stored_total} lines in messages)",
        if wrapped { "SIGINT" } else { "SIGKILL mid-load" },
        n - missing.len(),
        missing.len()
    );
    if !missing.is_empty() {
        eprintln!(
            "FAILED: acknowledged but not stored: {:?}",
            &missing[..missing.len().min(20)]
        );
        return Ok(false);
    }
    if all.refused > 0 {
        eprintln!("FAILED: {} turns were rate-limited", all.refused);
        return Ok(false);
    }
    if all.unavailable > 0 {
        eprintln!(
            "FAILED: {} turns were answered {IDENTITY_UNAVAILABLE:?}: the store failed",
            all.unavailable
        );
        return Ok(false);
    }
    Ok(n > 0)
}

fn main() -> ExitCode {
    // `cargo bench` passes `--bench`; nothing else is read from the arguments.
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match rt.block_on(run()) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("teams_load failed: {e}");
            ExitCode::FAILURE
        }
    }
}
