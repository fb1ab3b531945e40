//! Dashboard test helpers: a cookie-keeping in-process client for `oneshot`
//! tests, a real server on 127.0.0.1, and a `chromedriver` driving a real
//! headless Chromium for the end-to-end test; and what the in-process page
//! tests share: a signed-in session on a harness, records and skill proposals
//! written straight to the store, and a snapshot of everything an action
//! could change.

use crate::Harness;
use adapters::{ConversationKind, Inbound};
use axum::body::Body;
use axum::http::{header, Request, StatusCode};
use axum::Router;
use http_body_util::BodyExt;
use memory::skill::SkillRevision;
use memory::store::{NewCorrection, NewProposal};
use memory::write::RawWrites;
use memory::{Db, NewRecord, Scope, Status};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use steward::http::{app, AppState};
use steward::{Config, Services, TurnLoop};
use tower::ServiceExt;

/// The admin token the tests configure.
pub const TOKEN: &str = "test-admin-token-0123456789";

/// Defaults, with `dashboard.admin_token = TOKEN`.
pub fn config() -> Config {
    let mut cfg = Config::default();
    cfg.dashboard.admin_token = Some(TOKEN.into());
    cfg
}

/// A direct message from `discord:<user>` stamped now (the dashboard's clock is the wall clock).
pub fn dm_now(user: &str, text: &str) -> Inbound {
    Inbound {
        org: "default".into(),
        agent: "default".into(),
        channel: "discord".into(),
        conversation: format!("dm:{user}"),
        kind: ConversationKind::Direct,
        sender: Some(format!("discord:{user}")),
        sender_name: user.into(),
        text: text.into(),
        platform_id: None,
        at: chrono::Utc::now(),
        mentioned: true,
        answer: None,
        on_behalf_of: None,
    }
}

/// `/pair` from `discord:<user>` through the turn loop; returns the code.
pub async fn pair_request(turns: &TurnLoop, user: &str) -> String {
    pair_request_at(turns, user, chrono::Utc::now()).await
}

/// `/pair` from `discord:<user>` sent at `at`; returns the code.
pub async fn pair_request_at(
    turns: &TurnLoop,
    user: &str,
    at: chrono::DateTime<chrono::Utc>,
) -> String {
    let msg = Inbound {
        at,
        ..dm_now(user, "/pair")
    };
    let replies = turns.handle(&msg).await.expect("turn");
    let text = crate::join(replies);
    let code = text
        .split("code is ")
        .nth(1)
        .and_then(|rest| rest.get(..8))
        .unwrap_or_else(|| panic!("no pairing code in {text:?}"));
    code.to_string()
}

/// One HTTP answer, body as text.
#[derive(Debug)]
pub struct Answer {
    pub status: StatusCode,
    pub location: Option<String>,
    pub set_cookies: Vec<String>,
    pub body: String,
}

/// An in-process browser: keeps cookies, sends requests through `oneshot`.
/// Clones share the router (and its sign-in limiter).
#[derive(Clone)]
pub struct Client {
    pub app: Router,
    pub cookies: BTreeMap<String, String>,
    /// The address the requests come from, as `serve`'s connect info gives
    /// it; `None` sends none (the sign-in limiter's one shared allowance).
    pub peer: Option<SocketAddr>,
}

impl Client {
    pub fn new(services: Arc<Services>) -> Client {
        Client {
            app: app(AppState::new(services)),
            cookies: BTreeMap::new(),
            peer: None,
        }
    }

    /// Another browser on the same server, at `peer`, with no cookies.
    pub fn from_peer(&self, peer: SocketAddr) -> Client {
        Client {
            app: self.app.clone(),
            cookies: BTreeMap::new(),
            peer: Some(peer),
        }
    }

    fn cookie_header(&self) -> String {
        self.cookies
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("; ")
    }

    pub async fn send(&mut self, mut req: Request<Body>) -> Answer {
        if let Some(peer) = self.peer {
            req.extensions_mut()
                .insert(axum::extract::ConnectInfo(peer));
        }
        let resp = self.app.clone().oneshot(req).await.expect("router");
        let status = resp.status();
        let location = resp
            .headers()
            .get(header::LOCATION)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let set_cookies: Vec<String> = resp
            .headers()
            .get_all(header::SET_COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok().map(str::to_string))
            .collect();
        for c in &set_cookies {
            let pair = c.split(';').next().unwrap_or("");
            if let Some((k, v)) = pair.split_once('=') {
                if v.is_empty() {
                    self.cookies.remove(k.trim());
                } else {
                    self.cookies.insert(k.trim().into(), v.trim().into());
                }
            }
        }
        let bytes = resp.into_body().collect().await.expect("body").to_bytes();
        Answer {
            status,
            location,
            set_cookies,
            body: String::from_utf8_lossy(&bytes).into_owned(),
        }
    }

