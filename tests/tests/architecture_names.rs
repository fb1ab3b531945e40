//! Architecture invariants over the sources, names: ARCHITECTURE.md names only
//! what exists and every invariant names its test, and no two public types
//! share a name. The sources are read as `architecture_layers.rs` describes.

// The resolver is included whole (`architecture/resolver.rs`); not every
// file uses all of it.
#![allow(dead_code)]

use proc_macro2::{Spacing, TokenStream, TokenTree};
use std::collections::{HashMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};
use syn::visit::{self, Visit};

include!("architecture/resolver.rs");

// --- ARCHITECTURE.md names only what exists -----------------------------------

/// Every name the workspace defines, as a document may cite it.
#[derive(Default)]
struct Defined {
    /// Module (its crate's name first: `["memory", "store"]`; a file outside
    /// a `src/` by its path) → the names defined or re-exported in it.
    items: HashMap<Vec<String>, HashSet<String>>,
    /// Module → the modules it re-exports whole (`pub use model::*`).
    globs: HashMap<Vec<String>, Vec<Vec<String>>>,
    /// Structs, enums, unions, type aliases and traits.
    types: HashSet<String>,
    /// Type or trait → the fns and consts of its impl blocks (or, for a
    /// trait, its body); enum → its variants.
    members: HashMap<String, HashSet<String>>,
    /// File → every fn defined in it, at any depth.
    fns_by_file: HashMap<String, HashSet<String>>,
    /// Every identifier of the code and every word of its string literals
    /// (doc comments excluded), and every word of the SQL migrations.
    words: HashSet<String>,
    /// The workspace's crates, by the name their dependents use.
    crates: HashSet<String>,
    /// Dependencies from outside the workspace, and `std`, `core`, `alloc`.
    external: HashSet<String>,
    /// Every top-level entry of the workspace (`gateway`, `.ci`, …).
    top_level: HashSet<String>,
}

struct NameCollector<'a> {
    defined: &'a mut Defined,
    rel: String,
    module: Vec<String>,
}

impl NameCollector<'_> {
    fn item(&mut self, name: String) {
        self.defined
            .items
            .entry(self.module.clone())
            .or_default()
            .insert(name);
    }

    fn member(&mut self, owner: &str, name: String) {
        self.defined
            .members
            .entry(owner.to_string())
            .or_default()
            .insert(name);
    }

    fn function(&mut self, name: String) {
        self.defined
            .fns_by_file
            .entry(self.rel.clone())
            .or_default()
            .insert(name);
    }

    /// A re-exported `use` tree: the names it binds, and the modules it re-exports whole.
    fn reexport(&mut self, tree: &syn::UseTree, prefix: &mut Vec<String>) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.reexport(&p.tree, prefix);
                prefix.pop();
            }
            syn::UseTree::Name(n) if n.ident != "self" => self.item(n.ident.to_string()),
            syn::UseTree::Name(_) => {
                if let Some(last) = prefix.last().cloned() {
                    self.item(last);
                }
            }
            syn::UseTree::Rename(r) => self.item(r.rename.to_string()),
            syn::UseTree::Glob(_) => {
                let base = self.absolute(prefix);
                self.defined
                    .globs
                    .entry(self.module.clone())
                    .or_default()
                    .push(base);
            }
            syn::UseTree::Group(g) => {
                for item in &g.items {
                    self.reexport(item, prefix);
                }
            }
        }
    }

    /// A module path written in this module, as a key of `Defined::items`.
    fn absolute(&self, written: &[String]) -> Vec<String> {
        match written.first().map(String::as_str) {
            Some("crate") => self.module[..1]
                .iter()
                .chain(&written[1..])
                .cloned()
                .collect(),
            Some("self") => self.module.iter().chain(&written[1..]).cloned().collect(),
            Some("super") => {
                let ups = written.iter().take_while(|s| *s == "super").count();
                let keep = self.module.len().saturating_sub(ups).max(1);
                self.module[..keep]
                    .iter()
                    .chain(&written[ups..])
                    .cloned()
                    .collect()
            }
            _ => self.module.iter().chain(written).cloned().collect(),
        }
    }
}

