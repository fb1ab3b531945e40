//! What an administrator reviews before approving a skill revision: the
//! revision as SKILL.md, its difference from the revision in force, and the
//! corrections it came from (who, when, the words). One rendering for chat,
//! the CLI, the API and the dashboard.

use crate::error::Result;
use memory::skill::{Correction, SkillRevision, SkillStatus};
use memory::Db;
use serde::Serialize;

/// A revision with what its review shows.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Review {
    pub revision: SkillRevision,
    /// The revision in force for its skill now, if another one.
    pub in_force: Option<SkillRevision>,
    /// Unified difference of the body against the revision in force (or
    /// against nothing), `+`/`-`/` ` lines.
    pub diff: String,
    pub corrections: Vec<Correction>,
}

/// Read what a review of revision `id` shows.
pub async fn review(db: &Db, org: &str, id: i64) -> Result<Review> {
    let store = db.skills();
    let revision = store.revision(org, id).await?;
    let skill = store
        .named(org, &revision.slug)
        .await?
        .into_iter()
        .find(|s| s.id == revision.skill_id);
    let in_force = match skill {
        Some(s) if s.active_id != 0 && s.active_id != revision.id => {
            Some(store.revision(org, s.active_id).await?)
        }
        _ => None,
    };
    let before = in_force.as_ref().map_or("", |r| r.body.as_str());
    let corrections = store
        .corrections_of(org, id)
        .await?
        .into_iter()
        .map(without_personal_data)
        .collect();
    Ok(Review {
        diff: diff(before, &revision.body),
        revision,
        in_force,
        corrections,
    })
}

/// What a review shows of a correction's request and rule in place of
/// text that holds personal data: every administrator reads reviews.
pub const WITHHELD: &str = "(withheld: it holds personal data)";

/// A correction as an administrator reviews it: its request and its rule
/// are a person's words, shown only when they hold no personal data (the
/// scrubber's test, as a skill's step passes).
fn without_personal_data(mut c: Correction) -> Correction {
    for text in [&mut c.task, &mut c.rule] {
        if memory::scrub::scrub(text, &[]).is_err() {
            *text = WITHHELD.to_string();
        }
    }
    c
}

/// Line difference of `before` and `after`, each line marked `+`, `-` or ` `.
pub fn diff(before: &str, after: &str) -> String {
    // Every line ends alike, so a last line that gained a successor is not
    // shown as removed and added again.
    let ended = |s: &str| {
        if s.is_empty() || s.ends_with('\n') {
            s.to_string()
        } else {
            format!("{s}\n")
        }
    };
    let (before, after) = (ended(before), ended(after));
    similar::TextDiff::from_lines(&before, &after)
        .iter_all_changes()
        .map(|c| {
            let sign = match c.tag() {
                similar::ChangeTag::Delete => '-',
                similar::ChangeTag::Insert => '+',
                similar::ChangeTag::Equal => ' ',
            };
            format!("{sign}{}", c.value().trim_end_matches('\n'))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// One line of a list: `#ID slug rev N (status)`.
pub fn line(r: &SkillRevision) -> String {
    let note = if r.note.is_empty() {
        String::new()
    } else {
        format!(" — {}", r.note)
    };
    format!(
        "#{} {} rev {} [{}] agent {}{note}",
        r.id, r.slug, r.rev, r.status, r.agent
    )
}

/// A review as text (chat and the CLI).
pub fn text(review: &Review) -> String {
    let r = &review.revision;
    let mut out = format!("{}\nhash {}\n\n{}\n", line(r), r.hash, r.description);
    match &review.in_force {
        Some(f) => out.push_str(&format!("\nChanges against rev {} in force:\n", f.rev)),
        None => out.push_str("\nSteps:\n"),
    }
    out.push_str(&review.diff);
    if !review.corrections.is_empty() {
        out.push_str("\n\nFrom these corrections:");
        for c in &review.corrections {
            let when = chrono::DateTime::from_timestamp_millis(c.at)
                .map(|d| d.format("%Y-%m-%d %H:%M").to_string())
                .unwrap_or_default();
            out.push_str(&format!(
                "\n- {} on {when}, of “{}”: “{}”",
                c.sender, c.task, c.rule
            ));
        }
    }
    if r.status == SkillStatus::Proposed {
        out.push_str(&format!(
            "\n\nApprove with: /skill approve {} {}",
            r.id,
            &r.hash[..r.hash.len().min(12)]
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_step_added_at_the_end_is_the_only_change() {
        let d = super::diff("When asked:\n\n- A", "When asked:\n\n- A\n- B");
        assert_eq!(d, " When asked:\n \n - A\n+- B");
    }
}
