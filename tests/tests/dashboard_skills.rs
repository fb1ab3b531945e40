//! The dashboard's Skills and Runs pages in-process (`oneshot`): a
//! proposal's diff and evidence, approval of the shown hash only, rejection,
//! rollback, suspension, bodies shown as text, and "Run now".

use axum::http::StatusCode;
use memory::skill::SkillStatus;
use memory::store::NewProposal;
use steward_tests::dashboard::field_value;
use steward_tests::dashboard::{
    approve_skill, flash, in_force, now, propose_skill, signed_in, REPORT_V1, REPORT_V2,
};

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
