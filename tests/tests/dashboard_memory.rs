//! The dashboard's memory pages in-process (`oneshot`): the memory browser,
//! review of quarantined records, undo on the revisions page, and the
//! settings pages.

use axum::http::StatusCode;
use memory::write::RawWrites;
use memory::{Scope, Status};
use steward::Config;
use steward_tests::dashboard::{note, now, rec, signed_in, status_of};
use steward_tests::dashboard::{Client, TOKEN};
use steward_tests::Harness;

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

/// "Your memory" shows the entries of each role the person holds, and
/// shares one of their records with a role through the call the API makes:
/// a pending proposal of its text, audited; a role they do not hold is refused.
#[tokio::test]
async fn your_memory_shows_your_roles_and_shares_a_record_with_one() {
    use memory::role_memory::RoleChange;
    let (h, mut c, csrf) = signed_in().await;
    let db = h.db();
    let roles = db.role_memory();
    roles
        .change(
            "default",
            "admin",
            RoleChange::Add("support"),
            "test",
            now(),
        )
        .await
        .expect("a role");
    let id = db
        .records()
        .insert_record(&rec(
            Scope::Personal,
            Some("admin"),
            "pref:escalation",
            "Escalate outages to the on-call lead first",
            Status::Active,
        ))
        .await
        .expect("a record");
    let page = c.get("/dashboard/me").await.body;
    assert!(page.contains("Your roles"), "{page}");
    assert!(page.contains("Share with support"), "{page}");
    assert!(
        page.contains("Nothing is kept for this role yet."),
        "{page}"
    );
    let shared = c
        .post_and_follow(
            "/dashboard/me/share",
            &[
                ("csrf", &csrf),
                ("id", &id.to_string()),
                ("role", "support"),
            ],
        )
        .await;
    assert!(
        shared.body.contains("Proposed to support"),
        "{}",
        shared.body
    );
    let entries = roles.list("default", "support", now()).await.expect("list");
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert_eq!(
        entries[0].content,
        "Escalate outages to the on-call lead first"
    );
    assert_eq!(entries[0].proposed_by, "admin");
    assert_eq!(entries[0].source_record, Some(id));
    let page = c.get("/dashboard/me").await.body;
    assert!(
        page.contains(&format!("id=\"entry-{}\"", entries[0].id)),
        "{page}"
    );
    // A role the person does not hold: refused, nothing proposed.
    let refused = c
        .post_and_follow(
            "/dashboard/me/share",
            &[
                ("csrf", &csrf),
                ("id", &id.to_string()),
                ("role", "finance"),
            ],
        )
        .await;
    assert!(refused.body.contains("Refused"), "{}", refused.body);
    assert!(roles
        .list("default", "finance", now())
        .await
        .expect("list")
        .is_empty());
    let audit = db.audit().log("default", 50).await.expect("audit");
    assert!(
        audit
            .iter()
            .any(|a| a.action == "role_memory.propose" && a.actor == "admin"),
        "{audit:?}"
    );
}
