//! Words used to index and retrieve records. Deterministic and shared by the
//! writer (the `memory_terms` index) and the reader (retrieval), so both agree.

const STOPWORDS: &[&str] = &[
    "the", "and", "for", "are", "but", "not", "you", "your", "yours", "all", "any", "can", "her",
    "was", "one", "our", "out", "has", "have", "had", "his", "how", "its", "may", "new", "now",
    "old", "see", "two", "who", "did", "does", "get", "got", "him", "she", "too", "use", "uses",
    "used", "using", "that", "this", "with", "from", "they", "them", "then", "than", "what",
    "when", "where", "which", "will", "would", "could", "should", "there", "their", "about",
    "into", "been", "being", "were", "here", "also", "just", "some", "such", "only", "over",
    "very", "want", "make", "please", "today", "todays", "tell", "show", "give", "produce", "run",
    "generate", "know", "does", "let", "lets", "me", "my", "mine", "is", "at", "in", "on", "of",
    "to", "a", "an", "it", "be", "do", "we", "us", "i", "im", "from", "always", "never", "rule",
    "remember", "instead",
];

/// Lower-cased word tokens of `text`, without stopwords and short noise, deduplicated, in order.
pub fn terms(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for raw in text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-' || c == '.')) {
        let word = raw
            .trim_matches(|c: char| c == '.' || c == '-')
            .to_lowercase();
        let word = word.strip_suffix("'s").unwrap_or(&word).to_string();
        if word.chars().count() < 3 || STOPWORDS.contains(&word.as_str()) {
            continue;
        }
        if !out.contains(&word) {
            out.push(word);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::terms;

    #[test]
    fn keeps_identifiers_and_hosts_whole() {
        assert_eq!(
            terms("The daily report uses example_orders at db-1.example.com."),
            vec!["daily", "report", "example_orders", "db-1.example.com"]
        );
    }

    #[test]
    fn drops_stopwords_and_repeats() {
        assert_eq!(
            terms("Produce today's daily report, the daily one"),
            vec!["daily", "report"]
        );
    }
}
