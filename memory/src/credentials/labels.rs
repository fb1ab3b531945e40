//! A credential given after its label, in many languages: "password:
//! hunter22", "senha: …", "Passwort ist …", "пароль: …", "密码是…",
//! "The password for the deploy bot is hunter22" (the label, a few words,
//! then "is VALUE"). A sentence about a password ("The password policy needs
//! 12 characters", "Passwords are reset at the IT desk") is not one: the
//! words between label and value may not be about the password itself
//! (policy, reset, length …), and a value must not be an ordinary word.

use super::{placeholder, Credential, Found};
use regex::Regex;
use std::sync::OnceLock;

/// English labels (a plural `s` at most), then the other languages' (a
/// short inflection allowed), then scripts without spaces (no boundary).
const ENGLISH: &str = r"password|passwd|passphrase|passcode|pwd|pin(?: code)?|api[ _-]?key|access[ _-]?key|secret[ _-]?key|auth[ _-]?token|access[ _-]?token|bot[ _-]?token|token|secret";
const OTHER: &str = r"senha|palavra-passe|contraseña|contrasena|clave de acceso|passwort|kennwort|mot de passe|mdp|пароль|wachtwoord|hasło|haslo|parola|parolă|şifre|sifre|lösenord|losenord|salasana|adgangskode|passord|heslo|jelszó|mật khẩu|kata sandi|κωδικός|סיסמה|كلمة المرور|كلمة السر|पासवर्ड";
const SCRIPT: &str = r"密码|密碼|口令|パスワード|暗証番号|비밀번호|암호";

/// "is" in the languages above.
const VERBS: &str = r"is|was|ist|lautet|war|es|era|é|est|è|jest|är|on|er|это|—";

/// Of [`VERBS`], those that only mean "is" (another, like Finnish "on",
/// is also a word of English): a value after them need not look random.
const SURE_VERBS: &[&str] = &[
    "is", "ist", "lautet", "es", "é", "est", "è", "jest", "är", "это",
];

/// Words that, between the label and the value, make the sentence about the
/// password rather than give one.
const META: &[&str] = &[
    "policy",
    "policies",
    "reset",
    "resets",
    "change",
    "changes",
    "changed",
    "expiry",
    "expiration",
    "expires",
    "expired",
    "rotation",
    "rotated",
    "manager",
    "managers",
    "requirement",
    "requirements",
    "rule",
    "rules",
    "length",
    "complexity",
    "strength",
    "hint",
    "field",
    "prompt",
    "history",
    "format",
    "page",
    "link",
    "form",
    "age",
    "minimum",
    "maximum",
    "min",
    "max",
    "limit",
    "attempts",
    "reuse",
    "recovery",
    "must",
    "should",
    "needs",
    "need",
    "can",
    "cannot",
    "will",
    "may",
    "might",
    "would",
    "could",
    "not",
    "richtlinie",
    "política",
    "politique",
    "политика",
    "beleid",
    "polityka",
    "zurücksetzen",
    "restablecer",
    "redefinir",
    "réinitialiser",
    "сброс",
    "längd",
    "pituus",
    "longitud",
    "comprimento",
    "longueur",
    "länge",
    "длина",
    "gestor",
    "gerenciador",
    "gestionnaire",
    "менеджер",
    "muss",
    "debe",
    "deve",
    "doit",
    "moet",
    "musi",
    "måste",
    "pitää",
    "нужно",
    "должен",
    "expira",
    "vence",
    "abgelaufen",
    "istruzioni",
    "where",
    "how",
    "when",
    "why",
];

