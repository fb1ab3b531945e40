//! The dashboard's Pairing and person pages in-process (`oneshot`): requests
//! approved or denied, people paired directly, roles, delegations, the
//! built-in admin, a person's memory behind an audited look, and platform
//! text shown as text.

use axum::http::StatusCode;
use memory::write::RawWrites;
use memory::{Db, Role, Scope, Status};
use std::sync::Arc;
use steward::clock::{Clock, ManualClock};
use steward_tests::dashboard::{self, pair_request, Client, TOKEN};
use steward_tests::dashboard::{note, now, rec, signed_in, status_of};

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
    // The built-in admin, paired as "Dashboard admin" once it signs in.
    assert!(mine.contains("Viewed by Dashboard admin on"), "{mine}");
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