    pub async fn get(&mut self, path: &str) -> Answer {
        let req = Request::get(path)
            .header(header::COOKIE, self.cookie_header())
            .body(Body::empty())
            .expect("request");
        self.send(req).await
    }

    /// A form POST with exactly these fields (add `csrf` yourself, or not).
    pub async fn post(&mut self, path: &str, fields: &[(&str, &str)]) -> Answer {
        let body = serde_urlencoded::to_string(fields).expect("form");
        let req = Request::post(path)
            .header(header::COOKIE, self.cookie_header())
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(Body::from(body))
            .expect("request");
        self.send(req).await
    }

    /// A POST, then the page it redirects to (with the notice).
    pub async fn post_and_follow(&mut self, path: &str, fields: &[(&str, &str)]) -> Answer {
        let a = self.post(path, fields).await;
        assert_eq!(a.status, StatusCode::SEE_OTHER, "{path}: {}", a.body);
        let to = a.location.expect("redirect");
        self.get(&to).await
    }

    /// Sign in with `token`; panics unless it worked.
    pub async fn sign_in(&mut self, token: &str) {
        let a = self.post("/dashboard/login", &[("token", token)]).await;
        assert_eq!(a.status, StatusCode::SEE_OTHER, "sign-in: {}", a.body);
        assert!(self.cookies.contains_key("steward_session"));
    }

    /// The CSRF token on a signed-in page.
    pub async fn csrf(&mut self) -> String {
        let page = self.get("/dashboard/chat").await;
        field_value(&page.body, "csrf").expect("a csrf field on the chat page")
    }
}

/// The `value` of the first hidden input named `name` in `html`.
pub fn field_value(html: &str, name: &str) -> Option<String> {
    let at = html.find(&format!("name=\"{name}\" value=\""))?;
    let rest = &html[at + name.len() + 15..];
    Some(rest[..rest.find('"')?].to_string())
}

/// Serve `app` on a free port of 127.0.0.1; returns its address.
pub async fn serve(services: Arc<Services>) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    serve_on(listener, services)
}

/// Serve `app` on `listener` (bound first when the configuration must name
/// the address, as an identity provider's callback does); returns its address.
pub fn serve_on(listener: tokio::net::TcpListener, services: Arc<Services>) -> SocketAddr {
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        let app = app(AppState::new(services)).into_make_service_with_connect_info::<SocketAddr>();
        axum::serve(listener, app).await.expect("serve");
    });
    addr
}

/// Where screenshots go (`tests/artifacts/`, gitignored).
pub fn artifacts() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("artifacts");
    std::fs::create_dir_all(&dir).expect("artifacts dir");
    dir
}

pub const CHROMIUM: &str = "/usr/bin/chromium";
pub const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// A `chromedriver` this test started on a free port; killed on drop.
pub struct Chromedriver {
    child: Child,
    pub url: String,
    /// The browser's fresh profile directory.
    pub profile: tempfile::TempDir,
}

