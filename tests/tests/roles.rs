//! Work roles and role memory, on both databases: a role entry reaches only
//! the people who hold the role at that turn; an entry becomes active only
//! when a manager of the role accepts it and a *different*, current holder
//! confirms the same text; pending proposals expire after 14 days; the
//! scrubber keeps ids and personal data out; the model drafts at most one
//! proposal per reply; a delegated proposal names whose behalf it was made on.

use adapters::ConversationKind;
use memory::role_memory::{
    NewRoleProposal, Permission, ProposalStatus, RoleChange, RoleEntry, RoleError, RoleKind,
    PROPOSAL_TTL_MS,
};
use memory::store::{Act, DelegationChange, ProposalDecision};
use memory::{Db, Role, Scope, Status};
use serde_json::json;
use steward::Config;
use steward_tests::fake_llm::{Answer, FakeLlm, TEXT};
use steward_tests::{both_dbs, Harness};

const ORG: &str = "default";
const ROLE: &str = "analyst";
const LESSON: &str = "Check the lineage of a metric before quoting its trend";

/// An admin (111), Ana (222: analyst and its manager), Bob (333: analyst),
/// Carol (444: no role).
struct Team {
    h: Harness,
    ana: String,
    bob: String,
    carol: String,
}

/// `actor`'s decision on proposal `id`, on the text hashed `seen`, at `now`.
fn decision<'a>(id: i64, actor: &'a str, seen: Option<&'a str>, now: i64) -> ProposalDecision<'a> {
    let by = Act {
        org: ORG,
        actor,
        at: now,
    };
    ProposalDecision { id, seen, by }
}

impl Team {
    /// Bob may act for Carol, as the admin granted it at 2.
    fn bob_acts_for_carol(&self) -> DelegationChange<'_> {
        let by = Act {
            org: ORG,
            actor: "discord:111",
            at: 2,
        };
        DelegationChange {
            principal: &self.carol,
            delegate: &self.bob,
            by,
        }
    }

    async fn on(db: Db, cfg: Config) -> Team {
        let h = Harness::on(db, cfg);
        h.pair("111", Role::Admin).await;
        let ana = h.pair("222", Role::User).await;
        let bob = h.pair("333", Role::User).await;
        let carol = h.pair("444", Role::User).await;
        let r = h.db().role_memory();
        r.change(ORG, &ana, RoleChange::Add(ROLE), "discord:111", 1)
            .await
            .unwrap();
        r.change(ORG, &bob, RoleChange::Add(ROLE), "discord:111", 1)
            .await
            .unwrap();
        r.change(
            ORG,
            &ana,
            RoleChange::Grant(Permission::RoleMemoryManage, ROLE),
            "discord:111",
            1,
        )
        .await
        .unwrap();
        Team { h, ana, bob, carol }
    }

    fn db(&self) -> &Db {
        self.h.db()
    }

    async fn propose(&self, by: &str, kind: RoleKind, text: &str, now: i64) -> RoleEntry {
        self.try_propose(by, kind, text, now).await.unwrap()
    }

    async fn try_propose(
        &self,
        by: &str,
        kind: RoleKind,
        text: &str,
        now: i64,
    ) -> Result<RoleEntry, RoleError> {
        self.db()
            .role_memory()
            .propose(&NewRoleProposal {
                org: ORG,
                role: ROLE,
                kind,
                content: text,
                proposed_by: by,
                on_behalf_of: None,
                source_record: None,
                now,
            })
            .await
    }

    /// Ana proposes and accepts, Bob confirms: an active entry.
    async fn active(&self, kind: RoleKind, text: &str, now: i64) -> RoleEntry {
        let r = self.db().role_memory();
        let e = self.propose(&self.ana, kind, text, now).await;
        r.accept(&decision(e.id, &self.ana, Some(&e.content_hash), now))
            .await
            .unwrap();
        r.confirm(&decision(e.id, &self.bob, Some(&e.content_hash), now))
            .await
            .unwrap()
    }
}

fn refused_with(got: Result<RoleEntry, RoleError>, code: &str, status: u16, at: &str) {
    match got {
        Err(e) => {
            assert_eq!(e.code(), code, "{at}: {e}");
            assert_eq!(e.http_status(), status, "{at}: {e}");
        }
        Ok(e) => panic!("{at}: not refused: {e:?}"),
    }
}

