//! Credential-like text: passwords, API keys, private keys, tokens,
//! connection strings with a password. Memory never keeps them (memory is
//! read back into prompts and shown to admins); `policy::decide` drops an
//! item that holds one, the directives and tools refuse it, each with a
//! message that says why, and [`masked`] takes them out of what a model is
//! shown and of every reply.
//!
//! The screen is, cheapest first: a private key's header; a connection
//! string's password (`scheme://user:PASSWORD@host`); a credential label in
//! one of many languages followed by a value (`labels.rs`); the gitleaks
//! rule set, some 200 provider formats and generic keyword-plus-entropy
//! secrets (`gitleaks.rs`, its data vendored); and the same again over the
//! decoded text of a base64 or hex token (a wrapped password).

mod gitleaks;
mod labels;

use regex::Regex;
use std::borrow::Cow;
use std::ops::Range;
use std::sync::OnceLock;

pub use gitleaks::entropy;

/// What kind of credential a text holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Credential {
    Password,
    ApiKey,
    PrivateKey,
    BearerToken,
    /// A URL carrying a password (`postgres://app:PASSWORD@db`).
    ConnectionString,
}

impl Credential {
    pub fn as_str(self) -> &'static str {
        match self {
            Credential::Password => "a password",
            Credential::ApiKey => "an API key",
            Credential::PrivateKey => "a private key",
            Credential::BearerToken => "a bearer token",
            Credential::ConnectionString => "a connection string with a password",
        }
    }

    /// The kind a gitleaks rule finds, from its id.
    fn of_rule(id: &str) -> Self {
        if id.contains("private-key") || id.contains("pkcs12") {
            Credential::PrivateKey
        } else if id.contains("jwt") || id.contains("bearer") {
            Credential::BearerToken
        } else if id.contains("password") || id.contains("passwd") {
            Credential::Password
        } else {
            Credential::ApiKey
        }
    }
}

/// One credential found in a text: its kind and the byte range of its value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub kind: Credential,
    pub span: Range<usize>,
}

/// How the vendored gitleaks rule set loaded: rules in the file, those left
/// out because they only apply to a file path, those compiled, and those the
/// `regex` crate refused (id, error).
pub struct RuleReport {
    pub total: usize,
    pub path_only: usize,
    pub compiled: usize,
    pub failed: Vec<(String, String)>,
}

fn rules() -> &'static gitleaks::RuleSet {
    static RULES: OnceLock<gitleaks::RuleSet> = OnceLock::new();
    RULES.get_or_init(gitleaks::RuleSet::load)
}

/// How the gitleaks rules loaded (for tests and the benchmark).
pub fn rule_report() -> RuleReport {
    let r = rules();
    RuleReport {
        total: r.total,
        path_only: r.path_only,
        compiled: r.compiled(),
        failed: r.failed.clone(),
    }
}

/// steward's own patterns beside the rule set, each (kind, regex, group of
/// the value; 0 the whole match). A pattern is a bug, not input: they are
/// compiled once and each has a test.
fn own_patterns() -> &'static [(Credential, Regex, usize)] {
    static PATTERNS: OnceLock<Vec<(Credential, Regex, usize)>> = OnceLock::new();
    PATTERNS.get_or_init(|| {
        [
            // A private key's header, to its end marker or the end of the text.
            (
                Credential::PrivateKey,
                r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?s:.*?-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|.*)",
                0,
            ),
            (
                Credential::BearerToken,
                r"(?i)\bbearer\s+([A-Za-z0-9._~+/=-]{12,})",
                1,
            ),
            // JSON web tokens: three base64url parts, the first a JSON header.
            (
                Credential::BearerToken,
                r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
                0,
            ),
            // The shapes this screen knew before the rule set, kept whatever
            // gitleaks' allowlists say of a value: OpenAI-style keys without
            // its marker, AWS access key ids, GitHub and Slack tokens.
            (
                Credential::ApiKey,
                r"\b(sk-[A-Za-z0-9_-]{16,}|(?:AKIA|ASIA)[0-9A-Z]{16}|gh[pousr]_[A-Za-z0-9]{30,}|xox[abpr]-[A-Za-z0-9-]{10,})",
                1,
            ),
            // A URL's userinfo password: scheme://user:PASSWORD@host.
            (
                Credential::ConnectionString,
                r"(?i)\b[a-z][a-z0-9+.-]{1,20}://[^\s:/@?#]{0,64}:([^\s@/?#]{1,128})@[^\s/?#@]+",
                1,
            ),
        ]
        .into_iter()
        .filter_map(|(kind, p, group)| match Regex::new(p) {
            Ok(re) => Some((kind, re, group)),
            Err(e) => {
                tracing::error!(pattern = p, error = %e, "invalid credential pattern skipped");
                None
            }
        })
        .collect()
    })
}

