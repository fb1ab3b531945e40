//! Whether an extracted item is supported by its speaker's own words.
//!
//! A model's item is a *pointer* to something the speaker said, never the text
//! that is kept: [`ground`] finds the clause of the source the item refers to,
//! and the caller stores that clause (the person's words, or a minimal
//! normalisation of them). An item that adds claims the source does not make,
//! outgrows its source or repeats itself refers to nothing the speaker said
//! and is dropped.
//!
//! The check is lenient on wording on purpose: since the stored text is the
//! clause, a paraphrase that keeps the clause's words ("prefers brief answers"
//! for "I prefer short answers") costs nothing, while dropping it would lose
//! what the person asked to be remembered. What it refuses is an item most
//! of whose content words appear nowhere in what was said.

use std::collections::HashSet;
use std::sync::LazyLock;

/// Words that normalise a statement about the speaker ("The user prefers …",
/// "Wants answers in …"): they are never evidence of an added claim.
const FRAME: &[&str] = &[
    "user",
    "users",
    "speaker",
    "person",
    "they",
    "their",
    "them",
    "he",
    "she",
    "his",
    "her",
    "prefers",
    "prefer",
    "preference",
    "wants",
    "want",
    "likes",
    "like",
    "answers",
    "answer",
    "replies",
    "reply",
    "respond",
    "responses",
    "introduced",
    "themselves",
    "said",
    "says",
    "name",
    "named",
    "called",
    "call",
    "is",
    "are",
    "was",
    "be",
    "the",
    "a",
    "an",
    "to",
    "in",
    "on",
    "of",
    "for",
    "and",
    "or",
    "with",
    "at",
    "by",
    "as",
    "that",
    "this",
    "it",
    "its",
    "from",
    "now",
    "i",
    "me",
    "my",
    "we",
    "our",
    "you",
    "your",
    "always",
    "should",
    "must",
    "will",
    "would",
    "please",
    "going",
    "forward",
    "rule",
    "note",
    "notes",
    "every",
    "all",
];

/// Share of an item's content words that must appear in one clause of its source.
pub const MIN_COVERAGE: f64 = 0.5;

/// How much longer than the clause it points at an item may be (characters):
/// twice, plus room for a normalising frame ("The speaker prefers …").
pub fn longest_for(clause_chars: usize) -> usize {
    clause_chars * 2 + 40
}

/// What [`ground`] found for one item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Grounding<'s> {
    /// The clause of the source the item refers to: keep its words.
    Supported { clause: &'s str },
    /// Most of the item's words were never said.
    Unsupported { missing: Vec<String> },
    /// Far longer than anything it could refer to.
    Outgrown {
        item_chars: usize,
        clause_chars: usize,
    },
    /// The item says the same words over again (a model looping).
    Repeats { phrase: String },
}

impl Grounding<'_> {
    /// Why an item was dropped, for the log.
    pub fn why(&self) -> String {
        match self {
            Grounding::Supported { .. } => "supported".into(),
            Grounding::Unsupported { missing } => {
                format!("adds words the speaker never said: {}", missing.join(", "))
            }
            Grounding::Outgrown {
                item_chars,
                clause_chars,
            } => format!("{item_chars} characters for a clause of {clause_chars}"),
            Grounding::Repeats { phrase } => format!("repeats “{phrase}”"),
        }
    }
}

/// The content words of `text`: lower case, identifiers, hosts and times kept
/// whole (`sales_2025`, `pg-staging-04.internal`, `16:00`, `#ops-oncall`),
/// frame words left out.
pub fn content_words(text: &str) -> Vec<String> {
    // A set, not the list: this runs over every word of the message, the
    // answer and each record a turn shows.
    static FRAMING: LazyLock<HashSet<&str>> = LazyLock::new(|| FRAME.iter().copied().collect());
    words(text)
        .into_iter()
        .filter(|w| !FRAMING.contains(w.as_str()))
        .collect()
}

fn words(text: &str) -> Vec<String> {
    // Characters matched with `matches!` and suffixes cut with `strip_suffix`:
    // a `&str` pattern in `trim_end_matches` builds a substring searcher for
    // every word, and this runs over every answer and record a turn shows.
    text.split(|c: char| {
        !(c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | ':' | '#' | '@' | '/' | '\'' | '’'))
    })
    .map(|w| {
        let w = w.trim_matches(|c: char| matches!(c, '.' | ':' | '-' | '\'' | '’' | '/'));
        let w = without_all(without_all(w, "'s"), "’s");
        // An ASCII word lower-cases to the same without the Unicode tables.
        if w.is_ascii() {
            w.to_ascii_lowercase()
        } else {
            w.to_lowercase()
        }
    })
    .filter(|w| !w.is_empty())
    .collect()
}

