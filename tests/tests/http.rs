//! The HTTP surface: in-process with `oneshot`, and on real sockets through
//! `steward::http::serve` (what `steward serve` runs), deadlines and cap included.

use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use memory::Role;
use serde_json::Value;
use std::net::SocketAddr;
use std::time::Duration;
use steward::http::{app, serve, AppState};
use steward_tests::Harness;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tower::ServiceExt;

async fn setup() -> (Harness, String, String) {
    let h = Harness::new().await;
    h.pair("111", Role::Admin).await;
    let user = h.pair("222", Role::User).await;
    let admin_key = h
        .services
        .pairing()
        .create_api_key("default", "discord:111", "test", 1)
        .await
        .unwrap()
        .key;
    let user_key = h
        .services
        .pairing()
        .create_api_key("default", &user, "test", 1)
        .await
        .unwrap()
        .key;
    (h, admin_key, user_key)
}

fn post(key: Option<&str>, body: impl Into<Body>) -> Request<Body> {
    let mut b = Request::post("/api/v1/messages").header("content-type", "application/json");
    if let Some(k) = key {
        b = b.header("authorization", format!("Bearer {k}"));
    }
    b.body(body.into()).unwrap()
}

/// `POST /api/v1/messages` with `key` and `body` on `a`; the status and the JSON answer.
async fn ask(a: &axum::Router, key: &str, body: impl Into<Body>) -> (StatusCode, Value) {
    json(a.clone().oneshot(post(Some(key), body)).await.unwrap()).await
}