#[tokio::test]
async fn a_role_entry_reaches_only_current_holders_and_stops_when_the_role_is_removed() {
    for (name, db) in both_dbs().await {
        let fake = FakeLlm::start().await;
        fake.always(TEXT, Answer::Content("Noted.".into()));
        let t = Team::on(db, fake.config()).await;
        let e = t.active(RoleKind::Lesson, LESSON, t.h.now_ms()).await;
        let record = e.record_id.expect("a confirmed entry has its record");
        let stored = t.db().records().get(ORG, record).await.unwrap();
        assert_eq!(
            (stored.scope, stored.status, stored.owner.as_deref()),
            (Scope::Role, Status::Active, Some(ROLE)),
            "{name}"
        );
        let asked = |who: &'static str| {
            let fake = &fake;
            let h = &t.h;
            async move {
                fake.clear_received();
                // Words that match nothing of it: role memory is read in every turn.
                h.dm(who, "Good morning, anything new today?").await;
                fake.received_for(TEXT)
                    .iter()
                    .any(|r| r.memory_ids().contains(&record))
            }
        };
        assert!(asked("333").await, "{name}: Bob holds the role");
        assert!(
            !asked("444").await,
            "{name}: Carol holds no role and never reads it"
        );
        // With any agent: the role tier is not one agent's.
        t.db()
            .role_memory()
            .change(
                ORG,
                &t.bob,
                RoleChange::Remove(ROLE),
                "discord:111",
                t.h.now_ms(),
            )
            .await
            .unwrap();
        assert!(
            !asked("333").await,
            "{name}: Bob left the role: his next turn no longer reads it"
        );
        assert!(asked("222").await, "{name}: Ana still holds it");
        let _ = &t.carol;
    }
}

#[tokio::test]
async fn two_parties_are_needed_and_each_shortcut_is_refused_or_reset() {
    for (name, db) in both_dbs().await {
        let t = Team::on(db, Config::default()).await;
        let r = t.db().role_memory();
        let now = 10_000;

        // A manager alone: accepting is not enough, and she cannot confirm her own acceptance.
        let e = t
            .propose(
                &t.ana,
                RoleKind::Term,
                "ARR means annual recurring revenue",
                now,
            )
            .await;
        let accepted = r.accept(&decision(e.id, &t.ana, None, now)).await.unwrap();
        assert_eq!(accepted.status, ProposalStatus::Accepted, "{name}");
        assert!(accepted.record_id.is_none(), "{name}: nothing is read yet");
        refused_with(
            r.confirm(&decision(e.id, &t.ana, None, now)).await,
            "same_person",
            409,
            &format!("{name}: one person acting as both"),
        );

        // A holder alone: he may not accept, nor confirm what nobody accepted.
        let f = t.propose(&t.bob, RoleKind::Lesson, LESSON, now).await;
        refused_with(
            r.accept(&decision(f.id, &t.bob, None, now)).await,
            "not_a_manager",
            403,
            &format!("{name}: a holder alone"),
        );
        refused_with(
            r.confirm(&decision(f.id, &t.bob, None, now)).await,
            "wrong_state",
            409,
            &format!("{name}: confirming what was not accepted"),
        );

        // Someone who holds no role may not confirm.
        refused_with(
            r.confirm(&decision(e.id, &t.carol, None, now)).await,
            "not_a_holder",
            403,
            &format!("{name}: a non-holder"),
        );

        // A confirmer who left the role between the two decisions.
        r.change(ORG, &t.bob, RoleChange::Remove(ROLE), "discord:111", now)
            .await
            .unwrap();
        refused_with(
            r.confirm(&decision(e.id, &t.bob, None, now)).await,
            "not_a_holder",
            403,
            &format!("{name}: a confirmer who left the role"),
        );
        r.change(ORG, &t.bob, RoleChange::Add(ROLE), "discord:111", now)
            .await
            .unwrap();

        // An edit after acceptance resets it to proposed; the old hash is stale.
        let edited = r
            .edit(
                ORG,
                e.id,
                &t.ana,
                "ARR means annual recurring revenue, net of churn",
                now,
            )
            .await
            .unwrap();
        assert_eq!(edited.status, ProposalStatus::Proposed, "{name}");
        assert_eq!(edited.accepted_by, None, "{name}");
        assert_ne!(edited.content_hash, e.content_hash, "{name}");
        refused_with(
            r.confirm(&decision(e.id, &t.bob, None, now)).await,
            "wrong_state",
            409,
            &format!("{name}: confirming an edited proposal"),
        );
        refused_with(
            r.accept(&decision(e.id, &t.ana, Some(&e.content_hash), now))
                .await,
            "stale_hash",
            409,
            &format!("{name}: accepting the text as it was before the edit"),
        );

        // The two decisions on the same text by two people: active, both on the audit row.
        r.accept(&decision(e.id, &t.ana, Some(&edited.content_hash), now))
            .await
            .unwrap();
        let done = r
            .confirm(&decision(e.id, &t.bob, Some(&edited.content_hash), now))
            .await
            .unwrap();
        assert!(done.is_active(), "{name}: {done:?}");
        let audit = t
            .db()
            .audit()
            .about(
                ORG,
                "role_memory.confirm",
                &format!("role_proposal:{}", e.id),
            )
            .await
            .unwrap();
        assert_eq!(audit.len(), 1, "{name}");
        assert!(
            audit[0].detail.contains(&format!("accepted by {}", t.ana))
                && audit[0].detail.contains(&format!("confirmed by {}", t.bob)),
            "{name}: {:?}",
            audit[0]
        );
        // Nobody outside the role proposes to it.
        refused_with(
            t.try_propose(&t.carol, RoleKind::Lesson, LESSON, now).await,
            "may_not_propose",
            403,
            &format!("{name}: a non-holder proposing"),
        );
    }
}

