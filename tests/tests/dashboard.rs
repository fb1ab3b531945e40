//! The web dashboard in-process (`oneshot`): sign-in, sessions, CSRF, and
//! every page's actions against the real turn loop and store. The browser
//! walk-through is in `dashboard_browser.rs`.

use axum::http::StatusCode;
use memory::skill::{SkillRevision, SkillStatus};
use memory::store::{DashboardSession, NewCorrection, NewProposal, RecordFilter};
use memory::write::RawWrites;
use memory::{Db, NewRecord, Role, Scope, Status};
use sha2::{Digest, Sha256};
use std::sync::Arc;
use steward::channels::{self, ConversationRef, Delivered, DeliveryError};
use steward::clock::{Clock, ManualClock};
use steward::dashboard::{ensure_admin_token, reset_admin_token, AdminToken, FORM_ROUTES};
use steward::Config;
use steward_tests::dashboard::{self, field_value, pair_request, Client, TOKEN};
use steward_tests::{sqlite_file_db, Harness};

const PAGES: &[&str] = &[
    "/dashboard/chat",
    "/dashboard/pairing",
    "/dashboard/memory",
    "/dashboard/memory?scope=org_policy",
    "/dashboard/memory?scope=people",
    "/dashboard/review",
    "/dashboard/revisions",
    "/dashboard/skills",
    "/dashboard/tools",
    "/dashboard/runs",
    "/dashboard/audit",
    "/dashboard/settings",
];

async fn setup() -> (Harness, Client) {
    let h = Harness::with_config(dashboard::config()).await;
    let c = Client::new(h.services.clone());
    (h, c)
}

async fn signed_in() -> (Harness, Client, String) {
    let (h, mut c) = setup().await;
    c.sign_in(TOKEN).await;
    let csrf = c.csrf().await;
    (h, c, csrf)
}

fn now() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

fn rec(
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
        ..steward_tests::record("default", scope, owner, subject, content, now())
    }
}

