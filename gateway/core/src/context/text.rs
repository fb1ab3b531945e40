//! Text helpers of the reply checks: sentences, normalised text, values.

/// `line` cut after each `.`, `!` or `?` that a space follows — not after a
/// point a digit or a lower-case word follows ("kl. 14:00").
pub(super) fn sentences(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, c) in line.char_indices() {
        let end = i + c.len_utf8();
        // "kl. 14:00", "ca. fünf": an abbreviation's point, not a sentence's end.
        let abbreviated = c == '.'
            && line[end..]
                .trim_start()
                .chars()
                .next()
                .is_some_and(|n| n.is_ascii_digit() || n.is_lowercase());
        if ".!?؟".contains(c) && line[end..].starts_with(' ') && !abbreviated {
            out.push(&line[start..end]);
            start = end;
        }
    }
    out.push(&line[start..]);
    out
}

/// Lower case, letters and digits only: how an echoed line is recognised.
pub(super) fn normalised(text: &str) -> String {
    // An ASCII text (nearly every answer) needs no Unicode tables, and its
    // letters lower-case to ASCII: the same result, a fraction of the work.
    if text.is_ascii() {
        return text
            .bytes()
            .filter(u8::is_ascii_alphanumeric)
            .map(|b| char::from(b.to_ascii_lowercase()))
            .collect();
    }
    text.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// Whether a content word is a value a note is kept for: it holds a digit,
/// `.`, `_` or `#` (a host, an amount, a table, a time, a channel).
pub(super) fn is_value(word: &str) -> bool {
    word.chars()
        .any(|c| c.is_ascii_digit() || ".#_".contains(c))
}