/// A placeholder where a value would go (`${DB_PASSWORD}`, `<password>`,
/// `****`, `[credential removed]`): not a credential.
fn placeholder(value: &str) -> bool {
    let v = value.trim_matches(|c: char| "\"'`".contains(c));
    v.is_empty()
        || v.starts_with("${")
        || v.starts_with("{{")
        || v.starts_with('<')
        || v.starts_with('[')
        || v.starts_with('%')
        || v.chars()
            .all(|c| c == '*' || c == 'x' || c == 'X' || c == '.')
}

/// Every credential in `text`, without looking inside encoded tokens.
fn found_plain(text: &str, out: &mut Vec<Found>) {
    for (kind, re, group) in own_patterns() {
        for caps in re.captures_iter(text) {
            let Some(m) = caps.get(*group) else { continue };
            if *kind == Credential::ConnectionString && placeholder(m.as_str()) {
                continue;
            }
            out.push(Found {
                kind: *kind,
                span: m.range(),
            });
        }
    }
    labels::found(text, out);
    for hit in rules().hits(text) {
        out.push(Found {
            kind: Credential::of_rule(hit.rule),
            span: widen(text, hit.span),
        });
    }
}

/// `span` widened to the nearest char boundaries (the rules match bytes).
fn widen(text: &str, span: Range<usize>) -> Range<usize> {
    let mut start = span.start.min(text.len());
    let mut end = span.end.min(text.len());
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    while !text.is_char_boundary(end) {
        end += 1;
    }
    start..end
}

/// Decoded text of a base64 or hex token, when it is readable text.
fn decoded(token: &str) -> Option<String> {
    use base64::Engine;
    let bytes = if token.len().is_multiple_of(2) && token.bytes().all(|b| b.is_ascii_hexdigit()) {
        hex::decode(token).ok()?
    } else {
        let engines = [
            &base64::engine::general_purpose::STANDARD,
            &base64::engine::general_purpose::STANDARD_NO_PAD,
            &base64::engine::general_purpose::URL_SAFE,
            &base64::engine::general_purpose::URL_SAFE_NO_PAD,
        ];
        engines.iter().find_map(|e| e.decode(token).ok())?
    };
    let text = String::from_utf8(bytes).ok()?;
    let readable = text
        .chars()
        .filter(|c| !c.is_control() || c.is_whitespace())
        .count();
    (text.chars().count() >= 6 && readable == text.chars().count()).then_some(text)
}

/// Tokens that may be base64 or hex: 12 to 2,000 characters of their alphabets.
fn wrapped_tokens() -> Option<&'static Regex> {
    static TOKENS: OnceLock<Option<Regex>> = OnceLock::new();
    TOKENS
        .get_or_init(|| {
            Regex::new(r"[A-Za-z0-9+/_-]{12,2000}={0,2}")
                .map_err(|e| tracing::error!(error = %e, "invalid token pattern"))
                .ok()
        })
        .as_ref()
}

