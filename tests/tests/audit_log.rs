//! The audit log as it is read back: what a request named (a path, a user
//! id) is stored alike on both databases and never emitted raw.

use steward_tests::both_dbs;

/// A NUL or an escape in an audited target was stored raw on SQLite (and
/// emitted by the audit page) and refused by PostgreSQL, failing the act.
#[tokio::test]
async fn control_characters_in_an_audited_name_are_stored_alike_and_shown_defused() {
    for (name, db) in both_dbs().await {
        let audit = db.audit();
        audit
            .append(
                "default",
                "api:key\u{0}1",
                "pairing.role",
                "discord:1\u{0}\u{1b}[31m",
                &memory::admin_text::AdminText::fixed("role\u{0} admin\nnext"),
                1,
            )
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let log = audit.log("default", 10).await.expect("log");
        let e = &log[0];
        for field in [&e.actor, &e.action, &e.target] {
            assert!(!field.chars().any(char::is_control), "{name}: {field:?}");
        }
        assert_eq!(e.target, "discord:1\u{FFFD}\u{FFFD}[31m", "{name}");
        assert_eq!(
            e.detail, "role\u{FFFD} admin\nnext",
            "{name}: a detail keeps its lines"
        );
        // Looked up by the name as it was given.
        let about = audit
            .about("default", "pairing.role", "discord:1\u{0}\u{1b}[31m")
            .await
            .expect("about");
        assert_eq!(about.len(), 1, "{name}");
    }
}
