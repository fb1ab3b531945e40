// The workspace's sources read as Rust, and the crate that resolves their
// paths: what the architecture tests share, included by each
// (`include!("architecture/resolver.rs")`), so its items are theirs.

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

/// True when `text` has `word` as a whole identifier (not part of a longer one).
fn names(text: &str, word: &str) -> bool {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(word).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + word.len()..].chars().next();
        !before.is_some_and(ident) && !after.is_some_and(ident)
    })
}

fn is_ident(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}