impl<'ast> Visit<'ast> for NameCollector<'_> {
    fn visit_item_mod(&mut self, item: &'ast syn::ItemMod) {
        self.item(item.ident.to_string());
        self.module.push(item.ident.to_string());
        visit::visit_item_mod(self, item);
        self.module.pop();
    }

    fn visit_item_struct(&mut self, item: &'ast syn::ItemStruct) {
        self.item(item.ident.to_string());
        self.defined.types.insert(item.ident.to_string());
        visit::visit_item_struct(self, item);
    }

    fn visit_item_union(&mut self, item: &'ast syn::ItemUnion) {
        self.item(item.ident.to_string());
        self.defined.types.insert(item.ident.to_string());
        visit::visit_item_union(self, item);
    }

    fn visit_item_type(&mut self, item: &'ast syn::ItemType) {
        self.item(item.ident.to_string());
        self.defined.types.insert(item.ident.to_string());
        visit::visit_item_type(self, item);
    }

    fn visit_item_enum(&mut self, item: &'ast syn::ItemEnum) {
        let name = item.ident.to_string();
        self.item(name.clone());
        self.defined.types.insert(name.clone());
        for variant in &item.variants {
            self.member(&name, variant.ident.to_string());
        }
        visit::visit_item_enum(self, item);
    }

    fn visit_item_trait(&mut self, item: &'ast syn::ItemTrait) {
        let name = item.ident.to_string();
        self.item(name.clone());
        self.defined.types.insert(name.clone());
        for inner in &item.items {
            match inner {
                syn::TraitItem::Fn(f) => {
                    self.member(&name, f.sig.ident.to_string());
                    self.function(f.sig.ident.to_string());
                }
                syn::TraitItem::Const(c) => self.member(&name, c.ident.to_string()),
                _ => {}
            }
        }
        visit::visit_item_trait(self, item);
    }

    fn visit_item_impl(&mut self, item: &'ast syn::ItemImpl) {
        if let syn::Type::Path(p) = &*item.self_ty {
            if let Some(owner) = p.path.segments.last().map(|s| s.ident.to_string()) {
                for inner in &item.items {
                    match inner {
                        syn::ImplItem::Fn(f) => {
                            self.member(&owner, f.sig.ident.to_string());
                            self.function(f.sig.ident.to_string());
                        }
                        syn::ImplItem::Const(c) => self.member(&owner, c.ident.to_string()),
                        _ => {}
                    }
                }
            }
        }
        visit::visit_item_impl(self, item);
    }

    fn visit_item_fn(&mut self, item: &'ast syn::ItemFn) {
        self.item(item.sig.ident.to_string());
        self.function(item.sig.ident.to_string());
        visit::visit_item_fn(self, item);
    }

    fn visit_item_const(&mut self, item: &'ast syn::ItemConst) {
        self.item(item.ident.to_string());
        visit::visit_item_const(self, item);
    }

    fn visit_item_static(&mut self, item: &'ast syn::ItemStatic) {
        self.item(item.ident.to_string());
        visit::visit_item_static(self, item);
    }

    fn visit_item_macro(&mut self, item: &'ast syn::ItemMacro) {
        if let Some(name) = &item.ident {
            self.item(name.to_string());
        }
        // `named_enum! { enum Scope { … } }` declares its enum as an item of
        // the module it stands in.
        if item.mac.path.is_ident("named_enum") {
            if let Ok(body) = syn::parse2::<syn::File>(item.mac.tokens.clone()) {
                for declared in &body.items {
                    Visit::visit_item(self, declared);
                }
            }
        }
        visit::visit_item_macro(self, item);
    }

    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        if !matches!(item.vis, syn::Visibility::Inherited) {
            self.reexport(&item.tree, &mut Vec::new());
        }
    }
}

