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

use proc_macro2::{Spacing, TokenStream, TokenTree};
use std::collections::{HashMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};
use syn::visit::{self, Visit};

// --- reading sources -----------------------------------------------------------

/// One source file: its path relative to the workspace root, and its text.
struct Source {
    rel: String,
    text: String,
}

fn source(rel: &str, text: &str) -> Source {
    Source {
        rel: rel.into(),
        text: text.into(),
    }
}

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

/// Every `.rs` file and manifest below `root`, with paths relative to it, sorted.
fn read_sources(root: &Path) -> Vec<Source> {
    let mut files = Vec::new();
    rust_files(root, &mut files);
    let mut out: Vec<Source> = files
        .into_iter()
        .map(|path| {
            let rel = path
                .strip_prefix(root)
                .expect("below the root")
                .to_string_lossy()
                .replace('\\', "/");
            let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {rel}: {e}"));
            Source { rel, text }
        })
        .collect();
    out.sort_by(|a, b| a.rel.cmp(&b.rel));
    out
}

/// The workspace's sources (`.rs` files and manifests), read once per test.
fn workspace_sources() -> Vec<Source> {
    let root = workspace_root();
    assert!(
        root.join("memory/src/store").is_dir(),
        "not the workspace root: {}",
        root.display()
    );
    let sources = read_sources(&root);
    assert!(
        sources
            .iter()
            .filter(|s| s.rel.starts_with("gateway/core/src/"))
            .count()
            > 10,
        "found the gateway's sources"
    );
    sources
}

// --- what a file names ---------------------------------------------------------

/// A path as written: in a `use` tree (one per leaf) or in code.
#[derive(Clone)]
struct Ref {
    /// Its segments as written: `["super", "roles", "Models"]`.
    written: Vec<String>,
    /// The module it is written in: `["crate", "llm", "openai"]`.
    module: Vec<String>,
    /// Written with a leading `::` (an extern crate).
    global: bool,
    /// A glob import (`use written::*`).
    glob: bool,
    /// Inside `#[cfg(test)]` or `#[test]` code.
    test: bool,
    line: usize,
}

/// What a `use` leaf makes a name stand for: `module::name` → `target`.
struct Alias {
    module: Vec<String>,
    target: Vec<String>,
    global: bool,
}

/// What one file names, read with `syn` (and its tokens, for macro bodies).
struct FileFacts {
    rel: String,
    syntax: syn::File,
    /// The module the file is: `["crate", "llm", "openai"]`.
    module: Vec<String>,
    refs: Vec<Ref>,
    /// `(full path of the bound name, alias)`.
    aliases: Vec<(Vec<String>, Alias)>,
    /// The modules it declares (`mod x;`, `mod x { … }`), as full paths.
    modules: Vec<Vec<String>>,
    /// Method calls, in code and in macro bodies: `(name, line)`.
    methods: Vec<(String, usize)>,
    /// Impl blocks' self types, last segment: `(name, line)`.
    impls: Vec<(String, usize)>,
    /// Every identifier token of the file (comments and strings hold none).
    idents: Vec<(String, usize)>,
    /// Every `feature = "name"` in the file's tokens (`cfg`, `cfg_attr`, `cfg!`).
    features: Vec<(String, usize)>,
}

/// The module a file is, from its path: `x/src/lib.rs` and `x/src/main.rs`
/// are `crate`, `x/src/a/mod.rs` and `x/src/a.rs` are `crate::a`; a test,
/// bench or example file is a crate of its own.
fn module_of(rel: &str) -> Vec<String> {
    let mut module = vec!["crate".to_string()];
    let Some((_, inner)) = rel.split_once("/src/") else {
        return module;
    };
    let inner = inner.strip_suffix(".rs").unwrap_or(inner);
    let parts: Vec<&str> = inner.split('/').collect();
    if parts.first() == Some(&"bin") {
        return module;
    }
    for (i, part) in parts.iter().enumerate() {
        let last = i + 1 == parts.len();
        if last && (*part == "mod" || (i == 0 && (*part == "lib" || *part == "main"))) {
            break;
        }
        module.push(part.to_string());
    }
    module
}

/// The line a span starts on (1-based).
fn line_of(span: proc_macro2::Span) -> usize {
    span.start().line
}

fn is_test_attr(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        let path = a.path();
        if path.is_ident("cfg") {
            // `cfg(test)`, and `cfg(all(test, …))` alike; not `cfg(not(test))`.
            a.meta.require_list().is_ok_and(|l| {
                let idents = idents_of(l.tokens.clone());
                idents.iter().any(|(i, _)| i == "test") && !idents.iter().any(|(i, _)| i == "not")
            })
        } else {
            path.segments.last().is_some_and(|s| s.ident == "test")
        }
    })
}

