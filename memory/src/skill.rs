//! Skills: named procedures an agent follows for one kind of task ("when
//! asked for the daily report: leave refunds out, one row per region").
//! A skill is learned from people's corrections of the assistant's answers
//! and is in force only once an administrator approved one exact revision.
//!
//! Architecture Invariant: a skill grants nothing. A revision holds a slug,
//! a description and a Markdown body — no field can name a tool, a role or a
//! permission — and its body reaches a model only as data.

use crate::model::Principal;
use serde::Serialize;

/// Longest slug (the Agent Skills `name` rule).
pub const MAX_SLUG_CHARS: usize = 64;
/// Longest description (the Agent Skills `description` rule).
pub const MAX_DESCRIPTION_CHARS: usize = 1024;
/// Longest body: a procedure, not a manual.
pub const MAX_BODY_CHARS: usize = 8_000;

named_enum! {
    /// Where a revision is in its life. Stored by name.
    #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
    pub enum SkillStatus {
        /// Drafted from corrections (or imported); waits for an administrator.
        Proposed,
        /// The revision in force.
        Active,
        /// Taken out of force after corrections of answers that used it.
        Suspended,
        /// Declined by an administrator.
        Rejected,
        /// Replaced: by a newer revision in force, a revised proposal, or a rollback.
        Retired,
    }
}

/// Why a slug or a description is not one the Agent Skills format allows.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SkillFormatError {
    #[error("a skill name is 1 to {MAX_SLUG_CHARS} characters; `{0}` is not")]
    SlugLength(String),
    #[error("a skill name is lower-case letters, digits and hyphens, neither starting nor ending with a hyphen nor holding two in a row; `{0}` is not")]
    SlugCharacters(String),
    #[error("a skill description is 1 to {MAX_DESCRIPTION_CHARS} characters; this one has {0}")]
    DescriptionLength(usize),
    #[error("a skill body is at most {MAX_BODY_CHARS} characters; this one has {0}")]
    BodyLength(usize),
}

/// Check a slug by the Agent Skills `name` rules.
pub fn check_slug(slug: &str) -> Result<(), SkillFormatError> {
    let n = slug.chars().count();
    if n == 0 || n > MAX_SLUG_CHARS {
        return Err(SkillFormatError::SlugLength(slug.into()));
    }
    let allowed = slug
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if !allowed || slug.starts_with('-') || slug.ends_with('-') || slug.contains("--") {
        return Err(SkillFormatError::SlugCharacters(slug.into()));
    }
    Ok(())
}

/// Check a description and a body by their limits.
pub fn check_text(description: &str, body: &str) -> Result<(), SkillFormatError> {
    let d = description.trim().chars().count();
    if d == 0 || d > MAX_DESCRIPTION_CHARS {
        return Err(SkillFormatError::DescriptionLength(d));
    }
    let b = body.chars().count();
    if b > MAX_BODY_CHARS {
        return Err(SkillFormatError::BodyLength(b));
    }
    Ok(())
}

/// A slug made from words of a task ("Send me the daily report" → `daily-report`).
pub fn slug_from(words: &[String]) -> String {
    let mut slug = String::new();
    for w in words {
        let part: String = w
            .chars()
            .filter_map(|c| {
                let c = c.to_ascii_lowercase();
                (c.is_ascii_lowercase() || c.is_ascii_digit()).then_some(c)
            })
            .collect();
        if part.is_empty() {
            continue;
        }
        if slug.len() + part.len() + 1 > MAX_SLUG_CHARS {
            break;
        }
        if !slug.is_empty() {
            slug.push('-');
        }
        slug.push_str(&part);
    }
    if slug.is_empty() {
        "task".into()
    } else {
        slug
    }
}

/// SHA-256 (hex) of what an approval approves: the slug, description and body.
pub fn content_hash(slug: &str, description: &str, body: &str) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    for part in [slug, description, body] {
        h.update((part.len() as u64).to_be_bytes());
        h.update(part.as_bytes());
    }
    hex::encode(h.finalize())
}

/// Why an approval, a rejection or a rollback is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SkillRefusal {
    #[error("only administrators approve, reject or roll back skills")]
    NotAdmin,
    #[error("skill revision {0} is not waiting for approval (it is {1})")]
    NotProposed(i64, SkillStatus),
    #[error("skill revision {id} changed since it was shown (its hash is now {hash}); look at it again before approving")]
    StaleHash { id: i64, hash: String },
    #[error("skill revision {id} was proposed against another revision than the one now in force; look at it again")]
    StaleBase { id: i64 },
    #[error("revision {0} was never approved, so it cannot be put back in force")]
    NeverApproved(i64),
    #[error("there is no earlier approved revision to roll back to")]
    NothingToRollBackTo,
}

/// Who may approve, reject or roll back skills: a paired administrator,
/// and nobody else — no system run, no model tool, no regular user.
pub fn decide_curation(principal: &Principal) -> Result<(), SkillRefusal> {
    if principal.is_human_admin() {
        Ok(())
    } else {
        Err(SkillRefusal::NotAdmin)
    }
}