/// Ordinary words that are never a credential's value.
const NOT_VALUES: &[&str] = &[
    "the",
    "a",
    "an",
    "my",
    "your",
    "our",
    "his",
    "her",
    "their",
    "its",
    "this",
    "that",
    "these",
    "those",
    "in",
    "on",
    "at",
    "for",
    "to",
    "of",
    "by",
    "with",
    "from",
    "not",
    "no",
    "none",
    "null",
    "nil",
    "n/a",
    "na",
    "tbd",
    "unknown",
    "empty",
    "blank",
    "missing",
    "required",
    "optional",
    "needed",
    "necessary",
    "mandatory",
    "reset",
    "changed",
    "change",
    "expired",
    "expires",
    "expiring",
    "rotated",
    "rotating",
    "updated",
    "stored",
    "saved",
    "kept",
    "managed",
    "shared",
    "sent",
    "set",
    "same",
    "different",
    "wrong",
    "incorrect",
    "invalid",
    "valid",
    "correct",
    "weak",
    "strong",
    "long",
    "short",
    "secure",
    "safe",
    "case-sensitive",
    "too",
    "very",
    "still",
    "now",
    "also",
    "here",
    "there",
    "below",
    "above",
    "attached",
    "ok",
    "okay",
    "fine",
    "good",
    "bad",
    "easy",
    "hard",
    "new",
    "old",
    "default",
    "temporary",
    "hidden",
    "encrypted",
    "hashed",
    "true",
    "false",
    "yes",
    "unchanged",
    "being",
    "going",
    "used",
    "usually",
    "always",
    "never",
    "only",
    "just",
    "available",
    "unavailable",
    "locked",
    "disabled",
    "enabled",
    "please",
    "ask",
    "see",
    "check",
    "contact",
    "what",
    "which",
    "where",
    "who",
    "how",
    "and",
    "or",
    "but",
    "if",
    "via",
    "per",
    "under",
    "inside",
    "written",
    "printed",
    "personal",
    "private",
    "public",
    "sensitive",
    "confidential",
    "important",
    "needed.",
    "generated",
    "issued",
    "revoked",
    "provided",
    "given",
    "known",
    "forgotten",
    "lost",
    "compromised",
    "leaked",
    "about",
    "like",
    "more",
    "less",
    "than",
    "as",
    "so",
    "such",
    "every",
    "each",
    "all",
    "any",
    "some",
    "out",
    "off",
    "up",
    "down",
    "gone",
    "over",
    "case",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "eight",
    "ten",
    "twelve",
    "characters",
    "chars",
    "digits",
    "letters",
    "words",
    "days",
    "months",
    "weeks",
    "hours",
    // Other languages: articles, negations and the adjectives above.
    "o",
    "os",
    "as",
    "el",
    "la",
    "los",
    "las",
    "der",
    "die",
    "das",
    "den",
    "dem",
    "ein",
    "eine",
    "le",
    "les",
    "un",
    "une",
    "de",
    "du",
    "des",
    "il",
    "lo",
    "gli",
    "het",
    "een",
    "nicht",
    "não",
    "pas",
    "non",
    "niet",
    "nie",
    "inte",
    "ei",
    "değil",
    "нет",
    "не",
    "geändert",
    "zurückgesetzt",
    "alterada",
    "cambiada",
    "modifié",
    "réinitialisé",
    "abgelaufen",
    "expirada",
    "expiré",
    "obligatorio",
    "obrigatória",
    "obrigatório",
    "erforderlich",
    "requis",
    "richiesta",
    "vereist",
    "wymagane",
    "krävs",
    "pakollinen",
    "gerekli",
    "обязателен",
    "изменён",
    "сброшен",
    "stark",
    "sicher",
    "segura",
    "seguro",
    "sûr",
    "forte",
    "fuerte",
    "falsch",
    "incorrecta",
    "incorrecte",
    "errata",
    "onjuist",
    "błędne",
    "fel",
    "väärä",
    "yanlış",
    "неверный",
    "неправильный",
    "im",
    "en",
    "em",
    "no",
    "na",
    "в",
    "на",
    "auf",
    "dans",
    "bei",
    "chez",
    "nel",
    "nella",
    "w",
    "i",
    "på",
    "hos",
];

struct Patterns {
    /// A label, its value's remainder read by the forms below.
    label: Regex,
    /// `: VALUE`, `= VALUE`, and the scripts' particles (`是`, `は`, `는` …).
    direct: Regex,
    /// ` is VALUE` right after the label.
    verb: Regex,
    /// A few words, then ` is VALUE` or `: VALUE`.
    words_verb: Regex,
    /// ` VALUE` right after a password's label ("…, password seagull-88.").
    adjacent: Regex,
}