/// Identifiers and words of string literals in `tokens`, doc comments excluded.
fn code_words(tokens: TokenStream, out: &mut HashSet<String>) {
    for tt in tokens {
        match tt {
            TokenTree::Ident(i) => {
                out.insert(i.to_string().trim_start_matches("r#").to_string());
            }
            TokenTree::Literal(l) => words_of(&l.to_string(), out),
            TokenTree::Group(g) => {
                let doc = g
                    .stream()
                    .into_iter()
                    .next()
                    .is_some_and(|first| matches!(&first, TokenTree::Ident(i) if i == "doc"));
                if !doc {
                    code_words(g.stream(), out);
                }
            }
            TokenTree::Punct(_) => {}
        }
    }
}

/// The `[A-Za-z0-9_]` runs of `text`.
fn words_of(text: &str, out: &mut HashSet<String>) {
    for word in text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
        if !word.is_empty() {
            out.insert(word.to_string());
        }
    }
}

/// What the workspace's `Cargo.toml` calls its members (`dir` → name) and
/// its outside dependencies.
fn manifest_names(sources: &[Source]) -> (HashMap<String, String>, HashSet<String>) {
    let mut members = HashMap::new();
    let mut external: HashSet<String> = ["std", "core", "alloc"].map(String::from).into();
    let Some(root) = sources.iter().find(|s| s.rel == "Cargo.toml") else {
        return (members, external);
    };
    let mut in_deps = false;
    for line in root.text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_deps = line == "[workspace.dependencies]";
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        if !in_deps || line.starts_with('#') {
            continue;
        }
        let name = key.trim().replace('-', "_");
        match value.split_once("path = \"") {
            Some((_, rest)) => {
                let dir = rest.split('"').next().unwrap_or_default();
                members.insert(dir.to_string(), name);
            }
            None => {
                external.insert(name);
            }
        }
    }
    (members, external)
}

impl Defined {
    /// Every name `sources` define; `root` (when on disk) for the migrations
    /// and the top-level entries.
    fn of(sources: &[Source], root: Option<&Path>) -> Defined {
        let (members, external) = manifest_names(sources);
        let mut defined = Defined {
            external,
            ..Defined::default()
        };
        for src in sources.iter().filter(|s| s.rel.ends_with(".rs")) {
            let facts = parse_file(src);
            let module = match src.rel.split_once("/src/") {
                Some((dir, _)) if src.rel.matches('/').count() >= 2 || dir.is_empty() => {
                    let name = members.get(dir).cloned().unwrap_or_else(|| {
                        // A member its dependents do not name: its package name.
                        sources
                            .iter()
                            .find(|m| m.rel == format!("{dir}/Cargo.toml"))
                            .and_then(|m| m.text.lines().find_map(|l| l.strip_prefix("name = ")))
                            .map(|n| n.trim_matches('"').replace('-', "_"))
                            .unwrap_or_else(|| dir.to_string())
                    });
                    defined.crates.insert(name.clone());
                    let mut module = vec![name];
                    module.extend(facts.module[1..].iter().cloned());
                    module
                }
                _ => vec![src.rel.clone()],
            };
            let mut collector = NameCollector {
                defined: &mut defined,
                rel: src.rel.clone(),
                module,
            };
            collector.visit_file(&facts.syntax);
            let tokens: TokenStream = src.text.parse().expect("tokens of a parsed file");
            code_words(tokens, &mut defined.words);
        }
        for manifest in sources.iter().filter(|s| s.rel.ends_with("Cargo.toml")) {
            words_of(&manifest.text, &mut defined.words);
        }
        if let Some(root) = root {
            for dialect in ["sqlite", "postgres"] {
                let dir = root.join("memory/migrations").join(dialect);
                for entry in fs::read_dir(&dir).expect("migrations") {
                    let text = fs::read_to_string(entry.expect("migration").path()).expect("read");
                    words_of(&text, &mut defined.words);
                }
            }
            for entry in fs::read_dir(root).expect("workspace root") {
                let name = entry.expect("entry").file_name();
                defined
                    .top_level
                    .insert(name.to_string_lossy().into_owned());
            }
        }
        defined
    }