/// Every credential `text` holds, each with the range to mask; a base64 or
/// hex token whose decoded text holds one is found as that kind.
pub fn found(text: &str) -> Vec<Found> {
    let mut out = Vec::new();
    found_plain(text, &mut out);
    if let Some(re) = wrapped_tokens() {
        for m in re.find_iter(text) {
            if out
                .iter()
                .any(|f| f.span.start <= m.start() && m.end() <= f.span.end)
            {
                continue;
            }
            let Some(inner) = decoded(m.as_str()) else {
                continue;
            };
            let mut hits = Vec::new();
            found_plain(&inner, &mut hits);
            if let Some(first) = hits.first() {
                out.push(Found {
                    kind: first.kind,
                    span: m.range(),
                });
            }
        }
    }
    out
}

/// The first kind of credential `text` holds, if any.
pub fn credential_in(text: &str) -> Option<Credential> {
    let all = found(text);
    all.iter().min_by_key(|f| f.span.start).map(|f| f.kind)
}

/// Words a line that completes a credential holds at most: a value said
/// alone ("hunter22"), or with a word or two around it.
const COMPLETING_WORDS: usize = 3;

/// Whether `text` could complete a credential begun in the line before (a
/// bare value, not a sentence of its own): only then is that line read.
pub fn may_complete(text: &str) -> bool {
    let words = text.split_whitespace().count();
    (1..=COMPLETING_WORDS).contains(&words)
}

/// A credential completed across two lines of one person ("the deploy
/// password is" then "hunter22"): the kind the two read together hold, when
/// the earlier line alone held none (it was refused on its own).
pub fn credential_across(previous: &str, text: &str) -> Option<Credential> {
    let previous = previous.trim();
    if !may_complete(text) || previous.is_empty() || credential_in(previous).is_some() {
        return None;
    }
    credential_in(&format!("{previous} {}", text.trim()))
}

/// Whether `text` asks for the value of a credential ("What is my
/// password?", "What is the password for the deploy bot?", "Qual é a
/// senha?"): memory never holds one, so the answer is steward's, never a
/// model's (a small model answers such a question with an invented
/// password). Asking how to reset or change one is not this.
pub fn asks_for_credential(text: &str) -> bool {
    static ASKS: OnceLock<Option<Regex>> = OnceLock::new();
    let english = ASKS.get_or_init(|| {
        Regex::new(
            r"(?i)^\s*(what('s|\s+is|\s+was|\s+are)|tell\s+me|give\s+me|send\s+me|remind\s+me\s+of|do\s+you\s+(know|remember|have))\s+(my|the|our|your)\s+([\w-]+\s+){0,3}(password|passphrase|passcode|pin|api[ _-]?key|access[ _-]?key|secret[ _-]?key|token|secret)s?(\s+(for|of|to|on|at)\s+[^?.!]{1,60})?[\s?.!]*$",
        )
        .map_err(|e| tracing::error!(error = %e, "invalid credential question pattern"))
        .ok()
    });
    english.as_ref().is_some_and(|re| re.is_match(text)) || labels::asks(text)
}

/// `text` with every credential it holds replaced by `[credential removed]`:
/// what a model is shown of a line that held one, and what a reply says in
/// its place, so none is ever repeated.
pub fn masked(text: &str) -> Cow<'_, str> {
    let mut spans: Vec<Range<usize>> = found(text).into_iter().map(|f| f.span).collect();
    if spans.is_empty() {
        return Cow::Borrowed(text);
    }
    spans.sort_by_key(|s| s.start);
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for s in spans {
        if s.end <= at {
            continue;
        }
        out.push_str(&text[at..s.start.max(at)]);
        out.push_str(MASK);
        at = s.end;
    }
    out.push_str(&text[at..]);
    Cow::Owned(out)
}

/// What [`masked`] puts in a credential's place.
pub const MASK: &str = "[credential removed]";

#[cfg(test)]
mod tests {
    use super::*;

