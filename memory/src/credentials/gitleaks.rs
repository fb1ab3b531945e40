//! The gitleaks rule set (`gitleaks.toml`, vendored unchanged from
//! gitleaks/gitleaks at b58d3f10, v8.30.0-27; MIT, its notice in
//! `gitleaks.LICENSE`), applied as gitleaks applies it to one fragment: a
//! rule runs when one of its keywords is in the lowercased text; its secret
//! is the capture group it names (else the first non-empty one, else the
//! match); a secret under the rule's entropy, or a generic rule's secret
//! without a digit, is not a finding; nor is one its allowlists or the global
//! one allow. Rules that only apply to a file path are left out (a chat line
//! has none), and so are the few whose regex the `regex` crate does not
//! compile: [`RuleSet::failed`] says which.
//!
//! Patterns are compiled as gitleaks' Go regexps read them: `\w`, `\d`, `\s`
//! and `\b` ASCII only, over bytes.

use aho_corasick::AhoCorasick;
use regex::bytes::{Regex, RegexBuilder};
use serde::Deserialize;
use std::ops::Range;

const RULES: &str = include_str!("gitleaks.toml");

#[derive(Deserialize)]
struct File {
    #[serde(default)]
    allowlist: Option<AllowlistDef>,
    rules: Vec<RuleDef>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RuleDef {
    id: String,
    #[serde(default)]
    regex: Option<String>,
    #[serde(default)]
    secret_group: Option<usize>,
    #[serde(default)]
    entropy: Option<f64>,
    #[serde(default)]
    keywords: Vec<String>,
    #[serde(default)]
    path: Option<String>,
    #[serde(default)]
    allowlists: Vec<AllowlistDef>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct AllowlistDef {
    #[serde(default)]
    condition: Option<String>,
    #[serde(default)]
    regex_target: Option<String>,
    #[serde(default)]
    regexes: Vec<String>,
    #[serde(default)]
    stopwords: Vec<String>,
    #[serde(default)]
    paths: Vec<String>,
}

/// What an allowlist's regexes are matched against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    Secret,
    Match,
    Line,
}

struct Allowlist {
    target: Target,
    regexes: Vec<Regex>,
    stopwords: Vec<String>,
}

impl Allowlist {
    /// `None` when it cannot apply to a chat line: an AND list that needs a path.
    fn from_def(def: &AllowlistDef) -> Option<Self> {
        let and = def
            .condition
            .as_deref()
            .is_some_and(|c| c.eq_ignore_ascii_case("and"));
        if and && !def.paths.is_empty() {
            return None;
        }
        let target = match def.regex_target.as_deref() {
            Some("match") => Target::Match,
            Some("line") => Target::Line,
            _ => Target::Secret,
        };
        Some(Allowlist {
            target,
            regexes: def.regexes.iter().filter_map(|r| compile(r).ok()).collect(),
            stopwords: def.stopwords.iter().map(|s| s.to_lowercase()).collect(),
        })
    }

    fn allows(&self, secret: &[u8], whole: &[u8], line: &[u8]) -> bool {
        let target = match self.target {
            Target::Secret => secret,
            Target::Match => whole,
            Target::Line => line,
        };
        if self.regexes.iter().any(|re| re.is_match(target)) {
            return true;
        }
        if self.stopwords.is_empty() {
            return false;
        }
        let lower = String::from_utf8_lossy(secret).to_lowercase();
        self.stopwords.iter().any(|w| lower.contains(w.as_str()))
    }
}

struct Rule {
    id: String,
    regex: Regex,
    secret_group: Option<usize>,
    entropy: Option<f64>,
    allowlists: Vec<Allowlist>,
}

/// The compiled rule set.
pub struct RuleSet {
    rules: Vec<Rule>,
    /// Keyword automaton over the lowercased text; each pattern names the rules it wakes.
    keywords: Option<AhoCorasick>,
    keyword_rules: Vec<Vec<usize>>,
    /// Rules without keywords, run on every text.
    always: Vec<usize>,
    global: Vec<Allowlist>,
    /// Rules in the file.
    pub total: usize,
    /// Rules that only apply to a file path.
    pub path_only: usize,
    /// Rules whose regex did not compile, with the error.
    pub failed: Vec<(String, String)>,
}

/// A finding of one rule: its id and the secret's byte range.
pub struct Hit<'r> {
    pub rule: &'r str,
    pub span: Range<usize>,
}

fn compile(pattern: &str) -> Result<Regex, regex::Error> {
    RegexBuilder::new(pattern)
        .unicode(false)
        .size_limit(64 << 20)
        .dfa_size_limit(16 << 20)
        .build()
}

