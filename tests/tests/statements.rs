//! The statement-count guard: what each turn of a fixed transcript asks of
//! the database — statements, transactions, round trips — on SQLite and
//! PostgreSQL. A turn that reads or writes more than its expectation fails
//! here, whatever the machine's speed; a change that needs more changes the
//! expectation on purpose (and says why in `docs/benchmarks.md`).
//!
//! The counts are the whole process's (`memory::store::statement_count`), so
//! the turns here run one at a time, and nothing else runs in this binary.

use adapters::{ConversationKind, Inbound};
use memory::store::{statement_count, StatementCount};
use memory::{Backend, Db, Role};
use steward::Config;
use steward_tests::{postgres_db, sqlite_file_db, Harness};

/// The two halves share the process-wide counters: one at a time.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

const THREAD: &str = "19:ops@thread.tacv2;messageid=1";

/// A message in the team channel's thread, mentioning steward, with its
/// platform id (as the Teams adapter makes it).
fn said(h: &Harness, who: &str, id: &str, text: &str) -> Inbound {
    Inbound {
        org: h.org.clone(),
        agent: "default".into(),
        channel: "teams".into(),
        conversation: THREAD.into(),
        kind: ConversationKind::Group,
        sender: Some(format!("teams:{who}")),
        sender_name: who.into(),
        text: text.into(),
        platform_id: Some(id.into()),
        at: h.tick(),
        mentioned: true,
        answer: None,
        on_behalf_of: None,
    }
}

/// One turn, counted: its replies and what it asked of the database.
async fn counted(h: &Harness, msg: Inbound) -> (String, StatementCount) {
    let before = statement_count();
    let replies = h.turns.handle(&msg).await.expect("turn");
    let used = statement_count().since(before);
    (steward_tests::join(replies), used)
}