#[tokio::test]
async fn pending_proposals_expire_after_14_days() {
    for (name, db) in both_dbs().await {
        let t = Team::on(db, Config::default()).await;
        let r = t.db().role_memory();
        let start = 1_000_000;
        let e = t.propose(&t.bob, RoleKind::Lesson, LESSON, start).await;
        let late = start + PROPOSAL_TTL_MS;
        // The day before, it still waits.
        let listed = r.list(ORG, ROLE, late - 1).await.unwrap();
        assert_eq!(listed[0].status, ProposalStatus::Proposed, "{name}");
        // Listed as expired, and refused at accept with 410.
        let listed = r.list(ORG, ROLE, late).await.unwrap();
        assert_eq!(listed[0].status, ProposalStatus::Expired, "{name}");
        refused_with(
            r.accept(&decision(e.id, &t.ana, None, late)).await,
            "expired",
            410,
            &format!("{name}: accepting after 14 days"),
        );
        // An accepted one expires too, at confirm.
        let f = t
            .propose(
                &t.bob,
                RoleKind::Term,
                "MRR means monthly recurring revenue",
                start,
            )
            .await;
        r.accept(&decision(f.id, &t.ana, None, start + 1))
            .await
            .unwrap();
        refused_with(
            r.confirm(&decision(f.id, &t.bob, None, late)).await,
            "expired",
            410,
            &format!("{name}: confirming after 14 days"),
        );
        assert!(
            r.list(ORG, ROLE, late)
                .await
                .unwrap()
                .iter()
                .all(|e| e.record_id.is_none()),
            "{name}"
        );
    }
}

#[tokio::test]
async fn the_scrubber_refuses_ids_and_personal_data_before_anything_is_stored() {
    for (name, db) in both_dbs().await {
        let t = Team::on(db, Config::default()).await;
        t.h.services
            .pairing()
            .add_user(ORG, "discord:555", "Dana Reyes", Role::User, "test", 1)
            .await
            .unwrap();
        let rows: &[(&str, Option<&str>)] = &[
            (
                "Ask <@123456789012345678> before a rerun",
                Some("holds_user_id"),
            ),
            ("The owner is 123456789012345678", Some("holds_user_id")),
            ("Escalate to 29:1a2B3c4D5e6F7g", Some("holds_user_id")),
            ("Escalate to discord:222", Some("holds_user_id")),
            ("Mail reports to finance@example.com", Some("holds_email")),
            (
                "Call +1 415 555 0100 when it fails",
                Some("holds_phone_number"),
            ),
            ("Dana Reyes approves the rubric", Some("holds_person_name")),
            (
                "Use the key AKIAIOSFODNN7EXAMPLE for the bucket",
                Some("holds_credential"),
            ),
            ("Check the lineage before a 3:1 split", None),
            ("Round to 2 decimals in reports of 2026", None),
        ];
        for (text, want) in rows {
            let got = t.try_propose(&t.bob, RoleKind::Lesson, text, 5).await;
            match (want, got) {
                (Some(code), Err(e)) => {
                    assert_eq!(e.code(), *code, "{name}: {text}");
                    assert_eq!(e.http_status(), 422, "{name}: {text}");
                }
                (None, Ok(_)) => {}
                (want, got) => panic!("{name}: {text}: want {want:?}, got {got:?}"),
            }
        }
        let stored = t.db().role_memory().list(ORG, ROLE, 5).await.unwrap();
        assert_eq!(stored.len(), 2, "{name}: only the clean rows: {stored:?}");
    }
}

