//! `steward pairing …`, `api-key …` and `delegate …` as an operator runs them:
//! linked identities, people paired directly, keys listed and revoked, and
//! keys acting for someone only with their grant.

// The 100-line limit is for production code; a scenario reads top to bottom.
#![allow(clippy::too_many_lines)]

mod common;
use common::{chat, run, steward};

#[test]
fn a_second_identity_links_to_one_person() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    chat(d, "admin", "@notes: The VPN is at vpn.example.com\n");
    let asked = chat(d, "bob", "/pair\n");
    let code = asked.split("code is ").nth(1).expect("a code")[..8].to_string();
    assert!(steward(d)
        .args(["pairing", "approve", &code])
        .output()
        .unwrap()
        .status
        .success());
    chat(d, "bob", "remember that my locker is 12\n");
    // Bob on another channel is a stranger until an operator links the identity.
    assert!(chat(d, "web:bob", "what do you remember about me?\n").contains("/pair"));
    let unknown = steward(d)
        .args(["pairing", "link", "web:bob", "--user", "cli:nobody"])
        .output()
        .unwrap();
    assert!(
        !unknown.status.success(),
        "linking to an unpaired user is refused"
    );
    let linked = steward(d)
        .args(["pairing", "link", "web:bob", "--user", "cli:bob"])
        .output()
        .unwrap();
    assert!(
        linked.status.success(),
        "{}",
        String::from_utf8_lossy(&linked.stderr)
    );
    let mine = chat(d, "web:bob", "what do you remember about me?\n");
    assert!(mine.contains("locker is 12"), "{mine}");
    assert!(
        chat(d, "web:bob", "@notes: The VPN is at vpn.evil.example\n")
            .contains("Only administrators")
    );
}

#[test]
fn api_keys_are_listed_by_id_without_secrets_and_revoked_one_by_one() {
    use sha2::{Digest, Sha256};
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let asked = chat(d, "bob", "/pair\n");
    let code = asked.split("code is ").nth(1).expect("a code")[..8].to_string();
    assert!(run(d, &["pairing", "approve", &code]).0);
    let mut made = Vec::new();
    for _ in 0..2 {
        let (ok, key, said) = run(
            d,
            &[
                "api-key",
                "create",
                "--user",
                "cli:bob",
                "--reason",
                "bootstrap",
            ],
        );
        assert!(ok, "{said}");
        let key = key.trim().to_string();
        assert!(
            key.starts_with("stw_") && !key.contains(char::is_whitespace),
            "{key:?}"
        );
        let id = said
            .split_whitespace()
            .find(|w| w.starts_with("key-"))
            .unwrap_or_else(|| panic!("an id at creation: {said}"))
            .to_string();
        made.push((id, key));
    }
    let (ok, list, err) = run(d, &["api-key", "list"]);
    assert!(ok, "{err}");
    assert!(list.starts_with("API keys: 2"), "{list}");
    for (id, key) in &made {
        let hash = hex::encode(Sha256::digest(key.as_bytes()));
        assert!(list.contains(id.as_str()), "{list}");
        assert!(
            !list.contains(key.as_str()) && !list.contains(&hash) && !list.contains(&hash[..16]),
            "no secret, no hash: {list}"
        );
    }
    assert_eq!(list.matches("cli:bob").count(), 2, "{list}");
    assert_eq!(list.matches("active").count(), 2, "{list}");
    let (ok, none, _) = run(d, &["api-key", "list", "--user", "cli:nobody"]);
    assert!(ok && none.starts_with("API keys: 0"), "{none}");

    let (ok, out, err) = run(d, &["api-key", "revoke", &made[0].0]);
    assert!(ok, "{err}");
    assert!(out.contains(&made[0].0), "{out}");
    let (_, list, _) = run(d, &["api-key", "list", "--user", "cli:bob"]);
    let line_of = |id: &str| {
        list.lines()
            .find(|l| l.contains(id))
            .unwrap_or_else(|| panic!("{id} in {list}"))
            .to_string()
    };
    assert!(line_of(&made[0].0).contains("revoked"), "{list}");
    assert!(line_of(&made[1].0).contains("active"), "{list}");
    let (ok, _, err) = run(d, &["api-key", "revoke", &made[0].0]);
    assert!(!ok && err.contains("already revoked"), "{err}");
    let (ok, _, err) = run(d, &["api-key", "revoke", "key-NOSUCHID"]);
    assert!(!ok && err.contains("no API key"), "{err}");

    // Revoking the user revokes the key left, and says so.
    let (ok, out, err) = run(d, &["pairing", "revoke", "cli:bob"]);
    assert!(ok, "{err}");
    assert!(out.contains(&made[1].0), "{out}");
    let (_, list, _) = run(d, &["api-key", "list"]);
    assert_eq!(list.matches("revoked").count(), 2, "{list}");
    let (ok, _, err) = run(
        d,
        &[
            "api-key",
            "create",
            "--user",
            "cli:bob",
            "--reason",
            "bootstrap",
        ],
    );
    assert!(!ok && err.contains("not active"), "{err}");
}

