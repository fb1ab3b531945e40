//! The full-text analyzer: the tokens a record is indexed under and a query is
//! searched with, on both databases. One analyzer in Rust, so SQLite's FTS5 and
//! PostgreSQL's tsvector index the same tokens and a query finds the same
//! records on either engine, ranked alike (`store::fulltext`).
//!
//! - Words are lower-cased and stemmed (Snowball English): "reports" finds "report".
//! - An identifier or host name (`example_orders`, `db-1.example.com`) is kept
//!   whole and also split into its parts, so "the orders table" finds it.
//! - Chinese, Japanese and Korean text has no spaces: each run of such
//!   characters is indexed as overlapping character pairs (the bigrams Lucene's
//!   CJK analyzer uses), a lone character as itself; "今天的日报" shares "日报"
//!   with "日报使用 example_orders 表".
//! - Stopwords and one-letter Latin noise are dropped.

use foldhash::{HashMap, HashSet};
use rust_stemmers::{Algorithm, Stemmer};
use std::cell::RefCell;
use std::sync::LazyLock;

/// At most this many distinct tokens of a query are searched for: a turn's
/// search stays bounded however long the message.
pub const MAX_QUERY_TOKENS: usize = 32;

const STOPWORDS: &[&str] = &[
    "the", "and", "for", "are", "but", "not", "you", "your", "yours", "all", "any", "can", "her",
    "was", "one", "our", "out", "has", "have", "had", "his", "how", "its", "may", "new", "now",
    "see", "who", "did", "does", "get", "got", "him", "she", "too", "that", "this", "with", "from",
    "they", "them", "then", "than", "what", "when", "where", "which", "will", "would", "could",
    "should", "there", "their", "about", "into", "been", "being", "were", "here", "also", "just",
    "some", "such", "only", "very", "want", "please", "tell", "show", "give", "let", "lets", "me",
    "my", "mine", "is", "at", "in", "on", "of", "to", "an", "it", "be", "do", "we", "us", "im",
    "or", "as", "by", "so", "if", "no", "up", "am", "he", "its", "i'm", "what's", "whats", "know",
    "remember", "today", "todays", "produce", "make", "tell", "use", "uses", "used", "using",
    // Verbs of going say where a thing is sent, not what it is: "Where does
    // the coffee machine request go?" shares no subject with "Printer
    // problems go to #facilities".
    "go", "goes", "went", "gone", "going",
];

static STEMMER: LazyLock<Stemmer> = LazyLock::new(|| Stemmer::create(Algorithm::English));

/// Characters of scripts written without spaces between words.
fn is_cjk(c: char) -> bool {
    matches!(c,
        '\u{3040}'..='\u{30FF}'   // Hiragana, Katakana
        | '\u{3400}'..='\u{4DBF}' // CJK Extension A
        | '\u{4E00}'..='\u{9FFF}' // CJK Unified Ideographs
        | '\u{AC00}'..='\u{D7AF}' // Hangul syllables
        | '\u{F900}'..='\u{FAFF}' // CJK Compatibility Ideographs
        | '\u{20000}'..='\u{2FA1F}')
}

/// Joiners that may sit inside an identifier or host name.
fn is_joiner(c: char) -> bool {
    matches!(c, '_' | '-' | '.')
}

/// One word: lower-cased, possessive dropped, stemmed when it is plain letters.
fn word_token(word: &str) -> Option<String> {
    // An ASCII word lower-cases to the same without the Unicode tables.
    let lower = if word.is_ascii() {
        word.to_ascii_lowercase()
    } else {
        word.to_lowercase()
    };
    let kept = lower
        .strip_suffix("'s")
        .or_else(|| lower.strip_suffix("’s"))
        .unwrap_or(&lower);
    // Most words are letters and digits already: no second copy.
    let cleaned: String;
    let word = if kept.chars().all(char::is_alphanumeric) {
        kept
    } else {
        cleaned = kept.chars().filter(|c| c.is_alphanumeric()).collect();
        &cleaned
    };
    if word.chars().nth(1).is_none() || STOPS.contains(word) {
        return None;
    }
    if word.chars().all(char::is_alphabetic) {
        Some(stem(word))
    } else {
        Some(word.to_string())
    }
}