/// The security review (issue 45, finding 7): spaced letters of a paired
/// name, a Cyrillic look-alike of it, a paired person's health detail, a
/// phone number spelled out and a credential labelled in Portuguese all
/// passed the scrubber; through the REST API each is refused with its code
/// and nothing is stored.
#[tokio::test]
async fn the_api_refuses_spaced_confusable_spelled_and_special_category_data_in_role_memory() {
    use axum::http::StatusCode;
    use steward::http::{app, AppState};
    for (name, db) in both_dbs().await {
        let t = Team::on(db, Config::default()).await;
        let pairing = t.h.services.pairing();
        for (id, person) in [("discord:556", "Alice"), ("discord:557", "Zoe")] {
            pairing
                .add_user(ORG, id, person, Role::User, "test", 1)
                .await
                .unwrap();
        }
        let bob = pairing
            .create_api_key(ORG, &t.bob, "test", 1)
            .await
            .unwrap()
            .key;
        let app = app(AppState::new(t.h.services.clone()));
        let memory = format!("/api/v1/roles/{ROLE}/memory");
        for (content, code) in [
            ("Ask A l i c e before a rerun", "holds_person_name"),
            ("\u{0410}lice approves the rubric", "holds_person_name"),
            (
                "Zoe is on chemo, route her reviews to Bob",
                "holds_person_name",
            ),
            ("The night analyst is on chemo", "holds_special_category"),
            (
                "Escalate by phone: five five five, one two three, four five six seven",
                "holds_phone_number",
            ),
            ("Senha do servidor: Pato-Verde77", "holds_credential"),
            // Held out.
            ("Ask A.l.i.c.e before a rerun", "holds_person_name"),
            ("\u{0396}oe approves the rubric", "holds_person_name"),
        ] {
            let (s, body) = call(
                &app,
                "POST",
                &memory,
                &bob,
                Some(json!({"kind": "lesson", "content": content})),
            )
            .await;
            assert_eq!(
                (s, body["code"].as_str()),
                (StatusCode::UNPROCESSABLE_ENTITY, Some(code)),
                "{name}: {content}: {body}"
            );
        }
        let stored = t.db().role_memory().list(ORG, ROLE, 5).await.unwrap();
        assert!(stored.is_empty(), "{name}: {stored:?}");
        let (s, body) = call(
            &app,
            "POST",
            &memory,
            &bob,
            Some(json!({"kind": "lesson", "content": LESSON})),
        )
        .await;
        assert_eq!(s, StatusCode::CREATED, "{name}: {body}");
    }
}

/// The records a turn of Carol's with the agent `support` reads for
/// "rubric sources", were she to hold `roles`.
async fn found(db: &Db, roles: &[&str]) -> Vec<i64> {
    let scope = memory::store::RetrievalScope {
        org: ORG.into(),
        agent: "support".into(),
        speaker: Some("discord:444".into()),
        shared: false,
        roles: roles.iter().map(|r| r.to_string()).collect(),
    };
    db.records()
        .retrieve(&scope, "rubric sources", 5)
        .await
        .unwrap()
        .into_iter()
        .map(|f| f.record.id)
        .collect()
}

#[tokio::test]
async fn a_new_rubric_supersedes_the_old_and_retiring_is_undone_by_a_revision() {
    for (name, db) in both_dbs().await {
        let t = Team::on(db, Config::default()).await;
        let r = t.db().role_memory();
        let v1 = t
            .active(RoleKind::Rubric, "Rubric v1: accuracy, clarity", 100)
            .await;
        let v2 = t
            .active(
                RoleKind::Rubric,
                "Rubric v2: accuracy, clarity, sources",
                200,
            )
            .await;
        let listed = r.list(ORG, ROLE, 300).await.unwrap();
        let by_id = |id: i64| listed.iter().find(|e| e.id == id).unwrap().clone();
        assert!(!by_id(v1.id).is_active(), "{name}: one active version");
        assert!(by_id(v2.id).is_active(), "{name}");

        // Read with any agent, by the role's holders only.
        let v2_record = v2.record_id.unwrap();
        assert_eq!(found(t.db(), &[ROLE]).await, vec![v2_record], "{name}");
        assert!(found(t.db(), &["sre"]).await.is_empty(), "{name}");
        assert!(found(t.db(), &[]).await.is_empty(), "{name}");

        let revision = r.retire(ORG, v2.id, "discord:111", 300).await.unwrap();
        assert!(!r.get(ORG, v2.id, 300).await.unwrap().is_active(), "{name}");
        t.db()
            .records()
            .undo_revision(ORG, revision, "discord:111", 400)
            .await
            .unwrap();
        assert!(
            r.get(ORG, v2.id, 400).await.unwrap().is_active(),
            "{name}: undone"
        );
    }
}

#[tokio::test]
async fn revoking_a_person_ends_their_roles_and_grants() {
    for (name, db) in both_dbs().await {
        let t = Team::on(db, Config::default()).await;
        t.h.services
            .pairing()
            .revoke(ORG, &t.ana, "discord:111", 50)
            .await
            .unwrap();
        let r = t.db().role_memory();
        assert!(r.roles_of(ORG, &t.ana).await.unwrap().is_empty(), "{name}");
        assert!(
            r.grants(ORG, Some(&t.ana)).await.unwrap().is_empty(),
            "{name}"
        );
        let audit = t
            .db()
            .audit()
            .about(ORG, "role.remove", &t.ana)
            .await
            .unwrap();
        assert_eq!(audit.len(), 1, "{name}");
    }
}

#[tokio::test]
async fn role_names_are_validated() {
    let t = Team::on(Db::in_memory().await.unwrap(), Config::default()).await;
    let r = t.db().role_memory();
    for bad in ["Analyst", "sre team", "", "a_b", &"x".repeat(33)] {
        let got = r
            .change(ORG, &t.bob, RoleChange::Add(bad), "discord:111", 1)
            .await;
        assert!(
            matches!(got, Err(RoleError::InvalidRole(_))),
            "{bad}: {got:?}"
        );
    }
    assert!(r
        .change(ORG, &t.bob, RoleChange::Add("sre-2"), "discord:111", 1)
        .await
        .unwrap());
}