/// Every identifier in `tokens`, with its line, groups included.
fn idents_of(tokens: TokenStream) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    fn walk(tokens: TokenStream, out: &mut Vec<(String, usize)>) {
        for tt in tokens {
            match tt {
                TokenTree::Ident(i) => out.push((i.to_string(), line_of(i.span()))),
                TokenTree::Group(g) => walk(g.stream(), out),
                _ => {}
            }
        }
    }
    walk(tokens, &mut out);
    out
}

/// Every `feature = "name"` in `tokens`.
fn features_of(tokens: TokenStream, out: &mut Vec<(String, usize)>) {
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    for (i, tt) in trees.iter().enumerate() {
        if let TokenTree::Group(g) = tt {
            features_of(g.stream(), out);
        }
        if let (TokenTree::Ident(key), Some(TokenTree::Punct(eq)), Some(TokenTree::Literal(lit))) =
            (tt, trees.get(i + 1), trees.get(i + 2))
        {
            if key == "feature" && eq.as_char() == '=' {
                let text = lit.to_string();
                let name = text.trim_matches('"');
                out.push((name.to_string(), line_of(key.span())));
            }
        }
    }
}

struct Collector {
    module: Vec<String>,
    test: usize,
    refs: Vec<Ref>,
    aliases: Vec<(Vec<String>, Alias)>,
    modules: Vec<Vec<String>>,
    methods: Vec<(String, usize)>,
    impls: Vec<(String, usize)>,
}

impl Collector {
    fn push_ref(&mut self, written: Vec<String>, global: bool, glob: bool, line: usize) {
        if written.is_empty() {
            return;
        }
        self.refs.push(Ref {
            written,
            module: self.module.clone(),
            global,
            glob,
            test: self.test > 0,
            line,
        });
    }

    /// Each leaf of a `use` tree: a reference, and the name it binds.
    fn use_tree(&mut self, tree: &syn::UseTree, prefix: &mut Vec<String>, global: bool) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(&p.tree, prefix, global);
                prefix.pop();
            }
            syn::UseTree::Name(n) => self.use_leaf(prefix, &n.ident, &n.ident, global),
            syn::UseTree::Rename(r) => self.use_leaf(prefix, &r.ident, &r.rename, global),
            syn::UseTree::Glob(g) => {
                let line = line_of(g.star_token.span);
                self.push_ref(prefix.clone(), global, true, line);
            }
            syn::UseTree::Group(g) => {
                for item in &g.items {
                    self.use_tree(item, prefix, global);
                }
            }
        }
    }

    fn use_leaf(
        &mut self,
        prefix: &[String],
        ident: &syn::Ident,
        bound: &syn::Ident,
        global: bool,
    ) {
        let mut target = prefix.to_vec();
        if ident != "self" {
            target.push(ident.to_string());
        }
        let name = if bound == "self" {
            target.last().cloned().unwrap_or_default()
        } else {
            bound.to_string()
        };
        self.push_ref(target.clone(), global, false, line_of(ident.span()));
        if name != "_" && !name.is_empty() {
            let mut key = self.module.clone();
            key.push(name);
            self.aliases.push((
                key,
                Alias {
                    module: self.module.clone(),
                    target,
                    global,
                },
            ));
        }
    }

    /// Paths and method calls in a macro body, read as tokens:
    /// `a::b::c` sequences and `.name(`.
    fn macro_tokens(&mut self, tokens: TokenStream) {
        let trees: Vec<TokenTree> = tokens.into_iter().collect();
        let mut i = 0;
        while i < trees.len() {
            match &trees[i] {
                TokenTree::Group(g) => {
                    self.macro_tokens(g.stream());
                    i += 1;
                }
                TokenTree::Punct(p) if p.as_char() == '.' => {
                    if let (Some(TokenTree::Ident(name)), Some(TokenTree::Group(_))) =
                        (trees.get(i + 1), trees.get(i + 2))
                    {
                        self.methods.push((name.to_string(), line_of(name.span())));
                    }
                    i += 1;
                }
                TokenTree::Ident(_) | TokenTree::Punct(_) => {
                    let global = path_sep(&trees, i);
                    let start = if global { i + 2 } else { i };
                    let mut segments = Vec::new();
                    let mut j = start;
                    let mut line = 0;
                    while let Some(TokenTree::Ident(id)) = trees.get(j) {
                        if segments.is_empty() {
                            line = line_of(id.span());
                        }
                        segments.push(id.to_string());
                        if path_sep(&trees, j + 1) {
                            j += 3;
                        } else {
                            j += 1;
                            break;
                        }
                    }
                    if segments.is_empty() {
                        i += 1;
                    } else {
                        self.push_ref(segments, global, false, line);
                        i = j;
                    }
                }
                TokenTree::Literal(_) => i += 1,
            }
        }
    }
}