    /// Each kind, with the texts that must be found as it (one per pattern at least).
    const FOUND: &[(Credential, &[&str])] = &[
        (
            Credential::Password,
            &[
                "The admin password is hunter2",
                "wifi passphrase: correct-horse",
                "PIN = 4411",
            ],
        ),
        (
            Credential::ApiKey,
            &[
                "use the key sk-abcdefghijklmnop1234 for the bot",
                "AWS key AKIAABCDEFGHIJKLMNOP",
                "ghp_Q7rT2mVx9LpW4kZs8NcY1bHd6FjG3aEu5RoK",
                "the api key is 9f8e7d6c5b4a",
            ],
        ),
        (
            Credential::ConnectionString,
            &[
                "postgres://app:S3cretPass@db.internal:5432/app",
                "DATABASE_URL=mysql://root:pa55word@10.0.0.7/orders",
            ],
        ),
        (
            Credential::PrivateKey,
            &[
                "-----BEGIN OPENSSH PRIVATE KEY----- b3BlbnNzaC1r",
                "-----BEGIN RSA PRIVATE KEY-----",
            ],
        ),
        (
            Credential::BearerToken,
            &[
                "curl -H 'Authorization: Bearer abcdef123456789xyz'",
                "token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N",
            ],
        ),
    ];

    /// A password's value right after its label, nothing between: an
    /// administrator's `@notes:` kept "…, password seagull-88." and a model
    /// told it (issue 46's held-out transcripts). Phrased for this test.
    #[test]
    fn a_value_right_after_a_password_label_is_one() {
        for text in [
            "Guest wifi on floor 2 is OfficeGuest, password kestrel-41.",
            "door pin 7302",
            "VPN passphrase Blue#Otter for the contractors",
        ] {
            assert_eq!(credential_in(text), Some(Credential::Password), "{text}");
        }
        for text in [
            "Passwords 2026 are rotated every quarter",
            "The password manager is 1Password",
            "password reset requests go to the IT desk",
            "the token budget 5000 is per turn",
            "Secret Santa 2026 is on Friday",
        ] {
            assert_eq!(credential_in(text), None, "{text}");
        }
    }

    #[test]
    fn every_pattern_finds_its_credential() {
        for (kind, texts) in FOUND {
            for text in *texts {
                assert_eq!(credential_in(text), Some(*kind), "{text}");
            }
        }
    }

    /// The formats a security review found kept (issue 45): each is found now.
    #[test]
    fn the_formats_the_review_found_kept_are_found() {
        for text in [
            "The password for the deploy bot is hunter22",
            "senha: Pato-Verde77",
            "contraseña: Girasol#12",
            "Passwort: Sonnenblume5!",
            "пароль: Medved2024",
            "密码: qwe123ASD",
            "パスワード: Sakura88x",
            "wachtwoord: Tulp3nVeld",
            "hasło: Zubr-2024",
            "mot de passe : Fromage42",
            "şifre: Lale2024!",
            "Kennwort = Fichte77",
            "lösenord: Alg-2024",
            "salasana: Sauna2024",
            "비밀번호는 Hangang77",
            "parola: Ciao2024!",
            "postgres://app:S3cretPass@db.internal:5432/app",
            "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",
            "xapp-1-A0123456789-1234567890123-0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9",
            "https://hooks.slack.com/services/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",
            "sk_live_51Hx8QmK2vRt7PzL4nYw9BcDe",
            "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY",
            "npm_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5",
            "the login is cGFzc3dvcmQ6IGh1bnRlcjIy",
            "70617373776f72643d68756e7465723232",
        ] {
            assert!(credential_in(text).is_some(), "{text}");
            let m = masked(text);
            assert!(m.contains(MASK) && credential_in(&m).is_none(), "{text}: {m}");
        }
    }