#[tokio::test]
async fn the_model_drafts_one_proposal_per_reply_never_active() {
    for (name, db) in both_dbs().await {
        let fake = FakeLlm::start().await;
        let t = Team::on(db, fake.config()).await;
        let call = |text: &str| {
            (
                "propose_promotion".to_string(),
                json!({"role": ROLE, "kind": "lesson", "content": text}),
            )
        };
        fake.push(
            TEXT,
            Answer::ToolCalls(vec![
                call(LESSON),
                call("Quote the sample size with every rate"),
            ]),
        );
        fake.push(TEXT, Answer::Content("Drafted it.".into()));
        let reply =
            t.h.dm("333", "Share that lineage lesson with the analysts")
                .await;
        assert!(reply.starts_with("Drafted it."), "{name}: {reply}");
        let listed = t
            .db()
            .role_memory()
            .list(ORG, ROLE, t.h.now_ms())
            .await
            .unwrap();
        assert_eq!(listed.len(), 1, "{name}: one per reply: {listed:?}");
        assert_eq!(listed[0].content, LESSON, "{name}");
        assert_eq!(listed[0].status, ProposalStatus::Proposed, "{name}");
        assert_eq!(listed[0].proposed_by, t.bob, "{name}");
        let results = fake.received_for(TEXT)[1].tool_results();
        assert!(results[0].1.starts_with("Proposed"), "{name}: {results:?}");
        assert!(
            results[1].1.starts_with("Refused: one proposal per reply"),
            "{name}: {results:?}"
        );
    }
}

#[tokio::test]
async fn a_delegated_proposal_carries_on_behalf_of() {
    for (name, db) in both_dbs().await {
        let fake = FakeLlm::start().await;
        let t = Team::on(db, fake.config()).await;
        t.h.services
            .pairing()
            .grant_delegate(&t.bob_acts_for_carol())
            .await
            .unwrap();
        fake.push(
            TEXT,
            Answer::tool(
                "propose_promotion",
                json!({"role": ROLE, "kind": "term", "content": "NRR means net revenue retention"}),
            ),
        );
        fake.push(TEXT, Answer::Content("Drafted.".into()));
        let mut msg = t.h.inbound(
            Some("333"),
            "dm:333",
            ConversationKind::Direct,
            "Propose the NRR term for the analysts",
        );
        msg.on_behalf_of = Some(t.carol.clone());
        t.h.send(msg).await;
        let listed = t
            .db()
            .role_memory()
            .list(ORG, ROLE, t.h.now_ms())
            .await
            .unwrap();
        assert_eq!(listed.len(), 1, "{name}: {listed:?}");
        assert_eq!(listed[0].proposed_by, t.bob, "{name}");
        assert_eq!(
            listed[0].on_behalf_of.as_deref(),
            Some(t.carol.as_str()),
            "{name}"
        );
    }
}

/// `method path` with `key` over the REST API: (status, JSON body).
async fn call(
    app: &axum::Router,
    method: &str,
    path: &str,
    key: &str,
    body: Option<serde_json::Value>,
) -> (axum::http::StatusCode, serde_json::Value) {
    use http_body_util::BodyExt;
    use tower::ServiceExt;
    let b = axum::http::Request::builder()
        .method(method)
        .uri(path)
        .header("authorization", format!("Bearer {key}"));
    let req = match body {
        Some(v) => b
            .header("content-type", "application/json")
            .body(axum::body::Body::from(v.to_string())),
        None => b.body(axum::body::Body::empty()),
    }
    .unwrap();
    let resp = app.clone().oneshot(req).await.unwrap();
    let status = resp.status();
    let bytes = resp.into_body().collect().await.unwrap().to_bytes();
    (status, serde_json::from_slice(&bytes).unwrap_or_default())
}

