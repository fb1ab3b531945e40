//! Versioned prompt texts, loaded as data. Each text starts with a
//! `# version: <id>` line; the id is stored with every revision a model makes.

// The 100-line limit is for production code; a test reads top to bottom.
#![cfg_attr(test, allow(clippy::too_many_lines))]
pub mod answers;
pub mod lexicon;

/// One prompt text and its version id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PromptText {
    pub version: &'static str,
    pub text: &'static str,
}

fn parse(raw: &'static str) -> PromptText {
    let mut version = "unversioned";
    let mut body_start = 0;
    for line in raw.lines() {
        if let Some(v) = line.strip_prefix("# version:") {
            version = v.trim();
        }
        if line.starts_with('#') {
            body_start += line.len() + 1;
        } else {
            break;
        }
    }
    PromptText {
        version,
        text: raw.get(body_start..).unwrap_or(""),
    }
}

/// A function returning the prompt text of `texts/<file>`, parsed.
macro_rules! prompt {
    ($(#[$doc:meta])* $name:ident = $file:literal) => {
        $(#[$doc])*
        pub fn $name() -> PromptText {
            parse(include_str!(concat!("../texts/", $file)))
        }
    };
}

prompt!(
    /// The system prompt with the MEMORY ROUTING POLICY. Placeholders: `{agent}`, `{org}` (the speaker's role follows it, in the turn's context).
    system = "system.txt"
);
prompt!(
    /// The extractor prompt (schema `memory_items`).
    extractor = "extractor.txt"
);
prompt!(
    /// The belief-revision judge (schema `belief_revision`): which live records a new one replaces.
    judge = "judge.txt"
);
prompt!(
    /// Consolidation (schema `consolidation`): groups of records that say the same thing.
    consolidation = "consolidation.txt"
);
prompt!(
    /// The summary of a trimmed slice of history (schema `slice_summary`).
    summary = "summary.txt"
);
prompt!(
    /// Yes and no in each language, and steward's answers in it ([`answers`]).
    answers_text = "answers.txt"
);
prompt!(
    /// Injection patterns for the sanitiser: one case-insensitive regex a line.
    injection_patterns = "injection_patterns.txt"
);

/// The patterns of [`injection_patterns`], one per non-empty line.
pub fn injection_pattern_lines() -> impl Iterator<Item = &'static str> {
    injection_patterns()
        .text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_prompt_has_a_version() {
        for p in [
            system(),
            extractor(),
            judge(),
            consolidation(),
            summary(),
            injection_patterns(),
        ] {
            assert_ne!(p.version, "unversioned");
            assert!(!p.text.trim().is_empty());
            assert!(!p.text.starts_with('#'));
        }
        assert!(system().text.contains("MEMORY ROUTING POLICY"));
        // Each model-facing prompt frames its input as data.
        assert!(judge().text.contains("<<<memory:"));
        assert!(consolidation().text.contains("<<<memory:"));
        assert!(summary().text.contains("<<<line"));
        let versions = [judge().version, consolidation().version, summary().version];
        assert_eq!(versions, ["judge-v1", "consolidation-v1", "summary-v1"]);
    }

    #[test]
    fn patterns_are_listed() {
        assert!(injection_pattern_lines().count() >= 8);
    }
}
