//! The lints `.ci/run` holds the code to, as configured: production
//! functions stay under 100 lines (clippy's `too_many_lines`, which
//! `cargo clippy -- -D warnings` makes an error), every crate of the
//! workspace opts in, and each production exception says why.

use std::fs;
use std::path::{Path, PathBuf};

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests crate lives in the workspace")
        .to_path_buf()
}

/// The workspace's member directories, from the root `Cargo.toml`.
fn members(root: &Path) -> Vec<String> {
    let manifest: toml::Value = fs::read_to_string(root.join("Cargo.toml"))
        .expect("Cargo.toml")
        .parse()
        .expect("Cargo.toml parses");
    manifest["workspace"]["members"]
        .as_array()
        .expect("workspace.members")
        .iter()
        .filter_map(|m| m.as_str().map(str::to_string))
        .collect()
}

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Where `text` allows a long function without a reason: an
/// `allow(clippy::too_many_lines)` that is not test-only (`cfg_attr(test, …)`)
/// and has no `//` comment on the line above. Lines are 1-based.
fn unexplained_allows(text: &str) -> Vec<usize> {
    let lines: Vec<&str> = text.lines().collect();
    lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.contains("allow(clippy::too_many_lines)"))
        .filter(|(_, l)| !l.contains("cfg_attr(test"))
        .filter(|(i, _)| {
            *i == 0
                || !lines[i - 1].trim_start().starts_with("//")
                || lines[i - 1].trim_start().starts_with("//!")
        })
        .map(|(i, _)| i + 1)
        .collect()
}

#[test]
fn production_functions_are_held_to_100_lines_with_each_exception_explained() {
    let root = workspace_root();
    let clippy = fs::read_to_string(root.join("clippy.toml")).expect("clippy.toml");
    assert!(
        clippy
            .lines()
            .any(|l| l.replace(' ', "") == "too-many-lines-threshold=100"),
        "clippy.toml sets the threshold to 100: {clippy}"
    );
    let manifest: toml::Value = fs::read_to_string(root.join("Cargo.toml"))
        .expect("Cargo.toml")
        .parse()
        .expect("Cargo.toml parses");
    assert_eq!(
        manifest["workspace"]["lints"]["clippy"]["too_many_lines"].as_str(),
        Some("warn"),
        "the workspace turns the lint on (clippy -D warnings makes it an error)"
    );
    let mut unexplained = Vec::new();
    for member in members(&root).iter().filter(|m| *m != "tests") {
        let crate_manifest: toml::Value = fs::read_to_string(root.join(member).join("Cargo.toml"))
            .expect("a member's Cargo.toml")
            .parse()
            .expect("a member's Cargo.toml parses");
        assert_eq!(
            crate_manifest
                .get("lints")
                .and_then(|l| l.get("workspace"))
                .and_then(toml::Value::as_bool),
            Some(true),
            "{member} takes the workspace's lints"
        );
        let mut files = Vec::new();
        rust_files(&root.join(member).join("src"), &mut files);
        for file in files {
            let text = fs::read_to_string(&file).expect("a source file");
            for line in unexplained_allows(&text) {
                unexplained.push(format!("{}:{line}", file.display()));
            }
        }
    }
    assert!(
        unexplained.is_empty(),
        "a long production function says why beside its allow: {unexplained:#?}"
    );
}

#[test]
fn the_exception_check_catches_an_allow_without_a_reason() {
    let text = "fn a() {}\n#[allow(clippy::too_many_lines)]\nfn long() {}\n\
                // The table is the router.\n#[allow(clippy::too_many_lines)]\nfn routes() {}\n\
                #![cfg_attr(test, allow(clippy::too_many_lines))]\n\
                //! a module doc is no reason\n#[allow(clippy::too_many_lines)]\nfn b() {}";
    assert_eq!(unexplained_allows(text), [2, 9]);
}
