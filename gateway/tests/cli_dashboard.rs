//! The dashboard as an operator starts it: `steward serve` prints a generated
//! admin token once, the token signs in, and `steward dashboard reset-token`
//! replaces it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};

fn steward(dir: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_steward"));
    c.current_dir(dir);
    for (k, _) in std::env::vars() {
        if k.starts_with("STEWARD_") {
            c.env_remove(k);
        }
    }
    c
}

/// A running `steward serve` on a free port, killed on drop.
struct Server {
    child: Child,
    addr: String,
    /// The lines it printed about the dashboard.
    dashboard: Vec<String>,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(dir: &Path, env: &[(&str, &str)]) -> Server {
    let mut cmd = steward(dir);
    cmd.arg("serve")
        .env("STEWARD_SERVER__LISTEN", "127.0.0.1:0")
        .stdout(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("spawn serve");
    let mut out = BufReader::new(child.stdout.take().expect("stdout"));
    let mut lines = Vec::new();
    for _ in 0..3 {
        let mut line = String::new();
        out.read_line(&mut line).expect("read");
        lines.push(line.trim().to_string());
    }
    // Keep reading so the server never writes into a closed pipe.
    std::thread::spawn(move || {
        let mut rest = String::new();
        let _ = out.read_to_string(&mut rest);
    });
    let addr = lines[0]
        .split("http://")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .expect("an address")
        .to_string();
    Server {
        child,
        addr,
        dashboard: lines[1..].to_vec(),
    }
}

/// POST the sign-in form; the status line and headers.
fn sign_in(addr: &str, token: &str) -> String {
    let body = format!("token={token}");
    let mut s = TcpStream::connect(addr).expect("connect");
    write!(
        s,
        "POST /dashboard/login HTTP/1.0\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .expect("send");
    let mut resp = String::new();
    s.read_to_string(&mut resp).expect("read");
    resp
}

fn token_in(line: &str) -> String {
    line.split_whitespace()
        .find(|w| w.starts_with("stwd_"))
        .unwrap_or_else(|| panic!("no token in {line:?}"))
        .to_string()
}

#[test]
fn serve_prints_a_generated_token_once_and_it_signs_in() {
    let dir = tempfile::tempdir().unwrap();
    let first = serve(dir.path(), &[]);
    assert!(
        first.dashboard[0].ends_with("/dashboard"),
        "{:?}",
        first.dashboard
    );
    let token = token_in(&first.dashboard[1]);
    let ok = sign_in(&first.addr, &token);
    assert!(
        ok.starts_with("HTTP/1.0 303") || ok.starts_with("HTTP/1.1 303"),
        "{ok}"
    );
    assert!(ok.contains("steward_session="), "{ok}");
    let bad = sign_in(&first.addr, "stwd_not-it");
    assert!(bad.contains(" 401 "), "{bad}");
    drop(first);

    // A second start (or replica) does not show it again, and still accepts it.
    let second = serve(dir.path(), &[]);
    assert!(
        !second.dashboard.join("\n").contains("stwd_"),
        "{:?}",
        second.dashboard
    );
    assert!(second.dashboard[1].contains("printed when it was generated"));
    assert!(sign_in(&second.addr, &token).contains("steward_session="));

    // reset-token makes a new one; the old one stops working.
    let out = steward(dir.path())
        .args(["dashboard", "reset-token"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let new = token_in(&String::from_utf8(out.stdout).unwrap());
    assert_ne!(new, token);
    assert!(sign_in(&second.addr, &token).contains(" 401 "));
    assert!(sign_in(&second.addr, &new).contains("steward_session="));
}

#[test]
fn a_configured_token_is_never_printed() {
    let dir = tempfile::tempdir().unwrap();
    let token = "configured-token-0123456789";
    let s = serve(dir.path(), &[("STEWARD_DASHBOARD__ADMIN_TOKEN", token)]);
    assert!(!s.dashboard.join("\n").contains(token));
    assert!(s.dashboard[1].contains("dashboard.admin_token"));
    assert!(sign_in(&s.addr, token).contains("steward_session="));
    let out = steward(dir.path())
        .args(["dashboard", "reset-token"])
        .env("STEWARD_DASHBOARD__ADMIN_TOKEN", token)
        .output()
        .unwrap();
    assert!(
        !out.status.success(),
        "the configured token is changed in the configuration"
    );
}

#[test]
fn a_weak_configured_token_stops_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let out = steward(dir.path())
        .arg("serve")
        .env("STEWARD_DASHBOARD__ADMIN_TOKEN", "1234")
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("dashboard.admin_token"));
}
