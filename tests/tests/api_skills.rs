//! The REST API v1 (`steward::api`) in-process with `oneshot`, on both
//! databases: skills — review, approval, rejection and rollback, runs started
//! now and read back, and SKILL.md export and import.

use axum::http::StatusCode;
use memory::{Db, Role};
use serde_json::json;
use steward::config::Config;
use steward_tests::api::{api_on, ids, is_iso};
use steward_tests::{both_dbs, Harness};

// ------------------------------------------------------------ skills

/// A proposal of `slug` for the `default` agent, straight to the store.
async fn propose_skill(db: &Db, slug: &str, body: &str, at: i64) -> memory::skill::SkillRevision {
    db.skills()
        .propose(&memory::store::NewProposal {
            org: "default",
            agent: "default",
            slug,
            description: "How to answer requests for the daily report.",
            body,
            evidence: &[],
            corrections: &[],
            proposed_by: "test",
            at,
        })
        .await
        .unwrap()
}

async fn skill_status(db: &Db, id: i64) -> memory::skill::SkillStatus {
    db.skills().revision("default", id).await.unwrap().status
}

async fn in_force(db: &Db) -> Vec<i64> {
    db.skills()
        .active("default", "default")
        .await
        .unwrap()
        .iter()
        .map(|r| r.id)
        .collect()
}

