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

// --- files a reader can hold ----------------------------------------------------

/// Production lines a source file may hold: past this it is split into a
/// folder of modules, each named for what it does (issue 47).
const PRODUCTION_LINES: usize = 800;

/// Lines a test file may hold (tests are read a test at a time, but a file
/// past this is split by what its tests test).
const TEST_FILE_LINES: usize = 1_200;

/// Files allowed past their limit, each with its reason. None today: a file
/// added here says why it cannot be split.
const TOO_LONG_ALLOWED: &[(&str, &str)] = &[];

/// The lines of `text` outside its `#[cfg(test)]` modules (`mod tests { … }`
/// as rustfmt lays it out: the module closes on a `}` at its own indentation).
fn production_lines(text: &str) -> usize {
    let lines: Vec<&str> = text.lines().collect();
    let mut counted = 0;
    let mut i = 0;
    while i < lines.len() {
        let opens_test_module = lines[i].trim() == "#[cfg(test)]"
            && lines.get(i + 1).is_some_and(|next| {
                let t = next.trim_start();
                let t = t.strip_prefix("pub ").unwrap_or(t);
                t.starts_with("mod ") && t.ends_with('{')
            });
        if opens_test_module {
            let open = lines[i + 1];
            let close = format!("{}}}", &open[..open.len() - open.trim_start().len()]);
            i += 2;
            while i < lines.len() && lines[i] != close {
                i += 1;
            }
            i += 1;
            continue;
        }
        counted += 1;
        i += 1;
    }
    counted
}

/// Whether `rel` (a path from the workspace root, `/`-separated) holds test
/// or bench code: a `tests.rs`, a file under a `tests/` or `benches/`
/// directory (benches are harnesses, never shipped).
fn is_test_file(rel: &str) -> bool {
    let parts: Vec<&str> = rel.split('/').collect();
    parts.last() == Some(&"tests.rs")
        || parts[..parts.len() - 1]
            .iter()
            .any(|d| *d == "tests" || *d == "benches")
}

/// The files of `root` past their limit: `(path, lines, limit)`.
fn too_long(root: &Path) -> Vec<(String, usize, usize)> {
    let mut files = Vec::new();
    for member in members(root) {
        rust_files(&root.join(member), &mut files);
    }
    files.sort();
    files.dedup();
    let mut found = Vec::new();
    for file in files {
        let rel = file
            .strip_prefix(root)
            .expect("a member lives in the workspace")
            .to_string_lossy()
            .replace('\\', "/");
        let text = fs::read_to_string(&file).expect("a source file");
        let (lines, limit) = if is_test_file(&rel) {
            (text.lines().count(), TEST_FILE_LINES)
        } else {
            (production_lines(&text), PRODUCTION_LINES)
        };
        if lines > limit && !TOO_LONG_ALLOWED.iter().any(|(f, _)| *f == rel) {
            found.push((rel, lines, limit));
        }
    }
    found
}

#[test]
fn no_source_file_holds_more_than_800_production_lines_nor_a_test_file_more_than_1200() {
    let root = workspace_root();
    let found = too_long(&root);
    assert!(
        found.is_empty(),
        "split these files by what they do (path, lines, limit): {found:#?}"
    );
    for (file, reason) in TOO_LONG_ALLOWED {
        assert!(
            root.join(file).exists(),
            "{file} is allowed long ({reason}) but is gone"
        );
    }
}

#[test]
fn the_length_check_counts_production_lines_and_knows_test_files() {
    let text = "//! a module\nfn a() {}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    \
                mod inner {\n    }\n\n    #[test]\n    fn t() {}\n}\n\nfn b() {}\n\
                #[cfg(test)]\nmod more;\n";
    // Counted: the module doc, `a`, two blanks, `b`, and `#[cfg(test)] mod more;`.
    assert_eq!(production_lines(text), 7);
    assert!(is_test_file("gateway/core/src/context/tests.rs"));
    assert!(is_test_file("tests/tests/mcp_tools/main.rs"));
    assert!(is_test_file("gateway/benches/teams_load.rs"));
    assert!(!is_test_file("gateway/core/src/llm/offline/mod.rs"));
    assert!(!is_test_file("gateway/core/src/tests_support.rs"));
}
