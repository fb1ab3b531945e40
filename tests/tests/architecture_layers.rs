//! Architecture invariants that hold over the sources themselves.
//!
//! The sources are read as Rust (`syn`), not as text: an import is every leaf
//! of a `use` tree (groups, renames, `self`, globs), a path is every path in
//! code, in types, in attributes' parsed paths and in macro bodies (scanned as
//! tokens), each resolved against the module it is written in (`crate::`,
//! `self::`, `super::`, a child module, and what the crate's own `use` items,
//! re-exports included, make a name stand for). So `use crate::{turn::X}`,
//! `use super::super::turn`, `crate::TurnLoop` (a re-export) and an inline
//! `crate::turn::X` in a function body are the same import of `crate::turn`.
//! Comments and string literals name nothing. Every finding carries its file
//! and line, and every rule has a positive control: a small in-memory source
//! that breaks it, which the rule must report.

// The resolver is included whole (`architecture/resolver.rs`); not every
// file uses all of it.
#![allow(dead_code)]

use proc_macro2::{Spacing, TokenStream, TokenTree};
use std::collections::{HashMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};
use syn::visit::{self, Visit};

include!("architecture/resolver.rs");

// --- module layering of the gateway --------------------------------------------

/// The gateway's library crate whose sources are below `dir`, as parsed
/// (not the binary's `main.rs`).
fn gateway_crate(sources: &[Source], dir: &str) -> Crate {
    let lib: Vec<Source> = sources
        .iter()
        .filter(|s| s.rel.starts_with(dir) && s.rel.ends_with(".rs"))
        .filter(|s| s.rel != "gateway/src/main.rs")
        .map(|s| source(&s.rel, &s.text))
        .collect();
    Crate::new(lib.iter().map(parse_file).collect())
}

/// Every library crate of the gateway, as parsed.
fn gateway_crates(sources: &[Source]) -> Vec<Crate> {
    GATEWAY_LIBRARIES
        .iter()
        .map(|dir| gateway_crate(sources, dir))
        .collect()
}

/// Which files implement `TurnLoop` (inherent or trait impls), with lines.
fn turn_loop_impls(krate: &Crate) -> Vec<String> {
    let mut out = Vec::new();
    for file in &krate.files {
        for (name, line) in &file.impls {
            if name == "TurnLoop" {
                out.push(format!("{}:{line}", file.rel));
            }
        }
    }
    out
}

#[test]
fn the_turn_loop_is_one_type_in_one_folder() {
    let found: Vec<String> = gateway_crates(&workspace_sources())
        .iter()
        .flat_map(turn_loop_impls)
        .collect();
    assert!(!found.is_empty(), "found `impl TurnLoop`");
    let elsewhere: Vec<&String> = found
        .iter()
        .filter(|f| !f.starts_with("gateway/core/src/turn/"))
        .collect();
    assert!(
        elsewhere.is_empty(),
        "TurnLoop is implemented only in gateway/core/src/turn/: {elsewhere:#?}"
    );
}

#[test]
fn the_turn_loop_check_catches_an_impl_elsewhere() {
    let krate = Crate::new(
        [
            source(
                "gateway/core/src/lib.rs",
                "pub mod turn; pub mod x; pub mod y;",
            ),
            source(
                "gateway/core/src/turn.rs",
                "pub struct TurnLoop; impl TurnLoop {}",
            ),
            source(
                "gateway/src/x.rs",
                "use crate::{turn::TurnLoop};\nimpl TurnLoop { fn more(&self) {} }",
            ),
            source(
                "gateway/src/y.rs",
                "\n\nimpl Drop for crate::turn::TurnLoop { fn drop(&mut self) {} }",
            ),
        ]
        .iter()
        .map(parse_file)
        .collect(),
    );
    assert_eq!(
        turn_loop_impls(&krate),
        [
            "gateway/core/src/turn.rs:1",
            "gateway/src/x.rs:2",
            "gateway/src/y.rs:3"
        ]
    );
}

