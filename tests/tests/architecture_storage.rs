//! Architecture invariants over the sources, storage: only `memory` touches
//! the database, only tests and benchmarks write records raw, and queries bind
//! scopes and statuses, never spell them. The sources are read as
//! `architecture_layers.rs` describes.

// The resolver is included whole (`architecture/resolver.rs`); not every
// file uses all of it.
#![allow(dead_code)]

use proc_macro2::{Spacing, TokenStream, TokenTree};
use std::collections::{HashMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};
use syn::visit::{self, Visit};

include!("architecture/resolver.rs");

// --- one owner of storage ------------------------------------------------------

/// Files outside `memory/` still allowed to name the driver, each with why.
/// Every entry is a debt: make it a store function and remove it from here.
const SQLX_ALLOWED: &[(&str, &str)] = &[(
    "Cargo.toml",
    "the workspace pins the driver's version for memory",
)];

/// Where `sources` break the storage rule, one line each: outside `memory/`,
/// no manifest names `sqlx`, no Rust source names it (in a path, an import,
/// an attribute or a macro body) or calls `.pool()`.
fn storage_violations(sources: &[Source]) -> Vec<String> {
    let outside: Vec<&Source> = sources
        .iter()
        .filter(|s| !s.rel.starts_with("memory/"))
        .collect();
    let mut out = Vec::new();
    for src in outside.iter().filter(|s| s.rel.ends_with("Cargo.toml")) {
        if names(&src.text, "sqlx") && !SQLX_ALLOWED.iter().any(|(f, _)| *f == src.rel) {
            out.push(format!("{} names sqlx", src.rel));
        }
    }
    for src in outside.iter().filter(|s| s.rel.ends_with(".rs")) {
        let facts = parse_file(src);
        if let Some((_, line)) = facts.idents.iter().find(|(i, _)| i == "sqlx") {
            out.push(format!("{}:{line} names sqlx", src.rel));
        }
        for (method, line) in &facts.methods {
            if method == "pool" {
                out.push(format!("{}:{line} calls .pool()", src.rel));
            }
        }
        for r in &facts.refs {
            if r.written.ends_with(&["Db".to_string(), "pool".to_string()]) {
                out.push(format!("{}:{} calls Db::pool", src.rel, r.line));
            }
        }
    }
    out
}

#[test]
fn only_memory_touches_the_database() {
    let found = storage_violations(&workspace_sources());
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
    write(
        "memory/src/store/ok.rs",
        "use sqlx::Row; fn f() { db.pool(); }",
    );
    write("pairing/src/lib.rs", "use std::{fmt, sqlx::Row};");
    write(
        "pairing/src/inline.rs",
        "fn f() -> sqlx::Result<()> { Ok(()) }",
    );
    write("gateway/src/http.rs", "fn f() { db.pool().close() }");
    write(
        "gateway/src/macro.rs",
        "fn f() { tracing::info!(\"{:?}\", db.pool()); }",
    );
    write("gateway/src/ufcs.rs", "fn f() { memory::Db::pool(&db); }");
    write(
        "adapters/src/fine.rs",
        "// sqlx and db.pool() in a comment\nfn f() { let sqlx_like = \"sqlx .pool()\"; let mysqlx = 1; }",
    );
    write(
        "adapters/Cargo.toml",
        "[dependencies]\nsqlx.workspace = true",
    );
    write("target/debug/build.rs", "use sqlx::Row;");
    let mut found = storage_violations(&read_sources(dir.path()));
    found.sort();
    assert_eq!(
        found,
        [
            "adapters/Cargo.toml names sqlx",
            "gateway/src/http.rs:1 calls .pool()",
            "gateway/src/macro.rs:1 calls .pool()",
            "gateway/src/ufcs.rs:1 calls Db::pool",
            "pairing/src/inline.rs:1 names sqlx",
            "pairing/src/lib.rs:1 names sqlx",
        ]
    );
}

// --- raw record writes ---------------------------------------------------------

/// Crates whose `src/` never writes records around the write entry point.
const NO_RAW_WRITES: &[&str] = &[
    "gateway/core/src/",
    "gateway/channels/src/",
    "gateway/web/src/",
    "gateway/src/",
    "pairing/src/",
    "adapters/src/",
];

/// Where the sources of `NO_RAW_WRITES` name `RawWrites` (the trait of raw
/// record writes, behind memory's feature `fixtures`), glob-import its module
/// `memory::write`, or name the feature `fixtures`: raw record writes are for
/// tests and benchmarks only.
fn raw_write_violations(sources: &[Source]) -> Vec<String> {
    let mut out = Vec::new();
    let ours: Vec<Source> = sources
        .iter()
        .filter(|s| s.rel.ends_with(".rs") && NO_RAW_WRITES.iter().any(|p| s.rel.starts_with(p)))
        .map(|s| source(&s.rel, &s.text))
        .collect();
    for krate in Crate::all(&ours) {
        for file in &krate.files {
            for (ident, line) in file.idents.iter().filter(|(i, _)| i == "RawWrites") {
                out.push(format!("{}:{line} names {ident}", file.rel));
            }
            for (feature, line) in file.features.iter().filter(|(f, _)| f == "fixtures") {
                out.push(format!("{}:{line} names the feature {feature}", file.rel));
            }
            for r in file.refs.iter().filter(|r| r.glob) {
                let path = krate.resolve(&r.module, &r.written, r.global);
                if path == ["memory", "write"] {
                    out.push(format!("{}:{} imports memory::write::*", file.rel, r.line));
                }
            }
        }
    }
    out
}