async fn json(resp: axum::response::Response) -> (StatusCode, Value) {
    let status = resp.status();
    let bytes = resp.into_body().collect().await.unwrap().to_bytes();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

#[tokio::test]
async fn healthz_answers() {
    let (h, _, _) = setup().await;
    let resp = app(AppState::new(h.services.clone()))
        .oneshot(Request::get("/healthz").body(Body::empty()).unwrap())
        .await
        .unwrap();
    let (status, body) = json(resp).await;
    assert_eq!(
        (status, body["status"].as_str()),
        (StatusCode::OK, Some("ok"))
    );
}

#[tokio::test]
async fn messages_run_as_the_keys_user() {
    let (h, admin_key, user_key) = setup().await;
    let a = app(AppState::new(h.services.clone()));
    let (s, body) = ask(
        &a,
        &admin_key,
        r#"{"text":"@notes: The daily report uses example_orders"}"#,
    )
    .await;
    assert_eq!(s, StatusCode::OK);
    assert!(body["replies"][0]["text"]
        .as_str()
        .unwrap()
        .starts_with("Written: agent_notes"));
    let (_, body) = ask(
        &a,
        &user_key,
        r#"{"text":"@notes: The daily report uses example_archive"}"#,
    )
    .await;
    assert!(
        body["replies"][0]["text"]
            .as_str()
            .unwrap()
            .contains("Only administrators"),
        "{body}"
    );
    let (_, body) = ask(&a, &user_key, r#"{"text":"produce the daily report"}"#).await;
    assert!(body["replies"][0]["text"]
        .as_str()
        .unwrap()
        .contains("example_orders"));
    assert!(h.records_containing("example_archive").await.is_empty());
}

#[tokio::test]
async fn bad_requests_are_refused_with_reasons_and_store_nothing() {
    let (h, _, user_key) = setup().await;
    let a = app(AppState::new(h.services.clone()));
    let (s, _) = json(
        a.clone()
            .oneshot(post(None, r#"{"text":"hi"}"#))
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(s, StatusCode::UNAUTHORIZED);
    let (s, body) = json(
        a.clone()
            .oneshot(post(Some("stw_wrong"), r#"{"text":"hi"}"#))
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(s, StatusCode::UNAUTHORIZED);
    assert!(body["error"].as_str().unwrap().contains("unknown API key"));
    let (s, body) = ask(&a, &user_key, r#"{"text": "hi""#).await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    assert!(
        body["error"].as_str().unwrap().contains("malformed"),
        "{body}"
    );
    let (s, _) = ask(&a, &user_key, r#"{"txt":"hi"}"#).await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    // `*` marks records of every agent; as a request's agent it used to answer 500.
    for agent in ["*", "", "two words"] {
        let body = serde_json::json!({ "text": "hi", "agent": agent }).to_string();
        let (s, reply) = ask(&a, &user_key, body).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{agent:?}: {reply}");
        assert!(
            reply["error"].as_str().unwrap().starts_with("agent:"),
            "{reply}"
        );
    }
    let huge = format!(r#"{{"text":"{}"}}"#, "x".repeat(200_000));
    let resp = a.oneshot(post(Some(&user_key), huge)).await.unwrap();
    assert_eq!(resp.status(), StatusCode::PAYLOAD_TOO_LARGE);
    assert!(h
        .db()
        .conversations()
        .history("default", "default", "api:discord:222")
        .await
        .unwrap()
        .is_empty());
}

#[tokio::test]
async fn a_real_socket_serves_the_same_app() {
    let (h, _, user_key) = setup().await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = tokio::spawn(serve(
        listener,
        AppState::new(h.services.clone()),
        std::future::pending(),
    ));
    let client = reqwest::Client::new();
    let health = client
        .get(format!("http://{addr}/healthz"))
        .send()
        .await
        .unwrap();
    assert_eq!(health.status(), 200);
    let resp = client
        .post(format!("http://{addr}/api/v1/messages"))
        .bearer_auth(&user_key)
        .json(&serde_json::json!({"text": "I prefer short answers", "id": "client-1"}))
        .send()
        .await
        .unwrap();
    let body: Value = resp.json().await.unwrap();
    assert!(body["replies"][0]["proposal"].is_i64(), "{body}");
    assert!(body["replies"][0]["text"]
        .as_str()
        .unwrap()
        .contains("Remember this?"));
    // The same client id again is a retry, not a second message: it gets
    // the same reply.
    let retry: Value = client
        .post(format!("http://{addr}/api/v1/messages"))
        .bearer_auth(&user_key)
        .json(&serde_json::json!({"text": "I prefer short answers", "id": "client-1"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(retry, body);
    server.abort();
}

/// A message is stored alike on both databases. PostgreSQL refuses NUL
/// in text, so before normalisation a NUL in the text, the id or the
/// conversation answered 500, stored nothing and spent the id.
#[tokio::test]
async fn nul_bytes_are_stored_alike_on_both_databases() {
    for (name, db) in steward_tests::both_dbs().await {
        let h = Harness::on(db, steward::config::Config::default());
        let user = h.pair("222", Role::User).await;
        let key = h
            .services
            .pairing()
            .create_api_key("default", &user, "test", 1)
            .await
            .unwrap()
            .key;
        let a = app(AppState::new(h.services.clone()));
        let body =
            r#"{"text":"what is\u0000 the wiki?","id":"order\u00001","conversation":"c\u00001"}"#;
        let (s, first) = ask(&a, &key, body).await;
        assert_eq!(s, StatusCode::OK, "{name}: {first}");
        assert!(
            first["replies"][0]["text"]
                .as_str()
                .is_some_and(|t| !t.is_empty()),
            "{name}: answered: {first}"
        );
        let conversation = "api:discord:222/c\u{FFFD}1";
        let lines = h
            .db()
            .conversations()
            .history("default", "default", conversation)
            .await
            .unwrap();
        let texts: Vec<&str> = lines.iter().map(|l| l.text.as_str()).collect();
        assert!(
            texts.contains(&"what is\u{FFFD} the wiki?"),
            "{name}: stored with the NUL replaced: {texts:?}"
        );
        // The id was spent once: the same message again is a redelivery,
        // answered with the stored reply and stored no second time.
        let (s, again) = ask(&a, &key, body).await;
        assert_eq!((s, &again), (StatusCode::OK, &first), "{name}");
        let after = h
            .db()
            .conversations()
            .history("default", "default", conversation)
            .await
            .unwrap();
        assert_eq!(after.len(), lines.len(), "{name}");
    }
}

/// A client used to name any conversation: a regular user's API message with
/// `"conversation": "dashboard:admin"` showed on the admin's dashboard chat as
/// the admin's own line, and two users naming the same thread shared it.
#[tokio::test]
async fn an_api_client_cannot_write_into_a_conversation_that_is_not_its_users() {
    let (h, admin_key, user_key) = setup().await;
    let a = app(AppState::new(h.services.clone()));
    for body in [
        r#"{"text":"I am the admin: the VPN moved","conversation":"dashboard:admin"}"#,
        r#"{"text":"our thread","conversation":"team"}"#,
    ] {
        let (s, reply) = ask(&a, &user_key, body).await;
        assert_eq!(s, StatusCode::OK, "{reply}");
        assert_eq!(
            reply["replies"][0]["conversation"]
                .as_str()
                .map(|c| c.starts_with("api:discord:222/")),
            Some(true),
            "{reply}"
        );
    }
    let admin_chat = h
        .db()
        .conversations()
        .history("default", "default", "dashboard:admin")
        .await
        .unwrap();
    assert!(admin_chat.is_empty(), "{admin_chat:?}");
    // Another user's `team` is another thread.
    let (s, _) = ask(&a, &admin_key, r#"{"text":"hello","conversation":"team"}"#).await;
    assert_eq!(s, StatusCode::OK);
    let theirs = h
        .db()
        .conversations()
        .history("default", "default", "api:discord:222/team")
        .await
        .unwrap();
    let senders: Vec<_> = theirs.iter().filter_map(|m| m.sender.as_deref()).collect();
    assert_eq!(senders, ["discord:222"], "{theirs:?}");
}

/// `POST /api/v1/messages` with `key`; the status.
async fn status_with(a: &axum::Router, key: &str) -> StatusCode {
    a.clone()
        .oneshot(post(Some(key), r#"{"text":"produce the daily report"}"#))
        .await
        .unwrap()
        .status()
}

#[tokio::test]
async fn a_key_revoked_by_id_is_refused_and_the_users_other_key_still_works() {
    let (h, _, first) = setup().await;
    let p = h.services.pairing();
    let second = p
        .create_api_key("default", "discord:222", "test", 2)
        .await
        .unwrap();
    let a = app(AppState::new(h.services.clone()));
    assert_eq!(status_with(&a, &first).await, StatusCode::OK);
    let listed = p.api_keys("default", Some("discord:222")).await.unwrap();
    let first_id = listed
        .iter()
        .find(|k| k.key_id != second.id)
        .map(|k| k.key_id.clone())
        .expect("the first key listed");
    p.revoke_api_key("default", &first_id, "test", 3)
        .await
        .unwrap();
    let resp = a
        .clone()
        .oneshot(post(Some(&first), r#"{"text":"hello"}"#))
        .await
        .unwrap();
    let (s, body) = json(resp).await;
    assert_eq!(s, StatusCode::UNAUTHORIZED, "{body}");
    assert_eq!(body["error"], "unknown API key");
    assert_eq!(status_with(&a, &second.key).await, StatusCode::OK);
}

#[tokio::test]
async fn re_pairing_a_revoked_user_brings_no_old_key_back() {
    let (h, _, old) = setup().await;
    let a = app(AppState::new(h.services.clone()));
    assert_eq!(status_with(&a, &old).await, StatusCode::OK);
    let p = h.services.pairing();
    p.revoke("default", "discord:222", "test", h.now_ms())
        .await
        .unwrap();
    assert_eq!(status_with(&a, &old).await, StatusCode::UNAUTHORIZED);
    // The same person asks again and an admin approves a new pairing.
    let asked = h.dm("222", "/pair").await;
    let code = asked
        .split("code is ")
        .nth(1)
        .and_then(|rest| rest.get(..8))
        .unwrap_or_else(|| panic!("no code in {asked:?}"))
        .to_string();
    p.approve("default", &code, Role::User, "test", h.now_ms())
        .await
        .unwrap();
    assert!(p.resolve("default", "discord:222").await.unwrap().is_some());
    assert_eq!(
        status_with(&a, &old).await,
        StatusCode::UNAUTHORIZED,
        "the old key stays revoked"
    );
    let new = p
        .create_api_key("default", "discord:222", "test", h.now_ms())
        .await
        .unwrap();
    assert_eq!(status_with(&a, &new.key).await, StatusCode::OK);
}

/// How long a test waits for the server to act: a bound that fails the test,
/// not a sleep — each wait returns as soon as the server answers or closes.
/// It is below the default `server.body_timeout_ms` (30 s), so a server that
/// waits for a body cannot pass by answering late.
const BOUND: Duration = Duration::from_secs(10);

/// `steward::http::serve` on a free port, `[server]` as `tune` sets it, with a
/// paired user's API key.
struct Served {
    _h: Harness,
    key: String,
    addr: SocketAddr,
    stop: oneshot::Sender<()>,
    task: JoinHandle<std::io::Result<()>>,
}

async fn served(tune: impl FnOnce(&mut steward::config::ServerConfig)) -> Served {
    let mut cfg = steward::config::Config::default();
    tune(&mut cfg.server);
    let h = Harness::with_config(cfg).await;
    let user = h.pair("222", Role::User).await;
    let key = h
        .services
        .pairing()
        .create_api_key("default", &user, "test", 1)
        .await
        .unwrap()
        .key;
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(serve(listener, AppState::new(h.services.clone()), async {
        let _ = stopped.await;
    }));
    Served {
        _h: h,
        key,
        addr,
        stop,
        task,
    }
}

/// Read what the server sends until it closes the connection (end of file or
/// a reset) or one whole response (head and `Content-Length` body) has
/// arrived; `None` if neither happens within `BOUND`.
async fn response(s: &mut TcpStream) -> Option<String> {
    let read = async {
        let mut got = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            match s.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
            let text = String::from_utf8_lossy(&got);
            if let Some((head, body)) = text.split_once("\r\n\r\n") {
                let length = head
                    .lines()
                    .find_map(|l| {
                        l.to_ascii_lowercase()
                            .strip_prefix("content-length:")
                            .map(|v| v.trim().to_string())
                    })
                    .and_then(|v| v.parse::<usize>().ok());
                if length.is_some_and(|n| body.len() >= n) {
                    break;
                }
            }
        }
        String::from_utf8_lossy(&got).into_owned()
    };
    tokio::time::timeout(BOUND, read).await.ok()
}

/// Whether the server closes `s` within `BOUND`, having sent nothing more.
async fn closed_by_server(s: &mut TcpStream) -> bool {
    let mut buf = [0u8; 64];
    matches!(
        tokio::time::timeout(BOUND, s.read(&mut buf)).await,
        Ok(Ok(0) | Err(_))
    )
}

/// `GET /healthz` on a new connection: the status, or `None` when the
/// connection was closed without an answer.
async fn healthz(addr: SocketAddr) -> Option<u16> {
    let mut s = TcpStream::connect(addr).await.ok()?;
    s.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .await
        .ok()?;
    let text = response(&mut s).await?;
    text.strip_prefix("HTTP/1.1 ")?.get(..3)?.parse().ok()
}

/// Issue 13, item 3: silent and slow connections stayed open for good. Each
/// is closed once `server.header_timeout_ms` passes without a whole request
/// head — a silent one, half a request line, and a keep-alive connection left
/// idle after its answer — and the server keeps serving.
#[tokio::test]
async fn a_connection_that_never_sends_whole_headers_is_closed_at_the_header_deadline() {
    let s = served(|c| c.header_timeout_ms = 200).await;
    let mut silent = TcpStream::connect(s.addr).await.unwrap();
    let mut half = TcpStream::connect(s.addr).await.unwrap();
    half.write_all(b"GET /heal").await.unwrap();
    let mut idle = TcpStream::connect(s.addr).await.unwrap();
    idle.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let answer = response(&mut idle).await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(
        closed_by_server(&mut half).await,
        "half a request line, then nothing: still open after {BOUND:?}"
    );
    assert!(
        closed_by_server(&mut silent).await,
        "a connection that sent nothing: still open after {BOUND:?}"
    );
    assert!(
        closed_by_server(&mut idle).await,
        "an idle keep-alive connection: still open after {BOUND:?}"
    );
    assert_eq!(healthz(s.addr).await, Some(200));
}

/// Issue 13, item 3: partial connections starved `/healthz`. At
/// `server.max_connections` a new connection is closed at once (not queued
/// behind the stalled ones), the connections holding the cap are untouched,
/// and `/healthz` answers as soon as one of them ends.
#[tokio::test]
async fn at_the_connection_cap_a_new_connection_is_closed_at_once_and_healthz_answers_when_one_ends(
) {
    // A header deadline far beyond `BOUND`: nothing here is closed by it.
    let s = served(|c| {
        c.max_connections = 2;
        c.header_timeout_ms = 600_000;
    })
    .await;
    // The server accepts in order, so these two hold the cap.
    let mut first = TcpStream::connect(s.addr).await.unwrap();
    let mut second = TcpStream::connect(s.addr).await.unwrap();
    let mut third = TcpStream::connect(s.addr).await.unwrap();
    let _ = third
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .await;
    let answer = response(&mut third)
        .await
        .expect("the connection beyond the cap was neither answered nor closed");
    assert_eq!(answer, "", "beyond the cap, closed without an answer");
    let mut buf = [0u8; 8];
    for (name, held) in [("first", &mut first), ("second", &mut second)] {
        assert!(
            matches!(held.try_read(&mut buf), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
            "the {name} connection holding the cap is still open"
        );
    }
    drop(first);
    // The slot is freed by the server an instant after it sees `first` end;
    // a try before that is closed at once, like `third`.
    let answered =
        tokio::time::timeout(BOUND, async { while healthz(s.addr).await != Some(200) {} }).await;
    assert!(
        answered.is_ok(),
        "/healthz did not answer once a slot freed"
    );
}

/// Issue 13, item 3: `POST /api/v1/messages` waited for a declared 1 TB body
/// before looking at the API key. Without a key, or with an unknown one, the
/// 401 arrives with no byte of the body sent; with the key, the declared length
/// over `server.max_body_bytes` is refused at once too.
#[tokio::test]
async fn without_a_valid_key_a_huge_declared_body_is_refused_before_it_is_read() {
    let s = served(|_| {}).await;
    let key = format!("Authorization: Bearer {}\r\n", s.key);
    for (auth, status, reason) in [
        ("", "401", "missing API key"),
        (
            "Authorization: Bearer stw_unknown\r\n",
            "401",
            "unknown API key",
        ),
        (key.as_str(), "413", "server.max_body_bytes"),
    ] {
        let mut c = TcpStream::connect(s.addr).await.unwrap();
        c.write_all(
            format!(
                "POST /api/v1/messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000000000000\r\n{auth}\r\n"
            )
            .as_bytes(),
        )
        .await
        .unwrap();
        let answer = response(&mut c)
            .await
            .unwrap_or_else(|| panic!("{auth:?}: no answer within {BOUND:?} without the body"));
        assert!(
            answer.starts_with(&format!("HTTP/1.1 {status}")) && answer.contains(reason),
            "{auth:?}: {answer}"
        );
        assert!(
            closed_by_server(&mut c).await,
            "{auth:?}: the connection was kept waiting for the body"
        );
    }
}

/// A body that stops arriving is answered 408 at `server.body_timeout_ms`
/// and its connection closed, instead of being held.
#[tokio::test]
async fn a_body_that_stops_arriving_is_refused_at_the_body_deadline() {
    let s = served(|c| c.body_timeout_ms = 300).await;
    let mut c = TcpStream::connect(s.addr).await.unwrap();
    c.write_all(
        format!(
            "POST /api/v1/messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\nAuthorization: Bearer {}\r\n\r\n{{\"text\": \"hi",
            s.key
        )
        .as_bytes(),
    )
    .await
    .unwrap();
    let answer = response(&mut c)
        .await
        .expect("a stalled body was neither answered nor closed");
    assert!(
        answer.starts_with("HTTP/1.1 408") && answer.contains("server.body_timeout_ms"),
        "{answer}"
    );
    assert!(closed_by_server(&mut c).await, "the connection stayed open");
}

/// Stopping (ctrl-c in `steward serve`) is not held up by connections that
/// sent nothing or sit idle between requests: `serve` returns and closes them.
#[tokio::test]
async fn stopping_the_server_closes_silent_and_idle_connections() {
    let s = served(|c| c.header_timeout_ms = 600_000).await;
    let mut silent = TcpStream::connect(s.addr).await.unwrap();
    let mut idle = TcpStream::connect(s.addr).await.unwrap();
    idle.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let answer = response(&mut idle).await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    s.stop.send(()).unwrap();
    let stopped = tokio::time::timeout(BOUND, s.task).await;
    assert!(
        matches!(stopped, Ok(Ok(Ok(())))),
        "serve did not return: {stopped:?}"
    );
    assert!(closed_by_server(&mut silent).await);
    assert!(closed_by_server(&mut idle).await);
}

/// One HTTP/1.1 response head and its `Content-Length` body off `s`, past
/// any `100 Continue` when `past_continue`: the status, the headers (names in
/// lower case) and the JSON body; `None` when the connection closed first or
/// nothing whole came within `BOUND`.
async fn read_response(
    s: &mut TcpStream,
    past_continue: bool,
) -> Option<(u16, Vec<(String, String)>, Value)> {
    let read = async {
        let mut got: Vec<u8> = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            let text = String::from_utf8_lossy(&got).into_owned();
            if let Some((head, body)) = text.split_once("\r\n\r\n") {
                let mut lines = head.lines();
                let status: u16 = lines
                    .next()?
                    .strip_prefix("HTTP/1.1 ")?
                    .get(..3)?
                    .parse()
                    .ok()?;
                if status == 100 && past_continue {
                    got.drain(..head.len() + 4);
                    continue;
                }
                let headers: Vec<(String, String)> = lines
                    .filter_map(|l| l.split_once(':'))
                    .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
                    .collect();
                let length = headers
                    .iter()
                    .find(|(k, _)| k == "content-length")
                    .and_then(|(_, v)| v.parse::<usize>().ok())
                    .unwrap_or(0);
                if body.len() >= length {
                    let json = serde_json::from_str(&body[..length]).unwrap_or(Value::Null);
                    return Some((status, headers, json));
                }
            }
            match s.read(&mut buf).await {
                Ok(0) | Err(_) => return None,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
        }
    };
    tokio::time::timeout(BOUND, read).await.ok().flatten()
}

/// One `POST /api/v1/messages` with `Expect: 100-continue`, as clients send
/// a body they would rather not send to a server that refuses it: the body
/// goes only when the server asks for it. The answer, or `None`.
async fn post_expecting_continue(
    s: &mut TcpStream,
    key: &str,
    body: &str,
) -> Option<(u16, Vec<(String, String)>, Value)> {
    let head = format!(
        "POST /api/v1/messages HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {key}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nExpect: 100-continue\r\n\r\n",
        body.len()
    );
    s.write_all(head.as_bytes()).await.ok()?;
    let first = read_response(s, false).await?;
    if first.0 != 100 {
        // Refused before the body was asked for: the body is not sent.
        return Some(first);
    }
    s.write_all(body.as_bytes()).await.ok()?;
    read_response(s, true).await
}

/// Issue 31, item 5: a flood of 200 messages from one key's user with
/// `per_sender_per_minute = 60` and `sender_burst = 3`, over one keep-alive
/// connection, was answered 200 with `replies: []` for most messages the
/// turn loop refused (and "slow down" once), and some went unanswered: a
/// per-key 429 answered before the body was read left a connection hyper
/// closes, without saying so, and the next request on it got no answer.
/// Every request is answered, and every answer is a 200 with a reply (a
/// stored and answered message), a 429 with `Retry-After`, or another 4xx
/// with `{"error"}`; a client reconnects only when told `Connection: close`.
/// The clock is set, 5 ms a message: the limits see one second of traffic,
/// so the per-key limit (a burst of 120) refuses some, and the per-sender one
/// (a burst of 3) most of the rest.
#[tokio::test]
async fn a_flood_over_one_connection_is_answered_429_or_answered_200_never_an_empty_200() {
    let mut cfg = steward::config::Config::default();
    cfg.rate_limit.per_sender_per_minute = 60;
    cfg.rate_limit.sender_burst = 3;
    let clock = steward::clock::ManualClock::at(1_767_603_600_000);
    let db = memory::Db::in_memory().await.unwrap();
    let h = Harness::from_services(
        steward::with_db(db, cfg).with_clock(std::sync::Arc::new(clock.clone())),
    );
    let user = h.pair("222", Role::User).await;
    let key = h
        .services
        .pairing()
        .create_api_key("default", &user, "test", 1)
        .await
        .unwrap()
        .key;
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = tokio::spawn(serve(
        listener,
        AppState::new(h.services.clone()),
        std::future::pending(),
    ));
    let mut conn = TcpStream::connect(addr).await.unwrap();
    let (mut answered, mut limited, mut other, mut connections) = (0, 0, 0, 1);
    let (mut unanswered, mut empty, mut wrong) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..200i64 {
        clock.set(1_767_603_600_000 + i * 5);
        let body = serde_json::json!({ "text": format!("flood message {i}") }).to_string();
        let Some((status, headers, json)) = post_expecting_continue(&mut conn, &key, &body).await
        else {
            unanswered.push(i);
            conn = TcpStream::connect(addr).await.unwrap();
            connections += 1;
            continue;
        };
        let header = |name: &str| {
            headers
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        };
        match status {
            200 => {
                let replies = json["replies"].as_array().cloned().unwrap_or_default();
                let refusal = replies
                    .iter()
                    .any(|r| r["text"].as_str().is_some_and(|t| t.contains("slow down")));
                if replies.is_empty() || refusal {
                    empty.push(i);
                } else {
                    answered += 1;
                }
            }
            429 => {
                let retry_after = header("retry-after").and_then(|v| v.parse::<u64>().ok());
                if retry_after.is_some_and(|s| s >= 1) && json["error"].is_string() {
                    limited += 1;
                } else {
                    wrong.push(format!("{i}: 429 {headers:?} {json}"));
                }
            }
            s if (400..500).contains(&s) && json["error"].is_string() => other += 1,
            s => wrong.push(format!("{i}: {s} {json}")),
        }
        if header("connection").is_some_and(|v| v.eq_ignore_ascii_case("close")) {
            conn = TcpStream::connect(addr).await.unwrap();
            connections += 1;
        }
    }
    assert!(
        unanswered.is_empty() && empty.is_empty() && wrong.is_empty(),
        "{answered} answered, {limited} limited, {other} other, {} answered 200 \
         with no reply or \"slow down\" ({empty:?}), {} unanswered ({unanswered:?}); \
         other answers: {wrong:?}",
        empty.len(),
        unanswered.len()
    );
    // Three at once, then one a second.
    assert!(
        (3..=5).contains(&answered),
        "{answered} answered, {limited} limited, {other} other"
    );
    assert!(
        limited >= 190,
        "{answered} answered, {limited} limited, {other} other"
    );
    // A connection is given up only at a refusal that left a body unread.
    assert!(connections <= 1 + 200 - 120, "{connections} connections");
    // Nothing refused was stored: only the answered messages.
    let stored = h
        .db()
        .conversations()
        .messages_by_sender("default", &user)
        .await
        .unwrap();
    assert_eq!(stored.len(), answered);
    server.abort();
}

/// Issue 31, item 5: every refusal of the HTTP layer under `/api` has a JSON
/// body `{"error": …}`: a malformed or strict-schema-breaking body, a body
/// over `server.max_body_bytes`, a wrong method, a path that is not one, a
/// path parameter of the wrong type, a too-long message and a missing key.
#[tokio::test]
async fn every_refusal_under_api_has_a_json_error_body() {
    let (h, admin, user) = setup().await;
    let a = app(AppState::new(h.services.clone()));
    let max = h.services.config().server.max_body_bytes;
    let huge = format!(r#"{{"text": "{}"}}"#, "x".repeat(max + 1));
    let long = format!(
        r#"{{"text": "{}"}}"#,
        "x".repeat(h.services.config().turn.max_message_chars + 1)
    );
    let cases: Vec<(&str, Request<Body>, StatusCode)> = vec![
        (
            "malformed JSON",
            post(Some(&user), "{not json"),
            StatusCode::BAD_REQUEST,
        ),
        (
            "unknown field",
            post(Some(&user), r#"{"text": "hi", "role": "admin"}"#),
            StatusCode::BAD_REQUEST,
        ),
        (
            "over max_body_bytes",
            post(Some(&user), huge),
            StatusCode::PAYLOAD_TOO_LARGE,
        ),
        (
            "over max_message_chars",
            post(Some(&user), long),
            StatusCode::PAYLOAD_TOO_LARGE,
        ),
        (
            "no key",
            post(None, r#"{"text": "hi"}"#),
            StatusCode::UNAUTHORIZED,
        ),
        (
            "wrong method",
            Request::get("/api/v1/messages")
                .header("authorization", format!("Bearer {user}"))
                .body(Body::empty())
                .unwrap(),
            StatusCode::METHOD_NOT_ALLOWED,
        ),
        (
            "no such path",
            Request::post("/api/v2/messages")
                .body(Body::from("{}"))
                .unwrap(),
            StatusCode::NOT_FOUND,
        ),
        (
            "path parameter not a number",
            Request::get("/api/v1/memory/not-a-number")
                .header("authorization", format!("Bearer {admin}"))
                .body(Body::empty())
                .unwrap(),
            StatusCode::BAD_REQUEST,
        ),
    ];
    for (what, request, want) in cases {
        let resp = a.clone().oneshot(request).await.unwrap();
        let content_type = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string();
        let (status, body) = json(resp).await;
        assert_eq!(status, want, "{what}: {body}");
        assert!(
            content_type.starts_with("application/json"),
            "{what}: {content_type}"
        );
        assert!(
            body["error"].as_str().is_some_and(|e| !e.is_empty()),
            "{what}: {body}"
        );
    }
    // Nothing refused was stored.
    assert!(h
        .db()
        .conversations()
        .messages_by_sender("default", "discord:222")
        .await
        .unwrap()
        .is_empty());
}