/// Whether `trees[i..]` starts with `::`.
fn path_sep(trees: &[TokenTree], i: usize) -> bool {
    matches!(
        (trees.get(i), trees.get(i + 1)),
        (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b)))
            if a.as_char() == ':' && a.spacing() == Spacing::Joint && b.as_char() == ':'
    )
}

fn item_attrs(item: &syn::Item) -> &[syn::Attribute] {
    match item {
        syn::Item::Const(i) => &i.attrs,
        syn::Item::Enum(i) => &i.attrs,
        syn::Item::ExternCrate(i) => &i.attrs,
        syn::Item::Fn(i) => &i.attrs,
        syn::Item::ForeignMod(i) => &i.attrs,
        syn::Item::Impl(i) => &i.attrs,
        syn::Item::Macro(i) => &i.attrs,
        syn::Item::Mod(i) => &i.attrs,
        syn::Item::Static(i) => &i.attrs,
        syn::Item::Struct(i) => &i.attrs,
        syn::Item::Trait(i) => &i.attrs,
        syn::Item::TraitAlias(i) => &i.attrs,
        syn::Item::Type(i) => &i.attrs,
        syn::Item::Union(i) => &i.attrs,
        syn::Item::Use(i) => &i.attrs,
        _ => &[],
    }
}

impl<'ast> Visit<'ast> for Collector {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        let test = is_test_attr(item_attrs(item));
        self.test += usize::from(test);
        visit::visit_item(self, item);
        self.test -= usize::from(test);
    }

    fn visit_impl_item(&mut self, item: &'ast syn::ImplItem) {
        let attrs: &[syn::Attribute] = match item {
            syn::ImplItem::Fn(f) => &f.attrs,
            syn::ImplItem::Const(c) => &c.attrs,
            syn::ImplItem::Type(t) => &t.attrs,
            _ => &[],
        };
        let test = is_test_attr(attrs);
        self.test += usize::from(test);
        visit::visit_impl_item(self, item);
        self.test -= usize::from(test);
    }

    fn visit_item_mod(&mut self, item: &'ast syn::ItemMod) {
        self.module.push(item.ident.to_string());
        self.modules.push(self.module.clone());
        if item.content.is_some() {
            visit::visit_item_mod(self, item);
        }
        self.module.pop();
    }

    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        let global = item.leading_colon.is_some();
        self.use_tree(&item.tree, &mut Vec::new(), global);
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        let written: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        let line = path
            .segments
            .first()
            .map(|s| line_of(s.ident.span()))
            .unwrap_or(0);
        self.push_ref(written, path.leading_colon.is_some(), false, line);
        visit::visit_path(self, path);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        visit::visit_macro(self, mac);
        self.macro_tokens(mac.tokens.clone());
    }

    fn visit_expr_method_call(&mut self, call: &'ast syn::ExprMethodCall) {
        self.methods
            .push((call.method.to_string(), line_of(call.method.span())));
        visit::visit_expr_method_call(self, call);
    }

    fn visit_item_impl(&mut self, item: &'ast syn::ItemImpl) {
        if let syn::Type::Path(p) = &*item.self_ty {
            if let Some(last) = p.path.segments.last() {
                self.impls
                    .push((last.ident.to_string(), line_of(last.ident.span())));
            }
        }
        visit::visit_item_impl(self, item);
    }
}

fn parse_file(src: &Source) -> FileFacts {
    let syntax = syn::parse_file(&src.text)
        .unwrap_or_else(|e| panic!("{}:{}: {e}", src.rel, line_of(e.span())));
    let tokens: TokenStream = src
        .text
        .parse()
        .unwrap_or_else(|e| panic!("{}: {e}", src.rel));
    let module = module_of(&src.rel);
    let mut c = Collector {
        module: module.clone(),
        test: 0,
        refs: Vec::new(),
        aliases: Vec::new(),
        modules: Vec::new(),
        methods: Vec::new(),
        impls: Vec::new(),
    };
    c.visit_file(&syntax);
    let mut features = Vec::new();
    features_of(tokens.clone(), &mut features);
    FileFacts {
        rel: src.rel.clone(),
        syntax,
        module,
        refs: c.refs,
        aliases: c.aliases,
        modules: c.modules,
        methods: c.methods,
        impls: c.impls,
        idents: idents_of(tokens),
        features,
    }
}