    /// Whether module `key` defines or re-exports `name`.
    fn module_has(&self, key: &[String], name: &str, depth: usize) -> bool {
        self.items.get(key).is_some_and(|n| n.contains(name))
            || (depth < 4
                && self
                    .globs
                    .get(key)
                    .is_some_and(|bases| bases.iter().any(|b| self.module_has(b, name, depth + 1))))
    }

    /// Whether `path` (`Type::member`, `module::item`, `a::b::c`, or one name) exists.
    fn exists(&self, path: &[&str]) -> bool {
        let Some((name, parent)) = path.split_last() else {
            return false;
        };
        if parent.is_empty() {
            return self.types.contains(*name)
                || self.members.values().any(|m| m.contains(*name))
                || self.items.values().any(|n| n.contains(*name));
        }
        let in_module = self.items.keys().any(|key| {
            key.len() >= parent.len()
                && key[key.len() - parent.len()..]
                    .iter()
                    .zip(parent)
                    .all(|(a, b)| a == b)
                && self.module_has(key, name, 0)
        });
        let member = parent.last().is_some_and(|owner| {
            self.members.get(*owner).is_some_and(|m| m.contains(*name))
                && (parent.len() == 1 || self.exists(parent))
        });
        in_module || member
    }
}

/// Backticked spans of a Markdown text, outside fenced blocks, each with the
/// line it starts on.
fn code_spans(text: &str) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    let mut fenced = false;
    let mut open: Option<(String, usize)> = None;
    for (n, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        for (i, part) in line.split('`').enumerate() {
            if i > 0 {
                match open.take() {
                    Some(span) => out.push(span),
                    None => open = Some((String::new(), n + 1)),
                }
            }
            if let Some((span, _)) = open.as_mut() {
                span.push_str(part);
            }
        }
        if let Some((span, _)) = open.as_mut() {
            span.push('\n');
        }
    }
    out
}

/// `Inbound`, `TurnLoop`: a capital first, a lower-case letter, no underscore.
fn is_camel_case(s: &str) -> bool {
    is_ident(s)
        && s.starts_with(|c: char| c.is_ascii_uppercase())
        && s.chars().any(|c| c.is_ascii_lowercase())
        && !s.contains('_')
}

/// `seen_and_user`: lower case with at least one underscore.
fn is_snake_case(s: &str) -> bool {
    is_ident(s)
        && s.contains('_')
        && s.starts_with(|c: char| c.is_ascii_lowercase())
        && !s.chars().any(|c| c.is_ascii_uppercase())
}