/// An active agent note on `subject`, activated so the subject rule applies.
async fn note(db: &Db, subject: &str, content: &str) -> i64 {
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

async fn status_of(db: &Db, id: i64) -> Status {
    db.records().get("default", id).await.unwrap().status
}

/// Everything an action could change, to compare before and after.
async fn snapshot(h: &Harness) -> String {
    let db = h.db();
    let p = h.services.pairing();
    let records: Vec<(i64, &str)> = db
        .records()
        .list("default", &RecordFilter::default())
        .await
        .unwrap()
        .iter()
        .map(|r| (r.id, r.status.as_str()))
        .collect();
    let revisions: Vec<(i64, bool)> = db
        .records()
        .revisions("default")
        .await
        .unwrap()
        .iter()
        .map(|r| (r.id, r.undone_at.is_some()))
        .collect();
    let skills: Vec<(i64, &str)> = db
        .skills()
        .list("default", None)
        .await
        .unwrap()
        .iter()
        .map(|r| (r.id, r.status.as_str()))
        .collect();
    format!(
        "pending {:?}\nusers {:?}\nrecords {records:?}\nrevisions {revisions:?}\nskills {skills:?}\naudit {}\nchat {}",
        p.pending("default", now())
            .await
            .unwrap()
            .iter()
            .map(|r| r.code.clone())
            .collect::<Vec<_>>(),
        p.users("default").await.unwrap(),
        db.audit().log("default", 1000).await.unwrap().len(),
        db.conversations()
            .history("default", "default", "dashboard:admin")
            .await
            .unwrap()
            .len(),
    )
}

fn sha256(s: &str) -> String {
    hex::encode(Sha256::digest(s.as_bytes()))
}

// ---------------------------------------------------------------- sign-in

#[tokio::test]
async fn every_page_and_form_without_a_session_goes_to_sign_in_and_changes_nothing() {
    let (h, mut c) = setup().await;
    let code = pair_request(&h.turns, "555").await;
    let before = snapshot(&h).await;
    let home = c.get("/dashboard").await;
    assert_eq!(home.location.as_deref(), Some("/dashboard/chat"));
    for page in PAGES {
        let a = c.get(page).await;
        assert_eq!(a.status, StatusCode::SEE_OTHER, "{page}");
        assert_eq!(a.location.as_deref(), Some("/dashboard/login"), "{page}");
    }
    for route in FORM_ROUTES {
        let a = c
            .post(
                route,
                &[("code", &code), ("role", "admin"), ("text", "@notes: x")],
            )
            .await;
        assert_eq!(a.location.as_deref(), Some("/dashboard/login"), "{route}");
    }
    assert_eq!(snapshot(&h).await, before);
    let login = c.get("/dashboard/login").await;
    assert_eq!(login.status, StatusCode::OK);
    assert!(login.body.contains("name=\"token\""), "{}", login.body);
}

#[tokio::test]
async fn a_wrong_or_empty_token_is_refused_without_a_cookie() {
    let (_h, mut c) = setup().await;
    let near: String = TOKEN[..TOKEN.len() - 1].to_string();
    let longer = format!("{TOKEN}x");
    let upper = TOKEN.to_uppercase();
    for bad in ["", "   ", "wrong", &near, &longer, &upper] {
        let a = c.post("/dashboard/login", &[("token", bad)]).await;
        assert_eq!(a.status, StatusCode::UNAUTHORIZED, "{bad:?}");
        assert!(a.set_cookies.is_empty(), "{bad:?}: {:?}", a.set_cookies);
        assert!(a.body.contains("not the admin token"), "{}", a.body);
    }
    // A form with no token field at all.
    let a = c.post("/dashboard/login", &[]).await;
    assert_eq!(a.status, StatusCode::UNAUTHORIZED);
    assert!(c.cookies.is_empty());
    assert_eq!(
        c.get("/dashboard/chat").await.location.as_deref(),
        Some("/dashboard/login")
    );
}

/// The dashboard on a clock the test moves (the sign-in limiter's), and a
/// browser at `peer`.
async fn on_manual_clock(cfg: Config, peer: &str) -> (ManualClock, Client) {
    let clock = ManualClock::at(1_800_000_000_000);
    let db = Db::in_memory().await.unwrap();
    let services = steward::with_db(db, cfg).with_clock(Arc::new(clock.clone()));
    let c = Client::new(Arc::new(services));
    let c = c.from_peer(peer.parse().unwrap());
    (clock, c)
}

#[tokio::test]
async fn sign_in_attempts_past_the_limit_are_429_and_not_checked() {
    let (clock, mut c) = on_manual_clock(dashboard::config(), "10.0.0.7:50000").await;
    // 200 wrong tokens at once: the first 10 are checked, the rest are not.
    let mut checked = 0;
    for i in 0..200 {
        let a = c
            .post("/dashboard/login", &[("token", &format!("wrong-{i}"))])
            .await;
        match a.status {
            StatusCode::UNAUTHORIZED => checked += 1,
            StatusCode::TOO_MANY_REQUESTS => {
                assert!(
                    a.body.contains(steward::dashboard::TOO_MANY_ATTEMPTS),
                    "{}",
                    a.body
                );
                assert!(a.set_cookies.is_empty());
            }
            other => panic!("attempt {i}: {other}: {}", a.body),
        }
    }
    assert_eq!(checked, 10, "dashboard.sign_in_per_minute = 10");
    // While limited, the right token is refused too, unchecked, from any port of that address.
    let a = c.post("/dashboard/login", &[("token", TOKEN)]).await;
    assert_eq!(a.status, StatusCode::TOO_MANY_REQUESTS, "{}", a.body);
    assert!(a.body.contains(steward::dashboard::TOO_MANY_ATTEMPTS));
    assert!(a.set_cookies.is_empty() && c.cookies.is_empty());
    let mut same_host = c.from_peer("10.0.0.7:50001".parse().unwrap());
    let a = same_host
        .post("/dashboard/login", &[("token", TOKEN)])
        .await;
    assert_eq!(a.status, StatusCode::TOO_MANY_REQUESTS);
    // Another client signs in meanwhile.
    let mut other = c.from_peer("10.0.0.8:50000".parse().unwrap());
    other.sign_in(TOKEN).await;
    assert_eq!(other.get("/dashboard/chat").await.status, StatusCode::OK);
    // A minute later the first client has its attempts back.
    clock.set(clock.now_ms() + 61_000);
    c.sign_in(TOKEN).await;
    assert_eq!(c.get("/dashboard/chat").await.status, StatusCode::OK);
}

/// The dashboard takes time from the injected clock, as the API and the jobs
/// do: an approval on a clock set ahead is recorded at that clock's time.
#[tokio::test]
async fn a_dashboard_approval_is_recorded_at_the_injected_clocks_time() {
    let clock = ManualClock::at(1_800_000_000_000);
    let db = Db::in_memory().await.unwrap();
    let services = steward::with_db(db, dashboard::config()).with_clock(Arc::new(clock.clone()));
    let services = Arc::new(services);
    let mut c = Client::new(services.clone());
    let code = dashboard::pair_request_at(services.turns(), "555", clock.now_utc()).await;
    clock.set(clock.now_ms() + 5_000);
    let approved_at = clock.now_ms();
    c.sign_in(TOKEN).await;
    let csrf = c.csrf().await;
    let page = c
        .post_and_follow(
            "/dashboard/pairing/approve",
            &[("csrf", &csrf), ("code", &code), ("role", "user")],
        )
        .await;
    assert!(page.body.contains("is paired as user"), "{}", page.body);
    let user = services
        .pairing()
        .resolve("default", "discord:555")
        .await
        .unwrap()
        .expect("paired");
    assert_eq!(user.updated_at, approved_at);
    let log = services.db().audit().log("default", 100).await.unwrap();
    let approval = log
        .iter()
        .find(|e| e.action.starts_with("pairing.approve"))
        .expect("approval audited");
    assert_eq!(approval.at, approved_at, "{approval:?}");
}

#[tokio::test]
async fn sign_in_attempts_have_a_global_cap_and_one_client_cannot_spend_it() {
    let mut cfg = dashboard::config();
    cfg.dashboard.sign_in_per_minute = 3;
    cfg.dashboard.sign_in_global_per_minute = 5;
    let (_clock, mut a) = on_manual_clock(cfg, "10.0.0.1:1").await;
    // One client past its own limit spends only its own 3 of the 5.
    for _ in 0..20 {
        a.post("/dashboard/login", &[("token", "wrong")]).await;
    }
    let mut b = a.from_peer("10.0.0.2:1".parse().unwrap());
    for _ in 0..2 {
        let r = b.post("/dashboard/login", &[("token", "wrong")]).await;
        assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    }
    // The global 5 are spent: a third client is refused, unchecked.
    let mut third = a.from_peer("10.0.0.3:1".parse().unwrap());
    let r = third.post("/dashboard/login", &[("token", TOKEN)]).await;
    assert_eq!(r.status, StatusCode::TOO_MANY_REQUESTS, "{}", r.body);
    assert!(r.body.contains(steward::dashboard::TOO_MANY_ATTEMPTS));
    assert!(third.cookies.is_empty());
}

#[tokio::test]
async fn without_connect_info_every_attempt_shares_one_allowance() {
    let (_h, mut c) = setup().await;
    for _ in 0..10 {
        let a = c.post("/dashboard/login", &[("token", "wrong")]).await;
        assert_eq!(a.status, StatusCode::UNAUTHORIZED);
    }
    let mut other = c.clone();
    let a = other.post("/dashboard/login", &[("token", TOKEN)]).await;
    assert_eq!(a.status, StatusCode::TOO_MANY_REQUESTS, "{}", a.body);
}

#[tokio::test]
async fn without_a_configured_or_generated_token_nobody_signs_in() {
    let h = Harness::new().await;
    let mut c = Client::new(h.services.clone());
    for t in ["", "anything", TOKEN] {
        let a = c.post("/dashboard/login", &[("token", t)]).await;
        assert_eq!(a.status, StatusCode::UNAUTHORIZED);
        assert!(a.body.contains("No admin token exists yet"), "{}", a.body);
        assert!(a.set_cookies.is_empty());
    }
}

#[tokio::test]
async fn sign_in_sets_a_strict_http_only_cookie_that_opens_every_page() {
    let (_h, mut c) = setup().await;
    let a = c.post("/dashboard/login", &[("token", TOKEN)]).await;
    assert_eq!(a.status, StatusCode::SEE_OTHER);
    assert_eq!(a.location.as_deref(), Some("/dashboard/chat"));
    let cookie = a
        .set_cookies
        .iter()
        .find(|c| c.starts_with("steward_session="))
        .expect("a session cookie");
    for attr in ["HttpOnly", "SameSite=Strict", "Path=/dashboard"] {
        assert!(cookie.contains(attr), "{cookie} lacks {attr}");
    }
    assert!(
        !cookie.contains("Secure"),
        "plain http on localhost by default"
    );
    for page in PAGES {
        let p = c.get(page).await;
        assert_eq!(p.status, StatusCode::OK, "{page}");
        assert!(p.body.contains("Sign out"), "{page}");
    }
    // A forged cookie is nobody's session.
    let mut forged = c.clone();
    forged
        .cookies
        .insert("steward_session".into(), "ab".repeat(32));
    assert_eq!(
        forged.get("/dashboard/chat").await.location.as_deref(),
        Some("/dashboard/login")
    );
}

#[tokio::test]
async fn the_cookie_is_secure_when_configured_and_pages_carry_security_headers() {
    let mut cfg = dashboard::config();
    cfg.dashboard.secure_cookie = true;
    let h = Harness::with_config(cfg).await;
    let mut c = Client::new(h.services.clone());
    let a = c.post("/dashboard/login", &[("token", TOKEN)]).await;
    assert!(a.set_cookies.iter().any(|c| c.contains("Secure")));
    let resp = tower::ServiceExt::oneshot(
        c.app.clone(),
        axum::http::Request::get("/dashboard/login")
            .body(axum::body::Body::empty())
            .unwrap(),
    )
    .await
    .unwrap();
    let h = resp.headers();
    assert_eq!(h["x-frame-options"], "DENY");
    assert_eq!(h["cache-control"], "no-store");
    let csp = h["content-security-policy"].to_str().unwrap();
    assert!(csp.contains("frame-ancestors 'none'") && !csp.contains("unsafe-inline"));
}

#[tokio::test]
async fn the_dashboard_can_be_switched_off() {
    let mut cfg = dashboard::config();
    cfg.dashboard.enabled = false;
    let h = Harness::with_config(cfg).await;
    let mut c = Client::new(h.services.clone());
    assert_eq!(
        c.get("/dashboard/login").await.status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        c.post("/dashboard/login", &[("token", TOKEN)]).await.status,
        StatusCode::NOT_FOUND
    );
}

// ---------------------------------------------------------------- CSRF

#[tokio::test]
async fn forms_without_their_sessions_csrf_token_are_forbidden_and_change_nothing() {
    let (h, mut c, csrf) = signed_in().await;
    let db = h.db();
    let code = pair_request(&h.turns, "555").await;
    let user = h.pair("222", Role::User).await;
    let unverified = db
        .records()
        .insert_record(&rec(
            Scope::AgentNotes,
            None,
            "vpn",
            "The VPN host is vpn2",
            Status::Unverified,
        ))
        .await
        .unwrap();
    note(db, "daily report", "The daily report uses example_orders").await;
    note(db, "daily report", "The daily report uses example_archive").await;
    let rev = db.records().revisions("default").await.unwrap()[0]
        .id
        .to_string();
    let approved = propose_skill(
        db,
        "daily-report",
        REPORT_V1,
        &[("discord:222", "daily report", "Leave refunds out")],
    )
    .await;
    approve_skill(&mut c, &csrf, &approved).await;
    let proposal = propose_skill(
        db,
        "daily-report",
        REPORT_V2,
        &[("discord:333", "daily report", "Group it by region")],
    )
    .await;
    approve_skill(&mut c, &csrf, &proposal).await;
    let proposal = propose_skill(
        db,
        "daily-report",
        "When asked for the daily report:\n\n- Use euros",
        &[("discord:222", "daily report", "Use euros")],
    )
    .await;
    // Another signed-in browser's token is not this session's.
    let mut other = Client::new(h.services.clone());
    other.sign_in(TOKEN).await;
    let other_csrf = other.csrf().await;
    assert_ne!(other_csrf, csrf);
    let wrong = "0".repeat(csrf.len());
    let id = unverified.to_string();
    let fields = |route: &str| -> Vec<(&'static str, String)> {
        match route {
            "/dashboard/chat" => vec![("text", "@notes: The daily report uses evil".into())],
            "/dashboard/chat/answer" => vec![("batch", "1".into()), ("answer", "yes".into())],
            "/dashboard/pairing/approve" => vec![("code", code.clone()), ("role", "admin".into())],
            "/dashboard/pairing/deny" => vec![("code", code.clone())],
            "/dashboard/pairing/add" => {
                vec![("identity", "discord:999".into()), ("role", "admin".into())]
            }
            "/dashboard/users/role" => vec![("user", user.clone()), ("role", "admin".into())],
            "/dashboard/users/revoke" => vec![("user", user.clone())],
            "/dashboard/review/confirm" | "/dashboard/review/reject" => vec![("id", id.clone())],
            "/dashboard/revisions/undo" => vec![("id", rev.clone())],
            "/dashboard/skills/approve" => vec![
                ("id", proposal.id.to_string()),
                ("hash", proposal.hash.clone()),
            ],
            "/dashboard/skills/reject" => vec![("id", proposal.id.to_string())],
            "/dashboard/skills/rollback" => vec![("to", approved.id.to_string())],
            "/dashboard/skills/run" => {
                vec![("slug", "daily-report".into()), ("agent", "default".into())]
            }
            _ => vec![],
        }
    };
    let before = snapshot(&h).await;
    for route in FORM_ROUTES {
        let base = fields(route);
        let attempts: Vec<Vec<(&str, String)>> = vec![
            vec![],
            vec![("csrf", String::new())],
            vec![("csrf", wrong.clone())],
            vec![("csrf", other_csrf.clone())],
            vec![("csrf", csrf[..csrf.len() - 1].to_string())],
            vec![("csrf", format!("{csrf}0"))],
            vec![("csrf", csrf.to_uppercase())],
            // The first csrf field counts; a right one after a wrong one does not help.
            vec![("csrf", wrong.clone()), ("csrf", csrf.clone())],
        ];
        for extra in attempts {
            let mut all: Vec<(&str, &str)> = base.iter().map(|(k, v)| (*k, v.as_str())).collect();
            all.extend(extra.iter().map(|(k, v)| (*k, v.as_str())));
            let a = c.post(route, &all).await;
            assert_eq!(a.status, StatusCode::FORBIDDEN, "{route} {extra:?}");
            assert!(a.body.contains("CSRF"), "{}", a.body);
        }
    }
    assert_eq!(
        snapshot(&h).await,
        before,
        "a refused form changed something"
    );
    assert_eq!(
        c.get("/dashboard/chat").await.status,
        StatusCode::OK,
        "still signed in"
    );
    // The same form with the right token works.
    let page = c
        .post_and_follow(
            "/dashboard/pairing/approve",
            &[("csrf", &csrf), ("code", &code), ("role", "user")],
        )
        .await;
    assert!(page.body.contains("is paired as user"), "{}", page.body);
    assert_eq!(in_force(db).await, [("daily-report".to_string(), 2)]);
    approve_skill(&mut c, &csrf, &proposal).await;
    assert_eq!(in_force(db).await, [("daily-report".to_string(), 3)]);
}

#[tokio::test]
async fn a_get_never_changes_anything() {
    let (h, mut c, csrf) = signed_in().await;
    let code = pair_request(&h.turns, "555").await;
    let before = snapshot(&h).await;
    for route in FORM_ROUTES {
        let a = c
            .get(&format!(
                "{route}?csrf={csrf}&code={code}&role=admin&text=hi&id=1"
            ))
            .await;
        // The chat page itself answers GET; its form only sends by POST.
        let expected = if *route == "/dashboard/chat" {
            StatusCode::OK
        } else {
            StatusCode::METHOD_NOT_ALLOWED
        };
        assert_eq!(a.status, expected, "{route}");
    }
    assert_eq!(snapshot(&h).await, before);
}

// ---------------------------------------------------------------- sessions

#[tokio::test]
async fn a_generated_token_is_printed_once_and_shared_by_replicas() {
    let (db_a, dir) = sqlite_file_db().await;
    let url = format!("sqlite:{}", dir.path().join("steward.db").display());
    let db_b = Db::connect(&url).await.unwrap();
    let a = Arc::new(steward::with_db(db_a, Config::default()));
    let b = Arc::new(steward::with_db(db_b, Config::default()));
    let AdminToken::Generated(token) = ensure_admin_token(&a).await.unwrap() else {
        panic!("the first start generates a token");
    };
    assert!(token.len() >= 40, "{token}");
    assert_eq!(ensure_admin_token(&b).await.unwrap(), AdminToken::Stored);
    assert_eq!(ensure_admin_token(&a).await.unwrap(), AdminToken::Stored);
    // Only a hash is stored.
    let stored = a
        .db()
        .identity()
        .dashboard_token_hash("default")
        .await
        .unwrap()
        .unwrap();
    assert_ne!(stored, token);
    // Replica B accepts A's token, and a session made on A.
    let mut on_b = Client::new(b.clone());
    on_b.sign_in(&token).await;
    let mut on_a = Client::new(a.clone());
    on_a.sign_in(&token).await;
    let mut moved = Client::new(b.clone());
    moved.cookies = on_a.cookies.clone();
    assert_eq!(moved.get("/dashboard/chat").await.status, StatusCode::OK);
    assert_eq!(
        Client::new(b)
            .post("/dashboard/login", &[("token", &stored)])
            .await
            .status,
        StatusCode::UNAUTHORIZED,
        "the stored hash is not a token"
    );
}

#[tokio::test]
async fn a_new_token_signs_everyone_out() {
    let h = Harness::new().await;
    let AdminToken::Generated(old) = ensure_admin_token(&h.services).await.unwrap() else {
        panic!("generated");
    };
    let mut c = Client::new(h.services.clone());
    c.sign_in(&old).await;
    let new = reset_admin_token(&h.services).await.unwrap();
    assert_ne!(new, old);
    assert_eq!(
        c.get("/dashboard/chat").await.location.as_deref(),
        Some("/dashboard/login")
    );
    let mut fresh = Client::new(h.services.clone());
    assert_eq!(
        fresh
            .post("/dashboard/login", &[("token", &old)])
            .await
            .status,
        StatusCode::UNAUTHORIZED
    );
    fresh.sign_in(&new).await;
    assert!(h
        .db()
        .audit()
        .log("default", 10)
        .await
        .unwrap()
        .iter()
        .any(|e| e.action == "dashboard.token_reset"));
}

#[tokio::test]
async fn changing_the_configured_token_ends_sessions_made_with_the_old_one() {
    let (db_a, dir) = sqlite_file_db().await;
    let url = format!("sqlite:{}", dir.path().join("steward.db").display());
    let a = Arc::new(steward::with_db(db_a, dashboard::config()));
    let mut cfg = dashboard::config();
    cfg.dashboard.admin_token = Some("a-completely-different-token".into());
    let b = Arc::new(steward::with_db(Db::connect(&url).await.unwrap(), cfg));
    let mut on_a = Client::new(a);
    on_a.sign_in(TOKEN).await;
    let mut on_b = Client::new(b);
    on_b.cookies = on_a.cookies.clone();
    assert_eq!(
        on_b.get("/dashboard/chat").await.location.as_deref(),
        Some("/dashboard/login")
    );
}

#[tokio::test]
async fn sign_out_ends_the_session_for_good() {
    let (_h, mut c, csrf) = signed_in().await;
    let session = c.cookies["steward_session"].clone();
    let a = c.post("/dashboard/logout", &[("csrf", &csrf)]).await;
    assert_eq!(a.location.as_deref(), Some("/dashboard/login"));
    assert!(!c.cookies.contains_key("steward_session"), "cookie cleared");
    c.cookies.insert("steward_session".into(), session);
    assert_eq!(
        c.get("/dashboard/chat").await.location.as_deref(),
        Some("/dashboard/login"),
        "a replayed cookie opens nothing"
    );
}

#[tokio::test]
async fn an_expired_session_opens_nothing() {
    let (h, mut c) = setup().await;
    let id = "cd".repeat(32);
    h.db()
        .identity()
        .create_dashboard_session(&DashboardSession {
            org: "default".into(),
            id_hash: sha256(&id),
            csrf: "ef".repeat(32),
            token_hash: sha256(TOKEN),
            created_at: now() - 20_000,
            expires_at: now() - 10_000,
        })
        .await
        .unwrap();
    c.cookies.insert("steward_session".into(), id.clone());
    assert_eq!(
        c.get("/dashboard/chat").await.location.as_deref(),
        Some("/dashboard/login")
    );
    // The same row, unexpired, is a session: the check above was the expiry.
    let live = "ab".repeat(32);
    h.db()
        .identity()
        .create_dashboard_session(&DashboardSession {
            org: "default".into(),
            id_hash: sha256(&live),
            csrf: "ef".repeat(32),
            token_hash: sha256(TOKEN),
            created_at: now(),
            expires_at: now() + 60_000,
        })
        .await
        .unwrap();
    c.cookies.insert("steward_session".into(), live);
    assert_eq!(c.get("/dashboard/chat").await.status, StatusCode::OK);
}

// ---------------------------------------------------------------- chat

#[tokio::test]
async fn chat_runs_through_the_turn_loop_as_the_built_in_admin() {
    let (h, mut c, csrf) = signed_in().await;
    let db = h.db();
    let page = c
        .post_and_follow(
            "/dashboard/chat",
            &[
                ("csrf", &csrf),
                ("text", "@notes: The daily report uses example_orders"),
            ],
        )
        .await;
    assert!(
        page.body.contains("Written: agent_notes updated"),
        "{}",
        page.body
    );
    let history = db
        .conversations()
        .history("default", "default", "dashboard:admin")
        .await
        .unwrap();
    assert_eq!(history[0].sender.as_deref(), Some("admin"));
    assert_eq!(history[0].sender_role.as_deref(), Some("admin"));
    assert_eq!(history[0].channel, "dashboard");
    assert_eq!(history[0].conversation_kind, "direct");
    let admin = h
        .services
        .pairing()
        .resolve("default", "admin")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(admin.role, Role::Admin);

    // An implicit operational statement asks "Remember this?" with Yes/No buttons.
    let page = c
        .post_and_follow(
            "/dashboard/chat",
            &[
                ("csrf", &csrf),
                ("text", "From now on the daily report uses example_archive"),
            ],
        )
        .await;
    assert!(page.body.contains("id=\"proposal\""), "{}", page.body);
    let batch = field_value(&page.body, "batch").expect("a Yes/No form");
    let pending = h.records_containing("example_archive").await;
    assert_eq!(pending[0].status, Status::Pending);
    assert_eq!(pending[0].batch.map(|b| b.to_string()), Some(batch.clone()));
    let page = c
        .post_and_follow(
            "/dashboard/chat/answer",
            &[("csrf", &csrf), ("batch", &batch), ("answer", "yes")],
        )
        .await;
    assert!(
        !page.body.contains("id=\"proposal\""),
        "the question is answered"
    );
    assert_eq!(
        h.records_containing("example_archive").await[0].status,
        Status::Active
    );
    assert_eq!(
        h.records_containing("example_orders").await[0].status,
        Status::Superseded
    );
    let answer = db
        .conversations()
        .history("default", "default", "dashboard:admin")
        .await
        .unwrap();
    assert!(answer
        .iter()
        .any(|m| m.text == "yes" && m.sender.as_deref() == Some("admin")));
}

#[tokio::test]
async fn no_discards_the_proposal() {
    let (h, mut c, csrf) = signed_in().await;
    let page = c
        .post_and_follow(
            "/dashboard/chat",
            &[
                ("csrf", &csrf),
                ("text", "From now on the weekly report uses example_weekly"),
            ],
        )
        .await;
    let batch = field_value(&page.body, "batch").expect("a Yes/No form");
    let page = c
        .post_and_follow(
            "/dashboard/chat/answer",
            &[("csrf", &csrf), ("batch", &batch), ("answer", "no")],
        )
        .await;
    assert!(page.body.contains("I won"), "{}", page.body);
    assert_eq!(
        h.records_containing("example_weekly").await[0].status,
        Status::Rejected
    );
}

#[tokio::test]
async fn a_resubmitted_chat_form_runs_once() {
    let (h, mut c, csrf) = signed_in().await;
    let page = c.get("/dashboard/chat").await;
    let nonce = field_value(&page.body, "nonce").expect("a nonce");
    for _ in 0..2 {
        c.post_and_follow(
            "/dashboard/chat",
            &[
                ("csrf", &csrf),
                ("nonce", &nonce),
                ("text", "@notes: The VPN host is vpn1"),
            ],
        )
        .await;
    }
    let said = h
        .db()
        .conversations()
        .history("default", "default", "dashboard:admin")
        .await
        .unwrap()
        .iter()
        .filter(|m| m.author == "person")
        .count();
    assert_eq!(said, 1);
    assert_eq!(h.records_containing("vpn1").await.len(), 1);
}

#[tokio::test]
async fn the_admins_yes_button_cannot_answer_someone_elses_question() {
    let (h, mut c, csrf) = signed_in().await;
    h.pair("222", Role::User).await;
    let replies = h
        .turns
        .handle(&dashboard::dm_now("222", "I prefer short answers"))
        .await
        .unwrap();
    let batch = replies[0].proposal.expect("a question for 222").to_string();
    let page = c
        .post_and_follow(
            "/dashboard/chat/answer",
            &[("csrf", &csrf), ("batch", &batch), ("answer", "yes")],
        )
        .await;
    assert!(page.body.contains("was not asked to you"), "{}", page.body);
    assert_eq!(
        h.records_containing("short answers").await[0].status,
        Status::Pending
    );
}

// ---------------------------------------------------------------- pairing

#[tokio::test]
async fn pairing_requests_are_approved_or_denied_and_users_managed() {
    let (h, mut c, csrf) = signed_in().await;
    let p = h.services.pairing();
    let first = pair_request(&h.turns, "555").await;
    let second = pair_request(&h.turns, "666").await;
    let third = pair_request(&h.turns, "777").await;
    let page = c.get("/dashboard/pairing").await;
    for code in [&first, &second, &third] {
        assert!(page.body.contains(code.as_str()), "{code} listed");
    }
    let page = c
        .post_and_follow(
            "/dashboard/pairing/approve",
            &[("csrf", &csrf), ("code", &first), ("role", "user")],
        )
        .await;
    assert!(
        page.body.contains("discord:555 is paired as user")
            || page.body.contains("(discord:555) is paired as user"),
        "{}",
        page.body
    );
    assert_eq!(
        p.resolve("default", "discord:555")
            .await
            .unwrap()
            .unwrap()
            .role,
        Role::User
    );
    c.post_and_follow(
        "/dashboard/pairing/approve",
        &[("csrf", &csrf), ("code", &second), ("role", "admin")],
    )
    .await;
    assert_eq!(
        p.resolve("default", "discord:666")
            .await
            .unwrap()
            .unwrap()
            .role,
        Role::Admin
    );
    let page = c
        .post_and_follow(
            "/dashboard/pairing/deny",
            &[("csrf", &csrf), ("code", &third)],
        )
        .await;
    assert!(
        page.body.contains("Denied pairing request"),
        "{}",
        page.body
    );
    assert!(p.resolve("default", "discord:777").await.unwrap().is_none());
    // A decided code cannot be approved again; an unknown role is refused.
    let page = c
        .post_and_follow(
            "/dashboard/pairing/approve",
            &[("csrf", &csrf), ("code", &third), ("role", "admin")],
        )
        .await;
    assert!(page.body.contains("was already denied"), "{}", page.body);
    assert!(p.resolve("default", "discord:777").await.unwrap().is_none());
    let page = c
        .post_and_follow(
            "/dashboard/users/role",
            &[("csrf", &csrf), ("user", "discord:555"), ("role", "owner")],
        )
        .await;
    assert!(page.body.contains("unknown role"), "{}", page.body);
    // Set role and revoke.
    c.post_and_follow(
        "/dashboard/users/role",
        &[("csrf", &csrf), ("user", "discord:555"), ("role", "admin")],
    )
    .await;
    assert_eq!(
        p.resolve("default", "discord:555")
            .await
            .unwrap()
            .unwrap()
            .role,
        Role::Admin
    );
    c.post_and_follow(
        "/dashboard/users/revoke",
        &[("csrf", &csrf), ("user", "discord:666")],
    )
    .await;
    assert!(p.resolve("default", "discord:666").await.unwrap().is_none());
    let actions: Vec<(String, String)> = h
        .db()
        .audit()
        .log("default", 50)
        .await
        .unwrap()
        .into_iter()
        .map(|e| (e.actor, e.action))
        .collect();
    for action in [
        "pairing.approve",
        "pairing.deny",
        "pairing.set_role",
        "pairing.revoke",
    ] {
        assert!(
            actions.contains(&("admin".into(), action.into())),
            "{action}: {actions:?}"
        );
    }
}

#[tokio::test]
async fn the_built_in_admin_cannot_be_demoted_or_revoked_from_the_dashboard() {
    let (h, mut c, csrf) = signed_in().await;
    // Chatting creates the built-in admin.
    c.post_and_follow("/dashboard/chat", &[("csrf", &csrf), ("text", "hello")])
        .await;
    for (route, extra) in [
        ("/dashboard/users/role", "user"),
        ("/dashboard/users/revoke", ""),
    ] {
        let page = c
            .post_and_follow(
                route,
                &[("csrf", &csrf), ("user", "admin"), ("role", extra)],
            )
            .await;
        assert!(page.body.contains("keeps its admin role"), "{}", page.body);
    }
    let admin = h
        .services
        .pairing()
        .resolve("default", "admin")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(admin.role, Role::Admin);
}

// ---------------------------------------------------------------- memory

#[tokio::test]
async fn a_persons_memory_is_shown_only_on_their_page_and_opening_it_is_audited() {
    let (h, mut c, _csrf) = signed_in().await;
    let db = h.db();
    let bob = h.pair("222", Role::User).await;
    let old = db
        .records()
        .insert_record(&rec(
            Scope::Personal,
            Some(&bob),
            "pref:length",
            "Bob prefers long answers",
            Status::Pending,
        ))
        .await
        .unwrap();
    db.records()
        .activate_kept(
            "default",
            old,
            memory::Cause::Live,
            "t",
            now() - 1000,
            &memory::write::NoRevision,
        )
        .await
        .unwrap();
    let new = db
        .records()
        .insert_record(&rec(
            Scope::Personal,
            Some(&bob),
            "pref:length",
            "Bob prefers terse answers",
            Status::Pending,
        ))
        .await
        .unwrap();
    db.records()
        .activate_kept(
            "default",
            new,
            memory::Cause::Live,
            "t",
            now(),
            &memory::write::NoRevision,
        )
        .await
        .unwrap();
    assert_eq!(status_of(db, old).await, Status::Superseded);
    note(db, "daily report", "The daily report uses example_orders").await;
    let views = |db: Db| async move {
        db.audit()
            .log("default", 100)
            .await
            .unwrap()
            .into_iter()
            .filter(|e| e.action == "memory.view")
            .collect::<Vec<_>>()
    };
    for page in [
        "/dashboard/memory",
        "/dashboard/memory?scope=people",
        "/dashboard/memory?scope=agent_notes&status=all",
        "/dashboard/revisions",
        "/dashboard/review",
        "/dashboard/audit",
        "/dashboard/chat",
    ] {
        let body = c.get(page).await.body;
        assert!(!body.contains("prefers"), "{page} shows personal memory");
    }
    assert!(views(db.clone()).await.is_empty(), "listing is not viewing");
    let people = c.get("/dashboard/memory?scope=people").await.body;
    assert!(people.contains("discord:222"), "{people}");
    let csrf = c.csrf().await;
    let refused = c
        .post_and_follow(
            "/dashboard/memory/person",
            &[("csrf", &csrf), ("user", "discord:222"), ("reason", " ")],
        )
        .await
        .body;
    assert!(refused.contains("Give a reason"), "{refused}");
    assert!(views(db.clone()).await.is_empty(), "no reason, no look");
    let page = c
        .post(
            "/dashboard/memory/person",
            &[
                ("csrf", &csrf),
                ("user", "discord:222"),
                ("reason", "ticket 42"),
            ],
        )
        .await
        .body;
    assert!(
        page.contains("Bob prefers terse answers") && page.contains("Bob prefers long answers")
    );
    let v = views(db.clone()).await;
    assert_eq!(v.len(), 1);
    assert_eq!(
        (v[0].actor.as_str(), v[0].target.as_str()),
        ("admin", "discord:222")
    );
    // The audit page shows the view, and so does the person's own listing.
    assert!(c.get("/dashboard/audit").await.body.contains("memory.view"));
    let mine = steward_tests::join(
        h.turns
            .handle(&dashboard::dm_now("222", "/memory"))
            .await
            .unwrap(),
    );
    assert!(mine.contains("Viewed by admin on"), "{mine}");
}

#[tokio::test]
async fn the_memory_browser_lists_by_scope_and_searches() {
    let (h, mut c, _csrf) = signed_in().await;
    let db = h.db();
    note(db, "daily report", "The daily report uses example_orders").await;
    note(db, "daily report", "The daily report uses example_archive").await;
    note(db, "vpn", "The VPN host is vpn1.example.net").await;
    db.records()
        .insert_record(&rec(
            Scope::OrgPolicy,
            None,
            "policy:retention",
            "Keep invoices for seven years",
            Status::Active,
        ))
        .await
        .unwrap();
    let page = c.get("/dashboard/memory").await.body;
    assert!(page.contains("example_archive") && page.contains("vpn1.example.net"));
    assert!(!page.contains("example_orders"), "active only by default");
    assert!(!page.contains("seven years"), "org policy is its own tab");
    let page = c
        .get("/dashboard/memory?scope=agent_notes&status=all")
        .await
        .body;
    assert!(page.contains("example_orders") && page.contains("superseded"));
    let page = c
        .get("/dashboard/memory?scope=agent_notes&q=VPN")
        .await
        .body;
    assert!(page.contains("vpn1.example.net") && !page.contains("example_archive"));
    let page = c.get("/dashboard/memory?scope=org_policy").await.body;
    assert!(page.contains("seven years") && !page.contains("vpn1"));
}

#[tokio::test]
async fn the_settings_page_shows_the_effective_configuration_without_secrets() {
    let mut cfg = Config::from_toml(
        "[agents.it]\nauto_keep = true\n[metrics]\ntoken = \"metrics-secret-0123456789\"\n[discord]\ntoken = \"discord-secret-token\"\nagent = \"support\"",
    )
    .unwrap();
    cfg.dashboard.admin_token = Some(TOKEN.into());
    let h = Harness::with_config(cfg).await;
    let mut c = Client::new(h.services.clone());
    c.sign_in(TOKEN).await;
    let page = c.get("/dashboard/settings").await;
    assert_eq!(page.status, StatusCode::OK);
    let body = page.body;
    for secret in [TOKEN, "metrics-secret-0123456789", "discord-secret-token"] {
        assert!(!body.contains(secret), "{secret} shown");
    }
    assert!(body.contains("(set, hidden)"), "{body}");
    // Each agent, with its auto_keep and where it comes from.
    assert!(body.contains("id=\"agent-it\""), "{body}");
    let row = |id: &str| {
        let at = body.find(&format!("id=\"agent-{id}\"")).expect(id);
        body[at..at + body[at..].find("</tr>").unwrap()].to_string()
    };
    assert!(row("it").contains(">on<") && row("it").contains("agents.it.auto_keep"));
    assert!(row("default").contains(">off<") && row("default").contains("memory.auto_keep"));
    assert!(row("support").contains(">off<"), "discord.agent listed");
    assert!(body.contains("id=\"setting-server.listen\""), "{body}");
    assert!(body.contains("href=\"/dashboard/memory?scope=org_policy\""));
}

#[tokio::test]
async fn the_root_redirects_and_unknown_paths_are_404_in_each_ones_language() {
    let (_h, mut c) = setup().await;
    let root = c.get("/").await;
    assert_eq!(root.status, StatusCode::SEE_OTHER);
    assert_eq!(root.location.as_deref(), Some("/dashboard"));
    let page = c.get("/dashboard/no-such-page").await;
    assert_eq!(page.status, StatusCode::NOT_FOUND);
    assert!(page.body.contains("<h1>Not found</h1>"), "{}", page.body);
    assert!(page.body.contains("/dashboard/no-such-page"));
    for path in ["/api/v1/no-such-thing", "/nothing-here"] {
        let a = c.get(path).await;
        assert_eq!(a.status, StatusCode::NOT_FOUND, "{path}");
        let v: serde_json::Value = serde_json::from_str(&a.body).expect("JSON");
        assert!(v["error"].as_str().unwrap().contains(path), "{path}: {v}");
    }
}

#[tokio::test]
async fn an_admin_pairs_someone_directly_from_the_pairing_page() {
    let (h, mut c, csrf) = signed_in().await;
    let page = c.get("/dashboard/pairing").await.body;
    assert!(page.contains("Pair someone directly"), "{page}");
    let page = c
        .post_and_follow(
            "/dashboard/pairing/add",
            &[
                ("csrf", &csrf),
                ("identity", " discord:901 "),
                ("name", "Dana"),
                ("role", "admin"),
            ],
        )
        .await;
    assert!(
        page.body.contains("Paired: Dana (discord:901) as admin."),
        "{}",
        page.body
    );
    assert!(
        page.body.contains("id=\"user-discord:901\""),
        "{}",
        page.body
    );
    // They speak as an admin at once: their @notes: is written.
    let taught = h
        .turns
        .handle(&dashboard::dm_now(
            "901",
            "@notes: The VPN is at vpn.example.com",
        ))
        .await
        .unwrap();
    assert!(
        steward_tests::join(taught).contains("Written: agent_notes"),
        "admin at once"
    );
    let audit = h.db().audit().log("default", 20).await.unwrap();
    assert!(audit
        .iter()
        .any(|e| e.action == "pairing.add" && e.target == "discord:901" && e.actor == "admin"));
    // Twice, or without an identity: refused with the reason, nothing changed.
    for (identity, why) in [
        ("discord:901", "already paired as admin"),
        ("two words", "not a stored identity"),
    ] {
        let page = c
            .post_and_follow(
                "/dashboard/pairing/add",
                &[("csrf", &csrf), ("identity", identity), ("role", "user")],
            )
            .await;
        assert!(page.body.contains(why), "{identity}: {}", page.body);
    }
    let u = h
        .services
        .pairing()
        .resolve("default", "discord:901")
        .await
        .unwrap();
    assert_eq!(u.map(|u| u.role), Some(Role::Admin));
}

#[tokio::test]
async fn text_from_chat_platforms_is_shown_never_run() {
    let (h, mut c, _csrf) = signed_in().await;
    let mut msg = dashboard::dm_now("555", "/pair");
    msg.sender_name = "<script>alert('name')</script>".into();
    h.turns.handle(&msg).await.unwrap();
    h.db()
        .records()
        .insert_record(&rec(
            Scope::AgentNotes,
            None,
            "x",
            "<img src=x onerror=alert(1)> \"quoted\"",
            Status::Active,
        ))
        .await
        .unwrap();
    let page = c.get("/dashboard/pairing").await.body;
    assert!(!page.contains("<script>alert"), "{page}");
    assert!(
        page.contains("&lt;script&gt;alert('name')&lt;/script&gt;")
            || page.contains("&lt;script&gt;alert(&#39;name&#39;)"),
        "{page}"
    );
    let page = c.get("/dashboard/memory").await.body;
    assert!(!page.contains("<img src=x"), "{page}");
    assert!(
        page.contains("&lt;img src=x onerror=alert(1)&gt;"),
        "{page}"
    );
}

// ---------------------------------------------------------------- review

#[tokio::test]
async fn review_confirms_and_rejects_only_quarantined_records_and_audits_both() {
    let (h, mut c, csrf) = signed_in().await;
    let db = h.db();
    let live = note(db, "vpn", "The VPN host is vpn1").await;
    let mut relearned = rec(
        Scope::AgentNotes,
        None,
        "vpn",
        "The VPN host is vpn2",
        Status::Unverified,
    );
    relearned.said_at = now() + 1;
    let confirm = db.records().insert_record(&relearned).await.unwrap();
    let reject = db
        .records()
        .insert_record(&rec(
            Scope::AgentNotes,
            None,
            "printer",
            "The printer is on floor 9",
            Status::Unverified,
        ))
        .await
        .unwrap();
    let pending = db
        .records()
        .insert_record(&rec(
            Scope::AgentNotes,
            None,
            "wifi",
            "The wifi password is hunter2",
            Status::Pending,
        ))
        .await
        .unwrap();
    let page = c.get("/dashboard/review").await.body;
    assert!(page.contains("vpn2") && page.contains("floor 9"));
    assert!(
        !page.contains("hunter2"),
        "only unverified records are reviewed"
    );

    let page = c
        .post_and_follow(
            "/dashboard/review/confirm",
            &[("csrf", &csrf), ("id", &confirm.to_string())],
        )
        .await;
    assert!(
        page.body
            .contains(&format!("Confirmed record {confirm}; it retired [{live}]")),
        "{}",
        page.body
    );
    assert_eq!(status_of(db, confirm).await, Status::Active);
    assert_eq!(status_of(db, live).await, Status::Superseded);
    let rev = &db.records().revisions("default").await.unwrap()[0];
    assert_eq!(
        (rev.retired_id, rev.replacing_id, rev.cause.as_str()),
        (live, confirm, "confirm")
    );

    c.post_and_follow(
        "/dashboard/review/reject",
        &[("csrf", &csrf), ("id", &reject.to_string())],
    )
    .await;
    assert_eq!(status_of(db, reject).await, Status::Rejected);

    // Records that are not waiting for review cannot be confirmed or rejected by id.
    for (route, id) in [
        ("/dashboard/review/confirm", pending),
        ("/dashboard/review/reject", pending),
        ("/dashboard/review/confirm", reject),
        ("/dashboard/review/reject", confirm),
        ("/dashboard/review/confirm", 9999),
    ] {
        let page = c
            .post_and_follow(route, &[("csrf", &csrf), ("id", &id.to_string())])
            .await;
        assert!(
            page.body.contains("not unverified") || page.body.contains("No record 9999"),
            "{route} {id}: {}",
            page.body
        );
    }
    assert_eq!(status_of(db, pending).await, Status::Pending);
    assert_eq!(status_of(db, reject).await, Status::Rejected);
    assert_eq!(status_of(db, confirm).await, Status::Active);
    let audit: Vec<(String, String, String)> = db
        .audit()
        .log("default", 50)
        .await
        .unwrap()
        .into_iter()
        .map(|e| (e.actor, e.action, e.target))
        .collect();
    assert!(audit.contains(&(
        "admin".into(),
        "review.confirm".into(),
        format!("record:{confirm}")
    )));
    assert!(audit.contains(&(
        "admin".into(),
        "review.reject".into(),
        format!("record:{reject}")
    )));
    assert_eq!(
        audit.iter().filter(|a| a.1.starts_with("review.")).count(),
        2
    );
}

// ---------------------------------------------------------------- revisions

#[tokio::test]
async fn undo_on_the_revisions_page_brings_the_old_record_back_once() {
    let (h, mut c, csrf) = signed_in().await;
    let db = h.db();
    let old = note(db, "daily report", "The daily report uses example_orders").await;
    let new = note(db, "daily report", "The daily report uses example_archive").await;
    let rev = db.records().revisions("default").await.unwrap()[0]
        .id
        .to_string();
    let page = c.get("/dashboard/revisions").await.body;
    assert!(page.contains("example_orders") && page.contains("example_archive"));
    let page = c
        .post_and_follow(
            "/dashboard/revisions/undo",
            &[("csrf", &csrf), ("id", &rev)],
        )
        .await;
    assert!(
        page.body
            .contains(&format!("record #{old} is active again")),
        "{}",
        page.body
    );
    assert!(
        page.body.contains("data-undone=\"true\"") && page.body.contains("by admin"),
        "{}",
        page.body
    );
    assert_eq!(status_of(db, old).await, Status::Active);
    assert_eq!(
        status_of(db, new).await,
        Status::Active,
        "the replacing record stays"
    );
    // Two truths: the notice says so, and the page offers to retire the newer one.
    assert!(
        page.body
            .contains(&format!("#{old} and #{new} are now both active"))
            && page.body.contains(&format!("Forget #{new}")),
        "{}",
        page.body
    );
    let page = c
        .post_and_follow(
            "/dashboard/revisions/undo",
            &[("csrf", &csrf), ("id", &rev)],
        )
        .await;
    assert!(page.body.contains("was already undone"), "{}", page.body);
    let page = c
        .post_and_follow(
            "/dashboard/revisions/undo",
            &[("csrf", &csrf), ("id", "424242")],
        )
        .await;
    assert!(
        page.body.contains("There is no revision 424242"),
        "{}",
        page.body
    );
    assert!(db
        .audit()
        .log("default", 10)
        .await
        .unwrap()
        .iter()
        .any(|e| e.action == "revision.undo" && e.actor == "admin"));
    // Retiring the newer of the two truths: forgotten, one active record left.
    let page = c
        .post_and_follow(
            "/dashboard/revisions/forget",
            &[("csrf", &csrf), ("id", &new.to_string())],
        )
        .await;
    assert!(
        page.body
            .contains(&format!("Forgotten: record #{new} is deleted")),
        "{}",
        page.body
    );
    assert_eq!(status_of(db, new).await, Status::Deleted);
    assert_eq!(status_of(db, old).await, Status::Active);
    assert!(
        !page.body.contains(&format!("Forget #{new}")),
        "{}",
        page.body
    );
}

#[tokio::test]
async fn malformed_forms_are_bad_requests_that_change_nothing() {
    let (h, mut c, csrf) = signed_in().await;
    note(
        h.db(),
        "daily report",
        "The daily report uses example_orders",
    )
    .await;
    note(
        h.db(),
        "daily report",
        "The daily report uses example_archive",
    )
    .await;
    let before = snapshot(&h).await;
    for (route, fields) in [
        ("/dashboard/revisions/undo", vec![("id", "one")]),
        ("/dashboard/revisions/undo", vec![]),
        (
            "/dashboard/review/confirm",
            vec![("id", "1; DROP TABLE memory_records")],
        ),
        (
            "/dashboard/chat/answer",
            vec![("batch", "x"), ("answer", "yes")],
        ),
        ("/dashboard/skills/approve", vec![("id", "1")]),
        (
            "/dashboard/skills/approve",
            vec![("id", "x"), ("hash", "ab")],
        ),
        ("/dashboard/skills/reject", vec![]),
        ("/dashboard/skills/rollback", vec![("to", "rev 1")]),
    ] {
        let mut all = vec![("csrf", csrf.as_str())];
        all.extend(fields);
        let a = c.post(route, &all).await;
        assert_eq!(a.status, StatusCode::BAD_REQUEST, "{route}");
    }
    assert_eq!(snapshot(&h).await, before);
}

#[tokio::test]
async fn the_settings_page_lists_each_channel_and_whether_it_is_on() {
    let mut cfg = Config::from_toml(
        "[discord]\ntoken = \"discord-secret-token\"\nagent = \"support\"\n[teams]\nsecurity_token = \"c2VjcmV0LXRlYW1zLXRva2Vu\"\n[teams.workflows]\n\"19:general@thread.tacv2\" = \"https://example.com/hook?sig=workflows-secret\"",
    )
    .unwrap();
    cfg.dashboard.admin_token = Some(TOKEN.into());
    let h = Harness::with_config(cfg).await;
    let mut c = Client::new(h.services.clone());
    c.sign_in(TOKEN).await;
    let body = c.get("/dashboard/settings").await.body;
    let row = |body: &str, name: &str| {
        let at = body.find(&format!("id=\"channel-{name}\"")).expect(name);
        body[at..at + body[at..].find("</tr>").unwrap()].to_string()
    };
    let discord = row(&body, "discord");
    assert!(
        discord.contains(">on<") && discord.contains("support"),
        "{discord}"
    );
    assert!(discord.contains("https://discord.com"), "{discord}");
    let teams = row(&body, "teams");
    assert!(
        teams.contains(">on<") && teams.contains("POST /teams/"),
        "{teams}"
    );
    assert!(teams.contains("of 1 Teams channels"), "{teams}");
    let chat = row(&body, "dashboard");
    assert!(
        chat.contains(">on<") && chat.contains("dashboard:admin"),
        "{chat}"
    );
    let api = row(&body, "api");
    assert!(
        api.contains(">on<") && api.contains("POST /api/v1/messages"),
        "{api}"
    );
    for secret in [
        "discord-secret-token",
        "c2VjcmV0LXRlYW1zLXRva2Vu",
        "workflows-secret",
    ] {
        assert!(!body.contains(secret), "{secret} shown");
    }
    // Without their sections, Discord, Slack and Teams are listed as off.
    let (_h, mut c, _) = signed_in().await;
    let body = c.get("/dashboard/settings").await.body;
    for name in ["discord", "slack", "teams"] {
        let off = row(&body, name);
        assert!(off.contains(">off<") && !off.contains("agent: "), "{off}");
    }
}

/// A message delivered to the dashboard's chat (an automated run's) is the
/// agent's line of `dashboard:admin`, shown on the chat page.
#[tokio::test]
async fn a_delivered_message_shows_in_the_dashboard_chat() {
    let (h, mut c, _) = signed_in().await;
    let to = |conversation: &str| ConversationRef {
        org: "default".into(),
        agent: "default".into(),
        conversation: conversation.into(),
    };
    let delivered = channels::deliver(
        &h.services,
        "dashboard",
        &to(steward::dashboard::CHAT_CONVERSATION),
        "The nightly import finished.",
    )
    .await
    .expect("delivered");
    assert!(
        matches!(delivered, Delivered::Stored { .. }),
        "{delivered:?}"
    );
    let page = c.get("/dashboard/chat").await.body;
    assert!(page.contains("The nightly import finished."), "{page}");
    let e = channels::deliver(&h.services, "dashboard", &to("dashboard:someone"), "hi")
        .await
        .expect_err("only the admin's chat");
    assert!(matches!(e, DeliveryError::NoRoute { .. }), "{e}");
    // The API cannot push to a client: a clear refusal, nothing stored.
    let e = channels::deliver(&h.services, "api", &to("api:discord:222"), "hi")
        .await
        .expect_err("unsupported");
    assert!(
        matches!(e, DeliveryError::Unsupported { channel: "api", .. }),
        "{e}"
    );
}

// ---------------------------------------------------------------- skills

/// Message ids for corrections (unique per organisation).
static NEXT_MESSAGE: std::sync::atomic::AtomicI64 = std::sync::atomic::AtomicI64::new(10_000);

/// A proposal of `slug` for the default agent with `body`, drafted (as the
/// learning loop does) from corrections `(sender, task, rule)` kept first.
async fn propose_skill(
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

const REPORT_V1: &str = "When asked for the daily report:\n\n- Leave refunds out";
const REPORT_V2: &str =
    "When asked for the daily report:\n\n- Leave refunds out\n- Group it by region";

async fn in_force(db: &Db) -> Vec<(String, i64)> {
    db.skills()
        .active("default", "default")
        .await
        .unwrap()
        .into_iter()
        .map(|r| (r.slug, r.rev))
        .collect()
}

/// The text of the notice on `page`, and whether it reports success.
fn flash(page: &str) -> Option<(bool, String)> {
    let at = page.find("id=\"flash\"")?;
    let head = &page[..at];
    let ok = head[head.rfind('<')?..].contains("ok");
    let rest = &page[at..];
    let text = &rest[rest.find('>')? + 1..];
    Some((ok, text[..text.find("</div>")?].to_string()))
}

#[tokio::test]
async fn a_skill_proposal_shows_its_diff_and_evidence_and_approving_the_shown_hash_puts_it_in_force(
) {
    let (h, mut c, csrf) = signed_in().await;
    let db = h.db();
    let r = propose_skill(
        db,
        "daily-report",
        REPORT_V1,
        &[
            (
                "discord:222",
                "Send me the daily report",
                "Leave refunds out",
            ),
            (
                "discord:333",
                "the daily report for today",
                "Leave refunds out",
            ),
        ],
    )
    .await;
    let page = c.get("/dashboard/skills").await;
    assert_eq!(page.status, StatusCode::OK);
    let body = &page.body;
    assert!(
        body.contains("href=\"/dashboard/skills\" class=\"active\"")
            || body.contains("class=\"active\" href=\"/dashboard/skills\""),
        "the page is in the navigation: {body}"
    );
    assert!(body.contains("Waiting for approval"), "{body}");
    assert!(
        body.contains(&format!("id=\"proposal-{}\"", r.id)),
        "{body}"
    );
    assert!(body.contains("<code>daily-report</code> rev 1"), "{body}");
    assert!(body.contains("proposed by corrections (latest by discord:333)"));
    assert!(body.contains("as people corrected it."), "the description");
    // The diff against nothing: every line added.
    assert!(
        body.contains("<span class=\"add\">+- Leave refunds out</span>"),
        "{body}"
    );
    assert!(body.contains("Nothing of this skill is in force"));
    // The corrections it came from: who, when, of which task, which rule.
    assert!(
        body.contains("of “Send me the daily report”: “<b class=\"rule\">Leave refunds out</b>”"),
        "{body}"
    );
    assert!(body.contains("discord:222") && body.contains("discord:333"));
    assert!(body.contains("No skill is in force."));
    // The approval carries the hash of what was shown.
    assert_eq!(field_value(body, "hash").as_deref(), Some(r.hash.as_str()));
    assert!(in_force(db).await.is_empty());

    let after = c
        .post_and_follow(
            "/dashboard/skills/approve",
            &[
                ("csrf", &csrf),
                ("id", &r.id.to_string()),
                ("hash", &r.hash),
            ],
        )
        .await;
    assert_eq!(
        flash(&after.body),
        Some((true, "Approved: daily-report rev 1 is in force.".into())),
        "{}",
        after.body
    );
    assert_eq!(in_force(db).await, [("daily-report".to_string(), 1)]);
    let approved = db.skills().revision("default", r.id).await.unwrap();
    assert_eq!(approved.approved_by.as_deref(), Some("admin"));
    assert!(after.body.contains("No proposal is waiting."));
    assert!(after.body.contains(&format!("id=\"skill-{}\"", r.skill_id)));
    assert!(after
        .body
        .contains(&format!("href=\"/dashboard/skills/{}\"", r.skill_id)));
    assert!(after
        .body
        .contains("<pre class=\"body\">When asked for the daily report:"));
    let log = db.audit().log("default", 100).await.unwrap();
    assert!(
        log.iter()
            .any(|e| e.action == "skill.approve" && e.actor == "admin"),
        "{log:?}"
    );
    // A second approval of the same revision is refused, not repeated.
    let again = c
        .post_and_follow(
            "/dashboard/skills/approve",
            &[
                ("csrf", &csrf),
                ("id", &r.id.to_string()),
                ("hash", &r.hash),
            ],
        )
        .await;
    let (ok, text) = flash(&again.body).expect("a notice");
    assert!(
        !ok && text.contains("is not waiting for approval"),
        "{text}"
    );
}

#[tokio::test]
async fn approving_a_hash_the_proposal_no_longer_has_is_refused_and_nothing_comes_into_force() {
    let (h, mut c, csrf) = signed_in().await;
    let db = h.db();
    let first = propose_skill(
        db,
        "daily-report",
        REPORT_V1,
        &[("discord:222", "daily report", "Leave refunds out")],
    )
    .await;
    let shown = c.get("/dashboard/skills").await.body;
    let hash = field_value(&shown, "hash").expect("the approve form's hash");
    assert_eq!(hash, first.hash);
    // The proposal is revised while the admin reads it.
    let revised = propose_skill(
        db,
        "daily-report",
        REPORT_V2,
        &[("discord:333", "daily report", "Group it by region")],
    )
    .await;
    assert_ne!(revised.hash, hash);
    // The revision that was shown is no longer waiting.
    let a = c
        .post(
            "/dashboard/skills/approve",
            &[
                ("csrf", &csrf),
                ("id", &first.id.to_string()),
                ("hash", &hash),
            ],
        )
        .await;
    assert_eq!(a.status, StatusCode::SEE_OTHER);
    let page = c.get(a.location.as_deref().expect("back")).await;
    let (ok, text) = flash(&page.body).expect("a notice");
    assert!(!ok, "{text}");
    assert!(text.contains("is not waiting for approval"), "{text}");
    // The new revision with the hash of what was shown: stale.
    let page = c
        .post_and_follow(
            "/dashboard/skills/approve",
            &[
                ("csrf", &csrf),
                ("id", &revised.id.to_string()),
                ("hash", &hash),
            ],
        )
        .await;
    let (ok, text) = flash(&page.body).expect("a notice");
    assert!(!ok, "{text}");
    assert!(text.contains("changed since it was shown"), "{text}");
    // An empty or short hash approves nothing either; nor does an unknown id.
    for (id, bad) in [
        (revised.id.to_string(), ""),
        (revised.id.to_string(), "abc"),
        ("999999".to_string(), revised.hash.as_str()),
    ] {
        let page = c
            .post_and_follow(
                "/dashboard/skills/approve",
                &[("csrf", &csrf), ("id", &id), ("hash", bad)],
            )
            .await;
        let (ok, text) = flash(&page.body).expect("a notice");
        assert!(!ok, "{id} {bad:?}: {text}");
    }
    assert!(in_force(db).await.is_empty(), "nothing came into force");
    let log = db.audit().log("default", 100).await.unwrap();
    assert!(!log.iter().any(|e| e.action == "skill.approve"), "{log:?}");
    // The page now shows the revision to approve, with its own hash.
    let shown = c.get("/dashboard/skills").await.body;
    assert_eq!(field_value(&shown, "hash"), Some(revised.hash.clone()));
    assert!(shown.contains("<span class=\"add\">+- Group it by region</span>"));
    let page = c
        .post_and_follow(
            "/dashboard/skills/approve",
            &[
                ("csrf", &csrf),
                ("id", &revised.id.to_string()),
                ("hash", &revised.hash),
            ],
        )
        .await;
    assert_eq!(flash(&page.body).map(|f| f.0), Some(true), "{}", page.body);
    assert_eq!(in_force(db).await, [("daily-report".to_string(), 2)]);
}

#[tokio::test]
async fn a_rejected_proposal_is_never_in_force() {
    let (h, mut c, csrf) = signed_in().await;
    let db = h.db();
    let r = propose_skill(
        db,
        "daily-report",
        REPORT_V1,
        &[("discord:222", "daily report", "Leave refunds out")],
    )
    .await;
    let page = c
        .post_and_follow(
            "/dashboard/skills/reject",
            &[("csrf", &csrf), ("id", &r.id.to_string())],
        )
        .await;
    assert_eq!(
        flash(&page.body),
        Some((
            true,
            "Rejected: daily-report rev 1 will not be followed.".into()
        ))
    );
    assert_eq!(
        db.skills().revision("default", r.id).await.unwrap().status,
        SkillStatus::Rejected
    );
    let page = c
        .post_and_follow(
            "/dashboard/skills/approve",
            &[
                ("csrf", &csrf),
                ("id", &r.id.to_string()),
                ("hash", &r.hash),
            ],
        )
        .await;
    let (ok, text) = flash(&page.body).expect("a notice");
    assert!(!ok && text.contains("it is rejected"), "{text}");
    assert!(in_force(db).await.is_empty());
    // Its history shows it rejected, with no rollback.
    let history = c.get(&format!("/dashboard/skills/{}", r.skill_id)).await;
    assert_eq!(history.status, StatusCode::OK);
    assert!(history.body.contains("data-status=\"rejected\""));
    assert!(history.body.contains("rejected by admin"));
    assert!(!history.body.contains("/dashboard/skills/rollback"));
}

/// Approve `r` from the dashboard with the hash it shows; panics unless it worked.
async fn approve_skill(c: &mut Client, csrf: &str, r: &SkillRevision) {
    let page = c
        .post_and_follow(
            "/dashboard/skills/approve",
            &[("csrf", csrf), ("id", &r.id.to_string()), ("hash", &r.hash)],
        )
        .await;
    assert_eq!(flash(&page.body).map(|f| f.0), Some(true), "{}", page.body);
}

#[tokio::test]
async fn rolling_back_from_rev_2_puts_rev_1_in_force_again() {
    let (h, mut c, csrf) = signed_in().await;
    let db = h.db();
    let one = propose_skill(
        db,
        "daily-report",
        REPORT_V1,
        &[("discord:222", "daily report", "Leave refunds out")],
    )
    .await;
    approve_skill(&mut c, &csrf, &one).await;
    let two = propose_skill(
        db,
        "daily-report",
        REPORT_V2,
        &[("discord:333", "daily report", "Group it by region")],
    )
    .await;
    // Rev 2's review shows what changes against rev 1 in force.
    let page = c.get("/dashboard/skills").await.body;
    assert!(page.contains("Changes against rev 1 in force:"), "{page}");
    assert!(page.contains("<span class=\"same\"> When asked for the daily report:</span>"));
    assert!(page.contains("<span class=\"add\">+- Group it by region</span>"));
    approve_skill(&mut c, &csrf, &two).await;
    assert_eq!(in_force(db).await, [("daily-report".to_string(), 2)]);

    let history_path = format!("/dashboard/skills/{}", one.skill_id);
    let history = c.get(&history_path).await;
    assert_eq!(history.status, StatusCode::OK);
    assert!(
        history.body.contains("Roll back to rev 1"),
        "{}",
        history.body
    );
    assert!(
        !history.body.contains("Roll back to rev 2"),
        "no rollback to the revision in force"
    );
    assert_eq!(
        field_value(&history.body, "to"),
        Some(one.id.to_string()),
        "the rollback form names rev 1"
    );
    let a = c
        .post(
            "/dashboard/skills/rollback",
            &[("csrf", &csrf), ("to", &one.id.to_string())],
        )
        .await;
    assert_eq!(a.location.as_deref(), Some(history_path.as_str()));
    let page = c.get(&history_path).await;
    assert_eq!(
        flash(&page.body),
        Some((true, "Rolled back: daily-report rev 1 is in force.".into()))
    );
    assert_eq!(in_force(db).await, [("daily-report".to_string(), 1)]);
    assert_eq!(
        db.skills()
            .revision("default", two.id)
            .await
            .unwrap()
            .status,
        SkillStatus::Retired
    );
    assert!(
        page.body.contains("Roll back to rev 2"),
        "and forward again"
    );
    let log = db.audit().log("default", 100).await.unwrap();
    assert!(log
        .iter()
        .any(|e| e.action == "skill.rollback" && e.actor == "admin"));
    // Again: already in force, refused; a revision never approved, refused.
    let page = c
        .post_and_follow(
            "/dashboard/skills/rollback",
            &[("csrf", &csrf), ("to", &one.id.to_string())],
        )
        .await;
    let (ok, text) = flash(&page.body).expect("a notice");
    assert!(!ok && text.contains("already in force"), "{text}");
    let three = propose_skill(
        db,
        "daily-report",
        "When asked for the daily report:\n\n- Use euros",
        &[("discord:222", "daily report", "Use euros")],
    )
    .await;
    for to in [three.id.to_string(), "999999".to_string()] {
        let page = c
            .post_and_follow(
                "/dashboard/skills/rollback",
                &[("csrf", &csrf), ("to", &to)],
            )
            .await;
        let (ok, text) = flash(&page.body).expect("a notice");
        assert!(!ok, "{to}: {text}");
    }
    assert_eq!(in_force(db).await, [("daily-report".to_string(), 1)]);
    // A skill that does not exist.
    assert_eq!(
        c.get("/dashboard/skills/999999").await.status,
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn skill_bodies_and_corrections_are_shown_never_run() {
    let (h, mut c, csrf) = signed_in().await;
    let db = h.db();
    let r = propose_skill(
        db,
        "daily-report",
        "When asked:\n\n- <script>alert('body')</script>",
        &[(
            "discord:<i>222</i>",
            "<img src=x onerror=alert('task')>",
            "<script>alert('rule')</script>",
        )],
    )
    .await;
    let pages = |body: &str| {
        assert!(!body.contains("<script>"), "{body}");
        assert!(!body.contains("<img"), "{body}");
        assert!(!body.contains("<i>222"), "{body}");
    };
    let page = c.get("/dashboard/skills").await.body;
    pages(&page);
    assert!(
        page.contains("&lt;script&gt;alert('rule')&lt;/script&gt;"),
        "{page}"
    );
    assert!(page.contains("&lt;script&gt;alert('body')&lt;/script&gt;"));
    assert!(page.contains("&lt;img src=x onerror=alert('task')&gt;"));
    c.post_and_follow(
        "/dashboard/skills/approve",
        &[
            ("csrf", &csrf),
            ("id", &r.id.to_string()),
            ("hash", &r.hash),
        ],
    )
    .await;
    assert_eq!(in_force(db).await.len(), 1);
    let page = c.get("/dashboard/skills").await.body;
    pages(&page);
    assert!(page.contains("<pre class=\"body\">When asked:\n\n- &lt;script&gt;"));
    let history = c
        .get(&format!("/dashboard/skills/{}", r.skill_id))
        .await
        .body;
    pages(&history);
    assert!(history.contains("&lt;script&gt;alert('body')"));
}

#[tokio::test]
async fn a_suspended_skill_shows_why_and_its_stale_proposal_is_refused() {
    let (h, mut c, csrf) = signed_in().await;
    let db = h.db();
    let one = propose_skill(
        db,
        "daily-report",
        REPORT_V1,
        &[("discord:222", "daily report", "Leave refunds out")],
    )
    .await;
    approve_skill(&mut c, &csrf, &one).await;
    let two = propose_skill(
        db,
        "daily-report",
        REPORT_V2,
        &[("discord:333", "daily report", "Group it by region")],
    )
    .await;
    let page = c.get("/dashboard/skills").await.body;
    assert!(!page.contains("class=\"stale\""), "{page}");
    // The learning loop takes rev 1 out of force while rev 2 waits.
    let why = "3 corrections of answers that followed it (the latest: “<b>no</b>”)";
    db.skills()
        .suspend(
            memory::store::Curator {
                org: "default",
                actor: "steward",
                at: now(),
            },
            one.id,
            &memory::admin_text::AdminText::fixed(why),
        )
        .await
        .unwrap();
    assert!(in_force(db).await.is_empty());
    let page = c.get("/dashboard/skills").await.body;
    assert!(page.contains("No skill is in force."), "{page}");
    assert!(
        page.contains(&format!("id=\"suspended-{}\"", one.id)),
        "{page}"
    );
    assert!(
        page.contains(
            "3 corrections of answers that followed it (the latest: “&lt;b&gt;no&lt;/b&gt;”)"
        ),
        "the note, escaped: {page}"
    );
    assert!(page.contains("class=\"stale\""), "{page}");
    let page = c
        .post_and_follow(
            "/dashboard/skills/approve",
            &[
                ("csrf", &csrf),
                ("id", &two.id.to_string()),
                ("hash", &two.hash),
            ],
        )
        .await;
    let (ok, text) = flash(&page.body).expect("a notice");
    assert!(!ok && text.contains("than the one now in force"), "{text}");
    assert!(in_force(db).await.is_empty());
}

// ---------------------------------------------------------------- runs

/// "Run now" on a skill in force runs it as a standing procedure and opens
/// the run's page: its fields and lines, every text escaped (a line holding
/// `<script>` shows it as text); the Runs page lists it.
#[tokio::test]
async fn run_now_starts_a_run_whose_page_shows_its_lines_escaped() {
    let (h, mut c, csrf) = signed_in().await;
    let db = h.db();
    let r = db
        .skills()
        .propose(&NewProposal {
            org: "default",
            agent: "default",
            slug: "daily-report",
            description: "The daily report <script>alert('run')</script>",
            body: REPORT_V1,
            evidence: &[],
            corrections: &[],
            proposed_by: "test",
            at: now(),
        })
        .await
        .unwrap();
    // Nothing in force: no Run now button, and a forged form runs nothing.
    let skills = c.get("/dashboard/skills").await.body;
    assert!(!skills.contains("/dashboard/skills/run"), "{skills}");
    let page = c
        .post_and_follow(
            "/dashboard/skills/run",
            &[
                ("csrf", &csrf),
                ("slug", "daily-report"),
                ("agent", "default"),
            ],
        )
        .await;
    let (ok, text) = flash(&page.body).expect("a notice");
    assert!(!ok && text.contains("daily-report"), "{text}");
    assert!(db
        .runs()
        .list("default", None, 10)
        .await
        .unwrap()
        .is_empty());
    let runs = c.get("/dashboard/runs").await;
    assert_eq!(runs.status, StatusCode::OK);
    assert!(runs.body.contains("No run yet"), "{}", runs.body);
    // In force: the button runs it and opens the run.
    approve_skill(&mut c, &csrf, &r).await;
    let skills = c.get("/dashboard/skills").await.body;
    assert!(
        skills.contains("action=\"/dashboard/skills/run\""),
        "{skills}"
    );
    assert!(skills.contains("Run now"), "{skills}");
    let page = c
        .post_and_follow(
            "/dashboard/skills/run",
            &[
                ("csrf", &csrf),
                ("slug", "daily-report"),
                ("agent", "default"),
            ],
        )
        .await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    let all = db.runs().list("default", None, 10).await.unwrap();
    assert_eq!(all.len(), 1);
    let run = &all[0];
    assert_eq!(run.principal, "sop-system");
    assert_eq!(run.trigger, memory::run::Trigger::OnDemand);
    assert_eq!(run.started_by, "admin");
    assert_eq!(run.outcome, memory::run::RunOutcome::Answered, "{run:?}");
    assert_eq!(run.deliver, "dashboard");
    assert_eq!(flash(&page.body).map(|f| f.0), Some(true), "{}", page.body);
    let lines = db
        .conversations()
        .history("default", "default", &run.conversation)
        .await
        .unwrap();
    assert_eq!(lines.len(), 2, "{lines:?}");
    let body = &page.body;
    assert!(body.contains(&format!("Run #{}", run.id)), "{body}");
    assert!(
        body.contains("sop-system") && body.contains("on_demand"),
        "{body}"
    );
    assert!(body.contains("daily-report@1"), "{body}");
    // Every line is on the page, escaped. The turn already defuses markup in
    // an answer, so a line holding <script> is stored into the run's
    // conversation here, as any text could be.
    db.conversations()
        .insert_message(&memory::store::NewMessage {
            org: "default",
            agent: "default",
            channel: "run",
            conversation: &run.conversation,
            conversation_kind: "direct",
            author: "agent",
            sender: None,
            sender_role: None,
            text: "Done <script>alert('run')</script>",
            said_at: now(),
        })
        .await
        .unwrap();
    let page = c.get(&format!("/dashboard/runs/{}", run.id)).await;
    let body = &page.body;
    assert!(!body.contains("<script>alert"), "{body}");
    assert!(
        body.contains("&lt;script&gt;alert(") && body.contains("&lt;/script&gt;"),
        "{body}"
    );
    let answer = lines[1]
        .text
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;");
    assert!(
        body.contains(&answer) || body.contains(&answer.replace('\'', "&#39;")),
        "{answer} not in {body}"
    );
    // The Runs page lists it, linked; the nav links the page.
    let runs = c.get("/dashboard/runs").await.body;
    assert!(runs.contains(&format!("id=\"run-{}\"", run.id)), "{runs}");
    assert!(
        runs.contains(&format!("href=\"/dashboard/runs/{}\"", run.id)),
        "{runs}"
    );
    assert!(
        runs.contains("answered") && runs.contains("sop-system"),
        "{runs}"
    );
    let chat = c.get("/dashboard/chat").await.body;
    assert!(chat.contains("href=\"/dashboard/runs\""), "{chat}");
    // Another run id: 404 in the dashboard's look.
    let missing = c.get("/dashboard/runs/999999").await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
    assert!(
        missing.body.contains("There is no run 999999"),
        "{}",
        missing.body
    );
}

/// An administrator lets one person act for another on the Pairing page,
/// sees the grant, and ends it; a person cannot be their own delegate.
#[tokio::test]
async fn delegations_are_granted_shown_and_ended_on_the_pairing_page() {
    let (h, mut c, csrf) = signed_in().await;
    let ana = h.pair("222", memory::Role::User).await;
    let bo = h.pair("333", memory::Role::User).await;
    let page = c
        .post_and_follow(
            "/dashboard/delegates/add",
            &[("csrf", &csrf), ("principal", &ana), ("delegate", &bo)],
        )
        .await;
    assert!(
        page.body.contains(&format!("{bo} may act for {ana}.")),
        "{}",
        page.body
    );
    let held = h
        .services
        .pairing()
        .delegations("default", None)
        .await
        .unwrap();
    assert_eq!(held.len(), 1, "{held:?}");
    assert_eq!(
        (held[0].principal.as_str(), held[0].delegate.as_str()),
        (ana.as_str(), bo.as_str())
    );
    assert!(page.body.contains("Delegations"), "{}", page.body);

    let own = c
        .post_and_follow(
            "/dashboard/delegates/add",
            &[("csrf", &csrf), ("principal", &ana), ("delegate", &ana)],
        )
        .await;
    assert_eq!(own.status, StatusCode::OK);
    assert_eq!(
        h.services
            .pairing()
            .delegations("default", None)
            .await
            .unwrap()
            .len(),
        1,
        "{}",
        own.body
    );

    let ended = c
        .post_and_follow(
            "/dashboard/delegates/remove",
            &[("csrf", &csrf), ("principal", &ana), ("delegate", &bo)],
        )
        .await;
    assert!(
        ended
            .body
            .contains(&format!("{bo} no longer acts for {ana}.")),
        "{}",
        ended.body
    );
    assert!(h
        .services
        .pairing()
        .delegations("default", None)
        .await
        .unwrap()
        .is_empty());
    let log = h.db().audit().log("default", 50).await.unwrap();
    assert!(
        log.iter()
            .any(|e| e.action == "delegate.grant" && e.actor == "admin"),
        "{log:?}"
    );
    assert!(log.iter().any(|e| e.action == "delegate.revoke"), "{log:?}");
}
