//! The web dashboard in-process (`oneshot`): sign-in and its limits, the
//! session cookie, sessions ending, CSRF on every form, and malformed
//! forms and unknown paths that change nothing.

use axum::http::StatusCode;
use memory::store::{DashboardSession, RecordFilter};
use memory::write::RawWrites;
use memory::{Db, Role, Scope, Status};
use sha2::{Digest, Sha256};
use std::sync::Arc;
use steward::clock::{Clock, ManualClock};
use steward::dashboard::{ensure_admin_token, reset_admin_token, AdminToken, FORM_ROUTES};
use steward::Config;
use steward_tests::dashboard::{self, pair_request, Client, TOKEN};
use steward_tests::dashboard::{
    approve_skill, in_force, note, now, propose_skill, rec, setup, signed_in, REPORT_V1, REPORT_V2,
};
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
    assert_eq!(home.location.as_deref(), Some("/dashboard/login"));
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
            user_id: "admin".into(),
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
            user_id: "admin".into(),
            created_at: now(),
            expires_at: now() + 60_000,
        })
        .await
        .unwrap();
    c.cookies.insert("steward_session".into(), live);
    assert_eq!(c.get("/dashboard/chat").await.status, StatusCode::OK);
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
