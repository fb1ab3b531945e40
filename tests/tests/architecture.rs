//! Architecture invariants that hold over the sources themselves.
//!
//! One owner of storage: SQL and the database driver live in `memory/`. No
//! other crate names `sqlx` or reaches for the connection pool; they call the
//! store's functions (`memory::Db`).

use std::fs;
use std::path::{Path, PathBuf};

/// Files outside `memory/` still allowed to name the driver, each with why.
/// Every entry is a debt: make it a store function and remove it from here.
const SQLX_ALLOWED: &[(&str, &str)] = &[
    (
        "Cargo.toml",
        "the workspace pins the driver's version for memory",
    ),
    // This file names the rule it checks.
    ("tests/tests/architecture.rs", "states the rule"),
];

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests crate lives in the workspace")
        .to_path_buf()
}

/// Every `.rs` file and manifest below `dir`, skipping build output and hidden directories.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = fs::read_dir(dir).unwrap_or_else(|e| panic!("read {}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("directory entry").path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if path.is_dir() {
            if name != "target" && !name.starts_with('.') {
                rust_files(&path, out);
            }
        } else if name.ends_with(".rs") || name == "Cargo.toml" {
            out.push(path);
        }
    }
}

/// True when `text` has `word` as a whole identifier (not part of a longer one).
fn names(text: &str, word: &str) -> bool {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(word).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + word.len()..].chars().next();
        !before.is_some_and(ident) && !after.is_some_and(ident)
    })
}

/// Where the sources below `root` break the storage rule, one line each.
fn storage_violations(root: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(root, &mut files);
    let mut out = Vec::new();
    for path in files {
        let rel = path
            .strip_prefix(root)
            .expect("below the root")
            .to_string_lossy()
            .replace('\\', "/");
        if rel.starts_with("memory/") {
            continue;
        }
        let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {rel}: {e}"));
        if names(&text, "sqlx") && !SQLX_ALLOWED.iter().any(|(f, _)| *f == rel) {
            out.push(format!("{rel} names sqlx"));
        }
        if rel != "tests/tests/architecture.rs" && text.contains(".pool()") {
            out.push(format!("{rel} calls .pool()"));
        }
    }
    out
}

#[test]
fn only_memory_touches_the_database() {
    let root = workspace_root();
    assert!(
        root.join("memory/src/store").is_dir(),
        "not the workspace root: {}",
        root.display()
    );
    let found = storage_violations(&root);
    assert!(
        found.is_empty(),
        "SQL and the driver belong to memory's store; use a store function instead:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_storage_check_catches_a_stray_query() {
    let dir = tempfile::tempdir().expect("tempdir");
    let write = |rel: &str, text: &str| {
        let path = dir.path().join(rel);
        fs::create_dir_all(path.parent().expect("has a parent")).expect("mkdir");
        fs::write(path, text).expect("write");
    };
    write("memory/src/store/ok.rs", "use sqlx::Row; db.pool();");
    write("pairing/src/lib.rs", "use sqlx::Row;");
    write("gateway/src/http.rs", "db.pool().close()");
    write("adapters/src/fine.rs", "let sqlx_like = 1; // mysqlx");
    write(
        "adapters/Cargo.toml",
        "[dependencies]\nsqlx.workspace = true",
    );
    write("target/debug/build.rs", "use sqlx::Row;");
    let mut found = storage_violations(dir.path());
    found.sort();
    assert_eq!(
        found,
        [
            "adapters/Cargo.toml names sqlx",
            "gateway/src/http.rs calls .pool()",
            "pairing/src/lib.rs names sqlx"
        ]
    );
}

// --- module layering of the gateway -----------------------------------------

/// Every `.rs` file under `gateway/src`, with its path relative to the workspace.
fn gateway_sources() -> Vec<(String, String)> {
    fn walk(dir: &Path, out: &mut Vec<(String, String)>) {
        for entry in fs::read_dir(dir).expect("read dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = fs::read_to_string(&path).expect("read source");
                let rel = path
                    .strip_prefix(workspace_root())
                    .expect("inside the workspace")
                    .display()
                    .to_string();
                out.push((rel, text));
            }
        }
    }
    let mut out = Vec::new();
    walk(&workspace_root().join("gateway/src"), &mut out);
    assert!(out.len() > 10, "found the gateway's sources");
    out
}

#[test]
fn the_turn_loop_is_one_type_in_one_file() {
    let impls: Vec<String> = gateway_sources()
        .into_iter()
        .filter(|(_, text)| {
            text.lines()
                .any(|l| l.trim_start().starts_with("impl TurnLoop"))
        })
        .map(|(path, _)| path)
        .collect();
    assert_eq!(impls, ["gateway/src/turn.rs"]);
}

/// `(importer prefix, forbidden import)`: the services never reach back into
/// the loop, the models never know the loop, the dashboard never imports the
/// HTTP server that mounts it.
const FORBIDDEN: &[(&str, &str)] = &[
    ("gateway/src/llm/", "crate::turn"),
    ("gateway/src/llm/", "crate::consolidate"),
    ("gateway/src/lifecycle/", "crate::turn"),
    ("gateway/src/learning.rs", "crate::turn"),
    ("gateway/src/beliefs.rs", "crate::turn"),
    ("gateway/src/consolidate.rs", "crate::turn"),
    ("gateway/src/export.rs", "crate::turn"),
    ("gateway/src/commands.rs", "crate::turn"),
    ("gateway/src/jobs.rs", "crate::turn"),
    ("gateway/src/dashboard/", "crate::http"),
    // The providers implement the model traits; choosing among them is `roles`'.
    ("gateway/src/llm/openai.rs", "roles::"),
    ("gateway/src/llm/offline.rs", "roles::"),
];

#[test]
fn services_models_and_pages_do_not_import_what_sits_above_them() {
    let mut broken = Vec::new();
    for (path, text) in gateway_sources() {
        for (prefix, import) in FORBIDDEN {
            if path.starts_with(prefix)
                && text
                    .lines()
                    .any(|l| !l.trim_start().starts_with("//") && l.contains(import))
            {
                broken.push(format!("{path} uses {import}"));
            }
        }
    }
    assert!(broken.is_empty(), "{broken:#?}");
}

#[test]
fn the_loop_reads_no_wall_clock() {
    let sources = gateway_sources();
    for file in [
        "gateway/src/turn.rs",
        "gateway/src/jobs.rs",
        "gateway/src/lifecycle/",
    ] {
        for (path, text) in sources.iter().filter(|(p, _)| p.starts_with(file)) {
            let code = text.split("#[cfg(test)]").next().unwrap_or_default();
            assert!(
                !code.contains("Utc::now") && !code.contains("SystemTime::now"),
                "{path} reads the wall clock; use the injected Clock"
            );
        }
    }
}