impl Chromedriver {
    /// Start chromedriver and wait until it says it listens (no sleeping).
    pub fn start() -> Chromedriver {
        for bin in [CHROMIUM, CHROMEDRIVER] {
            assert!(
                std::path::Path::new(bin).exists(),
                "{bin} is missing: the dashboard's browser test needs Debian's chromium and chromium-driver (.ci/run installs them)"
            );
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let mut child = Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start chromedriver");
        let stdout = child.stdout.take().expect("chromedriver stdout");
        let mut lines = BufReader::new(stdout).lines();
        let mut seen = Vec::new();
        loop {
            match lines.next() {
                Some(Ok(line)) => {
                    let ready = line.contains("started successfully");
                    seen.push(line);
                    if ready {
                        break;
                    }
                }
                _ => panic!("chromedriver exited before it was ready: {seen:?}"),
            }
        }
        // Keep draining its output so it never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines.by_ref() {});
        Chromedriver {
            child,
            url: format!("http://127.0.0.1:{port}"),
            profile: tempfile::tempdir().expect("profile dir"),
        }
    }

    /// Capabilities for a headless Chromium on a fresh profile.
    pub fn capabilities(&self) -> serde_json::Map<String, serde_json::Value> {
        let args = vec![
            "--headless".to_string(),
            "--no-sandbox".into(),
            "--disable-gpu".into(),
            "--disable-quic".into(),
            "--no-first-run".into(),
            "--disable-background-networking".into(),
            "--disable-component-update".into(),
            "--disable-sync".into(),
            "--disable-dev-shm-usage".into(),
            "--window-size=1280,860".into(),
            format!("--user-data-dir={}", self.profile.path().display()),
        ];
        let caps = serde_json::json!({
            "browserName": "chrome",
            "goog:chromeOptions": { "binary": CHROMIUM, "args": args },
        });
        match caps {
            serde_json::Value::Object(m) => m,
            _ => unreachable!("an object literal"),
        }
    }
}

impl Drop for Chromedriver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

// ---------------------------------------------------------------- page tests

pub async fn setup() -> (Harness, Client) {
    let h = Harness::with_config(config()).await;
    let c = Client::new(h.services.clone());
    (h, c)
}

pub async fn signed_in() -> (Harness, Client, String) {
    let (h, mut c) = setup().await;
    c.sign_in(TOKEN).await;
    let csrf = c.csrf().await;
    (h, c, csrf)
}

pub fn now() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

pub fn rec(
    scope: Scope,
    owner: Option<&str>,
    subject: &str,
    content: &str,
    status: Status,
) -> NewRecord {
    let kind = if scope.is_personal() {
        "preference"
    } else {
        "procedure"
    };
    NewRecord {
        kind: kind.into(),
        status,
        ..crate::record("default", scope, owner, subject, content, now())
    }
}

/// An active agent note on `subject`, activated so the subject rule applies.
pub async fn note(db: &Db, subject: &str, content: &str) -> i64 {
    let id = db
        .records()
        .insert_record(&rec(
            Scope::AgentNotes,
            None,
            subject,
            content,
            Status::Pending,
        ))
        .await
        .unwrap();
    db.records()
        .activate_kept(
            "default",
            id,
            memory::Cause::Live,
            "test",
            now(),
            &memory::write::NoRevision,
        )
        .await
        .unwrap();
    id
}

pub async fn status_of(db: &Db, id: i64) -> Status {
    db.records().get("default", id).await.unwrap().status
}

// ---------------------------------------------------------------- skills

/// Message ids for corrections (unique per organisation).
pub static NEXT_MESSAGE: std::sync::atomic::AtomicI64 = std::sync::atomic::AtomicI64::new(10_000);

/// A proposal of `slug` for the default agent with `body`, drafted (as the
/// learning loop does) from corrections `(sender, task, rule)` kept first.
pub async fn propose_skill(
    db: &Db,
    slug: &str,
    body: &str,
    corrections: &[(&str, &str, &str)],
) -> SkillRevision {
    let mut ids = Vec::new();
    let mut evidence = Vec::new();
    for (i, (sender, task, rule)) in corrections.iter().enumerate() {
        let message_id = NEXT_MESSAGE.fetch_add(2, std::sync::atomic::Ordering::SeqCst);
        let conversation = format!("discord:dm:{i}");
        let kept = db
            .skills()
            .record_correction(&NewCorrection {
                org: "default",
                agent: "default",
                conversation: &conversation,
                message_id,
                task_message_id: message_id - 1,
                sender,
                task,
                rule,
                used_id: 0,
                at: now(),
            })
            .await
            .unwrap()
            .expect("a new correction");
        ids.push(kept.id);
        evidence.push(message_id);
    }
    db.skills()
        .propose(&NewProposal {
            org: "default",
            agent: "default",
            slug,
            description: "How to answer requests for the daily report, as people corrected it.",
            body,
            evidence: &evidence,
            corrections: &ids,
            proposed_by: "corrections (latest by discord:333)",
            at: now(),
        })
        .await
        .unwrap()
}

pub const REPORT_V1: &str = "When asked for the daily report:\n\n- Leave refunds out";

pub const REPORT_V2: &str =
    "When asked for the daily report:\n\n- Leave refunds out\n- Group it by region";

pub async fn in_force(db: &Db) -> Vec<(String, i64)> {
    db.skills()
        .active("default", "default")
        .await
        .unwrap()
        .into_iter()
        .map(|r| (r.slug, r.rev))
        .collect()
}

/// The text of the notice on `page`, and whether it reports success.
pub fn flash(page: &str) -> Option<(bool, String)> {
    let at = page.find("id=\"flash\"")?;
    let head = &page[..at];
    let ok = head[head.rfind('<')?..].contains("ok");
    let rest = &page[at..];
    let text = &rest[rest.find('>')? + 1..];
    Some((ok, text[..text.find("</div>")?].to_string()))
}

/// Approve `r` from the dashboard with the hash it shows; panics unless it worked.
pub async fn approve_skill(c: &mut Client, csrf: &str, r: &SkillRevision) {
    let page = c
        .post_and_follow(
            "/dashboard/skills/approve",
            &[("csrf", csrf), ("id", &r.id.to_string()), ("hash", &r.hash)],
        )
        .await;
    assert_eq!(flash(&page.body).map(|f| f.0), Some(true), "{}", page.body);
}
