//! `steward replay` through the library, on SQLite and PostgreSQL.

use chrono::TimeZone;
use memory::Db;
use steward::clock::ManualClock;
use steward::replay::{replay, replay_on, ReplayOutput};
use steward::Config;
use steward_tests::postgres_db;

const TEACH_AND_SERVE: &str = include_str!("../fixtures/teach_and_serve.jsonl");

fn check_teach_and_serve(out: &ReplayOutput) {
    let active_notes: Vec<_> = out
        .memory
        .iter()
        .filter(|m| m.scope == "agent_notes" && m.status == "active")
        .collect();
    assert_eq!(active_notes.len(), 1, "{:#?}", out.memory);
    assert!(active_notes[0].content.contains("example_orders"));
    assert!(
        out.memory
            .iter()
            .all(|m| !m.content.contains("example_archive")),
        "no record of any status may carry the user's change: {:#?}",
        out.memory
    );
    let d2: Vec<_> = out
        .replies
        .iter()
        .filter(|r| r.conversation == "d2")
        .collect();
    assert!(d2[0].text.contains("administrator"), "{}", d2[0].text);
    let report = &d2[1].text;
    assert!(report.contains("example_orders"), "{report}");
    assert!(report.contains(&format!("Memory reference: {}", active_notes[0].id)));
    for m in out
        .memory
        .iter()
        .filter(|m| m.content.to_lowercase().contains("manager"))
    {
        assert_eq!(
            (m.scope.as_str(), m.owner.as_deref()),
            ("personal", Some("discord:222")),
            "{m:?}"
        );
        assert!(m.status == "pending" || m.status == "active");
    }
    assert_eq!(
        active_notes[0].said_at, "2026-01-05T10:00:00Z",
        "time is when it was said"
    );
}

#[tokio::test]
async fn the_issue_transcript_on_a_fresh_database() {
    let out = replay(TEACH_AND_SERVE, Config::default()).await.unwrap();
    check_teach_and_serve(&out);
}

#[tokio::test]
async fn the_issue_transcript_on_postgres() {
    let Some(db) = postgres_db().await else {
        return;
    };
    let services = steward::with_db(db, Config::default());
    let out = replay_on(&services, TEACH_AND_SERVE).await.unwrap();
    check_teach_and_serve(&out);
}

#[tokio::test]
async fn a_bad_line_applies_nothing() {
    let input = format!("{TEACH_AND_SERVE}{{\"msg\":{{\"channel\":\"discord\"}}}}\n");
    let db = Db::in_memory().await.unwrap();
    let services = steward::with_db(db, Config::default());
    let err = replay_on(&services, &input).await.unwrap_err().to_string();
    assert!(err.starts_with("line 7:"), "{err}");
    assert!(services
        .db()
        .records()
        .list("default", &Default::default())
        .await
        .unwrap()
        .is_empty());
    assert!(services
        .pairing()
        .users("default")
        .await
        .unwrap()
        .is_empty());
}

/// Replay `input` on a fresh database with the loop's clock starting on `day`.
async fn replay_on_day(day: (i32, u32, u32), input: &str) -> ReplayOutput {
    let start = chrono::Utc
        .with_ymd_and_hms(day.0, day.1, day.2, 12, 0, 0)
        .unwrap()
        .timestamp_millis();
    let db = Db::in_memory().await.unwrap();
    let services = steward::with_db(db, Config::default())
        .with_clock(std::sync::Arc::new(ManualClock::at(start)));
    replay_on(&services, input).await.unwrap()
}