/// A skill: one slug of one agent, and the revision in force.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, sqlx::FromRow)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Skill {
    pub id: i64,
    pub org: String,
    pub agent: String,
    pub slug: String,
    /// The revision in force (a revision id), 0 when none is.
    pub active_id: i64,
    pub created_at: i64,
}

/// One immutable revision of a skill.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, sqlx::FromRow)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SkillRevision {
    pub id: i64,
    pub org: String,
    pub skill_id: i64,
    pub agent: String,
    pub slug: String,
    /// 1, 2, … within the skill.
    pub rev: i64,
    pub description: String,
    pub body: String,
    pub hash: String,
    #[sqlx(try_from = "String")]
    pub status: SkillStatus,
    /// The revision in force when this one was proposed (0: none).
    pub base_id: i64,
    /// Ids of the messages it came from, comma-separated.
    pub evidence: String,
    pub proposed_by: String,
    pub approved_by: Option<String>,
    pub approved_at: Option<i64>,
    pub note: String,
    pub created_at: i64,
}

/// The steps of a body: its `- ` lines.
pub fn steps(body: &str) -> Vec<String> {
    body.lines()
        .filter_map(|l| l.trim().strip_prefix("- "))
        .map(str::to_string)
        .collect()
}

impl SkillRevision {
    /// How a reply shows it: its name, revision and steps.
    pub fn procedure(&self) -> String {
        let mut out = format!(
            "I follow the approved procedure “{}” (rev {}) for this:",
            self.slug, self.rev
        );
        for step in steps(&self.body) {
            out.push_str(&format!("\n- {}", crate::sanitize::sanitize(&step)));
        }
        out
    }

    /// The message ids of its evidence.
    pub fn evidence_ids(&self) -> Vec<i64> {
        self.evidence
            .split(',')
            .filter_map(|s| s.trim().parse().ok())
            .collect()
    }
}

/// A person's correction of the assistant's previous answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, sqlx::FromRow)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Correction {
    pub id: i64,
    pub org: String,
    pub agent: String,
    pub conversation: String,
    pub message_id: i64,
    pub task_message_id: i64,
    pub sender: String,
    /// The request the corrected answer answered.
    pub task: String,
    /// The rule the correction states, as a step.
    pub rule: String,
    /// The skill revision the corrected answer used (0: none).
    pub used_id: i64,
    /// The proposal it went into (0: none yet).
    pub revision_id: i64,
    pub at: i64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Role, SystemPrincipal};

    #[test]
    fn slugs_follow_the_agent_skills_rules() {
        for ok in ["daily-report", "a", "x1-y2", &"a".repeat(64)] {
            assert_eq!(check_slug(ok), Ok(()), "{ok}");
        }
        for bad in [
            "",
            "Daily-report",
            "-daily",
            "daily-",
            "daily--report",
            "daily_report",
            "daily report",
            "dãily",
            &"a".repeat(65),
        ] {
            assert!(check_slug(bad).is_err(), "{bad}");
        }
        assert_eq!(
            slug_from(&["daily".into(), "report".into()]),
            "daily-report"
        );
        assert_eq!(slug_from(&["Ünï".into(), "x_y".into()]), "n-xy");
        assert_eq!(slug_from(&[]), "task");
        assert!(slug_from(&vec!["abcdefghij".to_string(); 20]).len() <= MAX_SLUG_CHARS);
        assert_eq!(check_slug(&slug_from(&vec!["abc".to_string(); 40])), Ok(()));
    }

    #[test]
    fn descriptions_and_bodies_are_bounded() {
        assert!(check_text("", "x").is_err());
        assert!(check_text(&"d".repeat(1025), "x").is_err());
        assert!(check_text(&"d".repeat(1024), &"b".repeat(MAX_BODY_CHARS)).is_ok());
        assert!(check_text("d", &"b".repeat(MAX_BODY_CHARS + 1)).is_err());
    }

    #[test]
    fn the_hash_covers_every_field_and_their_borders() {
        let h = content_hash("a", "b", "c");
        assert_ne!(h, content_hash("a", "b", "c "));
        assert_ne!(h, content_hash("a", "bc", ""));
        assert_ne!(h, content_hash("b", "b", "c"));
        assert_eq!(h, content_hash("a", "b", "c"));
    }

    #[test]
    fn only_a_paired_admin_curates() {
        let human = |role| Principal::Human {
            user_id: "u".into(),
            name: "U".into(),
            role,
        };
        assert_eq!(decide_curation(&human(Role::Admin)), Ok(()));
        assert_eq!(
            decide_curation(&human(Role::User)),
            Err(SkillRefusal::NotAdmin)
        );
        for s in [
            SystemPrincipal::Cron,
            SystemPrincipal::Sop,
            SystemPrincipal::Webhook,
            SystemPrincipal::Delegated,
        ] {
            assert_eq!(
                decide_curation(&Principal::System(s)),
                Err(SkillRefusal::NotAdmin)
            );
        }
        assert_eq!(
            decide_curation(&Principal::Unpaired),
            Err(SkillRefusal::NotAdmin)
        );
    }
}