#[tokio::test]
async fn the_api_curates_in_two_parties_and_refuses_with_statuses_and_codes() {
    use axum::http::StatusCode;
    use steward::http::{app, AppState};
    for (name, db) in both_dbs().await {
        let t = Team::on(db, Config::default()).await;
        let p = t.h.services.pairing().clone();
        let key = |u: String| {
            let p = p.clone();
            async move { p.create_api_key(ORG, &u, "test", 1).await.unwrap().key }
        };
        let admin = key("discord:111".into()).await;
        let (ana, bob, carol) = (
            key(t.ana.clone()).await,
            key(t.bob.clone()).await,
            key(t.carol.clone()).await,
        );
        let app = app(AppState::new(t.h.services.clone()));

        // Roles are set by an administrator only.
        let path = format!("/api/v1/users/{}/roles", t.carol);
        let (s, _) = call(&app, "POST", &path, &carol, Some(json!({"role": "sre"}))).await;
        assert_eq!(s, StatusCode::FORBIDDEN, "{name}");
        let (s, body) = call(
            &app,
            "POST",
            &path,
            &admin,
            Some(json!({"role": "Bad Role"})),
        )
        .await;
        assert_eq!(
            (s, body["code"].as_str()),
            (StatusCode::UNPROCESSABLE_ENTITY, Some("invalid_role")),
            "{name}: {body}"
        );
        let (s, body) = call(&app, "POST", &path, &admin, Some(json!({"role": "sre"}))).await;
        assert_eq!(s, StatusCode::OK, "{name}: {body}");
        assert_eq!(body["roles"], json!(["sre"]), "{name}");

        let memory = format!("/api/v1/roles/{ROLE}/memory");
        let (s, body) = call(
            &app,
            "POST",
            &memory,
            &bob,
            Some(json!({"kind": "lesson", "content": "Mail finance@example.com"})),
        )
        .await;
        assert_eq!(
            (s, body["code"].as_str()),
            (StatusCode::UNPROCESSABLE_ENTITY, Some("holds_email")),
            "{name}: {body}"
        );
        let (s, e) = call(
            &app,
            "POST",
            &memory,
            &bob,
            Some(json!({"kind": "lesson", "content": LESSON})),
        )
        .await;
        assert_eq!(s, StatusCode::CREATED, "{name}: {e}");
        let id = e["id"].as_i64().unwrap();
        let hash = e["content_hash"].as_str().unwrap().to_string();
        let (s, body) = call(&app, "GET", &memory, &carol, None).await;
        assert_eq!(
            (s, body["code"].as_str()),
            (StatusCode::FORBIDDEN, Some("not_a_holder")),
            "{name}: {body}"
        );

        let accept = format!("/api/v1/role-memory/{id}/accept");
        let confirm = format!("/api/v1/role-memory/{id}/confirm");
        let (s, body) = call(&app, "POST", &accept, &bob, Some(json!({"hash": hash}))).await;
        assert_eq!(
            (s, body["code"].as_str()),
            (StatusCode::FORBIDDEN, Some("not_a_manager")),
            "{name}: {body}"
        );
        let (s, body) = call(&app, "POST", &accept, &ana, Some(json!({"hash": "0000"}))).await;
        assert_eq!(
            (s, body["code"].as_str()),
            (StatusCode::CONFLICT, Some("stale_hash")),
            "{name}: {body}"
        );
        let (s, body) = call(&app, "POST", &accept, &ana, Some(json!({"hash": hash}))).await;
        assert_eq!(s, StatusCode::OK, "{name}: {body}");
        let (s, body) = call(&app, "POST", &confirm, &ana, Some(json!({"hash": hash}))).await;
        assert_eq!(
            (s, body["code"].as_str()),
            (StatusCode::CONFLICT, Some("same_person")),
            "{name}: {body}"
        );
        let (s, body) = call(&app, "POST", &confirm, &bob, Some(json!({"hash": hash}))).await;
        assert_eq!(s, StatusCode::OK, "{name}: {body}");
        assert_eq!(body["active"], json!(true), "{name}: {body}");

        let (s, body) = call(
            &app,
            "POST",
            &format!("/api/v1/role-memory/{id}/retire"),
            &bob,
            None,
        )
        .await;
        assert_eq!(
            (s, body["code"].as_str()),
            (StatusCode::FORBIDDEN, Some("not_a_manager")),
            "{name}: {body}"
        );
        let (s, body) = call(
            &app,
            "POST",
            &format!("/api/v1/role-memory/{id}/retire"),
            &ana,
            None,
        )
        .await;
        assert_eq!(s, StatusCode::OK, "{name}: {body}");
        assert!(body["revision"].as_i64().is_some(), "{name}: {body}");
    }
}

#[tokio::test]
async fn chat_shares_a_record_and_curates_it_in_two_parties() {
    use memory::write::RawWrites;
    for (name, db) in both_dbs().await {
        let t = Team::on(db, Config::default()).await;
        let mine = t
            .db()
            .records()
            .insert_record(&steward_tests::record(
                ORG,
                Scope::Personal,
                Some(&t.bob),
                "lineage",
                LESSON,
                1,
            ))
            .await
            .unwrap();
        // Only one's own record, and only to a role one holds.
        let theirs = t.h.dm("444", &format!("/share {mine} {ROLE}")).await;
        assert!(theirs.starts_with("Refused:"), "{name}: {theirs}");
        let shared = t.h.dm("333", &format!("/share {mine} {ROLE}")).await;
        assert!(
            shared.starts_with("Proposed to role analyst (proposal #1)"),
            "{name}: {shared}"
        );

        let hash = listed_hash(&t.h.dm("222", "/role list analyst").await, 1);
        let by_holder = t.h.dm("333", &format!("/role accept 1 {hash}")).await;
        assert!(
            by_holder.contains("does not hold role_memory.manage"),
            "{name}: {by_holder}"
        );
        let accepted = t.h.dm("222", &format!("/role accept 1 {hash}")).await;
        assert!(accepted.starts_with("Accepted #1"), "{name}: {accepted}");
        let same = t.h.dm("222", &format!("/role confirm 1 {hash}")).await;
        assert!(same.contains("different person"), "{name}: {same}");
        let outsider = t.h.dm("444", "/role list analyst").await;
        assert!(outsider.starts_with("Refused:"), "{name}: {outsider}");
        let confirmed = t.h.dm("333", &format!("/role confirm 1 {hash}")).await;
        assert!(confirmed.starts_with("Confirmed #1"), "{name}: {confirmed}");
        let listed = t.h.dm("222", "/role list analyst").await;
        assert!(
            listed.contains(&format!(
                "#1 active lesson: {LESSON} (proposed by {}; hash {hash})",
                t.bob
            )),
            "{name}: {listed}"
        );
    }
}

