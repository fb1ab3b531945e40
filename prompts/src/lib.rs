//! Versioned prompt texts, loaded as data. Each text starts with a
//! `# version: <id>` line; the id is stored with every revision a model makes.

/// One prompt text and its version id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Prompt {
    pub version: &'static str,
    pub text: &'static str,
}

fn parse(raw: &'static str) -> Prompt {
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
    Prompt {
        version,
        text: raw.get(body_start..).unwrap_or(""),
    }
}

/// The system prompt with the MEMORY ROUTING POLICY. Placeholders: `{agent}`, `{org}`, `{role}`.
pub fn system() -> Prompt {
    parse(include_str!("../texts/system.txt"))
}

/// The extractor prompt (schema `memory_items`).
pub fn extractor() -> Prompt {
    parse(include_str!("../texts/extractor.txt"))
}

/// Injection patterns for the sanitiser: one case-insensitive regex a line.
pub fn injection_patterns() -> Prompt {
    parse(include_str!("../texts/injection_patterns.txt"))
}

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
        for p in [system(), extractor(), injection_patterns()] {
            assert_ne!(p.version, "unversioned");
            assert!(!p.text.trim().is_empty());
            assert!(!p.text.starts_with('#'));
        }
        assert!(system().text.contains("MEMORY ROUTING POLICY"));
    }

    #[test]
    fn patterns_are_listed() {
        assert!(injection_pattern_lines().count() >= 8);
    }
}
