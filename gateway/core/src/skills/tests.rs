use super::learn::corrected_exchange;
use super::*;
use memory::skill::SkillStatus;

fn correction(id: i64, conversation: &str, task: &str, rule: &str) -> Correction {
    Correction {
        id,
        org: "o".into(),
        agent: "a".into(),
        conversation: conversation.into(),
        message_id: id * 10,
        task_message_id: id * 10 - 2,
        sender: "u".into(),
        task: task.into(),
        rule: rule.into(),
        used_id: 0,
        revision_id: 0,
        at: 0,
    }
}

#[test]
fn requests_of_one_kind_group_and_others_do_not() {
    let key = |t: &str| key_words(t);
    assert!(same_task(
        &key("Send me the daily report"),
        &key("Can I get the daily report for yesterday?")
    ));
    assert!(!same_task(
        &key("Send me the daily report"),
        &key("What's in the weekly report?")
    ));
    assert!(!same_task(
        &key("Send me the daily report"),
        &key("Where is the build server?")
    ));
}

/// Corrections kept before the screens (issue 45, finding 7) are no
/// steps, and a request holding an e-mail address names no skill.
#[test]
fn a_draft_drops_rules_and_requests_that_fail_the_screens() {
    let all = [
        correction(
            1,
            "c1",
            "daily report for dana.reyes@example.com",
            "Skip the approval step",
        ),
        correction(2, "c1", "Send me the daily report", "Leave refunds out"),
        correction(
            3,
            "c2",
            "the daily report for today",
            "Use sudo for the export",
        ),
        correction(
            4,
            "c2",
            "the daily report today",
            "Call +1 415 555 0100 first",
        ),
    ];
    let (slug, description, body) = draft(&all.iter().collect::<Vec<_>>(), None);
    assert_eq!(slug, "daily-report");
    assert!(!description.contains("example.com"), "{description}");
    assert_eq!(steps(&body), ["Leave refunds out"]);
}

#[test]
fn a_group_is_ready_with_enough_corrections_from_two_conversations() {
    let all = [
        correction(1, "c1", "Send me the daily report", "Leave refunds out"),
        correction(2, "c1", "daily report please", "Group it by region"),
        correction(3, "c2", "the daily report for today", "Leave refunds out"),
        correction(4, "c2", "weekly digest please", "Mention the owner"),
    ];
    let one_conversation = group(&all[..2], &all[1]);
    assert_eq!(one_conversation.len(), 2);
    assert!(!ready(&one_conversation, 2));
    let two = group(&all, &all[2]);
    assert_eq!(two.len(), 3);
    assert!(ready(&two, 2));
    assert!(!ready(&two, 4));
    let (slug, description, body) = draft(&two, None);
    assert_eq!(slug, "daily-report");
    assert!(description.contains("daily report"), "{description}");
    assert_eq!(steps(&body), ["Leave refunds out", "Group it by region"]);
}

#[test]
fn a_revision_keeps_its_base_steps_and_adds_new_rules_once() {
    let base = SkillRevision {
        id: 7,
        slug: "daily-report".into(),
        body: "When asked:\n\n- Leave refunds out".into(),
        ..a_revision()
    };
    let c = [
        correction(5, "c3", "daily report", "leave refunds out"),
        correction(6, "c4", "daily report", "State the date range"),
    ];
    let refs: Vec<&Correction> = c.iter().collect();
    let (slug, description, body) = draft(&refs, Some(&base));
    assert_eq!((slug.as_str(), description.as_str()), ("daily-report", "d"));
    assert_eq!(steps(&body), ["Leave refunds out", "State the date range"]);
}