/// [`STOPWORDS`] as a set: every word of every query and record is looked up.
static STOPS: LazyLock<HashSet<&str>> = LazyLock::new(|| STOPWORDS.iter().copied().collect());

/// Stems kept on each thread before the memo starts afresh.
const STEMS_KEPT: usize = 8192;

thread_local! {
    /// Stems already made on this thread: a turn stems the message for its
    /// search and the offline answer again, and the same words recur from
    /// turn to turn; the Snowball stemmer costs some thousand instructions
    /// a word, a look-up a few dozen. Hashed with a per-process seed: the
    /// words are the people's.
    static STEMS: RefCell<HashMap<String, String>> = RefCell::new(HashMap::default());
}

/// `word`'s Snowball English stem.
fn stem(word: &str) -> String {
    STEMS.with_borrow_mut(|stems| {
        if let Some(stem) = stems.get(word) {
            return stem.clone();
        }
        let stem = STEMMER.stem(word).into_owned();
        if stems.len() >= STEMS_KEPT {
            stems.clear();
        }
        stems.insert(word.to_string(), stem.clone());
        stem
    })
}

/// Tokens of `text`, in order, repeats kept (the index counts them).
fn tokens_with_repeats(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut latin = String::new();
    let mut cjk: Vec<char> = Vec::new();
    let flush_latin = |latin: &mut String, out: &mut Vec<String>| {
        let chunk = latin.trim_matches(is_joiner);
        if chunk.contains(is_joiner) {
            // An identifier: whole, then its parts.
            let whole: String = chunk.to_lowercase();
            if whole.chars().count() >= 2 {
                out.push(whole);
            }
            out.extend(chunk.split(is_joiner).filter_map(word_token));
        } else if let Some(t) = word_token(chunk) {
            out.push(t);
        }
        latin.clear();
    };
    let flush_cjk = |cjk: &mut Vec<char>, out: &mut Vec<String>| {
        match cjk.len() {
            0 => {}
            1 => out.push(cjk[0].to_string()),
            _ => out.extend(cjk.windows(2).map(|w| w.iter().collect::<String>())),
        }
        cjk.clear();
    };
    for c in text.chars() {
        if is_cjk(c) {
            flush_latin(&mut latin, &mut out);
            cjk.push(c);
        } else if c.is_alphanumeric() || is_joiner(c) || c == '\'' || c == '’' {
            flush_cjk(&mut cjk, &mut out);
            latin.push(c);
        } else {
            flush_latin(&mut latin, &mut out);
            flush_cjk(&mut cjk, &mut out);
        }
    }
    flush_latin(&mut latin, &mut out);
    flush_cjk(&mut cjk, &mut out);
    // Tokens reach the engines as space-separated text: only letters, digits and joiners.
    out.retain(|t| t.chars().all(|c| c.is_alphanumeric() || is_joiner(c)));
    out
}

/// The tokens a record is indexed under: its content's, then its subject's.
pub fn document_tokens(subject: &str, content: &str) -> Vec<String> {
    let mut out = tokens_with_repeats(content);
    out.extend(tokens_with_repeats(subject));
    out
}

/// The first token of one word (`None` for a stopword or noise), as
/// [`query_tokens`] would read it first.
pub fn first_token(word: &str) -> Option<String> {
    // Most words are ASCII letters between marks ("report,", "(uses"): no
    // identifier to keep whole, one word to read.
    if word.is_ascii() {
        let letters = word.trim_matches(|c: char| !c.is_ascii_alphanumeric());
        if !letters.is_empty() && letters.bytes().all(|b| b.is_ascii_alphabetic()) {
            return word_token(letters);
        }
    }
    tokens_with_repeats(word).into_iter().next()
}