/// What of `doc` names something `defined` lacks, one line each.
///
/// The spans read as names, and how each is checked:
/// - `a::b` and `a::b::c` (identifiers joined by `::`): the last segment is an
///   item of a module whose path ends with the others (`llm::offline::asks`,
///   `memory::Db`, through `pub use` re-exports), or a member of the type,
///   trait or enum the one before it names (`Db::retrieve`, `Status::Active`:
///   impl fns and consts, trait methods, variants), the rest of the path
///   existing in turn. A path whose first segment is an outside dependency
///   (`axum::serve`) is not checked; one whose first segment is neither a
///   dependency nor anything of the workspace is reported.
///   `crate::x` is `x` in whichever crate the text is about.
/// - one CamelCase identifier (`Inbound`): a type, trait, variant or item of
///   that name anywhere in the workspace.
/// - one snake_case identifier with an underscore (`ranked_records`): it may
///   name a function, a table, a column, a configuration key or a job, so it
///   is checked only for occurring at all: as an identifier of the code, a
///   word of a string literal (doc comments excluded), of a manifest (bench
///   and feature names) or of a SQL migration.
///   A name that was removed from the code is then reported, and nothing that
///   exists is. Single words without an underscore are English as often as
///   Rust, and are not checked.
/// - `dir/file.rs::fn_name` (a test): that file defines a fn of that name.
/// - a path starting with a top-level entry of the workspace (`gateway/…`,
///   `.ci/run`), without spaces, braces or placeholders: it exists.
///
/// Anything else — spans with a space, `/` (but the two forms above), a file
/// extension, `=` or brackets, keys like `llm.tools`, SCREAMING_CASE
/// constants alone — is not read as a name.
fn missing_names(doc: &str, defined: &Defined, root: Option<&Path>) -> Vec<String> {
    let mut out = Vec::new();
    for (span, line) in code_spans(doc) {
        let span = span.as_str();
        if let Some((file, function)) = span.split_once(".rs::") {
            let file = format!("{file}.rs");
            let found = defined
                .fns_by_file
                .get(&file)
                .is_some_and(|fns| fns.contains(function));
            if !found {
                out.push(format!(
                    "line {line}: `{span}` (no fn {function} in {file})"
                ));
            }
            continue;
        }
        let first = span.split(['/', '.']).next().unwrap_or_default();
        let plain_path = span
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-./".contains(c));
        if let Some(root) = root {
            if span.contains('/')
                && plain_path
                && (defined.top_level.contains(first)
                    || span.starts_with('.')
                        && defined.top_level.contains(&format!(
                            ".{}",
                            span[1..].split('/').next().unwrap_or_default()
                        )))
            {
                if !root.join(span).exists() {
                    out.push(format!("line {line}: `{span}` (no such file)"));
                }
                continue;
            }
        }
        let mut segments: Vec<&str> = span.split("::").collect();
        if segments.len() > 1 && segments[0] == "crate" {
            // `crate::turn`: a module of whichever crate the text is about.
            segments.remove(0);
            if !defined.exists(&segments) {
                out.push(format!("line {line}: `{span}`"));
            }
        } else if segments.len() > 1 && segments.iter().all(|s| is_ident(s)) {
            let root_segment = segments[0].to_string();
            let ours = defined.crates.contains(&root_segment) || defined.exists(&segments[..1]);
            if defined.external.contains(&root_segment) && !ours {
                continue;
            }
            if !defined.exists(&segments) {
                out.push(format!("line {line}: `{span}`"));
            }
        } else if is_camel_case(span) {
            if !defined.exists(&[span]) {
                out.push(format!("line {line}: `{span}`"));
            }
        } else if is_snake_case(span) && !defined.words.contains(span) {
            out.push(format!("line {line}: `{span}` (nowhere in the code)"));
        }
    }
    out
}

#[test]
fn architecture_md_names_only_what_exists() {
    let root = workspace_root();
    let sources = workspace_sources();
    let defined = Defined::of(&sources, Some(&root));
    // ARCHITECTURE.md, and its long form.
    for file in ["ARCHITECTURE.md", "docs/architecture.md"] {
        let doc = fs::read_to_string(root.join(file)).expect(file);
        let missing = missing_names(&doc, &defined, Some(&root));
        assert!(
            missing.is_empty(),
            "{file} names what the code does not have:\n{}",
            missing.join("\n")
        );
    }
}

