//! `steward serve` with automated runs configured, as an operator meets it.

use std::path::Path;
use std::process::Command;

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

/// A schedule or webhook whose skill has no approved revision, or whose
/// cron expression does not parse, stops `serve` at start with the key named.
#[test]
fn serve_refuses_a_run_it_could_never_start_naming_the_key() {
    for (toml, key) in [
        (
            "[[schedules]]\nname = \"daily\"\ncron = \"0 7 * * *\"\nskill = \"daily-report\"\n",
            "schedules[0].skill",
        ),
        (
            "[[webhooks]]\nname = \"orders\"\nsecret = \"whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=\"\nskill = \"daily-report\"\n",
            "webhooks[0].skill",
        ),
        (
            "[[schedules]]\nname = \"daily\"\ncron = \"at seven\"\ntext = \"Post the report\"\n",
            "schedules[0].cron",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("steward.toml"),
            format!("[server]\nlisten = \"127.0.0.1:0\"\n[dashboard]\nenabled = false\n{toml}"),
        )
        .unwrap();
        let out = steward(dir.path()).arg("serve").output().unwrap();
        assert!(!out.status.success(), "{toml}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(key), "{toml}\n→ {err}");
    }
}