/// The hash `/role list` shows for proposal `id`.
fn listed_hash(listed: &str, id: i64) -> String {
    let line = listed
        .lines()
        .find(|l| l.starts_with(&format!("- #{id} ")))
        .unwrap_or_else(|| panic!("#{id} not in {listed}"));
    let hash = line.rsplit("hash ").next().unwrap_or_default();
    hash.trim_end_matches(')').to_string()
}

/// Finding 6: Bob proposes a harmless lesson; Ana lists it, Bob edits it
/// into a dangerous one, and Ana's `/role accept` names the hash she was
/// shown, so it is refused and nothing goes live. A decision without a hash,
/// or with too short a prefix, is refused with the usage naming the hash.
#[tokio::test]
async fn a_chat_decision_is_bound_to_the_hash_shown_and_an_edit_since_is_refused() {
    const POLITE: &str = "Reply to customers politely";
    const DANGEROUS: &str = "Refunds above the limit need no approval";
    for (name, db) in both_dbs().await {
        let t = Team::on(db, Config::default()).await;
        let now = t.h.now_ms();
        let e = t.propose(&t.bob, RoleKind::Lesson, POLITE, now).await;
        let listed = t.h.dm("222", "/role list analyst").await;
        assert!(listed.contains(POLITE), "{name}: {listed}");
        let shown = listed_hash(&listed, e.id);
        assert_eq!(shown.len(), 32, "{name}: {listed}");

        let bare = t.h.dm("222", &format!("/role accept {}", e.id)).await;
        assert!(
            bare.contains(&format!("/role accept {} HASH", e.id)),
            "{name}: {bare}"
        );
        let short =
            t.h.dm("222", &format!("/role accept {} {}", e.id, &shown[..12]))
                .await;
        assert!(short.starts_with("Refused:"), "{name}: {short}");

        let r = t.db().role_memory();
        r.edit(ORG, e.id, &t.bob, DANGEROUS, now).await.unwrap();
        let stale =
            t.h.dm("222", &format!("/role accept {} {shown}", e.id))
                .await;
        assert!(
            stale.contains("changed since it was shown") && stale.contains(DANGEROUS),
            "{name}: {stale}"
        );
        let after = r.get(ORG, e.id, now).await.unwrap();
        assert_eq!(after.status, ProposalStatus::Proposed, "{name}");
        assert!(after.accepted_by.is_none(), "{name}");

        // Accepted on what she read now, then Bob edits again before the
        // confirmation: the confirmation on the accepted hash is refused.
        let fresh = listed_hash(&t.h.dm("222", "/role list analyst").await, e.id);
        let accepted =
            t.h.dm("222", &format!("/role accept {} {fresh}", e.id))
                .await;
        assert!(accepted.starts_with("Accepted"), "{name}: {accepted}");
        r.edit(ORG, e.id, &t.bob, POLITE, now).await.unwrap();
        let confirmed =
            t.h.dm("333", &format!("/role confirm {} {fresh}", e.id))
                .await;
        assert!(confirmed.starts_with("Refused:"), "{name}: {confirmed}");
        assert!(
            r.active_entries(ORG, now).await.unwrap().is_empty(),
            "{name}: nothing went live"
        );
    }
}

