//! The `steward` binary as an operator first runs it: the README walkthrough,
//! serve on defaults, configuration errors and retired settings, every
//! argument's help, a closed pipe, backup, and replay.

// The 100-line limit is for production code; a scenario reads top to bottom.
#![allow(clippy::too_many_lines)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Stdio};
mod common;
use common::{chat, run, steward};

#[test]
fn the_readme_walkthrough() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let taught = chat(d, "admin", "@notes: The daily report uses example_orders\n");
    assert!(
        taught.contains("Written: agent_notes updated (id: 1)."),
        "{taught}"
    );
    let asked = chat(d, "bob", "/pair\n");
    let code = asked.split("code is ").nth(1).expect("a code")[..8].to_string();
    let listed = String::from_utf8(
        steward(d)
            .args(["pairing", "list"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert!(listed.contains(&code), "{listed}");
    let approved = steward(d)
        .args(["pairing", "approve", &code, "--role", "user"])
        .output()
        .unwrap();
    assert!(
        approved.status.success(),
        "{}",
        String::from_utf8_lossy(&approved.stderr)
    );
    let served = chat(
        d,
        "bob",
        "Produce today's daily report\nFrom now on the daily report uses example_archive\n",
    );
    assert!(
        served.contains("The daily report uses example_orders (Memory reference: 1)"),
        "{served}"
    );
    assert!(served.contains("need an administrator"), "{served}");
    let list =
        String::from_utf8(steward(d).args(["memory", "list"]).output().unwrap().stdout).unwrap();
    assert!(
        list.contains("example_orders") && !list.contains("example_archive"),
        "{list}"
    );
}

#[test]
fn replay_json_prints_the_contract() {
    let dir = tempfile::tempdir().unwrap();
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/teach_and_serve.jsonl");
    let out = steward(dir.path())
        .args(["replay", "--json"])
        .arg(&fixture)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for key in ["replies", "memory", "revisions"] {
        assert!(v[key].is_array(), "{key} missing");
    }
    let row = &v["memory"][0];
    for key in [
        "id",
        "scope",
        "owner",
        "subject",
        "content",
        "kind",
        "status",
        "source",
        "said_at",
        "recorded_at",
    ] {
        assert!(row.get(key).is_some(), "memory row lacks {key}");
    }
    assert!(
        !dir.path().join("steward.db").exists(),
        "replay touches no database file"
    );
}

#[test]
fn a_bad_config_is_a_clear_error_naming_the_key() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("steward.toml"),
        "[memory]\nauto_keep = \"sometimes\"\n",
    )
    .unwrap();
    let out = steward(dir.path())
        .args(["pairing", "list"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("memory.auto_keep") && !err.contains("panicked"),
        "{err}"
    );
    let out = steward(dir.path())
        .args(["--config", "missing.toml", "pairing", "list"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("missing.toml"));
}

#[test]
fn serve_starts_on_defaults_and_answers_healthz() {
    let dir = tempfile::tempdir().unwrap();
    // Port 0: the defaults but a free port, so parallel runs never collide.
    let mut child = steward(dir.path())
        .arg("serve")
        .env("STEWARD_SERVER__LISTEN", "127.0.0.1:0")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(
        first.contains("sqlite:steward.db") && first.contains("offline"),
        "{first}"
    );
    let addr = first
        .split("http://")
        .nth(1)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .to_string();
    let mut s = TcpStream::connect(&addr).unwrap();
    s.write_all(b"GET /healthz HTTP/1.0\r\nHost: x\r\n\r\n")
        .unwrap();
    let mut resp = String::new();
    s.read_to_string(&mut resp).unwrap();
    child.kill().unwrap();
    let _ = child.wait();
    assert!(
        resp.starts_with("HTTP/1.0 200") || resp.starts_with("HTTP/1.1 200"),
        "{resp}"
    );
    assert!(resp.contains("\"ok\""));
    assert!(dir.path().join("steward.db").exists());
}

#[test]
fn a_retired_setting_warns_at_start() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("steward.toml"),
        "[memory]\nquarantine_learned_facts = true\n",
    )
    .unwrap();
    let out = steward(dir.path())
        .args(["pairing", "list"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("quarantine_learned_facts is retired"));
}

#[test]
fn an_unset_api_key_variable_stops_the_binary_with_its_name() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("steward.toml"),
        "[llm]\nprovider = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\napi_key_env = \"STEWARD_TEST_UNSET_KEY\"\n",
    )
    .unwrap();
    let out = steward(dir.path()).args(["serve"]).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("STEWARD_TEST_UNSET_KEY"), "{err}");
}

