//! `steward pairing roles|grant|ungrant` and `steward memory role …` as an
//! operator runs them: a role entry needs a manager's acceptance and another
//! holder's confirmation, the operator acting for each person with `--as`.

use std::path::Path;
use std::process::Command;

fn run(dir: &Path, args: &[&str]) -> (bool, String, String) {
    let mut c = Command::new(env!("CARGO_BIN_EXE_steward"));
    c.current_dir(dir);
    for (k, _) in std::env::vars() {
        if k.starts_with("STEWARD_") {
            c.env_remove(k);
        }
    }
    let out = c.args(args).output().unwrap();
    (
        out.status.success(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn role_memory_is_curated_by_two_people_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (who, name) in [("cli:ana", "Ana"), ("cli:bob", "Bob")] {
        let (ok, _, err) = run(
            d,
            &["pairing", "add", who, "--role", "user", "--name", name],
        );
        assert!(ok, "{err}");
    }
    let (ok, out, err) = run(d, &["pairing", "roles", "cli:ana", "--add", "analyst"]);
    assert!(ok, "{err}");
    assert!(out.contains("roles of cli:ana: analyst"), "{out}");
    let (ok, _, err) = run(d, &["pairing", "roles", "cli:bob", "--add", "analyst"]);
    assert!(ok, "{err}");
    let (ok, _, err) = run(d, &["pairing", "roles", "cli:bob", "--add", "Bad Role"]);
    assert!(!ok && err.contains("invalid role name"), "{err}");
    let grant = [
        "pairing",
        "grant",
        "cli:ana",
        "role_memory.manage",
        "--role",
        "analyst",
    ];
    let (ok, out, err) = run(d, &grant);
    assert!(ok, "{err}");
    assert!(
        out.contains("granted: cli:ana holds role_memory.manage for analyst"),
        "{out}"
    );

    let propose = [
        "memory",
        "role",
        "propose",
        "analyst",
        "--kind",
        "lesson",
        "Check the lineage of a metric before quoting its trend",
        "--as",
        "cli:bob",
    ];
    let (ok, out, err) = run(d, &propose);
    assert!(ok, "{err}");
    assert!(out.starts_with("proposed: 1"), "{out}");
    // A holder may not accept; the manager may not confirm her own acceptance.
    let (ok, _, err) = run(d, &["memory", "role", "accept", "1", "--as", "cli:bob"]);
    assert!(
        !ok && err.contains("does not hold role_memory.manage"),
        "{err}"
    );
    let (ok, _, err) = run(d, &["memory", "role", "accept", "1", "--as", "cli:ana"]);
    assert!(ok, "{err}");
    let (ok, _, err) = run(d, &["memory", "role", "confirm", "1", "--as", "cli:ana"]);
    assert!(!ok && err.contains("different person"), "{err}");
    let (ok, out, err) = run(d, &["memory", "role", "confirm", "1", "--as", "cli:bob"]);
    assert!(ok, "{err}");
    assert!(out.contains("confirmed: 1 by cli:bob"), "{out}");

    let (ok, out, _) = run(d, &["memory", "role", "list", "analyst"]);
    assert!(ok);
    assert!(
        out.contains("[1] active lesson: Check the lineage")
            && out.contains("accepted by cli:ana; confirmed by cli:bob"),
        "{out}"
    );
    let (ok, out, _) = run(d, &["memory", "role", "list", "analyst", "--json"]);
    assert!(ok);
    let listed: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(listed[0]["status"], "confirmed", "{out}");
    assert_eq!(listed[0]["record_status"], "active", "{out}");

    // The team export holds the role's active entries, by role.
    let out_dir = d.join("export");
    let (ok, _, err) = run(
        d,
        &["memory", "export", "--markdown", out_dir.to_str().unwrap()],
    );
    assert!(ok, "{err}");
    let team = std::fs::read_to_string(out_dir.join("MEMORY.md")).unwrap();
    assert!(
        team.contains("## role: analyst") && team.contains("Check the lineage of a metric"),
        "{team}"
    );

    // Retired, then undone through the revision it printed.
    let (ok, out, err) = run(d, &["memory", "role", "retire", "1"]);
    assert!(ok, "{err}");
    let revision = out
        .split("revisions undo ")
        .nth(1)
        .and_then(|s| s.split('`').next())
        .expect("a revision")
        .to_string();
    let (_, out, _) = run(d, &["memory", "role", "list", "analyst"]);
    assert!(out.contains("[1] retired"), "{out}");
    let (ok, _, err) = run(d, &["memory", "revisions", "undo", &revision]);
    assert!(ok, "{err}");
    let (_, out, _) = run(d, &["memory", "role", "list", "analyst"]);
    assert!(out.contains("[1] active"), "{out}");

    // The scrubber refuses an e-mail address before anything is stored.
    let leaky = [
        "memory",
        "role",
        "propose",
        "analyst",
        "--kind",
        "term",
        "Send questions to ana@example.com",
        "--as",
        "cli:bob",
    ];
    let (ok, _, err) = run(d, &leaky);
    assert!(!ok && err.contains("e-mail"), "{err}");

    let (ok, out, err) = run(
        d,
        &[
            "pairing",
            "ungrant",
            "cli:ana",
            "role_memory.manage",
            "--role",
            "analyst",
        ],
    );
    assert!(ok, "{err}");
    assert!(out.contains("ungranted: cli:ana"), "{out}");
    let (ok, out, _) = run(d, &["pairing", "roles", "cli:bob", "--remove", "analyst"]);
    assert!(ok && out.contains("roles of cli:bob: none"), "{out}");
}
