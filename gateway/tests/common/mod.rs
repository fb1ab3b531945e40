//! What the command-line tests share: the `steward` binary in a directory
//! with no `STEWARD_` variables of the tests, a chat session, and a command's
//! success, stdout and stderr.

// Each test binary uses some of these.
#![allow(dead_code)]

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

pub fn steward(dir: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_steward"));
    c.current_dir(dir);
    // The tests' own environment must not configure the binary.
    for (k, _) in std::env::vars() {
        if k.starts_with("STEWARD_") {
            c.env_remove(k);
        }
    }
    c
}

pub fn chat(dir: &Path, as_: &str, lines: &str) -> String {
    let mut child = steward(dir)
        .args(["chat", "--as", as_, "--reason", "trying it out"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn chat");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(lines.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap()
}

/// `steward ARGS` in `dir`: (success, stdout, stderr).
pub fn run(dir: &Path, args: &[&str]) -> (bool, String, String) {
    let out = steward(dir).args(args).output().unwrap();
    (
        out.status.success(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}