#[test]
fn every_argument_says_what_it_is_and_which_values_it_takes() {
    let dir = tempfile::tempdir().unwrap();
    for (args, wanted) in [
        (
            &["pairing", "add", "--help"][..],
            "Possible values:\n          - user:",
        ),
        (
            &["pairing", "approve", "--help"],
            "Possible values:\n          - user:",
        ),
        (
            &["pairing", "set-role", "--help"],
            "Possible values:\n          - user:",
        ),
        (
            &["memory", "list", "--help"],
            "[possible values: all, active, pending",
        ),
        (
            &["memory", "list", "--help"],
            "[possible values: personal, person, agent_notes, org_policy, role]",
        ),
    ] {
        let (ok, out, err) = run(dir.path(), args);
        assert!(ok, "{args:?}: {err}");
        assert!(out.contains(wanted), "{args:?}: {out}");
    }
}

/// `steward pairing list | head -1`: the reader has gone before the command
/// writes. It ends as Unix tools do (SIGPIPE), never with a panic.
#[test]
fn a_closed_pipe_ends_a_command_quietly() {
    use std::os::unix::process::ExitStatusExt;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    run(d, &["pairing", "add", "cli:erin", "--role", "user"]);
    let (reader, writer) = rustix::pipe::pipe().expect("a pipe");
    drop(reader);
    let out = steward(d)
        .args(["pairing", "list"])
        .stdout(Stdio::from(writer))
        .stderr(Stdio::piped())
        .output()
        .expect("run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !err.contains("panicked") && !err.contains("Broken pipe"),
        "{err}"
    );
    assert_eq!(out.status.signal(), Some(libc::SIGPIPE), "{:?}", out.status);

    // And in a real pipeline, `head -1` gets the first line.
    let shell = Command::new("sh")
        .current_dir(d)
        .arg("-c")
        .arg(format!(
            "{} pairing list | head -1",
            env!("CARGO_BIN_EXE_steward")
        ))
        .output()
        .expect("sh");
    assert_eq!(
        String::from_utf8_lossy(&shell.stdout).trim(),
        "pending requests: 0"
    );
    assert!(!String::from_utf8_lossy(&shell.stderr).contains("panicked"));
}

#[test]
fn backup_copies_the_store_and_never_overwrites_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    chat(d, "admin", "@notes: The daily report uses example_orders\n");
    let (ok, out, err) = run(d, &["backup", "copy.db"]);
    assert!(ok, "{err}");
    assert!(out.contains("copy.db"), "{out}");
    // The copy is a store of its own: the note is found there.
    let found = steward(d)
        .args(["memory", "search", "daily report"])
        .env("STEWARD_DATABASE__URL", "sqlite:copy.db")
        .output()
        .unwrap();
    assert!(found.status.success());
    assert!(
        String::from_utf8_lossy(&found.stdout).contains("example_orders"),
        "{}",
        String::from_utf8_lossy(&found.stdout)
    );
    let kept = std::fs::read(d.join("copy.db")).unwrap();
    let (ok, _, err) = run(d, &["backup", "copy.db"]);
    assert!(!ok && err.contains("exists"), "{err}");
    assert_eq!(std::fs::read(d.join("copy.db")).unwrap(), kept);
}