/// The files of one crate, with what resolves their paths.
struct Crate {
    files: Vec<FileFacts>,
    modules: HashSet<Vec<String>>,
    aliases: HashMap<Vec<String>, Alias>,
}

/// The crate a file belongs to: `x/src/**` but `main.rs` and `bin/` is the
/// library of `x`; anything else (a binary, a test, a bench) is its own.
fn crate_of(rel: &str) -> String {
    match rel.split_once("/src/") {
        Some((dir, inner)) if inner != "main.rs" && !inner.starts_with("bin/") => {
            format!("{dir} lib")
        }
        _ => rel.to_string(),
    }
}

impl Crate {
    fn new(files: Vec<FileFacts>) -> Crate {
        let mut modules = HashSet::new();
        let mut aliases = HashMap::new();
        for file in &files {
            modules.insert(file.module.clone());
            modules.extend(file.modules.iter().cloned());
            for (key, alias) in &file.aliases {
                aliases.insert(
                    key.clone(),
                    Alias {
                        module: alias.module.clone(),
                        target: alias.target.clone(),
                        global: alias.global,
                    },
                );
            }
        }
        Crate {
            files,
            modules,
            aliases,
        }
    }

    /// Group `sources` (`.rs` only) into their crates.
    fn all(sources: &[Source]) -> Vec<Crate> {
        let mut by_crate: Vec<(String, Vec<FileFacts>)> = Vec::new();
        for src in sources.iter().filter(|s| s.rel.ends_with(".rs")) {
            let key = crate_of(&src.rel);
            let facts = parse_file(src);
            match by_crate.iter_mut().find(|(k, _)| *k == key) {
                Some((_, files)) => files.push(facts),
                None => by_crate.push((key, vec![facts])),
            }
        }
        by_crate
            .into_iter()
            .map(|(_, files)| Crate::new(files))
            .collect()
    }

    /// The absolute path `written` stands for in `module`: `crate::…` for the
    /// crate's own items, the path as written for an extern crate's.
    fn resolve(&self, module: &[String], written: &[String], global: bool) -> Vec<String> {
        self.resolve_within(module, written, global, 0)
    }

    fn resolve_within(
        &self,
        module: &[String],
        written: &[String],
        global: bool,
        depth: usize,
    ) -> Vec<String> {
        if global || written.is_empty() || depth > 8 {
            return written.to_vec();
        }
        let mut out: Vec<String> = match written[0].as_str() {
            "crate" => written.to_vec(),
            "self" => module.iter().chain(&written[1..]).cloned().collect(),
            "super" => {
                let ups = written.iter().take_while(|s| *s == "super").count();
                let keep = module.len().saturating_sub(ups).max(1);
                module[..keep]
                    .iter()
                    .chain(&written[ups..])
                    .cloned()
                    .collect()
            }
            first => {
                let mut local = module.to_vec();
                local.push(first.to_string());
                if self.modules.contains(&local) || self.aliases.contains_key(&local) {
                    module.iter().chain(written).cloned().collect()
                } else {
                    return written.to_vec();
                }
            }
        };
        // What a prefix is an alias of (a `use` in that module, a re-export).
        'expand: for _ in 0..8 {
            for end in (2..=out.len()).rev() {
                if let Some(alias) = self.aliases.get(&out[..end]) {
                    if alias.target == out[..end] {
                        continue;
                    }
                    let mut target =
                        self.resolve_within(&alias.module, &alias.target, alias.global, depth + 1);
                    target.extend_from_slice(&out[end..]);
                    out = target;
                    continue 'expand;
                }
            }
            break;
        }
        out
    }
}

/// `"crate::turn"` as segments.
fn segments(path: &str) -> Vec<String> {
    path.split("::").map(String::from).collect()
}

fn joined(path: &[String]) -> String {
    path.join("::")
}

// --- one owner of storage ------------------------------------------------------

/// Files outside `memory/` still allowed to name the driver, each with why.
/// Every entry is a debt: make it a store function and remove it from here.
const SQLX_ALLOWED: &[(&str, &str)] = &[(
    "Cargo.toml",
    "the workspace pins the driver's version for memory",
)];

/// True when `text` has `word` as a whole identifier (not part of a longer one).
fn names(text: &str, word: &str) -> bool {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(word).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + word.len()..].chars().next();
        !before.is_some_and(ident) && !after.is_some_and(ident)
    })
}

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

// --- module layering of the gateway --------------------------------------------

/// The gateway's library crates, one a layer, lowest first.
const GATEWAY_LIBRARIES: &[&str] = &[
    "gateway/core/src/",
    "gateway/channels/src/",
    "gateway/web/src/",
    "gateway/src/",
];

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

fn is_ident(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
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