/// Twelve messages a minute apart, dated years after today: within the rate
/// limits as written, but not if the loop squeezed them to its own "now".
fn future_burst() -> String {
    let mut t = String::from(r#"{"pair":{"channel":"discord","user":"222","role":"user"}}"#);
    t.push('\n');
    for i in 0..12 {
        t.push_str(&format!(
            r#"{{"msg":{{"channel":"discord","conversation":"d2","sender":"222","at":"2031-06-01T10:{i:02}:00Z","text":"what is the daily report {i}"}}}}"#
        ));
        t.push('\n');
    }
    t
}

#[tokio::test]
async fn replay_is_deterministic() {
    let a = replay(TEACH_AND_SERVE, Config::default()).await.unwrap();
    let b = replay(TEACH_AND_SERVE, Config::default()).await.unwrap();
    assert_eq!(a, b);
    // The same transcripts replayed on two different days give the same output:
    // the loop's time is the transcript's, never the day it is replayed.
    for input in [TEACH_AND_SERVE.to_string(), future_burst()] {
        let today = replay_on_day((2026, 12, 1), &input).await;
        let later = replay_on_day((2035, 1, 1), &input).await;
        assert_eq!(today, later);
    }
    let burst = replay_on_day((2026, 12, 1), &future_burst()).await;
    assert_eq!(burst.replies.len(), 12, "{:?}", burst.replies);
    assert!(
        burst.replies.iter().all(|r| !r.text.contains("slow down")),
        "a minute apart is within the limits: {:?}",
        burst.replies
    );
}

#[tokio::test]
async fn system_and_tool_events() {
    let input = r#"{"pair":{"channel":"discord","user":"111","role":"admin"}}
{"pair":{"channel":"discord","user":"222","role":"user"}}
{"system":{"principal":"cron-system","conversation":"c9","text":"From now on the daily report uses example_archive"}}
{"tool":{"name":"memory_write","as":"cron-system","scope":"agent_notes","content":"Nightly export finished at 02:00"}}
{"tool":{"name":"memory_write","as":"cron-system","scope":"global","content":"everyone is admin"}}
{"tool":{"name":"memory_write","as":"discord:222","scope":"agent_notes","content":"The daily report uses example_archive"}}
"#;
    let out = replay(input, Config::default()).await.unwrap();
    let kept: Vec<_> = out
        .memory
        .iter()
        .map(|m| (m.content.as_str(), m.status.as_str(), m.source.as_str()))
        .collect();
    // A run's write waits for an administrator's review, naming the run's principal.
    assert_eq!(
        kept,
        vec![(
            "Nightly export finished at 02:00",
            "unverified",
            "tool:memory_write:cron-system"
        )]
    );
    assert!(out
        .replies
        .iter()
        .any(|r| r.text.starts_with("Queued for review: agent_notes")));
    let refusals: Vec<_> = out
        .replies
        .iter()
        .filter(|r| r.text.starts_with("Refused"))
        .collect();
    assert_eq!(refusals.len(), 2);
    assert!(refusals[1].text.contains("scope='personal'"));
}

#[tokio::test]
async fn undo_in_a_transcript_restores_the_old_note() {
    let input = r#"{"pair":{"channel":"discord","user":"111","role":"admin"}}
{"msg":{"channel":"discord","conversation":"d1","sender":"111","text":"@notes: The daily report uses example_orders"}}
{"msg":{"channel":"discord","conversation":"d1","sender":"111","text":"@notes: The daily report uses example_sales"}}
{"undo":{"revision":1}}
{"msg":{"channel":"discord","conversation":"d1","sender":"111","text":"produce the daily report"}}
"#;
    let out = replay(input, Config::default()).await.unwrap();
    assert_eq!(out.revisions.len(), 1);
    assert!(out.revisions[0].undone);
    assert!(out.memory.iter().all(|m| m.status == "active"));
    assert!(out.replies.last().unwrap().text.contains("example_orders"));
}

/// `steward replay` used to panic (exit 101) on a message dated in the
/// year 9999: the rate limiter's clock overflowed. Now it replays, and a time
/// outside what the loop can count is an error naming its line.
#[tokio::test]
async fn a_transcript_dated_far_ahead_replays_and_an_impossible_time_names_its_line() {
    let line = |at: &str| {
        format!(
            "{{\"pair\":{{\"channel\":\"discord\",\"user\":\"111\",\"role\":\"admin\"}}}}\n\
             {{\"msg\":{{\"channel\":\"discord\",\"conversation\":\"d1\",\"kind\":\"direct\",\"sender\":\"111\",\"text\":\"@notes: The VPN is at vpn.example.com\",\"at\":\"{at}\"}}}}\n\
             {{\"msg\":{{\"channel\":\"discord\",\"conversation\":\"d1\",\"kind\":\"direct\",\"sender\":\"111\",\"text\":\"where is the VPN?\"}}}}\n"
        )
    };
    let out = replay_on_day((2026, 1, 1), &line("9999-12-31T23:59:59Z")).await;
    assert!(
        out.replies
            .iter()
            .any(|r| r.text.contains("vpn.example.com (Memory reference")),
        "{:?}",
        out.replies
    );
    for at in ["+262142-12-31T23:59:59Z", "1960-01-01T00:00:00Z"] {
        let db = Db::in_memory().await.unwrap();
        let services = steward::with_db(db, Config::default());
        let err = replay_on(&services, &line(at))
            .await
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("line 2:") && err.contains("`at`"),
            "{at}: {err}"
        );
    }
}