fn patterns() -> Option<&'static Patterns> {
    static P: OnceLock<Option<Patterns>> = OnceLock::new();
    P.get_or_init(|| {
        let build = || -> Result<Patterns, regex::Error> {
            Ok(Patterns {
                label: Regex::new(&format!(
                    r"(?i)(?:\b(?:{ENGLISH})s?\b|\b(?:{OTHER})\w{{0,3}}\b|(?:{SCRIPT}))"
                ))?,
                direct: Regex::new(
                    r#"^\s*(?P<sep>[:：=]|=>|是|为|為|は|는|은)\s*(?:["'«“„`](?P<q>[^"'»”`]{3,128})["'»”`]|(?P<v>\S+))"#,
                )?,
                verb: Regex::new(&format!(
                    r#"(?i)^\s+(?P<verb>{VERBS})\s*:?\s+(?:["'«“„`](?P<q>[^"'»”`]{{3,128}})["'»”`]|(?P<v>\S+))"#
                ))?,
                words_verb: Regex::new(&format!(
                    r#"(?i)^(?P<w>(?:\s+[^\s:=?!]*[^\s:=?!.,;]){{1,6}}?)(?:\s+(?:{VERBS})\s*:?\s+|\s*[:：=]\s*)(?:["'«“„`](?P<q>[^"'»”`]{{3,128}})["'»”`]|(?P<v>\S+))"#
                ))?,
                adjacent: Regex::new(r"^\s+(?P<v>\S+)")?,
            })
        };
        build()
            .map_err(|e| tracing::error!(error = %e, "invalid credential label pattern"))
            .ok()
    })
    .as_ref()
}

/// Whether `value` could be a credential: not an ordinary word, a
/// placeholder or a number too short to be one. `strict` (a label some
/// words away) also wants a digit, a symbol or a capital inside.
fn plausible(value: &str, strict: bool) -> bool {
    let v = value.trim_end_matches(|c: char| ".,;!?)]}…".contains(c));
    if v.chars().count() < 3 || placeholder(v) {
        return false;
    }
    let lower = v.to_lowercase();
    if NOT_VALUES.contains(&lower.as_str()) || english_word_form(v) {
        return false;
    }
    if !strict {
        return true;
    }
    v.chars()
        .any(|c| c.is_ascii_digit() || (!c.is_alphanumeric() && c != '-' && c != '\''))
        || v.chars().skip(1).any(char::is_uppercase)
}

/// A lowercase word with an English word ending ("refreshed", "keeping",
/// "hourly", "sensitive"): prose about the password, not one.
fn english_word_form(v: &str) -> bool {
    const ENDINGS: &[&str] = &[
        "ed", "ing", "ly", "ive", "ble", "ful", "less", "ous", "tion", "ment", "ness",
    ];
    v.chars().all(|c| c.is_ascii_lowercase()) && ENDINGS.iter().any(|e| v.ends_with(e))
}

/// Whether the words between a label and its value make it a sentence
/// about the password ("policy", "reset", "length" …).
fn about_it(words: &str) -> bool {
    words.split_whitespace().any(|w| {
        let w = w
            .trim_matches(|c: char| !c.is_alphanumeric())
            .to_lowercase();
        META.contains(&w.as_str())
    })
}