/// `(importer prefix, forbidden module)`, inside one crate (Cargo keeps a
/// lower crate from naming an upper one: `LAYERS`): the services never reach
/// back into the loop, the models never know the loop, the dashboard never
/// imports the HTTP server that mounts it. A path is forbidden when it
/// resolves into the module; a glob import when it imports the module's
/// contents or a module above it (which brings its name into scope).
const FORBIDDEN: &[(&str, &str)] = &[
    ("gateway/core/src/llm/", "crate::turn"),
    ("gateway/core/src/llm/", "crate::consolidate"),
    ("gateway/core/src/lifecycle/", "crate::turn"),
    ("gateway/core/src/learning.rs", "crate::turn"),
    ("gateway/core/src/beliefs.rs", "crate::turn"),
    ("gateway/core/src/consolidate.rs", "crate::turn"),
    ("gateway/core/src/export.rs", "crate::turn"),
    ("gateway/core/src/commands.rs", "crate::turn"),
    ("gateway/core/src/jobs.rs", "crate::turn"),
    ("gateway/web/src/dashboard/", "crate::http"),
    ("gateway/web/src/dashboard/", "crate::api"),
    // The loop is one member of the services, not their locator; the workers
    // sit above it.
    ("gateway/core/src/turn/", "crate::services"),
    ("gateway/core/src/turn/", "crate::workers"),
    // The providers implement the model traits; choosing among them is `roles`'.
    ("gateway/core/src/llm/openai.rs", "crate::llm::roles"),
    ("gateway/core/src/llm/offline.rs", "crate::llm::roles"),
];

/// Where the files of `krate` import what `FORBIDDEN` keeps from them.
fn layering_violations(krate: &Crate) -> Vec<String> {
    let mut out = Vec::new();
    for file in &krate.files {
        for (prefix, module) in FORBIDDEN.iter().filter(|(p, _)| file.rel.starts_with(p)) {
            for r in &file.refs {
                let path = krate.resolve(&r.module, &r.written, r.global);
                let forbidden = segments(module);
                // `use crate::turn::*`, or `use crate::*` (which brings `turn` in).
                let hit = path.starts_with(&forbidden) || (r.glob && forbidden.starts_with(&path));
                if hit {
                    let glob = if r.glob { "::*" } else { "" };
                    out.push(format!(
                        "{}:{} names {module} (`{}{glob}`, below {prefix})",
                        file.rel,
                        r.line,
                        joined(&r.written)
                    ));
                }
            }
        }
    }
    out.dedup();
    out
}

#[test]
fn services_models_and_pages_do_not_import_what_sits_above_them() {
    let crates = gateway_crates(&workspace_sources());
    let krate = &crates[0];
    // The resolver sees the real imports: `services.rs` does import the loop.
    let services = krate
        .files
        .iter()
        .find(|f| f.rel == "gateway/core/src/services.rs")
        .expect("gateway/core/src/services.rs");
    assert!(services.refs.iter().any(
        |r| krate.resolve(&r.module, &r.written, r.global) == segments("crate::turn::TurnLoop")
    ));
    let broken: Vec<String> = crates.iter().flat_map(layering_violations).collect();
    assert!(broken.is_empty(), "{broken:#?}");
}

/// The gateway's modules, as `lib.rs` declares them, plus `extra` files.
fn gateway_with(extra: &[Source]) -> Crate {
    let lib = source(
        "gateway/src/lib.rs",
        "pub mod beliefs; pub mod commands; pub mod consolidate; pub mod dashboard;
         pub mod export; pub mod http; pub mod jobs; pub mod learning; pub mod lifecycle;
         pub mod llm; pub mod turn; pub mod api; pub mod services; pub mod channels;
         pub mod workers;
         pub use turn::TurnLoop;",
    );
    let llm = source(
        "gateway/core/src/llm/mod.rs",
        "pub mod roles; pub use roles::Models;",
    );
    let mut files = vec![parse_file(&lib), parse_file(&llm)];
    files.extend(extra.iter().map(parse_file));
    Crate::new(files)
}

#[test]
fn the_layering_check_catches_every_rule_grouped_or_inline() {
    for (prefix, module) in FORBIDDEN {
        let file = if prefix.ends_with('/') {
            format!("{prefix}x.rs")
        } else {
            prefix.to_string()
        };
        let (head, tail) = module.split_once("::").expect("a crate path");
        let grouped = format!("use {head}::{{error, {tail}::{{self as m, Thing}}}};");
        let inline = format!("fn f() {{\n    let _ = {module}::Thing::new();\n}}");
        let in_macro =
            format!("fn f() {{\n    tracing::info!(\"{{:?}}\", {module}::Thing::new());\n}}");
        for (form, text, line) in [
            ("grouped", grouped, 1),
            ("inline", inline, 2),
            ("macro", in_macro, 2),
        ] {
            let found = layering_violations(&gateway_with(&[source(&file, &text)]));
            assert!(
                found
                    .iter()
                    .any(|f| f.starts_with(&format!("{file}:{line} names {module}"))),
                "{form} form of {module} in {file} not reported: {found:#?}\n{text}"
            );
        }
    }
}