/// `w` without every trailing repeat of `suffix` (`trim_end_matches`).
fn without_all<'a>(mut w: &'a str, suffix: &str) -> &'a str {
    while let Some(rest) = w.strip_suffix(suffix) {
        w = rest;
    }
    w
}

/// The same word, or one form of it ("published" / "publish", "built" /
/// "build", "deploys" / "deployment"): a shared stem of four characters or
/// more that leaves at most three of the shorter word.
fn same_word(a: &str, b: &str) -> bool {
    if a == b {
        return true;
    }
    let common = a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count();
    let shorter = a.chars().count().min(b.chars().count());
    common >= 4 && common + 3 >= shorter
}

/// The first run of four words that comes back later in `text`, if any.
fn repeated_phrase(text: &str) -> Option<String> {
    let w = words(text);
    if w.len() < 8 {
        return None;
    }
    let grams: Vec<String> = w.windows(4).map(|g| g.join(" ")).collect();
    for (i, g) in grams.iter().enumerate() {
        if grams.get(i + 4..).is_some_and(|later| later.contains(g)) {
            return Some(g.clone());
        }
    }
    None
}

/// Which of `clauses` (the speaker's own words, split into clauses) `item`
/// refers to, or why it refers to none.
pub fn ground<'s>(item: &str, clauses: &[&'s str]) -> Grounding<'s> {
    if let Some(phrase) = repeated_phrase(item) {
        return Grounding::Repeats { phrase };
    }
    let wanted = content_words(item);
    let mut best: Option<(&'s str, usize)> = None;
    for clause in clauses {
        let said = words(clause);
        let found = wanted
            .iter()
            .filter(|w| said.iter().any(|s| same_word(w, s)))
            .count();
        let better = match best {
            None => true,
            // More words found; on a tie, the shorter clause (the closer pointer).
            Some((b, n)) => found > n || (found == n && clause.len() < b.len()),
        };
        if better {
            best = Some((clause, found));
        }
    }
    let Some((clause, found)) = best else {
        return Grounding::Unsupported { missing: wanted };
    };
    let item_chars = item.chars().count();
    let clause_chars = clause.chars().count();
    if item_chars > longest_for(clause_chars) {
        return Grounding::Outgrown {
            item_chars,
            clause_chars,
        };
    }
    let enough = if wanted.is_empty() {
        false
    } else {
        found as f64 / wanted.len() as f64 >= MIN_COVERAGE
    };
    if !enough {
        let said = words(clause);
        let missing = wanted
            .into_iter()
            .filter(|w| !said.iter().any(|s| same_word(w, s)))
            .collect();
        return Grounding::Unsupported { missing };
    }
    Grounding::Supported { clause }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The words as the first version cut them (`trim_end_matches` of each
    /// suffix): the faster [`words`] must cut the same.
    fn words_as_before(text: &str) -> Vec<String> {
        text.split(|c: char| !(c.is_alphanumeric() || "_-.:#@/'’".contains(c)))
            .map(|w| {
                w.trim_matches(|c: char| ".:-'’/".contains(c))
                    .trim_end_matches("'s")
                    .trim_end_matches("’s")
                    .to_lowercase()
            })
            .filter(|w| !w.is_empty())
            .collect()
    }

    #[test]
    fn words_are_cut_as_before() {
        for text in [
            "The daily report uses example_orders (Memory reference: 12)",
            "Ana's and Ben’s notes: db-01.internal:5432, #ops, @ana, a/b/c.",
            "it's's’s’s 's ’s '' -- :: // x's’s's",
            "Größe ÜBER 500 EUR — straße's; İstanbul’s ΣΊΣΥΦΟΣ",
            "密码是什么？ パスワードは12文字 --a-- .b. 'c' ’d’",
            "",
        ] {
            assert_eq!(words(text), words_as_before(text), "{text}");
        }
    }

    fn supported(item: &str, source: &[&str]) -> bool {
        matches!(ground(item, source), Grounding::Supported { .. })
    }

    /// Faithful items a model writes for a clause: a normalising frame,
    /// a dropped article, another form of a word. None may be dropped.
    const FAITHFUL: &[(&str, &str)] = &[
        ("I prefer short answers", "Prefers short answers"),
        ("I prefer short answers", "The user prefers short answers."),
        ("I prefer short answers", "short answers"),
        (
            "Please answer me in Portuguese from now on, I read it faster",
            "Wants answers in Portuguese",
        ),
        (
            "Please answer me in Portuguese from now on, I read it faster",
            "The speaker wants replies in Portuguese from now on",
        ),
        ("Call me Bo", "Their name is Bo"),
        ("Call me Bo", "call me Bo"),
        (
            "I work from the Lisbon office",
            "Works from the Lisbon office",
        ),
        (
            "I work from the Lisbon office",
            "The user works in the Lisbon office",
        ),
        (
            "The on-call rotation is published in #ops-oncall every Friday at 16:00",
            "The on-call rotation is published in #ops-oncall every Friday at 16:00.",
        ),
        (
            "The on-call rotation is published in #ops-oncall every Friday at 16:00",
            "on-call rotation published in #ops-oncall on Fridays at 16:00",
        ),
        (
            "the staging database moved to pg-staging-04.internal, same port",
            "The staging database moved to pg-staging-04.internal",
        ),
        (
            "the staging database moved to pg-staging-04.internal, same port",
            "Staging database host: pg-staging-04.internal",
        ),
        (
            "The VPN endpoint is vpn.example.com, port 443",
            "VPN endpoint vpn.example.com port 443",
        ),
        (
            "Deploys to production need a second reviewer and happen only before 15:00",
            "Production deploys need a second reviewer",
        ),
        (
            "The weekly sales report is built from the table sales_2025 every Monday",
            "The weekly sales report is built from sales_2025 every Monday",
        ),
        (
            "From now on the weekly sales report uses the table sales_2026 instead",
            "The weekly sales report uses sales_2026",
        ),
        ("I am your manager", "Introduced themselves as the manager"),
        (
            "I'm a customer service representative",
            "The user is a customer service representative",
        ),
        (
            "Responde-me sempre em português",
            "Responde sempre em português",
        ),
    ];

    /// What a small model was seen to write instead: claims never made,
    /// repetition to the length cap, another person's data. All must be dropped.
    const INVENTED: &[(&str, &str)] = &[
        ("Where do I find who is on call this weekend", "I want to know who is on call this weekend. I am a customer service representative. I want to know who is on call to ensure I can reach them."),
        ("The on-call rotation is published in #ops-oncall every Friday at 16:00", "The on-call rotation is published in #ops-oncall every Friday at 16:00. This is a one-off request to execute now. The speaker is requesting the on-call rotation. This is a one-off request to execute now."),
        ("I prefer short answers", "The user is a senior engineer in the Berlin team"),
        ("I work from the Lisbon office", "Works from the Porto office as head of sales"),
        ("Hi there", "The user manages the payroll system"),
        ("How much was my 740 EUR expense", "Expense report approved by finance department manager"),
        ("Remind me to renew my badge on Friday", "Badge renewals are handled by security every quarter"),
        ("Deploys need a second reviewer", "deploys need a second reviewer deploys need a second reviewer deploys need a second reviewer"),
    ];

    #[test]
    fn faithful_items_are_kept_and_invented_ones_dropped() {
        let mut dropped = Vec::new();
        for (said, item) in FAITHFUL {
            if !supported(item, &[said]) {
                dropped.push((*item, ground(item, &[said]).why()));
            }
        }
        // The false-drop rate on this set is 0 of FAITHFUL.len().
        assert!(dropped.is_empty(), "faithful items dropped: {dropped:?}");
        for (said, item) in INVENTED {
            assert!(!supported(item, &[said]), "kept: {item} for {said}");
        }
    }

    #[test]
    fn the_clause_an_item_points_at_is_found() {
        let clauses = [
            "Hi",
            "I prefer short answers",
            "I work from the Lisbon office",
        ];
        assert_eq!(
            ground("Works in Lisbon office", &clauses),
            Grounding::Supported {
                clause: "I work from the Lisbon office"
            }
        );
        assert_eq!(
            ground("prefers short answers", &clauses),
            Grounding::Supported {
                clause: "I prefer short answers"
            }
        );
    }

    #[test]
    fn a_changed_value_is_not_supported() {
        // The host, the number and the time are words like any other.
        for (said, item) in [
            (
                "The VPN endpoint is vpn.example.com",
                "The VPN endpoint is vpn.evil.example",
            ),
            (
                "Deploys happen only before 15:00",
                "Deploys happen only before 17:00",
            ),
        ] {
            let g = ground(item, &[said]);
            // One changed word of few: the clause is still the one pointed at,
            // and what is kept is the clause, with the speaker's value.
            if let Grounding::Supported { clause } = g {
                assert_eq!(clause, said);
            }
        }
        assert!(!supported(
            "vpn.evil.example",
            &["The VPN endpoint is vpn.example.com"]
        ));
    }

    #[test]
    fn an_item_of_only_frame_words_points_at_nothing() {
        assert!(!supported("The user said it", &["I prefer tea"]));
        assert!(!supported("anything", &[]));
    }
}