#[tokio::test]
async fn admins_review_approve_reject_and_roll_back_skills() {
    use memory::skill::SkillStatus;
    for (name, db) in both_dbs().await {
        let a = api_on(db, Config::default()).await;
        let at = a.h.tick().timestamp_millis();
        let p1 = propose_skill(a.db(), "daily-report", "- Leave refunds out", at).await;
        // A user's key: 403 on every skills route, and nothing changes.
        for (method, path, body) in [
            ("GET", "/api/v1/skills".to_string(), None),
            ("GET", format!("/api/v1/skills/{}", p1.id), None),
            (
                "POST",
                format!("/api/v1/skills/{}/approve", p1.id),
                Some(json!({"hash": p1.hash})),
            ),
            (
                "POST",
                format!("/api/v1/skills/{}/reject", p1.id),
                Some(json!({})),
            ),
            (
                "POST",
                format!("/api/v1/skills/{}/rollback", p1.id),
                Some(json!({"to": null})),
            ),
        ] {
            let (s, e) = a.call(method, &path, Some(&a.bob), body).await;
            assert_eq!(s, StatusCode::FORBIDDEN, "{name}: {method} {path}: {e}");
            assert!(
                e["error"].as_str().unwrap().contains("admin"),
                "{name}: {e}"
            );
        }
        assert_eq!(
            skill_status(a.db(), p1.id).await,
            SkillStatus::Proposed,
            "{name}"
        );
        assert!(in_force(a.db()).await.is_empty(), "{name}");
        // Lists, by status, and the review.
        let (s, page) = a.get("/api/v1/skills", &a.admin).await;
        assert_eq!(
            (s, ids(&page)),
            (StatusCode::OK, vec![p1.id]),
            "{name}: {page}"
        );
        let (_, page) = a.get("/api/v1/skills?status=proposed", &a.admin).await;
        assert_eq!(ids(&page), vec![p1.id], "{name}");
        let (_, page) = a.get("/api/v1/skills?status=active", &a.admin).await;
        assert!(ids(&page).is_empty(), "{name}");
        let (s, e) = a.get("/api/v1/skills?status=bogus", &a.admin).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{name}: {e}");
        let (s, review) = a.get(&format!("/api/v1/skills/{}", p1.id), &a.admin).await;
        assert_eq!(s, StatusCode::OK, "{name}: {review}");
        assert_eq!(review["revision"]["hash"], p1.hash.as_str(), "{name}");
        assert!(
            review["diff"]
                .as_str()
                .unwrap()
                .contains("+- Leave refunds out"),
            "{name}: {review}"
        );
        // A stale hash: 409 naming why, and nothing changes.
        let approve = |id: i64| format!("/api/v1/skills/{id}/approve");
        let (s, e) = a
            .post(
                &approve(p1.id),
                &a.admin,
                json!({"hash": "00000000deadbeef"}),
            )
            .await;
        assert_eq!(s, StatusCode::CONFLICT, "{name}: {e}");
        assert!(
            e["error"].as_str().unwrap().contains("changed"),
            "{name}: {e}"
        );
        assert_eq!(
            skill_status(a.db(), p1.id).await,
            SkillStatus::Proposed,
            "{name}"
        );
        assert!(in_force(a.db()).await.is_empty(), "{name}");
        // The right hash (12 characters of it): in force.
        let (s, r) = a
            .post(&approve(p1.id), &a.admin, json!({"hash": &p1.hash[..12]}))
            .await;
        assert_eq!(s, StatusCode::OK, "{name}: {r}");
        assert_eq!(r["status"], "active", "{name}");
        assert_eq!(r["approved_by"], "discord:111", "{name}");
        assert_eq!(in_force(a.db()).await, vec![p1.id], "{name}");
        let (s, e) = a
            .post(&approve(p1.id), &a.admin, json!({"hash": p1.hash}))
            .await;
        assert_eq!(
            s,
            StatusCode::CONFLICT,
            "{name}: not proposed any more: {e}"
        );
        let audited = a
            .db()
            .audit()
            .about("default", "skill.approve", "skill:default/daily-report")
            .await
            .unwrap();
        assert_eq!(audited.len(), 1, "{name}");
        assert_eq!(audited[0].actor, "discord:111", "{name}");
        // rev 2 in force; rev 3 proposed against it.
        let p2 = propose_skill(
            a.db(),
            "daily-report",
            "- Leave refunds out\n- By region",
            at,
        )
        .await;
        let (s, _) = a
            .post(&approve(p2.id), &a.admin, json!({"hash": p2.hash}))
            .await;
        assert_eq!(s, StatusCode::OK, "{name}");
        let p3 = propose_skill(a.db(), "daily-report", "- By region", at).await;
        // Rollback (named by any revision of the skill): back to rev 1.
        let rollback = |id: i64| format!("/api/v1/skills/{id}/rollback");
        let (s, r) = a
            .post(&rollback(p3.id), &a.admin, json!({"to": null}))
            .await;
        assert_eq!(
            (s, r["id"].as_i64()),
            (StatusCode::OK, Some(p1.id)),
            "{name}: {r}"
        );
        assert_eq!(in_force(a.db()).await, vec![p1.id], "{name}");
        assert_eq!(
            skill_status(a.db(), p2.id).await,
            SkillStatus::Retired,
            "{name}"
        );
        // rev 3 was proposed against rev 2, no longer in force: stale.
        let (s, e) = a
            .post(&approve(p3.id), &a.admin, json!({"hash": p3.hash}))
            .await;
        assert_eq!(s, StatusCode::CONFLICT, "{name}: {e}");
        assert!(
            e["error"].as_str().unwrap().contains("another revision"),
            "{name}: {e}"
        );
        assert_eq!(in_force(a.db()).await, vec![p1.id], "{name}");
        // Rollback to a named revision; never to one not approved.
        let (s, r) = a
            .post(&rollback(p1.id), &a.admin, json!({"to": p2.id}))
            .await;
        assert_eq!(
            (s, r["id"].as_i64()),
            (StatusCode::OK, Some(p2.id)),
            "{name}: {r}"
        );
        assert_eq!(in_force(a.db()).await, vec![p2.id], "{name}");
        let (s, e) = a
            .post(&rollback(p1.id), &a.admin, json!({"to": p3.id}))
            .await;
        assert_eq!(s, StatusCode::CONFLICT, "{name}: {e}");
        // Reject: once.
        let (s, r) = a
            .post(
                &format!("/api/v1/skills/{}/reject", p3.id),
                &a.admin,
                json!({}),
            )
            .await;
        assert_eq!(
            (s, r["status"].as_str()),
            (StatusCode::OK, Some("rejected")),
            "{name}: {r}"
        );
        let (s, _) = a
            .post(
                &format!("/api/v1/skills/{}/reject", p3.id),
                &a.admin,
                json!({}),
            )
            .await;
        assert_eq!(s, StatusCode::CONFLICT, "{name}");
        // Unknown ids: 404; a malformed body: 400.
        for (method, path, body) in [
            ("GET", "/api/v1/skills/999999".to_string(), None),
            ("POST", approve(999999), Some(json!({"hash": "00000000"}))),
            (
                "POST",
                "/api/v1/skills/999999/reject".to_string(),
                Some(json!({})),
            ),
            ("POST", rollback(999999), Some(json!({}))),
            ("POST", rollback(p1.id), Some(json!({"to": 999999}))),
        ] {
            let (s, e) = a.call(method, &path, Some(&a.admin), body).await;
            assert_eq!(s, StatusCode::NOT_FOUND, "{name}: {method} {path}: {e}");
            assert!(e["error"].is_string(), "{name}: {e}");
        }
        let (s, e) = a.post(&approve(p1.id), &a.admin, json!({"hash": 5})).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{name}: {e}");
        // Pages follow `next`.
        let (_, page) = a.get("/api/v1/skills?limit=2", &a.admin).await;
        assert_eq!(ids(&page), vec![p3.id, p2.id], "{name}");
        assert_eq!(
            a.every_page("/api/v1/skills?limit=1").await,
            vec![p3.id, p2.id, p1.id],
            "{name}"
        );
    }
}