/// Per turn of the transcript: (turn, statements, transactions, round trips).
type Counts = Vec<(&'static str, u64, u64, u64)>;

/// The fixed transcript: set-up (not counted), then five turns, counted.
async fn transcript(db: Db) -> Counts {
    let h = Harness::on(db, Config::default());
    let pairing = h.services.pairing().clone();
    let at = h.now_ms();
    pairing
        .add_user(&h.org, "teams:boss", "Boss", Role::Admin, "test", at)
        .await
        .expect("admin");
    // Ann pairs with a code, as a person does: her first turn is owed the promises.
    let dm = Inbound {
        conversation: "a:ann".into(),
        kind: ConversationKind::Direct,
        ..said(&h, "ann", "pair-1", "/pair")
    };
    let code = steward_tests::join(h.turns.handle(&dm).await.expect("pair"));
    let code = code
        .split("pairing code is ")
        .nth(1)
        .and_then(|rest| rest.split('.').next())
        .expect("a pairing code")
        .to_string();
    pairing
        .approve(&h.org, &code, Role::User, "teams:boss", h.now_ms())
        .await
        .expect("approve");
    let noted = h
        .turns
        .handle(&said(
            &h,
            "boss",
            "n-1",
            "@notes: The alpha beta report is built from the sales table every Monday.",
        ))
        .await
        .expect("notes");
    assert!(!noted.is_empty());

    let mut counts = Counts::new();
    let question = "Produce the alpha beta report (m1)";
    let (first, used) = counted(&h, said(&h, "ann", "m-1", question)).await;
    assert!(
        first.contains("sales table"),
        "answered from the notes: {first}"
    );
    assert!(
        first.contains(steward::oversight::KEEP_PROMISE),
        "the first turn after /pair carries the promises: {first}"
    );
    counts.push((
        "first turn after /pair",
        used.statements,
        used.transactions,
        used.round_trips(),
    ));
    let promised = h
        .db()
        .audit()
        .about(&h.org, "oversight.promised", "teams:ann")
        .await
        .expect("audit");
    assert_eq!(promised.len(), 1, "the promise is audited with the reply");
    // The load benchmark's turn: a question answered from memory.
    let again = said(&h, "ann", "m-2", "Produce the alpha beta report (m2)");
    let (answer, used) = counted(&h, again.clone()).await;
    assert!(answer.contains("sales table") && !answer.contains(steward::oversight::KEEP_PROMISE));
    counts.push((
        "question answered from memory",
        used.statements,
        used.transactions,
        used.round_trips(),
    ));
    // The load benchmark's turn once its speaker is known: what the first
    // read keeps of them (roles, audit entries) stands, so it is not read.
    let (answer3, used) = counted(
        &h,
        said(&h, "ann", "m-2b", "Produce the alpha beta report (m3)"),
    )
    .await;
    assert!(answer3.contains("sales table"));
    counts.push((
        "question, its speaker known",
        used.statements,
        used.transactions,
        used.round_trips(),
    ));
    // The platform redelivers it: the stored reply, no second turn.
    let (retried, used) = counted(&h, again).await;
    assert_eq!(retried, answer, "a redelivery gets the stored reply");
    counts.push((
        "redelivery",
        used.statements,
        used.transactions,
        used.round_trips(),
    ));
    let (kept, used) = counted(
        &h,
        said(&h, "ann", "m-3", "remember that my desk is on floor 3"),
    )
    .await;
    assert!(kept.contains("personal memory"), "{kept}");
    counts.push((
        "remember that …",
        used.statements,
        used.transactions,
        used.round_trips(),
    ));
    let (unknown, used) = counted(
        &h,
        said(&h, "ann", "m-4", "What did Zed say about the plan?"),
    )
    .await;
    assert!(!unknown.is_empty());
    counts.push((
        "a question memory cannot answer",
        used.statements,
        used.transactions,
        used.round_trips(),
    ));
    // A typed yes to "Remember this?", in a direct conversation.
    let direct = |id: &str, text: &str| Inbound {
        conversation: "a:ann".into(),
        kind: ConversationKind::Direct,
        ..said(&h, "ann", id, text)
    };
    let asked = steward_tests::join(
        h.turns
            .handle(&direct("m-5", "I prefer tea"))
            .await
            .expect("asked"),
    );
    assert!(asked.contains("Remember this?"), "{asked}");
    let (yes, used) = counted(&h, direct("m-6", "yes")).await;
    assert!(
        yes.contains("Written: personal memory"),
        "the yes keeps the preference: {yes}"
    );
    counts.push((
        "a typed yes",
        used.statements,
        used.transactions,
        used.round_trips(),
    ));
    counts
}

/// What the transcript may ask of `backend`: change a figure here on
/// purpose, with the reason in `docs/benchmarks.md`.
fn expected(backend: Backend) -> Counts {
    match backend {
        Backend::Sqlite | Backend::Postgres => vec![
            // The question's 6, the promise's audit entry (in the reply's
            // transaction), two reads a process makes once (the common
            // tokens and the skills in force), and the speaker's roles and
            // audit entries, read once and kept (`store::messages::speakers`).
            ("first turn after /pair", 10, 2, 14),
            // The question's 6, and the speaker read again: the promise
            // audited at the first turn moved the people generation.
            ("question answered from memory", 7, 2, 11),
            // The first read; the message's group commit (seen mark, line);
            // the search and its records; the reply's group commit (line).
            ("question, its speaker known", 6, 2, 10),
            // The first read; the message and its stored reply.
            ("redelivery", 3, 0, 3),
            // The write path: dedupe, a transaction for the record and its
            // index entry, belief revision's two reads.
            ("remember that …", 10, 3, 16),
            // The question's 6, and the paired people, read when an answer
            // that cites nothing names someone (`TurnLoop::unknown_person`).
            ("a question memory cannot answer", 7, 2, 11),
            // The first read and the message's group commit; the proposals
            // waiting (read once, for the yes's language and to answer them);
            // the person's live records, on the reply language's subject
            // and on the proposal's (the conflicts asked, which are also
            // what the yes replaces); the line the question was asked at;
            // the conflicts' audit entries; the keep (status, index,
            // vectors, belief revision's reads); the reply's group commit.
            ("a typed yes", 16, 3, 22),
        ],
    }
}

/// Each turn of the transcript asks the database what its expectation says.
async fn a_turn_asks_the_database_only_what_it_is_expected_to(db: Db) {
    let backend = db.backend();
    let counts = transcript(db).await;
    assert_eq!(
        counts,
        expected(backend),
        "statements, transactions and round trips per turn on {backend:?} changed \
         (turn, statements, transactions, round trips); if on purpose, change `expected`"
    );
}

// As `steward_tests::on_both_databases!`, but each half holds the counters
// from opening its database on (which runs statements too).
mod sqlite {
    #[tokio::test]
    async fn a_turn_asks_the_database_only_what_it_is_expected_to() {
        let _alone = super::ONE_AT_A_TIME.lock().await;
        let (db, _dir) = super::sqlite_file_db().await;
        assert_eq!(db.backend(), super::Backend::Sqlite);
        super::a_turn_asks_the_database_only_what_it_is_expected_to(db).await;
    }
}

mod postgres {
    #[tokio::test]
    async fn a_turn_asks_the_database_only_what_it_is_expected_to() {
        let _alone = super::ONE_AT_A_TIME.lock().await;
        let Some(db) = super::postgres_db().await else {
            return;
        };
        assert_eq!(db.backend(), super::Backend::Postgres);
        super::a_turn_asks_the_database_only_what_it_is_expected_to(db).await;
    }
}