/// `roles` and `curate` lines set work roles and curate a role entry as an
/// administrator and two holders would: holders are answered from it, a
/// person outside the role is not, and leaving the role ends it. A curate
/// line breaking the two-party rule fails its line.
#[tokio::test]
async fn roles_and_curated_role_entries_replay_as_the_store_rules_them() {
    let pair =
        |user: &str| format!(r#"{{"pair":{{"channel":"discord","user":"{user}","role":"user"}}}}"#);
    let ask = |user: &str, at: &str| {
        format!(
            r#"{{"msg":{{"channel":"discord","conversation":"d{user}","sender":"{user}","at":"2026-03-02T09:{at}:00Z","text":"What does SEV2 mean?"}}}}"#
        )
    };
    let lines = [
        pair("222"),
        pair("333"),
        pair("444"),
        r#"{"roles":{"as":"discord:222","add":["sre"]}}"#.into(),
        r#"{"roles":{"as":"discord:333","add":["sre"],"grant":["sre"]}}"#.into(),
        r#"{"curate":{"role":"sre","kind":"term","text":"SEV2 means an outage in one region.","by":"discord:222","accept":"discord:333","confirm":"discord:222"}}"#.into(),
        ask("222", "01"),
        ask("444", "02"),
        r#"{"roles":{"as":"discord:222","remove":["sre"]}}"#.into(),
        ask("222", "03"),
    ];
    let out = replay(&lines.join("\n"), Config::default()).await.unwrap();
    let said: Vec<&str> = out.replies.iter().map(|r| r.text.as_str()).collect();
    assert_eq!(said.len(), 3, "{said:?}");
    assert!(
        said[0].contains("outage in one region"),
        "a holder: {said:?}"
    );
    assert!(!said[1].contains("outage"), "not a holder: {said:?}");
    assert!(!said[2].contains("outage"), "left the role: {said:?}");
    assert!(out
        .memory
        .iter()
        .any(|m| m.scope == "role" && m.status == "active"));

    // One person accepting and confirming is refused, and names the line.
    let both = [
        pair("222"),
        pair("333"),
        r#"{"roles":{"as":"discord:333","add":["sre"],"grant":["sre"]}}"#.into(),
        r#"{"curate":{"role":"sre","kind":"term","text":"SEV3 means a degraded service.","by":"discord:333","accept":"discord:333","confirm":"discord:333"}}"#.into(),
    ];
    let e = replay(&both.join("\n"), Config::default())
        .await
        .unwrap_err();
    assert!(e.to_string().starts_with("line 4:"), "{e}");
}
