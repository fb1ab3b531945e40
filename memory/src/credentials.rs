//! Credential-like text: passwords, API keys, private keys, bearer tokens.
//! Memory never keeps them (memory is read back into prompts and
//! shown to admins); `policy::decide` drops an item that holds one, and the
//! directives and tools refuse it, each with a message that says why.

use regex::Regex;
use std::sync::OnceLock;

/// What kind of credential a text holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Credential {
    Password,
    ApiKey,
    PrivateKey,
    BearerToken,
}

impl Credential {
    pub fn as_str(self) -> &'static str {
        match self {
            Credential::Password => "a password",
            Credential::ApiKey => "an API key",
            Credential::PrivateKey => "a private key",
            Credential::BearerToken => "a bearer token",
        }
    }
}

/// The patterns, most specific first. A pattern is a bug, not input: they are
/// compiled once and each has a test.
fn patterns() -> &'static [(Credential, Regex)] {
    static PATTERNS: OnceLock<Vec<(Credential, Regex)>> = OnceLock::new();
    PATTERNS.get_or_init(|| {
        [
            (Credential::PrivateKey, r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----"),
            (Credential::BearerToken, r"(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{12,}"),
            // JSON web tokens: three base64url parts, the first a JSON header.
            (
                Credential::BearerToken,
                r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
            ),
            // Well-known key shapes: OpenAI-style, AWS access keys, GitHub, Slack.
            (
                Credential::ApiKey,
                r"\b(sk-[A-Za-z0-9_-]{16,}|AKIA[0-9A-Z]{16}|gh[pousr]_[A-Za-z0-9]{30,}|xox[abpr]-[A-Za-z0-9-]{10,})",
            ),
            (
                Credential::ApiKey,
                r"(?i)\b(api[ _-]?key|access[ _-]?key|secret[ _-]?key|auth[ _-]?token|token)\b\s*(is|:|=)\s*\S{8,}",
            ),
            (
                Credential::Password,
                r"(?i)\b(password|passwd|passphrase|passcode|pwd|pin|secret)\b\s*(is|:|=|was)\s*\S+",
            ),
        ]
        .into_iter()
        .filter_map(|(kind, p)| match Regex::new(p) {
            Ok(re) => Some((kind, re)),
            Err(e) => {
                tracing::error!(pattern = p, error = %e, "invalid credential pattern skipped");
                None
            }
        })
        .collect()
    })
}

/// The first kind of credential `text` holds, if any.
pub fn credential_in(text: &str) -> Option<Credential> {
    patterns()
        .iter()
        .find(|(_, re)| re.is_match(text))
        .map(|(kind, _)| *kind)
}

/// Whether `text` asks for the value of a credential ("What is my
/// password?", "tell me the API key"): memory never holds one, so the answer
/// is steward's, never a model's (a small model answers such a question with
/// an invented password). Asking how to reset or change one is not this.
pub fn asks_for_credential(text: &str) -> bool {
    static ASKS: OnceLock<Option<Regex>> = OnceLock::new();
    ASKS.get_or_init(|| {
        Regex::new(
            r"(?i)^\s*(what('s|\s+is|\s+was|\s+are)|tell\s+me|give\s+me|send\s+me|remind\s+me\s+of|do\s+you\s+(know|remember|have))\s+(my|the|our|your)\s+([\w-]+\s+){0,3}(password|passphrase|passcode|pin|api[ _-]?key|access[ _-]?key|secret[ _-]?key|token|secret)s?\b[\s?.!]*$",
        )
        .map_err(|e| tracing::error!(error = %e, "invalid credential question pattern"))
        .ok()
    })
    .as_ref()
    .is_some_and(|re| re.is_match(text))
}

/// `text` with every credential it holds replaced by `[credential removed]`:
/// what a model is shown of a line that held one, so it cannot repeat it.
pub fn masked(text: &str) -> std::borrow::Cow<'_, str> {
    let mut out = std::borrow::Cow::Borrowed(text);
    for (_, re) in patterns() {
        if re.is_match(&out) {
            out =
                std::borrow::Cow::Owned(re.replace_all(&out, "[credential removed]").into_owned());
        }
    }
    out
}

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
                "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
                "the api key is 9f8e7d6c5b4a",
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

    #[test]
    fn every_pattern_finds_its_credential() {
        for (kind, texts) in FOUND {
            for text in *texts {
                assert_eq!(credential_in(text), Some(*kind), "{text}");
            }
        }
    }

    #[test]
    fn a_question_for_a_credential_is_told_apart_from_one_about_it() {
        for q in [
            "What is my password?",
            "what's the wifi password",
            "Tell me the API key.",
            "Do you remember my bank PIN?",
            "What are our staging tokens?",
        ] {
            assert!(asks_for_credential(q), "{q}");
        }
        for q in [
            "How do I reset my password?",
            "Where is the password policy?",
            "What is the staging database host?",
            "What is my password policy?",
            "I forgot my password",
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
        ] {
            assert_eq!(credential_in(text), None, "{text}");
        }
    }
}