#[test]
fn the_layering_check_resolves_relative_paths_renames_globs_and_reexports() {
    let cases = [
        (
            "gateway/core/src/llm/openai.rs",
            "use super::roles::Models;",
        ),
        (
            "gateway/core/src/llm/openai.rs",
            "use super::{budget, roles};",
        ),
        ("gateway/core/src/llm/openai.rs", "use super::Models;"),
        ("gateway/core/src/llm/openai.rs", "use crate::llm::*;"),
        (
            "gateway/core/src/llm/offline.rs",
            "fn f() { let _ = super::roles::Models::new(); }",
        ),
        (
            "gateway/core/src/lifecycle/trim.rs",
            "use super::super::turn;",
        ),
        ("gateway/core/src/lifecycle/trim.rs", "use crate::TurnLoop;"),
        (
            "gateway/core/src/jobs.rs",
            "use crate::turn as t; fn f(_: t::TurnLoop) {}",
        ),
        ("gateway/core/src/jobs.rs", "use crate::turn::*;"),
        ("gateway/core/src/jobs.rs", "use crate::*;"),
        (
            "gateway/core/src/jobs.rs",
            "mod inner { fn f(_: &super::super::turn::TurnLoop) {} }",
        ),
        (
            "gateway/web/src/dashboard/chat.rs",
            "use crate::{http::{AppState}};",
        ),
    ];
    for (file, text) in cases {
        let found = layering_violations(&gateway_with(&[source(file, text)]));
        assert!(!found.is_empty(), "not reported: {file}: {text}");
    }
    let fine = [
        (
            "gateway/core/src/llm/openai.rs",
            "use super::budget; use crate::config::LlmConfig;",
        ),
        (
            "gateway/core/src/llm/openai.rs",
            "mod tests { use super::*; }",
        ),
        (
            "gateway/core/src/jobs.rs",
            "// use crate::turn::TurnLoop;\nconst S: &str = \"crate::turn\";",
        ),
        (
            "gateway/core/src/jobs.rs",
            "fn turn() {} fn f() { turn(); let turn = 1; }",
        ),
        (
            "gateway/web/src/dashboard/chat.rs",
            "use crate::turn::TurnLoop;",
        ),
    ];
    for (file, text) in fine {
        let found = layering_violations(&gateway_with(&[source(file, text)]));
        assert!(found.is_empty(), "{file}: {text}: {found:#?}");
    }
}

/// Files of the loop and the front-ends that must read time from the
/// injected `Clock`.
const CLOCKED: &[&str] = &[
    "gateway/core/src/turn/",
    "gateway/core/src/jobs.rs",
    "gateway/core/src/lifecycle/",
    "gateway/web/src/api/",
    "gateway/web/src/dashboard/",
    "gateway/src/cli/",
    "gateway/channels/src/",
];

/// Where the non-test code of `CLOCKED` files reads the wall clock
/// (`Utc::now`, `Local::now`, `SystemTime::now`, however imported).
fn wall_clock_reads(krate: &Crate) -> Vec<String> {
    let mut out = Vec::new();
    for file in krate
        .files
        .iter()
        .filter(|f| CLOCKED.iter().any(|c| f.rel.starts_with(c)))
    {
        for r in file.refs.iter().filter(|r| !r.test && !r.glob) {
            let path = krate.resolve(&r.module, &r.written, r.global);
            let n = path.len();
            if n >= 2
                && path[n - 1] == "now"
                && ["Utc", "Local", "SystemTime"].contains(&path[n - 2].as_str())
            {
                out.push(format!("{}:{} reads {}", file.rel, r.line, joined(&path)));
            }
        }
    }
    out
}