    #[test]
    fn a_credential_completed_in_a_second_line_is_found_across_the_two() {
        assert_eq!(
            credential_across("the deploy password is", "hunter22"),
            Some(Credential::Password)
        );
        assert_eq!(
            credential_across("Senha do servidor:", "Pato-Verde77"),
            Some(Credential::Password)
        );
        // Each line alone holds none; nor do two ordinary lines together,
        // nor a line after one that was refused on its own.
        assert_eq!(credential_in("hunter22"), None);
        assert_eq!(
            credential_across("Where is the password policy?", "On the wiki"),
            None
        );
        assert_eq!(credential_across("my password is hunter22", "thanks"), None);
        // A sentence of its own completes nothing begun before.
        assert!(!may_complete(
            "Where do I request a new laptop for the team?"
        ));
        assert!(may_complete("Tr0ub4dor-77"));
    }

    #[test]
    fn every_gitleaks_rule_for_text_compiles() {
        let r = rule_report();
        assert_eq!(r.total, 222);
        assert_eq!(r.path_only, 5);
        assert!(r.failed.is_empty(), "{:?}", r.failed);
        assert_eq!(r.compiled, 217);
    }

    #[test]
    fn a_question_for_a_credential_is_told_apart_from_one_about_it() {
        for q in [
            "What is my password?",
            "what's the wifi password",
            "Tell me the API key.",
            "Do you remember my bank PIN?",
            "What are our staging tokens?",
            "What is the password for the deploy bot?",
            "Qual é a senha do servidor de deploy?",
            "¿Cuál es la contraseña del wifi?",
            "Wie lautet das Passwort für den Server?",
            "Was ist das Passwort?",
            "Quel est le mot de passe du wifi ?",
            "Какой пароль от сервера?",
            "服务器的密码是什么？",
            "Wat is het wachtwoord van de server?",
            "Jakie jest hasło do serwera?",
            "Vad är lösenordet till servern?",
            "Mikä on palvelimen salasana?",
            "Sunucu şifresi nedir?",
        ] {
            assert!(asks_for_credential(q), "{q}");
        }
        for q in [
            "How do I reset my password?",
            "Where is the password policy?",
            "What is the staging database host?",
            "What is my password policy?",
            "I forgot my password",
            "How do I reset the password for the deploy bot?",
            "Wie kann ich das Passwort ändern?",
            "Como faço para redefinir a senha?",
            "What is the password policy for the deploy bot?",
        ] {
            assert!(!asks_for_credential(q), "{q}");
        }
    }

    #[test]
    fn a_masked_text_holds_no_credential() {
        for text in [
            "my password is Hunter2!x9 remember it",
            "my api key is sk-live-4f9a8b7c6d5e4f3a2b1c please keep it",
            "Authorization: Bearer abcdefghijklmnopqrstuvwx",
        ] {
            let m = masked(text);
            assert!(credential_in(&m).is_none(), "{m}");
            assert!(m.contains("[credential removed]"), "{m}");
            assert!(!m.contains("Hunter2") && !m.contains("4f9a8b7c"), "{m}");
        }
        assert_eq!(
            masked("the VPN is at vpn.example.com"),
            "the VPN is at vpn.example.com"
        );
    }

    #[test]
    fn ordinary_sentences_about_credentials_are_not_credentials() {
        for text in [
            "Passwords are reset at the IT desk on floor 2",
            "The password policy needs 12 characters",
            "Ask Ana for the API key",
            "The daily report uses example_orders",
            "Bearer bonds are not accepted",
            "Fixed in commit 3f1c2a9b8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a",
            "Request id 0b1e7c52-9d7f-4f0a-a3b8-5c2e1d4f6a79 failed",
            "Upgrade to v2.14.3 on build-agent-7.ci.local",
            "Order number 84736251 ships Friday, total $129.99",
            "Ticket OPS-4821 is about the VPN",
            "The password for the VPN is changed every month",
            "The password reset link is broken",
            "Das Passwort muss alle 90 Tage geändert werden",
            "パスワードは12文字以上にしてください",
            "The secret is out",
            "The password is case sensitive",
            "The token is refreshed hourly",
            "The secret is keeping it simple",
            "The password is the one from the onboarding email",
        ] {
            assert_eq!(credential_in(text), None, "{text}");
        }
    }
}
