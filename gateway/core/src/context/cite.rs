//! Citing memory: the reference line an answer from memory ends with.

use super::*;

/// How steward's citation of the records an answer used opens ([`cite`]).
pub const CITATION: &str = "Memory reference:";

/// Whether `answer` cites memory.
pub fn cites(answer: &str) -> bool {
    answer.contains(CITATION)
}

/// `answer` with the citation of the records it used, when it has none:
/// steward cites, so a model spends no tokens on ids (and cannot cite one it
/// was not shown). A record is used when the answer carries one of its
/// values (a word holding a digit, `.`, `_` or `#`: a host, a table, a
/// time) the message does not hold itself, or three of its words: "The
/// kennel is locked with the red chain after 21:00", for "Who takes calls
/// after 21:00?", cites no note for saying the message's own time. In a
/// group thread personal records are never cited.
pub fn cite(answer: String, read: &Reading<'_>, found: &[Retrieved], shared: bool) -> String {
    if cites(&answer) {
        return answer;
    }
    let said = memory::grounding::content_words(&answer);
    let asked = read.asked();
    let value = |w: &String| is_value(w) && !asked.contains(w);
    let used: Vec<String> = found
        .iter()
        .filter(|r| !(shared && r.record.scope.is_personal()))
        .filter(|r| {
            let words = read.words_of(r);
            let shared_words: Vec<&String> = words.iter().filter(|w| said.contains(w)).collect();
            shared_words.iter().any(|w| value(w)) || shared_words.len() >= 3
        })
        .map(|r| r.record.id.to_string())
        .collect();
    if used.is_empty() {
        return answer;
    }
    let sep = if answer.contains('\n') { "\n" } else { " " };
    format!("{answer}{sep}({CITATION} {})", used.join(", "))
}