/// Shannon entropy in bits per character, as gitleaks computes it.
pub fn entropy(s: &str) -> f64 {
    let mut counts = std::collections::HashMap::<char, usize>::new();
    let mut n = 0usize;
    for c in s.chars() {
        *counts.entry(c).or_default() += 1;
        n += 1;
    }
    if n == 0 {
        return 0.0;
    }
    counts
        .values()
        .map(|&k| {
            let p = k as f64 / n as f64;
            -p * p.log2()
        })
        .sum()
}

impl RuleSet {
    /// The vendored rule set. The file is part of the crate: failing to
    /// parse it is a bug its test catches, and leaves an empty set here.
    pub fn load() -> Self {
        let file: File = match toml::from_str(RULES) {
            Ok(f) => f,
            Err(e) => {
                tracing::error!(error = %e, "the vendored gitleaks rules do not parse");
                File {
                    allowlist: None,
                    rules: Vec::new(),
                }
            }
        };
        let total = file.rules.len();
        let mut path_only = 0;
        let mut failed = Vec::new();
        let mut rules = Vec::new();
        for def in &file.rules {
            let Some(pattern) = def.regex.as_deref().filter(|_| def.path.is_none()) else {
                path_only += 1;
                continue;
            };
            match compile(pattern) {
                Ok(regex) => rules.push((
                    def.keywords.clone(),
                    Rule {
                        id: def.id.clone(),
                        regex,
                        secret_group: def.secret_group.filter(|g| *g > 0),
                        entropy: def.entropy.filter(|e| *e > 0.0),
                        allowlists: def
                            .allowlists
                            .iter()
                            .filter_map(Allowlist::from_def)
                            .collect(),
                    },
                )),
                Err(e) => failed.push((def.id.clone(), e.to_string())),
            }
        }
        let mut patterns: Vec<String> = Vec::new();
        let mut keyword_rules: Vec<Vec<usize>> = Vec::new();
        let mut always = Vec::new();
        for (i, (keywords, _)) in rules.iter().enumerate() {
            if keywords.is_empty() {
                always.push(i);
            }
            for k in keywords {
                let k = k.to_lowercase();
                match patterns.iter().position(|p| *p == k) {
                    Some(at) => keyword_rules[at].push(i),
                    None => {
                        patterns.push(k);
                        keyword_rules.push(vec![i]);
                    }
                }
            }
        }
        let keywords = AhoCorasick::new(&patterns)
            .map_err(|e| tracing::error!(error = %e, "gitleaks keywords"))
            .ok();
        RuleSet {
            rules: rules.into_iter().map(|(_, r)| r).collect(),
            keywords,
            keyword_rules,
            always,
            global: file
                .allowlist
                .as_ref()
                .and_then(Allowlist::from_def)
                .into_iter()
                .collect(),
            total,
            path_only,
            failed,
        }
    }

    /// Rules compiled and applied.
    pub fn compiled(&self) -> usize {
        self.rules.len()
    }

    /// Every finding in `text`.
    pub fn hits(&self, text: &str) -> Vec<Hit<'_>> {
        let lower = text.to_ascii_lowercase();
        let mut woken = vec![false; self.rules.len()];
        for &i in &self.always {
            woken[i] = true;
        }
        if let Some(ac) = &self.keywords {
            for m in ac.find_overlapping_iter(&lower) {
                for &i in &self.keyword_rules[m.pattern().as_usize()] {
                    woken[i] = true;
                }
            }
        }
        let bytes = text.as_bytes();
        let mut out = Vec::new();
        for (i, rule) in self.rules.iter().enumerate() {
            if !woken[i] {
                continue;
            }
            for caps in rule.regex.captures_iter(bytes) {
                let Some(whole) = caps.get(0) else { continue };
                let secret = match rule.secret_group {
                    Some(g) => caps.get(g),
                    None => caps.iter().skip(1).flatten().find(|m| !m.is_empty()),
                }
                .unwrap_or(whole);
                let secret_text = String::from_utf8_lossy(secret.as_bytes());
                if let Some(min) = rule.entropy {
                    if entropy(&secret_text) <= min {
                        continue;
                    }
                    if rule.id.starts_with("generic")
                        && !secret_text.bytes().any(|b| b.is_ascii_digit())
                    {
                        continue;
                    }
                }
                let allowed = rule
                    .allowlists
                    .iter()
                    .chain(&self.global)
                    .any(|a| a.allows(secret.as_bytes(), whole.as_bytes(), bytes));
                if allowed {
                    continue;
                }
                out.push(Hit {
                    rule: &rule.id,
                    span: secret.start()..secret.end(),
                });
            }
        }
        out
    }
}