#[test]
fn only_tests_and_benchmarks_write_records_raw() {
    let found = raw_write_violations(&workspace_sources());
    assert!(
        found.is_empty(),
        "raw record writes are for tests and benchmarks; write through memory::write:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_raw_write_check_catches_the_trait_and_the_feature() {
    let mut found = raw_write_violations(&[
        source(
            "gateway/core/src/learning.rs",
            "use memory::{Db, write::{RawWrites, Revise}};",
        ),
        source(
            "pairing/src/lib.rs",
            "fn f(db: &memory::Db) {\n    memory::write::RawWrites::insert_record(db, r);\n}",
        ),
        source(
            "adapters/src/lib.rs",
            "#[cfg(feature = \"fixtures\")]\nfn f() {}\nfn g() -> bool { cfg!(feature = \"fixtures\") }",
        ),
        source("gateway/core/src/jobs.rs", "use memory::write as w;\nuse w::*;"),
        source("gateway/benches/turn.rs", "use memory::write::RawWrites;"),
        source("tests/src/lib.rs", "use memory::write::RawWrites;"),
        source("memory/src/write.rs", "pub trait RawWrites {}"),
        source("gateway/src/fine.rs", "// RawWrites\nconst S: &str = \"fixtures\";"),
    ]);
    found.sort();
    assert_eq!(
        found,
        [
            "adapters/src/lib.rs:1 names the feature fixtures",
            "adapters/src/lib.rs:3 names the feature fixtures",
            "gateway/core/src/jobs.rs:2 imports memory::write::*",
            "gateway/core/src/learning.rs:1 names RawWrites",
            "pairing/src/lib.rs:2 names RawWrites",
        ]
    );
}

// --- Scope and status names are bound, never written in SQL -------------------

/// Every name a query could spell instead of binding its enum.
fn stored_names() -> Vec<&'static str> {
    use memory::store::{RequestStatus, UserStatus};
    use memory::{Scope, Status};
    use strum::VariantArray;
    let mut names: Vec<&'static str> = Scope::VARIANTS.iter().map(|s| s.as_str()).collect();
    names.extend(Status::VARIANTS.iter().map(|s| s.as_str()));
    names.extend(
        UserStatus::VARIANTS
            .iter()
            .map(|s| -> &'static str { s.into() }),
    );
    names.extend(
        RequestStatus::VARIANTS
            .iter()
            .map(|s| -> &'static str { s.into() }),
    );
    names.sort_unstable();
    names.dedup();
    names
}

/// String literals below `memory/src/` (macro bodies included) that quote a
/// scope or status name as SQL text (`'active'`): a query must bind the enum,
/// so that adding a variant cannot leave a query behind.
fn quoted_names(sources: &[Source]) -> Vec<String> {
    fn literals(tokens: TokenStream, out: &mut Vec<(String, usize)>) {
        for tree in tokens {
            match tree {
                TokenTree::Group(g) => literals(g.stream(), out),
                TokenTree::Literal(l) => out.push((l.to_string(), line_of(l.span()))),
                _ => {}
            }
        }
    }
    let names = stored_names();
    let mut out = Vec::new();
    for src in sources
        .iter()
        .filter(|s| s.rel.starts_with("memory/src/") && s.rel.ends_with(".rs"))
    {
        let Ok(tokens) = src.text.parse::<TokenStream>() else {
            out.push(format!("{} does not parse", src.rel));
            continue;
        };
        let mut found = Vec::new();
        literals(tokens, &mut found);
        for (text, line) in found {
            for name in &names {
                if text.contains(&format!("'{name}'")) {
                    out.push(format!("{}:{line} quotes '{name}'", src.rel));
                }
            }
        }
    }
    out
}

#[test]
fn queries_bind_scopes_and_statuses_never_spell_them() {
    let found = quoted_names(&workspace_sources());
    assert!(
        found.is_empty(),
        "bind the enum (`Scope`, `Status`, `UserStatus`, `RequestStatus`) instead:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_quoted_name_check_catches_a_spelled_status_in_a_query() {
    let sources = [
        source(
            "memory/src/store/bad.rs",
            "fn f() {\n    let q = sql!(\"SELECT id FROM memory_records WHERE status = 'active'\", org);\n}",
        ),
        source(
            "memory/src/store/also_bad.rs",
            "const Q: &str = \"DELETE FROM memory_records WHERE scope = 'person'\";",
        ),
        source(
            "memory/src/store/fine.rs",
            "// status = 'active' in a comment\nfn f() { let q = sql!(\"SELECT 1 WHERE status = $1\", Status::Active); }",
        ),
        source(
            "gateway/src/elsewhere.rs",
            "const Q: &str = \"status = 'active'\";",
        ),
    ];
    assert_eq!(
        quoted_names(&sources),
        [
            "memory/src/store/bad.rs:2 quotes 'active'",
            "memory/src/store/also_bad.rs:1 quotes 'person'",
        ]
    );
}