#[test]
fn the_loop_reads_no_wall_clock() {
    let found: Vec<String> = gateway_crates(&workspace_sources())
        .iter()
        .flat_map(wall_clock_reads)
        .collect();
    assert!(
        found.is_empty(),
        "the loop reads the injected Clock, never the wall clock:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_wall_clock_check_catches_a_read_grouped_or_inline() {
    let found = wall_clock_reads(&gateway_with(&[
        source(
            "gateway/core/src/turn/mod.rs",
            "use chrono::{DateTime, Utc};\nfn f() -> DateTime<Utc> { Utc::now() }",
        ),
        source(
            "gateway/core/src/jobs.rs",
            "fn f() {\n    let _ = chrono::Utc::now();\n    let _ = std::time::SystemTime::now();\n}",
        ),
        source(
            "gateway/core/src/lifecycle/trim.rs",
            "use std::time::{SystemTime as Wall};\nfn f() { let _ = Wall::now(); }\n\
             #[cfg(test)]\nmod tests { fn t() { let _ = chrono::Utc::now(); } }\n\
             #[test]\nfn u() { let _ = chrono::Utc::now(); }",
        ),
        source("gateway/core/src/lifecycle/x.rs", "fn f() { tracing::info!(\"{}\", chrono::Local::now()); }"),
        source("gateway/web/src/http.rs", "fn f() { let _ = chrono::Utc::now(); }"),
    ]));
    assert_eq!(
        found,
        [
            "gateway/core/src/turn/mod.rs:2 reads chrono::Utc::now",
            "gateway/core/src/jobs.rs:2 reads chrono::Utc::now",
            "gateway/core/src/jobs.rs:3 reads std::time::SystemTime::now",
            "gateway/core/src/lifecycle/trim.rs:2 reads std::time::SystemTime::now",
            "gateway/core/src/lifecycle/x.rs:1 reads chrono::Local::now",
        ]
    );
}

// --- no import circles ----------------------------------------------------------

/// The files of `krate` that import each other in a loop, each loop once as
/// `a.rs -> b.rs -> a.rs`: an import (outside tests) of a path that resolves
/// into another file's module is an arrow to that file (the file of the
/// longest module the path starts with), unless that file is a submodule of
/// the importer's.
fn import_circles(krate: &Crate) -> Vec<String> {
    let files: Vec<(&str, &[String])> = krate
        .files
        .iter()
        .map(|f| (f.rel.as_str(), f.module.as_slice()))
        .collect();
    let file_of = |path: &[String]| {
        files
            .iter()
            .enumerate()
            .filter(|(_, (_, module))| path.starts_with(module))
            .max_by_key(|(_, (_, module))| module.len())
            .map(|(i, _)| i)
    };
    let mut arrows: Vec<Vec<usize>> = vec![Vec::new(); files.len()];
    for (i, file) in krate.files.iter().enumerate() {
        for r in file.refs.iter().filter(|r| !r.test) {
            let path = krate.resolve(&r.module, &r.written, r.global);
            if path.first().map(String::as_str) != Some("crate") {
                continue;
            }
            // A module uses its own submodules (a router its handlers): an
            // arrow into the file's own subtree is no arrow back.
            let below = |j: &usize| files[*j].1.starts_with(files[i].1);
            if let Some(j) = file_of(&path).filter(|j| *j != i && !below(j)) {
                if !arrows[i].contains(&j) {
                    arrows[i].push(j);
                }
            }
        }
    }
    // A loop through `start` whose other files all come after it: each loop once.
    fn back_to(
        start: usize,
        at: usize,
        arrows: &[Vec<usize>],
        path: &mut Vec<usize>,
        out: &mut Vec<Vec<usize>>,
    ) {
        for &next in &arrows[at] {
            if next == start {
                let mut found = path.clone();
                found.push(start);
                out.push(found);
            } else if next > start && !path.contains(&next) && path.len() < 8 {
                path.push(next);
                back_to(start, next, arrows, path, out);
                path.pop();
            }
        }
    }
    let mut loops = Vec::new();
    for start in 0..files.len() {
        back_to(start, start, &arrows, &mut vec![start], &mut loops);
    }
    let mut out: Vec<String> = loops
        .into_iter()
        .map(|l| {
            l.iter()
                .map(|&i| files[i].0)
                .collect::<Vec<_>>()
                .join(" -> ")
        })
        .collect();
    out.sort();
    out
}

#[test]
fn no_two_files_import_each_other_in_a_loop() {
    let sources = workspace_sources();
    let crates = Crate::all(&sources);
    let libraries: Vec<&Crate> = crates
        .iter()
        .filter(|c| c.files.iter().any(|f| f.rel.ends_with("/src/lib.rs")))
        .collect();
    assert!(libraries.len() >= 5, "read the workspace's libraries");
    let circles: Vec<String> = libraries.iter().flat_map(|c| import_circles(c)).collect();
    assert!(circles.is_empty(), "{circles:#?}");
}

#[test]
fn the_circle_check_catches_a_loop_grouped_inline_or_through_a_third_file() {
    let krate = Crate::new(
        [
            source(
                "gateway/src/lib.rs",
                "pub mod a; pub mod b; pub mod c; pub mod d; pub mod e; pub mod f; pub mod g;",
            ),
            source(
                "gateway/src/a.rs",
                "use crate::{b::B, e::E};\npub struct A;",
            ),
            source(
                "gateway/src/b.rs",
                "pub struct B;\nfn f() -> super::a::A { crate::a::A }",
            ),
            source("gateway/src/c.rs", "pub struct C(crate::d::D);"),
            // A parent uses its child, the child its parent: no loop.
            source("gateway/src/g/mod.rs", "mod h; pub struct G(h::H);"),
            source("gateway/src/g/h.rs", "pub struct H;\nfn k(_: super::G) {}"),
            source("gateway/src/d.rs", "pub struct D;\nuse super::f::F;"),
            source("gateway/src/f.rs", "pub struct F;\nfn g(_: crate::c::C) {}"),
            // A test module may import what imports its file.
            source(
                "gateway/src/e.rs",
                "pub struct E;\n#[cfg(test)]\nmod tests { use crate::a::A; }",
            ),
        ]
        .iter()
        .map(parse_file)
        .collect(),
    );
    assert_eq!(
        import_circles(&krate),
        [
            "gateway/src/a.rs -> gateway/src/b.rs -> gateway/src/a.rs",
            "gateway/src/c.rs -> gateway/src/d.rs -> gateway/src/f.rs -> gateway/src/c.rs",
        ]
    );
}

/// The gateway's library crates, one a layer, lowest first.
const GATEWAY_LIBRARIES: &[&str] = &[
    "gateway/core/src/",
    "gateway/channels/src/",
    "gateway/web/src/",
    "gateway/src/",
];

/// Each workspace member (by package name) and the workspace crates its
/// `[dependencies]` name: exactly these. A crate depends only on crates
/// below it, so an upper module named from below is a compile error; the
/// rules left in `FORBIDDEN` are those inside one crate.
const LAYERS: &[(&str, &[&str])] = &[
    ("steward-prompts", &[]),
    ("steward-memory", &["steward-prompts"]),
    ("steward-pairing", &["steward-memory"]),
    ("steward-adapters", &[]),
    (
        "steward-core",
        &[
            "steward-adapters",
            "steward-memory",
            "steward-pairing",
            "steward-prompts",
        ],
    ),
    (
        "steward-channels",
        &["steward-adapters", "steward-core", "steward-memory"],
    ),
    (
        "steward-web",
        &[
            "steward-adapters",
            "steward-channels",
            "steward-core",
            "steward-memory",
            "steward-pairing",
        ],
    ),
    (
        "steward",
        &[
            "steward-adapters",
            "steward-channels",
            "steward-core",
            "steward-memory",
            "steward-pairing",
            "steward-web",
        ],
    ),
    (
        "steward-tests",
        &[
            "steward",
            "steward-adapters",
            "steward-memory",
            "steward-pairing",
        ],
    ),
];

/// memory's feature of raw record writes: no member's `[dependencies]` turn
/// it on, only test targets' `[dev-dependencies]`.
const FIXTURES_FEATURE: &str = "fixtures";

fn toml_of(src: &Source) -> toml::Table {
    src.text
        .parse()
        .unwrap_or_else(|e| panic!("{}: {e}", src.rel))
}

/// Where the members' manifests in `sources` depart from `LAYERS`: a
/// workspace crate named that the layer does not list, one listed that is
/// not named, a member `LAYERS` does not know, and a production dependency
/// that turns on memory's `fixtures`.
fn layer_violations(sources: &[Source]) -> Vec<String> {
    let root = sources
        .iter()
        .find(|s| s.rel == "Cargo.toml")
        .map(toml_of)
        .expect("the workspace manifest");
    let workspace = &root["workspace"];
    let shared = workspace["dependencies"]
        .as_table()
        .expect("[workspace.dependencies]");
    let package_of = |key: &str, entry: &toml::Value| -> String {
        let inherited = entry.get("workspace").and_then(|w| w.as_bool()) == Some(true);
        let entry = if inherited {
            shared.get(key).unwrap_or(entry)
        } else {
            entry
        };
        entry
            .get("package")
            .and_then(|p| p.as_str())
            .unwrap_or(key)
            .to_string()
    };
    let features_of = |key: &str, entry: &toml::Value| -> Vec<String> {
        let mut out = Vec::new();
        for e in [Some(entry), shared.get(key)].into_iter().flatten() {
            if let Some(list) = e.get("features").and_then(|f| f.as_array()) {
                out.extend(list.iter().filter_map(|f| f.as_str()).map(String::from));
            }
        }
        out
    };
    let members: Vec<&str> = workspace["members"]
        .as_array()
        .expect("[workspace] members")
        .iter()
        .filter_map(|m| m.as_str())
        .collect();
    let mut manifests = Vec::new();
    for dir in &members {
        let rel = format!("{dir}/Cargo.toml");
        let Some(src) = sources.iter().find(|s| s.rel == rel) else {
            return vec![format!("{rel}: no manifest")];
        };
        let manifest = toml_of(src);
        let name = manifest["package"]["name"]
            .as_str()
            .expect("package.name")
            .to_string();
        manifests.push((rel, name, manifest));
    }
    let ours: HashSet<&str> = manifests.iter().map(|(_, n, _)| n.as_str()).collect();
    let mut out = Vec::new();
    for (rel, name, manifest) in &manifests {
        let Some((_, allowed)) = LAYERS.iter().find(|(member, _)| member == name) else {
            out.push(format!("{rel}: {name} has no layer"));
            continue;
        };
        let deps = manifest.get("dependencies").and_then(|d| d.as_table());
        let mut named: Vec<String> = Vec::new();
        for (key, entry) in deps.into_iter().flatten() {
            let package = package_of(key, entry);
            if package == "steward-memory"
                && features_of(key, entry)
                    .iter()
                    .any(|f| f == FIXTURES_FEATURE)
            {
                out.push(format!(
                    "{rel}: {name} turns on memory's {FIXTURES_FEATURE}"
                ));
            }
            if ours.contains(package.as_str()) {
                named.push(package);
            }
        }
        named.sort();
        let mut expected: Vec<String> = allowed
            .iter()
            .filter(|d| ours.contains(*d))
            .map(|d| d.to_string())
            .collect();
        expected.sort();
        for extra in named.iter().filter(|d| !expected.contains(d)) {
            out.push(format!("{rel}: {name} depends on {extra}"));
        }
        for missing in expected.iter().filter(|d| !named.contains(d)) {
            out.push(format!("{rel}: {name} does not depend on {missing}"));
        }
    }
    out
}

#[test]
fn the_crates_depend_on_each_other_only_downwards() {
    let sources = workspace_sources();
    let found = layer_violations(&sources);
    assert!(found.is_empty(), "{found:#?}");
}

#[test]
fn the_layer_check_catches_an_upward_dependency_and_the_fixtures_feature() {
    let manifest = |rel: &str, name: &str, deps: &str| {
        source(
            rel,
            &format!("[package]\nname = \"{name}\"\n\n[dependencies]\n{deps}"),
        )
    };
    let found = layer_violations(&[
        source(
            "Cargo.toml",
            "[workspace]\nmembers = [\"memory\", \"gateway/core\", \"gateway/web\", \"x\"]\n\
             [workspace.dependencies]\n\
             memory = { package = \"steward-memory\", path = \"memory\" }\n\
             steward-core = { path = \"gateway/core\" }\n\
             web = { package = \"steward-web\", path = \"gateway/web\" }\n\
             tokio = \"1\"\n",
        ),
        manifest("memory/Cargo.toml", "steward-memory", ""),
        manifest(
            "gateway/core/Cargo.toml",
            "steward-core",
            "memory = { workspace = true, features = [\"fixtures\"] }\nweb.workspace = true\ntokio.workspace = true\n",
        ),
        manifest("gateway/web/Cargo.toml", "steward-web", "steward-core.workspace = true\n"),
        manifest("x/Cargo.toml", "steward-x", ""),
    ]);
    assert_eq!(
        found,
        [
            "gateway/core/Cargo.toml: steward-core turns on memory's fixtures",
            "gateway/core/Cargo.toml: steward-core depends on steward-web",
            "gateway/web/Cargo.toml: steward-web does not depend on steward-memory",
            "x/Cargo.toml: steward-x has no layer",
        ]
    );
}