#[test]
fn steps_an_answer_left_out_are_added_once() {
    let r = SkillRevision {
        slug: "daily-report".into(),
        body: "When asked:\n\n- Leave refunds out\n- Include the date range".into(),
        ..a_revision()
    };
    let fact = "The daily report is built from example_orders.".to_string();
    let added = with_steps(fact.clone(), std::slice::from_ref(&r));
    assert!(added.starts_with(&fact), "{added}");
    assert!(
        added.contains("“daily-report” (rev 1)")
            && added.contains("- Leave refunds out")
            && added.contains("- Include the date range"),
        "{added}"
    );
    let followed = "Here it is, refunds left out, for the date range 1–2 May.".to_string();
    assert_eq!(with_steps(followed.clone(), &[r]), followed);
}

#[test]
fn a_skill_is_followed_only_when_the_request_holds_its_key_words() {
    let shelf: Vec<InForce> = ["daily-report", "weekly-digest", "onboarding"]
        .iter()
        .enumerate()
        .map(|(i, slug)| InForce {
            key: key_words(&slug.replace('-', " ")),
            revision: SkillRevision {
                id: i as i64,
                slug: slug.to_string(),
                ..a_revision()
            },
        })
        .collect();
    let slugs = |text: &str| -> Vec<String> {
        matching(&shelf, &key_words(text), 2)
            .into_iter()
            .map(|s| s.revision.slug)
            .collect()
    };
    assert_eq!(slugs("Send me the daily report"), ["daily-report"]);
    assert!(slugs("the report").is_empty());
    assert!(slugs("what is the weekly report?").is_empty());
    assert_eq!(slugs("how does onboarding work?"), ["onboarding"]);
    assert_eq!(
        slugs("daily report and the weekly digest and onboarding").len(),
        2
    );
}

/// An active revision with placeholder fields; tests here and in
/// `skill_md` override what they look at.
pub(super) fn a_revision() -> SkillRevision {
    SkillRevision {
        id: 0,
        org: "o".into(),
        skill_id: 1,
        agent: "a".into(),
        slug: String::new(),
        rev: 1,
        description: "d".into(),
        body: "- x".into(),
        hash: String::new(),
        status: SkillStatus::Active,
        base_id: 0,
        evidence: String::new(),
        proposed_by: String::new(),
        approved_by: None,
        approved_at: None,
        note: String::new(),
        created_at: 0,
    }
}

#[test]
fn only_a_persons_request_answered_just_before_is_corrected() {
    let line = |id, author: &str, sender: Option<&str>| StoredMessage {
        id,
        org: "o".into(),
        agent: "a".into(),
        channel: "cli".into(),
        conversation: "c".into(),
        conversation_kind: "direct".into(),
        author: author.into(),
        sender: sender.map(str::to_string),
        sender_role: None,
        text: "t".into(),
        said_at: 0,
    };
    let asked = [line(1, "person", Some("u")), line(2, "agent", None)];
    assert_eq!(corrected_exchange(&asked).map(|(t, _)| t.id), Some(1));
    // A webhook's payload is a system line: never a task.
    let webhook = [
        line(1, "system", Some("webhook-system")),
        line(2, "agent", None),
    ];
    assert!(corrected_exchange(&webhook).is_none());
    // An unpaired sender's request is nobody's.
    let unpaired = [line(1, "person", None), line(2, "agent", None)];
    assert!(corrected_exchange(&unpaired).is_none());
    // The line before is not an answer.
    assert!(corrected_exchange(&asked[..1]).is_none());
    // A statement kept or asked about was answered by its receipt or its
    // "Remember this?": there is no answer to correct.
    let said = |text: &str| {
        let mut told = [line(1, "person", Some("u")), line(2, "agent", None)];
        told[0].text = text.into();
        told
    };
    for statement in [
        "@notes: remote staff connect through vpn-gw2.corp.example.net",
        "Just so everybody knows: the all-hands is in the Aurora room.",
        "I prefer short answers.",
    ] {
        assert!(
            corrected_exchange(&said(statement)).is_none(),
            "{statement}"
        );
    }
    for request in ["Which VPN host do I use?", "Draft the release notes for v2"] {
        assert!(corrected_exchange(&said(request)).is_some(), "{request}");
    }
}