/// Pushes each labelled value in `text`.
pub(super) fn found(text: &str, out: &mut Vec<Found>) {
    let Some(p) = patterns() else { return };
    for label in p.label.find_iter(text) {
        let rest = &text[label.end()..];
        let lower = label.as_str().to_lowercase();
        let kind = if lower.contains("key") || lower.contains("token") {
            Credential::ApiKey
        } else {
            Credential::Password
        };
        let value = |caps: &regex::Captures<'_>, strict: bool| {
            if let Some(q) = caps.name("q") {
                return plausible(q.as_str(), false).then(|| q.range());
            }
            let v = caps.name("v")?;
            plausible(v.as_str(), strict).then(|| v.range())
        };
        let span = if let Some(caps) = p.direct.captures(rest) {
            let sep = caps.name("sep").map_or("", |s| s.as_str());
            let plain = matches!(sep, ":" | "：" | "=" | "=>");
            // After a particle (`は`, `是`, `는`) the value is what is not
            // the sentence's own script: a password is typed in ASCII.
            let ascii = caps.name("v").is_none_or(|v| v.as_str().is_ascii());
            if plain || ascii {
                value(&caps, !plain)
            } else {
                None
            }
        } else if let Some(caps) = p.verb.captures(rest) {
            let verb = caps
                .name("verb")
                .map_or(String::new(), |v| v.as_str().to_lowercase());
            value(&caps, !SURE_VERBS.contains(&verb.as_str()))
        } else if let Some(caps) = p.words_verb.captures(rest) {
            let words = caps.name("w").map_or("", |w| w.as_str());
            if about_it(words) {
                None
            } else {
                value(&caps, true)
            }
        } else if let Some(caps) = p.adjacent.captures(rest).filter(|c| {
            // A password's value with nothing between ("password seagull-88",
            // "pin 4417"): a word with a digit, a symbol or an inner capital,
            // holding a letter unless the label is a PIN's ("Passwords 2026
            // are rotated" names a year).
            kind == Credential::Password
                && !lower.starts_with("secret")
                && c.name("v").is_some_and(|v| {
                    lower.starts_with("pin") || v.as_str().chars().any(char::is_alphabetic)
                })
        }) {
            value(&caps, true)
        } else {
            None
        };
        if let Some(span) = span {
            // The value without the sentence's closing punctuation.
            let start = label.end() + span.start;
            let value = text[start..label.end() + span.end]
                .trim_end_matches(|c: char| ".,;!?)]}…".contains(c));
            out.push(Found {
                kind,
                span: start..start + value.len(),
            });
        }
    }
}

/// A question for a credential's value in the other languages ("Qual é a
/// senha do servidor?", "Wie lautet das Passwort?", "密码是什么？"): a
/// question that names a label and asks "what", and is not about the
/// password itself (how to reset it, its policy).
pub(super) fn asks(text: &str) -> bool {
    let t = text.trim();
    if !(t.ends_with(['?', '？', '؟']) || t.ends_with("吗") || t.ends_with("까")) {
        return false;
    }
    let Some(p) = patterns() else { return false };
    let Some(label) = p.label.find(t) else {
        return false;
    };
    let lower = t.to_lowercase();
    const WHAT: &[&str] = &[
        "qual",
        "cuál",
        "cual",
        "was ist",
        "wie lautet",
        "welches",
        "quel",
        "quelle",
        "какой",
        "каков",
        "wat is",
        "welk",
        "jakie",
        "jaki",
        "jak brzmi",
        "vad är",
        "vilket",
        "mikä",
        "nedir",
        "ne ",
        "hangi",
        "什么",
        "什麼",
        "多少",
        "何",
        "뭐",
        "무엇",
        "what",
        "which",
        "co to",
        "mi a",
        "care este",
        "ποιος",
        "מה",
        "ما هي",
        "क्या",
    ];
    const ABOUT: &[&str] = &[
        "how",
        "where",
        "reset",
        "change",
        "policy",
        "forgot",
        "wie kann",
        "wo ",
        "comment",
        "cómo",
        "como",
        "où",
        "dónde",
        "onde",
        "как ",
        "где",
        "如何",
        "怎么",
        "どう",
        "어떻게",
        "zurücksetzen",
        "ändern",
        "redefinir",
        "cambiar",
        "changer",
        "изменить",
        "сбросить",
    ];
    let asks_what = WHAT.iter().any(|w| lower.contains(w));
    let about = ABOUT.iter().any(|w| lower.contains(w)) || about_it(&t[label.end()..]);
    asks_what && !about
}