/// Twelve or more digits in a row: an epoch time in milliseconds, printed raw.
fn has_epoch_ms(text: &str) -> bool {
    let mut run = 0;
    for c in text.chars() {
        run = if c.is_ascii_digit() { run + 1 } else { 0 };
        if run >= 12 {
            return true;
        }
    }
    false
}

#[test]
fn pairing_add_pairs_directly_and_lists_as_json_with_iso_times() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (ok, out, err) = run(
        d,
        &[
            "pairing",
            "add",
            "cli:carol",
            "--role",
            "admin",
            "--name",
            "Carol",
        ],
    );
    assert!(ok, "{err}");
    assert_eq!(out.trim(), "paired: Carol (cli:carol) as admin");
    // Carol is an admin at once: her @notes: is written.
    let taught = chat(d, "carol", "@notes: The VPN is at vpn.example.com\n");
    assert!(taught.contains("Written: agent_notes"), "{taught}");
    let (ok, _, err) = run(d, &["pairing", "add", "cli:carol", "--role", "user"]);
    assert!(!ok && err.contains("already paired as admin"), "{err}");
    let (ok, _, err) = run(d, &["pairing", "add", "cli:dan", "--role", "owner"]);
    assert!(!ok && err.contains("possible values: user, admin"), "{err}");

    let (ok, out, err) = run(d, &["pairing", "list", "--json"]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let carol = v["users"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["user_id"] == "cli:carol")
        .expect("carol listed");
    assert_eq!(carol["role"], "admin");
    let at = carol["updated_at"].as_str().expect("a time as text");
    assert!(chrono::DateTime::parse_from_rfc3339(at).is_ok(), "{at}");
    for args in [
        &["memory", "list", "--json"][..],
        &["memory", "show", "1", "--json"],
        &["memory", "show", "1"],
        &["memory", "revisions", "list", "--json"],
        &["api-key", "list", "--json"],
        &["pairing", "list"],
    ] {
        let (ok, out, err) = run(d, args);
        assert!(ok, "{args:?}: {err}");
        assert!(
            !has_epoch_ms(&out),
            "{args:?} prints epoch milliseconds: {out}"
        );
    }
    let (_, shown, _) = run(d, &["memory", "show", "1"]);
    assert!(
        shown.contains("said ") && shown.contains("vpn.example.com"),
        "{shown}"
    );
    let (_, all, _) = run(d, &["memory", "list", "--status", "all"]);
    assert!(all.contains("vpn.example.com"), "{all}");
}

/// `steward delegate add|list|remove`, and a key made `--on-behalf-of`:
/// refused without the grant, listed with whom it acts for, and revoked
/// with the grant.
#[test]
fn a_delegate_key_needs_the_grant_and_ends_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (who, name) in [("cli:ana", "Ana"), ("cli:bob", "Bob")] {
        let (ok, _, err) = run(
            d,
            &["pairing", "add", who, "--role", "user", "--name", name],
        );
        assert!(ok, "{err}");
    }
    let key = [
        "api-key",
        "create",
        "--user",
        "cli:bob",
        "--on-behalf-of",
        "cli:ana",
        "--reason",
        "set up Bob's delegate key",
    ];
    // A key that acts as a person is made with a reason, or not at all.
    let (ok, _, err) = run(d, &key[..6]);
    assert!(!ok && err.contains("needs --reason"), "{err}");
    let (ok, _, err) = run(d, &key);
    assert!(!ok && err.contains("does not act for cli:ana"), "{err}");
    let (ok, _, err) = run(d, &["delegate", "add", "cli:ana", "cli:ana"]);
    assert!(!ok && err.contains("cannot act for themselves"), "{err}");
    let (ok, out, err) = run(d, &["delegate", "add", "cli:ana", "cli:bob"]);
    assert!(ok, "{err}");
    assert_eq!(out.trim(), "delegated: cli:bob acts for cli:ana");
    let (ok, secret, said) = run(d, &key);
    assert!(ok && secret.trim().starts_with("stw_"), "{said}");
    // Bob is shown that the operator acted as him, how and why.
    let shown = chat(d, "cli:bob", "/memory\n");
    assert!(
        shown.contains("Acted as you: cli steward api-key create (key-")
            && shown.contains("Reason: set up Bob's delegate key"),
        "{shown}"
    );
    let (_, list, _) = run(d, &["api-key", "list", "--user", "cli:bob"]);
    assert!(
        list.contains("cli:bob on behalf of cli:ana") && list.contains("active"),
        "{list}"
    );
    let (ok, out, err) = run(d, &["delegate", "list", "cli:ana", "--json"]);
    assert!(ok, "{err}");
    let grants: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(grants[0]["delegate"], "cli:bob", "{grants}");
    let (ok, _, err) = run(d, &["delegate", "remove", "cli:ana", "cli:bob"]);
    assert!(ok, "{err}");
    let (_, list, _) = run(d, &["api-key", "list", "--user", "cli:bob"]);
    assert!(
        list.contains("revoked") && !list.contains("active"),
        "{list}"
    );
    let (ok, _, err) = run(d, &["delegate", "remove", "cli:ana", "cli:bob"]);
    assert!(!ok && err.contains("does not act for"), "{err}");
}