/// The distinct tokens a query searches for, first seen first, at most
/// [`MAX_QUERY_TOKENS`], then every other way of writing a currency it names
/// ([`CURRENCIES`]).
pub fn query_tokens(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for t in tokens_with_repeats(text) {
        if out.len() == MAX_QUERY_TOKENS {
            break;
        }
        if !out.contains(&t) {
            out.push(t);
        }
    }
    // A name is said when all its tokens are: "ユーロ" is two pairs, and
    // "ユーザー" (user) holds only the first.
    let named: Vec<&[String]> = CURRENCY_TOKENS
        .iter()
        .filter(|c| {
            c.symbol.is_some_and(|s| text.contains(s))
                || c.names.iter().any(|n| n.iter().all(|t| out.contains(t)))
        })
        .map(|c| c.tokens.as_slice())
        .collect();
    for t in named.into_iter().flatten() {
        if !out.contains(t) {
            out.push(t.clone());
        }
    }
    out
}

/// Each currency as people write it, by its symbol, its code and its name in
/// the languages steward answers in: "420 de euro" asks about a note of
/// "300 EUR", "650 kroner" about "800 kr". A closed class, like a language's
/// names; searched for together on the query's side only, so records are
/// indexed as before and no index is rebuilt.
const CURRENCIES: &[(Option<char>, &[&str])] = &[
    (
        Some('€'),
        &[
            "eur",
            "euro",
            "euros",
            "eura",
            "euri",
            "euró",
            "евро",
            "євро",
            "ευρώ",
            "ユーロ",
            "欧元",
            "유로",
        ],
    ),
    (
        Some('$'),
        &[
            "usd",
            "dollar",
            "dollars",
            "dólar",
            "dólares",
            "dollaro",
            "dollari",
            "доллар",
            "долларов",
            "ドル",
            "美元",
            "달러",
        ],
    ),
    (Some('£'), &["gbp", "pound", "pounds", "sterling"]),
    (
        None,
        &[
            "kr",
            "kroner",
            "kronor",
            "krone",
            "kronen",
            "krona",
            "dkk",
            "nok",
            "sek",
            "κορώνες",
            "κορώνα",
            "クローネ",
            "クローナ",
            "крон",
            "кроны",
            "крони",
        ],
    ),
    (None, &["pln", "zł", "zloty", "złoty", "złotych", "złote"]),
    (None, &["czk", "kč", "korun", "koruna", "koruny"]),
    (None, &["huf", "forint", "forintot"]),
    (Some('¥'), &["jpy", "yen", "円"]),
];

/// Whether `word` (lower case, as written) names a currency of
/// [`CURRENCIES`] ("eur", "kroner", "€"): a unit, which says what a value is
/// counted in, never what a note is about.
pub fn is_currency_word(word: &str) -> bool {
    CURRENCIES.iter().any(|(symbol, names)| {
        names.contains(&word) || symbol.is_some_and(|s| word.chars().eq(std::iter::once(s)))
    })
}

/// One currency of [`CURRENCIES`] as the analyzer reads it.
struct Currency {
    symbol: Option<char>,
    /// Each of its names' tokens.
    names: Vec<Vec<String>>,
    /// Every token of its names, once.
    tokens: Vec<String>,
}