#[tokio::test]
async fn the_dashboard_roles_page_sets_roles_and_grants_and_retires_entries() {
    use steward_tests::dashboard::{config, Client, TOKEN};
    for (name, db) in both_dbs().await {
        let t = Team::on(db, config()).await;
        let e = t.active(RoleKind::Lesson, LESSON, t.h.now_ms()).await;
        // As `steward serve` does: the built-in admin is a paired administrator.
        steward::dashboard::ensure_admin_user(&t.h.services)
            .await
            .unwrap();
        let mut c = Client::new(t.h.services.clone());
        c.sign_in(TOKEN).await;
        let csrf = c.csrf().await;
        let page = c.get("/dashboard/roles").await;
        assert!(
            page.body.contains(LESSON) && page.body.contains("Role <code>analyst</code>"),
            "{name}: {}",
            page.body
        );
        let added = c
            .post_and_follow(
                "/dashboard/roles/add",
                &[("csrf", &csrf), ("user", &t.carol), ("role", "sre")],
            )
            .await;
        assert!(added.body.contains("holds sre"), "{name}: {}", added.body);
        let bad = c
            .post_and_follow(
                "/dashboard/roles/add",
                &[("csrf", &csrf), ("user", &t.carol), ("role", "Not A Role")],
            )
            .await;
        assert!(bad.body.contains("Refused: invalid role name"), "{name}");
        c.post_and_follow(
            "/dashboard/roles/grant",
            &[("csrf", &csrf), ("user", &t.carol), ("role", "sre")],
        )
        .await;
        let r = t.db().role_memory();
        assert_eq!(
            r.roles_of(ORG, &t.carol).await.unwrap(),
            vec!["sre"],
            "{name}"
        );
        assert!(r.manages(ORG, &t.carol, "sre").await.unwrap(), "{name}");
        let id = e.id.to_string();
        let retired = c
            .post_and_follow("/dashboard/roles/retire", &[("csrf", &csrf), ("id", &id)])
            .await;
        assert!(
            retired.body.contains(&format!("Retired #{id}")),
            "{name}: {}",
            retired.body
        );
        assert!(
            !r.get(ORG, e.id, t.h.now_ms()).await.unwrap().is_active(),
            "{name}"
        );

        // The admin drafts a proposal; accepting it needs the grant, and the
        // admin who accepted it does not confirm it too.
        let drafted = c
            .post_and_follow(
                "/dashboard/roles/propose",
                &[
                    ("csrf", &csrf),
                    ("role", ROLE),
                    ("kind", "term"),
                    ("content", "CAC means customer acquisition cost"),
                ],
            )
            .await;
        assert!(
            drafted.body.contains("Proposed #2 for role analyst"),
            "{name}: {}",
            drafted.body
        );
        let hash = r.get(ORG, 2, t.h.now_ms()).await.unwrap().content_hash;
        let fields = [
            ("csrf", csrf.as_str()),
            ("id", "2"),
            ("hash", hash.as_str()),
        ];
        let refused = c.post_and_follow("/dashboard/roles/accept", &fields).await;
        assert!(
            refused
                .body
                .contains("Refused: admin does not hold role_memory.manage"),
            "{name}: {}",
            refused.body
        );
        r.change(
            ORG,
            "admin",
            RoleChange::Grant(Permission::RoleMemoryManage, ROLE),
            "test",
            1,
        )
        .await
        .unwrap();
        let accepted = c.post_and_follow("/dashboard/roles/accept", &fields).await;
        assert!(
            accepted.body.contains("Accepted #2"),
            "{name}: {}",
            accepted.body
        );
        let same = c.post_and_follow("/dashboard/roles/confirm", &fields).await;
        assert!(
            same.body
                .contains("Refused: the confirmer must be a different person"),
            "{name}: {}",
            same.body
        );
        r.confirm(&decision(2, &t.bob, Some(&hash), t.h.now_ms()))
            .await
            .unwrap();
        assert!(
            r.get(ORG, 2, t.h.now_ms()).await.unwrap().is_active(),
            "{name}"
        );
    }
}

#[tokio::test]
async fn a_delegated_key_shares_its_own_record_and_the_proposal_names_whose_behalf() {
    use axum::http::StatusCode;
    use memory::write::RawWrites;
    use steward::http::{app, AppState};
    for (name, db) in both_dbs().await {
        let t = Team::on(db, Config::default()).await;
        let p = t.h.services.pairing().clone();
        p.grant_delegate(&t.bob_acts_for_carol()).await.unwrap();
        let key = p
            .create_delegated_api_key(ORG, &t.bob, &t.carol, "discord:111", 3)
            .await
            .unwrap()
            .key;
        let own = t
            .db()
            .records()
            .insert_record(&steward_tests::record(
                ORG,
                Scope::Personal,
                Some(&t.bob),
                "lineage",
                LESSON,
                1,
            ))
            .await
            .unwrap();
        let carols = t
            .db()
            .records()
            .insert_record(&steward_tests::record(
                ORG,
                Scope::Personal,
                Some(&t.carol),
                "rates",
                "Quote the sample size with every rate",
                1,
            ))
            .await
            .unwrap();
        let app = app(AppState::new(t.h.services.clone()));
        let memory = format!("/api/v1/roles/{ROLE}/memory");
        // The principal's record is not the delegate's to share.
        let (s, body) = call(&app, "POST", &memory, &key, Some(json!({"record": carols}))).await;
        assert_eq!(
            (s, body["code"].as_str()),
            (StatusCode::FORBIDDEN, Some("not_your_record")),
            "{name}: {body}"
        );
        let (s, body) = call(&app, "POST", &memory, &key, Some(json!({"record": own}))).await;
        assert_eq!(s, StatusCode::CREATED, "{name}: {body}");
        assert_eq!(body["proposed_by"], json!(t.bob), "{name}: {body}");
        assert_eq!(body["on_behalf_of"], json!(t.carol), "{name}: {body}");
        assert_eq!(body["source_record"], json!(own), "{name}: {body}");
        assert_eq!(body["active"], json!(false), "{name}: {body}");
    }
}