// ------------------------------------------------------------ runs

/// An admin runs an approved skill now: 201 with the finished run (principal
/// `sop-system`, trigger `on_demand`, started by that admin, answered, its
/// lines); it is listed and shown under /api/v1/runs; a user's key is 403 on
/// every runs route and starts nothing; an unknown skill and a bad delivery
/// target start nothing either; another organisation's admin sees no run of this one.
#[tokio::test]
async fn admins_run_a_skill_now_and_see_the_run_and_its_lines() {
    for (name, db) in both_dbs().await {
        let a = api_on(db, Config::default()).await;
        let at = a.h.tick().timestamp_millis();
        let p = propose_skill(a.db(), "daily-report", "- Leave refunds out", at).await;
        let (s, e) = a
            .post(
                &format!("/api/v1/skills/{}/approve", p.id),
                &a.admin,
                json!({"hash": p.hash}),
            )
            .await;
        assert_eq!(s, StatusCode::OK, "{name}: {e}");
        let runs = |db: Db| async move { db.runs().list("default", None, 100).await.unwrap() };
        // A user's key: 403 on all three routes, and no run starts.
        for (method, path, body) in [
            ("POST", "/api/v1/skills/daily-report/run", Some(json!({}))),
            ("POST", "/api/v1/skills/daily-report/run", None),
            ("GET", "/api/v1/runs", None),
            ("GET", "/api/v1/runs/1", None),
        ] {
            let (s, e) = a.call(method, path, Some(&a.bob), body).await;
            assert_eq!(s, StatusCode::FORBIDDEN, "{name}: {method} {path}: {e}");
            assert!(e["error"].as_str().unwrap().contains("admin"), "{e}");
        }
        assert!(runs(a.db().clone()).await.is_empty(), "{name}");
        // An unknown skill, one of another agent, a bad or unconfigured target: nothing runs.
        let (s, e) = a
            .post("/api/v1/skills/no-such-skill/run", &a.admin, json!({}))
            .await;
        assert_eq!(s, StatusCode::NOT_FOUND, "{name}: {e}");
        assert!(
            e["error"].as_str().unwrap().contains("no-such-skill"),
            "{name}: {e}"
        );
        let (s, e) = a
            .post(
                "/api/v1/skills/daily-report/run",
                &a.admin,
                json!({"agent": "ops"}),
            )
            .await;
        assert_eq!(s, StatusCode::NOT_FOUND, "{name}: {e}");
        for body in [
            json!({"deliver": "carrier-pigeon"}),
            json!({"deliver": "discord:123"}),
            json!({"deliver": "teams:ops"}),
            json!({"agent": "no spaces"}),
            json!({"unknown": 1}),
        ] {
            let (s, e) = a
                .post("/api/v1/skills/daily-report/run", &a.admin, body.clone())
                .await;
            assert_eq!(s, StatusCode::BAD_REQUEST, "{name}: {body}: {e}");
        }
        assert!(runs(a.db().clone()).await.is_empty(), "{name}");
        // Run it (the body may be left out): 201 with the finished run.
        let (s, run) = a
            .call(
                "POST",
                "/api/v1/skills/daily-report/run",
                Some(&a.admin),
                None,
            )
            .await;
        assert_eq!(s, StatusCode::CREATED, "{name}: {run}");
        let id = run["id"].as_i64().unwrap();
        for (field, want) in [
            ("name", "daily-report"),
            ("principal", "sop-system"),
            ("trigger", "on_demand"),
            ("started_by", "discord:111"),
            ("outcome", "answered"),
            ("skill", "daily-report"),
            ("deliver", "dashboard"),
            ("error", ""),
        ] {
            assert_eq!(run[field], want, "{name}: {field}: {run}");
        }
        assert_eq!(run["skill_rev"], 1, "{name}: {run}");
        assert_eq!(run["conversation"], format!("run:daily-report/{id}"));
        assert!(is_iso(&run["started_at"]) && is_iso(&run["finished_at"]));
        let lines = run["lines"].as_array().unwrap();
        assert_eq!(lines.len(), 2, "{name}: {run}");
        assert_eq!(lines[0]["author"], "system", "{name}: {run}");
        assert_eq!(lines[0]["sender"], "sop-system", "{name}: {run}");
        assert!(
            lines[0]["text"].as_str().unwrap().contains("daily-report"),
            "{name}: {run}"
        );
        assert_eq!(lines[1]["author"], "agent", "{name}: {run}");
        let answer = lines[1]["text"].as_str().unwrap();
        assert!(!answer.trim().is_empty(), "{name}: {run}");
        // Listed, newest first, without lines; shown with them.
        let (s, page) = a.get("/api/v1/runs", &a.admin).await;
        assert_eq!(
            (s, ids(&page)),
            (StatusCode::OK, vec![id]),
            "{name}: {page}"
        );
        let listed = &page["items"][0];
        assert_eq!(listed["principal"], "sop-system", "{name}");
        assert_eq!(listed["trigger"], "on_demand", "{name}");
        assert_eq!(listed["started_by"], "discord:111", "{name}");
        assert_eq!(listed["outcome"], "answered", "{name}");
        assert!(listed.get("lines").is_none(), "{name}: {listed}");
        let (_, page) = a.get("/api/v1/runs?name=daily-report", &a.admin).await;
        assert_eq!(ids(&page), vec![id], "{name}");
        let (_, page) = a.get("/api/v1/runs?name=weekly", &a.admin).await;
        assert!(ids(&page).is_empty(), "{name}: {page}");
        for bad in ["limit=0", "limit=501", "cursor=x", "bogus=1"] {
            let (s, e) = a.get(&format!("/api/v1/runs?{bad}"), &a.admin).await;
            assert_eq!(s, StatusCode::BAD_REQUEST, "{name}: {bad}: {e}");
        }
        let (s, shown) = a.get(&format!("/api/v1/runs/{id}"), &a.admin).await;
        assert_eq!(s, StatusCode::OK, "{name}: {shown}");
        assert_eq!(shown["started_by"], "discord:111", "{name}");
        assert!(
            shown["lines"]
                .as_array()
                .unwrap()
                .iter()
                .any(|l| l["author"] == "agent" && l["text"] == answer),
            "{name}: {shown}"
        );
        // A second run: pages follow `next`.
        let (s, second) = a
            .post(
                "/api/v1/skills/daily-report/run",
                &a.admin,
                json!({"deliver": "none"}),
            )
            .await;
        assert_eq!(s, StatusCode::CREATED, "{name}: {second}");
        assert_eq!(second["deliver"], "none", "{name}");
        let second = second["id"].as_i64().unwrap();
        assert_eq!(
            a.every_page("/api/v1/runs?limit=1").await,
            vec![second, id],
            "{name}"
        );
        // Audited as the admin who started it.
        let audited = a
            .db()
            .audit()
            .about("default", "run.start", &format!("run:daily-report/{id}"))
            .await
            .unwrap();
        assert_eq!(audited.len(), 1, "{name}");
        assert_eq!(audited[0].actor, "discord:111", "{name}");
        // Unknown: 404.
        let (s, e) = a.get("/api/v1/runs/999999", &a.admin).await;
        assert_eq!(s, StatusCode::NOT_FOUND, "{name}: {e}");
        // Another organisation's admin: 404 for this run, an empty list, and
        // this organisation's skill is not theirs to run.
        a.h.services
            .pairing()
            .add_user("other", "discord:999", "Olga", Role::Admin, "test", at)
            .await
            .unwrap();
        let olga =
            a.h.services
                .pairing()
                .create_api_key("other", "discord:999", "test", at)
                .await
                .unwrap()
                .key;
        let (s, e) = a.get(&format!("/api/v1/runs/{id}"), &olga).await;
        assert_eq!(s, StatusCode::NOT_FOUND, "{name}: {e}");
        let (s, page) = a.get("/api/v1/runs", &olga).await;
        assert_eq!(s, StatusCode::OK, "{name}: {page}");
        assert!(ids(&page).is_empty(), "{name}: {page}");
        let (s, e) = a
            .post("/api/v1/skills/daily-report/run", &olga, json!({}))
            .await;
        assert_eq!(s, StatusCode::NOT_FOUND, "{name}: {e}");
        assert!(a
            .db()
            .runs()
            .list("other", None, 10)
            .await
            .unwrap()
            .is_empty());
    }
}