static CURRENCY_TOKENS: LazyLock<Vec<Currency>> = LazyLock::new(|| {
    CURRENCIES
        .iter()
        .map(|(symbol, words)| {
            let names: Vec<Vec<String>> = words.iter().map(|w| tokens_with_repeats(w)).collect();
            let mut tokens: Vec<String> = Vec::new();
            for t in names.iter().flatten() {
                if !tokens.contains(t) {
                    tokens.push(t.clone());
                }
            }
            Currency {
                symbol: *symbol,
                names,
                tokens,
            }
        })
        .collect()
});

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_currency_is_searched_by_every_way_it_is_written() {
        let note = document_tokens("", "Purchases up to 300 EUR need no approval.");
        let kr = document_tokens("", "Udlæg op til 800 kr kræver ingen godkendelse.");
        for (asked, indexed) in [
            ("una silla de 180 euros", &note),
            ("o nivelă de 420 de euro", &note),
            ("is 250 € fine?", &note),
            ("Må jeg bruge 650 kroner?", &kr),
            ("Får jeg bruke 900 kronor?", &kr),
        ] {
            let asks = query_tokens(asked);
            assert!(
                asks.iter().any(|t| indexed.contains(t)),
                "{asked}: {asks:?}"
            );
        }
        // A query naming no currency searches for none, nor one holding
        // part of a name ("ユーザー", user, shares "ユー" with "ユーロ").
        for plain in ["where is the 300 page report?", "ユーザーの上限は300です"] {
            let asks = query_tokens(plain);
            assert!(!asks.contains(&"eur".to_string()), "{plain}: {asks:?}");
        }
    }

    #[test]
    fn a_words_first_token_is_the_first_the_analyzer_reads() {
        for word in [
            "report,",
            "(Uses",
            "it's",
            "'quoted'",
            "report.",
            "-x-",
            "db-1.example.com.",
            "example_orders",
            "café",
            "Ärger",
            "日报使用",
            "x",
            "the",
            "42",
            "v2,",
            "“Laptop”",
            "Bob's",
            "((a))",
            "",
        ] {
            assert_eq!(
                first_token(word),
                tokens_with_repeats(word).into_iter().next(),
                "{word:?}"
            );
        }
    }

    #[test]
    fn words_are_stemmed_and_stopwords_dropped() {
        assert_eq!(
            query_tokens("Produce today's daily reports, please"),
            vec!["daili", "report"]
        );
        assert_eq!(
            query_tokens("the daily report"),
            query_tokens("DAILY REPORTS")
        );
    }

    #[test]
    fn identifiers_and_hosts_are_whole_and_in_parts() {
        assert_eq!(
            query_tokens("uses example_orders at db-1.example.com."),
            vec![
                "example_orders",
                "exampl",
                "order",
                "db-1.example.com",
                "db",
                "com"
            ]
        );
        // The part "orders" of an identifier meets the word "orders".
        let doc = document_tokens("", "The report reads example_orders");
        assert!(query_tokens("which orders table?")
            .iter()
            .any(|q| doc.contains(q)));
    }

    #[test]
    fn cjk_runs_become_bigrams() {
        let doc = document_tokens("", "日报使用 example_orders 表");
        assert!(doc.contains(&"日报".to_string()), "{doc:?}");
        assert!(doc.contains(&"表".to_string()), "{doc:?}");
        let q = query_tokens("今天的日报是什么?");
        assert!(q.contains(&"日报".to_string()), "{q:?}");
        // Mixed text splits at the script boundary.
        assert_eq!(query_tokens("report日报"), vec!["report", "日报"]);
    }

    #[test]
    fn tokens_carry_nothing_an_engine_would_parse() {
        let q = query_tokens(r#"a "quoted" OR (NEAR) 'x' \ * ^ col:umn ' ''"#);
        for t in &q {
            assert!(
                t.chars().all(|c| c.is_alphanumeric() || "_-.".contains(c)),
                "{t}"
            );
        }
        assert!(q.contains(&"quot".to_string()), "{q:?}");
    }

    #[test]
    fn where_a_thing_goes_is_no_subject() {
        // Written for this test: "go" would tie a question to every routing note.
        assert_eq!(
            query_tokens("Where does a broken kettle go?"),
            ["broken", "kettl"]
        );
        assert!(
            !document_tokens("", "Badge requests go to #security-desk").contains(&"go".to_string())
        );
    }

    #[test]
    fn a_long_query_is_bounded() {
        let text: String = (0..200).map(|i| format!("word{i} ")).collect();
        assert_eq!(query_tokens(&text).len(), MAX_QUERY_TOKENS);
    }
}