#[test]
fn the_name_check_reports_a_made_up_name() {
    let sources = [
        source(
            "Cargo.toml",
            "[workspace.dependencies]\nmemory = { package = \"steward-memory\", path = \"memory\" }\naxum = \"0.8\"",
        ),
        source(
            "memory/src/lib.rs",
            "pub mod store; pub use store::Db; pub use model::*; pub mod model;",
        ),
        source(
            "memory/src/store/mod.rs",
            "pub struct Db; impl Db { pub fn retrieve(&self) {} pub const CAP: usize = 1; }
             pub(super) fn ranked_records() {}",
        ),
        source("memory/src/model.rs", "pub enum Status { Active, Pending }"),
        source(
            "memory/Cargo.toml",
            "[package]\nname = \"steward-memory\"\n[[bench]]\nname = \"retrieval_quality\"",
        ),
        source(
            "tests/tests/storage.rs",
            "#[tokio::test] async fn records_round_trip() {} mod inner { fn helper() {} }",
        ),
    ];
    let defined = Defined::of(&sources, None);
    let doc = "\
Real: `Db::retrieve`, `memory::Db`, `memory::Db::retrieve`, `Db::CAP`, `Status::Active`,
`memory::Status`, `store::Db`, `Db`, `ranked_records`, `tests/tests/storage.rs::records_round_trip`,
`tests/tests/storage.rs::helper`, `axum::serve`, not names: `memory/src/lib.rs`, `a = b`,
`Db::retrieve()`, `steward serve`, `llm.tools`, `LAPSED`, `yes`, `crate::store`, `retrieval_quality`.
```
Db::inside_a_fence
```
Made up: `Db::no_such_fn`, `memory::store::NoSuchType`, `NoSuchType`, `Status::Gone`,
`no_such_helper`, `tests/tests/storage.rs::no_such_test`, `tests/tests/gone.rs::records_round_trip`,
`nowhere::Db`.";
    assert_eq!(
        missing_names(doc, &defined, None),
        [
            "line 8: `Db::no_such_fn`",
            "line 8: `memory::store::NoSuchType`",
            "line 8: `NoSuchType`",
            "line 8: `Status::Gone`",
            "line 9: `no_such_helper` (nowhere in the code)",
            "line 9: `tests/tests/storage.rs::no_such_test` (no fn no_such_test in tests/tests/storage.rs)",
            "line 9: `tests/tests/gone.rs::records_round_trip` (no fn records_round_trip in tests/tests/gone.rs)",
            "line 10: `nowhere::Db`",
        ]
    );
}

/// The invariants (paragraphs opening in bold under `## Invariants`) of `doc`
/// that cite no test as `path/file.rs::fn_name`, by their bold title.
fn invariants_without_tests(doc: &str) -> Vec<String> {
    let Some((_, section)) = doc.split_once("\n## Invariants\n") else {
        return vec!["no `## Invariants` section".into()];
    };
    let section = section.split("\n## ").next().unwrap_or_default();
    let mut out = Vec::new();
    for paragraph in section.split("\n\n").map(str::trim) {
        let Some(title) = paragraph
            .strip_prefix("**")
            .and_then(|rest| rest.split("**").next())
        else {
            continue;
        };
        let cites = code_spans(paragraph).iter().any(|(span, _)| {
            span.split_once(".rs::")
                .is_some_and(|(file, function)| !file.is_empty() && is_ident(function))
        });
        if !cites {
            out.push(title.replace('\n', " "));
        }
    }
    out
}