/// SKILL.md out of one store and into another: the same slugs and hashes;
/// `allowed-tools` dropped with a warning; a bad file refuses the lot.
#[tokio::test]
async fn skills_export_and_import_as_skill_md() {
    use steward::skills::skill_md::{self, ImportTo, Imported};
    for (name, db) in both_dbs().await {
        let a = api_on(db, Config::default()).await;
        let at = a.h.tick().timestamp_millis();
        let admin = memory::Principal::Human {
            user_id: "operator (cli)".into(),
            name: "operator".into(),
            role: Role::Admin,
        };
        for (slug, body) in [
            (
                "daily-report",
                "When asked for the daily report:\n\n- Leave refunds out",
            ),
            ("weekly-digest", "- Mention the owner\n  - by name"),
        ] {
            let p = propose_skill(a.db(), slug, body, at).await;
            let r =
                a.h.services
                    .skills()
                    .approve("default", &admin, p.id, &p.hash, at)
                    .await;
            assert!(r.unwrap().is_ok(), "{name}");
        }
        let active = a.db().skills().active("default", "default").await.unwrap();
        let dir = tempfile::tempdir().unwrap();
        let written = skill_md::write_all(dir.path(), &active).unwrap();
        assert_eq!(written.len(), 2, "{name}");
        assert!(dir.path().join("daily-report/SKILL.md").is_file(), "{name}");
        let files = skill_md::load(dir.path()).unwrap();
        // Into a fresh store, approved: the same content, the same hashes.
        let other = Harness::new().await;
        let to = ImportTo {
            org: "default",
            agent: "default",
            proposed_by: "import (cli)",
            approve_as: Some(&admin),
            now: at,
        };
        let done = skill_md::import(other.db(), other.services.skills(), &to, &files)
            .await
            .unwrap();
        assert!(
            done.iter().all(|d| matches!(d, Imported::Approved(_))),
            "{name}: {done:?}"
        );
        let there = other
            .db()
            .skills()
            .active("default", "default")
            .await
            .unwrap();
        let key = |v: &[memory::skill::SkillRevision]| {
            v.iter()
                .map(|r| {
                    (
                        r.slug.clone(),
                        r.description.clone(),
                        r.body.clone(),
                        r.hash.clone(),
                    )
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(key(&there), key(&active), "{name}");
        assert_eq!(there[0].proposed_by, "import (cli)", "{name}");
        let approvals = other
            .db()
            .audit()
            .about("default", "skill.approve", "skill:default/daily-report")
            .await
            .unwrap();
        assert_eq!(approvals[0].actor, "operator (cli)", "{name}");
        // Into the store it came from: unchanged, nothing proposed.
        let before = a.db().skills().list("default", None).await.unwrap().len();
        let again = skill_md::import(a.db(), a.h.services.skills(), &to, &files)
            .await
            .unwrap();
        assert!(
            again.iter().all(|d| matches!(d, Imported::Unchanged(_))),
            "{name}"
        );
        assert_eq!(
            a.db().skills().list("default", None).await.unwrap().len(),
            before
        );
        // `allowed-tools`: kept without it, with a warning; proposed, not approved.
        let tools = dir.path().join("deploy-check");
        std::fs::create_dir(&tools).unwrap();
        std::fs::write(
            tools.join("SKILL.md"),
            "---\nname: deploy-check\ndescription: Check a deploy.\nallowed-tools: Bash(*)\n---\n- Look at the dashboard\n",
        )
        .unwrap();
        let files = skill_md::load(&tools.join("SKILL.md")).unwrap();
        assert!(files[0].warnings[0].contains("allowed-tools"), "{name}");
        let proposing = ImportTo {
            approve_as: None,
            ..to
        };
        let done = skill_md::import(a.db(), a.h.services.skills(), &proposing, &files)
            .await
            .unwrap();
        let Imported::Proposed(p) = &done[0] else {
            panic!("{name}: {done:?}")
        };
        assert_eq!(p.status, memory::skill::SkillStatus::Proposed, "{name}");
        assert!(
            !p.body.contains("Bash") && !p.description.contains("Bash"),
            "{name}"
        );
        // A bad name or a credential anywhere: every bad file named, nothing loaded.
        let before = a.db().skills().list("default", None).await.unwrap().len();
        for (dir_name, text) in [
            (
                "Bad_Name",
                "---\nname: Bad_Name\ndescription: d\n---\n- x\n",
            ),
            (
                "leaky",
                "---\nname: leaky\ndescription: d\n---\n- Log in with password: hunter22\n",
            ),
        ] {
            let d = dir.path().join(dir_name);
            std::fs::create_dir(&d).unwrap();
            std::fs::write(d.join("SKILL.md"), text).unwrap();
        }
        let errors = skill_md::load(dir.path()).unwrap_err();
        let said: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
        assert_eq!(said.len(), 2, "{name}: {said:?}");
        assert!(said[0].contains("Bad_Name/SKILL.md"), "{name}: {said:?}");
        assert!(
            said[1].contains("leaky/SKILL.md") && said[1].contains("credential"),
            "{name}: {said:?}"
        );
        assert!(!said[1].contains("hunter22"), "{name}");
        assert_eq!(
            a.db().skills().list("default", None).await.unwrap().len(),
            before,
            "{name}"
        );
    }
}