#[test]
fn every_invariant_in_architecture_md_names_its_test() {
    let doc =
        fs::read_to_string(workspace_root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    assert!(
        doc.matches("\n**").count() >= 10,
        "ARCHITECTURE.md lists its invariants in bold"
    );
    let untested = invariants_without_tests(&doc);
    assert!(
        untested.is_empty(),
        "invariants without the test that holds them: {untested:#?}"
    );
}

#[test]
fn an_invariant_without_a_test_is_reported() {
    let doc = "# A\n\n## Invariants\n\n**Held.** By `tests/tests/x.rs::holds_it`.\n\n\
               **Only said.** Nobody checks this\n(`Db::write`, `tests/tests/x.rs`).\n\n\
               ## Later\n\n**Not an invariant.** No test.\n";
    assert_eq!(invariants_without_tests(doc), ["Only said."]);
}

// --- one name for one thing ----------------------------------------------------

/// Every `pub struct|enum|trait` name the production sources (each crate's
/// `src/` but the tests crate's, outside `#[cfg(test)]`, macro bodies read as
/// tokens) declare more than once, with where.
fn repeated_public_types(sources: &[Source]) -> Vec<String> {
    struct Types(Vec<(String, usize)>);
    impl<'ast> Visit<'ast> for Types {
        fn visit_item_mod(&mut self, item: &'ast syn::ItemMod) {
            if !is_test_attr(&item.attrs) {
                visit::visit_item_mod(self, item);
            }
        }
        fn visit_item(&mut self, item: &'ast syn::Item) {
            let named = match item {
                syn::Item::Struct(i) => Some((&i.vis, &i.ident)),
                syn::Item::Enum(i) => Some((&i.vis, &i.ident)),
                syn::Item::Trait(i) => Some((&i.vis, &i.ident)),
                _ => None,
            };
            if let Some((syn::Visibility::Public(_), ident)) = named {
                self.0.push((ident.to_string(), line_of(ident.span())));
            }
            visit::visit_item(self, item);
        }
        fn visit_macro(&mut self, mac: &'ast syn::Macro) {
            fn scan(tokens: TokenStream, out: &mut Vec<(String, usize)>) {
                let trees: Vec<TokenTree> = tokens.into_iter().collect();
                for (i, tree) in trees.iter().enumerate() {
                    match (tree, trees.get(i + 1), trees.get(i + 2)) {
                        (TokenTree::Group(g), _, _) => scan(g.stream(), out),
                        (
                            TokenTree::Ident(p),
                            Some(TokenTree::Ident(kw)),
                            Some(TokenTree::Ident(name)),
                        ) if p == "pub"
                            && ["struct", "enum", "trait"].contains(&kw.to_string().as_str()) =>
                        {
                            out.push((name.to_string(), line_of(name.span())))
                        }
                        _ => {}
                    }
                }
            }
            scan(mac.tokens.clone(), &mut self.0);
        }
    }
    let mut seen: HashMap<String, Vec<String>> = HashMap::new();
    for src in sources {
        let production = src.rel.ends_with(".rs")
            && src
                .rel
                .split_once("/src/")
                .is_some_and(|(krate, _)| krate != "tests");
        if !production {
            continue;
        }
        let file = syn::parse_file(&src.text).unwrap_or_else(|e| panic!("{}: {e}", src.rel));
        let mut types = Types(Vec::new());
        types.visit_file(&file);
        for (name, line) in types.0 {
            seen.entry(name)
                .or_default()
                .push(format!("{}:{line}", src.rel));
        }
    }
    let mut out: Vec<String> = seen
        .into_iter()
        .filter(|(_, at)| at.len() > 1)
        .map(|(name, at)| format!("{name}: {}", at.join(", ")))
        .collect();
    out.sort();
    out
}

#[test]
fn no_two_public_types_share_a_name() {
    let repeated = repeated_public_types(&workspace_sources());
    assert!(
        repeated.is_empty(),
        "public types sharing a name:\n{}",
        repeated.join("\n")
    );
}

#[test]
fn the_name_check_catches_a_repeat_in_items_and_macro_bodies() {
    let repeated = repeated_public_types(&[
        source("a/src/lib.rs", "pub struct Approval;\npub(crate) struct Hit;\nmod tests_like { pub enum Kind {} }"),
        source("b/src/x.rs", "pub struct Hit;\nnamed! { pub enum Kind { A } }\nmacro_rules! m { () => { pub trait Approval {} } }"),
        source("b/src/y.rs", "#[cfg(test)]\nmod tests { pub struct Solo; }\npub struct Solo;"),
        source("tests/src/lib.rs", "pub struct Approval;"),
    ]);
    assert_eq!(
        repeated,
        [
            "Approval: a/src/lib.rs:1, b/src/x.rs:3",
            "Kind: a/src/lib.rs:3, b/src/x.rs:2"
        ]
    );
}

// --- the crates' layers --------------------------------------------------------
