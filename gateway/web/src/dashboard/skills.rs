//! Skills: proposals waiting for approval (with their difference from the
//! revision in force and the corrections they came from), the skills in
//! force (each with "Run now", `runs.rs`), the suspended ones, and each
//! skill's revisions with rollback.
//!
//! Approving names the hash of the content the page showed, so what comes
//! into force is exactly what the admin read; a proposal revised in between
//! is refused, never approved unseen. Every act goes through the `Skills`
//! service as the signed-in administrator's principal, resolved by the
//! pairing store like anyone's.

use super::auth::{Screen, Submitted};
use super::view::{self, RUNS, SKILLS};
use super::{DashError, Page, PAGE_ROWS};
use axum::extract::Path;
use axum::http::StatusCode;
use maud::{html, Markup};
use memory::skill::{Correction, SkillRefusal, SkillRevision, SkillStatus};
use memory::StoreError;
use serde::Deserialize;
use steward_core::error::TurnError;
use steward_core::skills::review::{self, Review};

/// Where one skill's revisions are listed.
fn history_href(skill_id: i64) -> String {
    format!("{}/{skill_id}", SKILLS.path)
}

/// The first 12 characters of a hash, as chat shows it.
fn short(hash: &str) -> &str {
    hash.get(..12).unwrap_or(hash)
}

pub(super) async fn page(screen: Screen) -> Page {
    let state = &screen.state;
    let store = state.db().skills();
    let org = state.org();
    let mut proposals = Vec::new();
    for r in store
        .list(org, Some(SkillStatus::Proposed))
        .await?
        .into_iter()
        .take(PAGE_ROWS as usize)
    {
        proposals.push(review::review(state.db(), org, r.id).await?);
    }
    let active = store.list(org, Some(SkillStatus::Active)).await?;
    let suspended = store.list(org, Some(SkillStatus::Suspended)).await?;
    let content = template(
        &proposals,
        &active,
        &suspended,
        state.skills.enabled(),
        screen.who.csrf(),
    );
    screen.show(SKILLS, content)
}

fn template(
    proposals: &[Review],
    active: &[SkillRevision],
    suspended: &[SkillRevision],
    enabled: bool,
    csrf: &str,
) -> Markup {
    html! {
        @if !enabled {
            div.card.muted id="skills-off" {
                "Skills are switched off (" code { "skills.enabled = false" } "): nothing is learned and no skill reaches a turn. What is here can still be curated."
            }
        }
        section.card id="waiting" {
            h2 { "Waiting for approval" }
            p.muted { "Proposals drafted from people's corrections. None is followed until an administrator approves it; approving puts exactly the text shown here in force, and a proposal revised since this page was loaded is refused. Both acts are audited." }
            @if proposals.is_empty() {
                (view::empty("No proposal is waiting."))
            }
            @for p in proposals {
                (proposal(p, csrf))
            }
        }
        (view::Table {
            class: "skills in-force",
            head: &["Skill", "Rev", "Agent", "Approved", "What it says", ""],
            none: "No skill is in force.",
        }
        .card(html! {
            h2 { "In force" }
            p.muted { "“Run now” follows the skill at once as a standing procedure (principal " code { "sop-system" } ", started by you) and opens the run on the " a href=(RUNS.path) { "Runs" } " page. Audited." }
        }, active, |r| {
            html! {
                tr id={ "skill-" (r.skill_id) } {
                    td { code { (r.slug) } }
                    td.num { (r.rev) }
                    td { (r.agent) }
                    td.when {
                        (r.approved_by.as_deref().unwrap_or("—"))
                        div { (r.approved_at.map(view::date).unwrap_or_else(|| "—".into())) }
                    }
                    td.content {
                        div { (r.description) }
                        pre.body { (r.body) }
                    }
                    td.actions {
                        (view::action(&format!("{}/run", SKILLS.path), csrf, &[("slug", &r.slug), ("agent", &r.agent)], "Run now", "primary"))
                        a.button.secondary href=(history_href(r.skill_id)) { "Revisions" }
                    }
                }
            }
        }))
        (view::Table {
            class: "skills suspended",
            head: &["Skill", "Rev", "Agent", "Why", ""],
            none: "No skill is suspended.",
        }
        .card(html! {
            h2 { "Suspended" }
            p.muted { "Taken out of force after corrections of answers that followed them; the revision before, if it was approved, is back in force." }
        }, suspended, |r| {
            html! {
                tr id={ "suspended-" (r.id) } {
                    td { code { (r.slug) } }
                    td.num { (r.rev) }
                    td { (r.agent) }
                    td.content { (r.note) }
                    td.actions { a.button.secondary href=(history_href(r.skill_id)) { "Revisions" } }
                }
            }
        }))
    }
}

/// One proposal: who and when, its description, its difference from the
/// revision in force, its corrections, and Approve (bound to its hash) / Reject.
fn proposal(p: &Review, csrf: &str) -> Markup {
    let r = &p.revision;
    let id = r.id.to_string();
    // Approval also needs the revision it was proposed against still in force.
    let stale_base = r.base_id != p.in_force.as_ref().map_or(0, |f| f.id);
    html! {
        article.skill id={ "proposal-" (r.id) } {
            h3 {
                code { (r.slug) } " rev " (r.rev)
                " " span.badge.pending { "proposed" }
            }
            p.muted {
                "revision #" (r.id) " · agent " (r.agent) " · proposed by " (r.proposed_by)
                " · " (view::date(r.created_at))
                " · " a href=(history_href(r.skill_id)) { "all revisions" }
            }
            p.description { (r.description) }
            p.muted {
                @match &p.in_force {
                    Some(f) => { "Changes against rev " (f.rev) " in force:" },
                    None => { "Nothing of this skill is in force; its steps:" },
                }
            }
            (diff(&p.diff))
            @if stale_base {
                p.stale {
                    "Proposed against another revision than the one in force now, so approving it will be refused; it is revised by the next correction, or reject it."
                }
            }
            @if !p.corrections.is_empty() {
                p.muted { "From these corrections:" }
                ul.corrections {
                    @for c in &p.corrections {
                        li { (correction(c)) }
                    }
                }
            }
            div.decide {
                span.muted { "hash " code { (short(&r.hash)) } }
                (view::action(&format!("{}/approve", SKILLS.path), csrf, &[("id", &id), ("hash", &r.hash)], "Approve", "primary"))
                (view::action(&format!("{}/reject", SKILLS.path), csrf, &[("id", &id)], "Reject", "danger"))
            }
        }
    }
}

/// A `+`/`-`/` ` difference, each line marked for the stylesheet.
fn diff(text: &str) -> Markup {
    html! {
        pre.diff {
            @for line in text.lines() {
                @let class = match line.chars().next() {
                    Some('+') => "add",
                    Some('-') => "del",
                    _ => "same",
                };
                span class=(class) { (line) } "\n"
            }
        }
    }
}

/// "who, when, of “task”: “rule”".
fn correction(c: &Correction) -> Markup {
    html! {
        span.who { (c.sender) } ", " span.when { (view::date(c.at)) } ", of “" (c.task) "”: “" b.rule { (c.rule) } "”"
    }
}

pub(super) async fn history(screen: Screen, Path(skill_id): Path<i64>) -> Page {
    let state = &screen.state;
    let store = state.db().skills();
    let revisions = store.revisions_of(state.org(), skill_id).await?;
    let Some(newest) = revisions.first() else {
        let text = format!("There is no skill {skill_id}.");
        let mut resp = screen.show(SKILLS, html! { section.card { (view::empty(&text)) } })?;
        *resp.status_mut() = StatusCode::NOT_FOUND;
        return Ok(resp);
    };
    let in_force = store
        .named(state.org(), &newest.slug)
        .await?
        .into_iter()
        .find(|s| s.id == skill_id)
        .map_or(0, |s| s.active_id);
    let content = history_template(&revisions, in_force, screen.who.csrf());
    screen.show(SKILLS, content)
}

/// Every revision of one skill, newest first; Rollback on approved ones not in force.
fn history_template(revisions: &[SkillRevision], in_force: i64, csrf: &str) -> Markup {
    let (slug, agent) = revisions
        .first()
        .map_or(("", ""), |r| (r.slug.as_str(), r.agent.as_str()));
    let intro = html! {
        p { a href=(SKILLS.path) { "← All skills" } }
        h2 { "Revisions of " code { (slug) } " (agent " (agent) ")" }
        p.muted { "Rollback puts an earlier approved revision back in force and retires the one in force; rolling forward to it again undoes the rollback. Audited." }
    };
    view::Table {
        class: "skills revisions-of",
        head: &["Rev", "Status", "Proposed", "Approved", "Note", "Content", ""],
        none: "No revisions.",
    }
    .card(intro, revisions, |r| {
        let live = r.id == in_force;
        html! {
            tr id={ "revision-" (r.id) } data-status=(r.status.as_str()) {
                td.num { (r.rev) div.muted { "#" (r.id) } }
                td {
                    span class={ "badge " (r.status.as_str()) } { (r.status.as_str()) }
                    @if live { div.muted { "in force" } }
                }
                td.when { (r.proposed_by) div { (view::date(r.created_at)) } }
                td.when {
                    @if let Some(at) = r.approved_at {
                        (r.approved_by.as_deref().unwrap_or("?")) div { (view::date(at)) }
                    } @else { "—" }
                }
                td.content { (r.note) }
                td.content {
                    details {
                        summary { "hash " code { (short(&r.hash)) } }
                        div { (r.description) }
                        pre.body { (r.body) }
                    }
                }
                td.actions {
                    @if r.approved_at.is_some() && !live {
                        (view::action(&format!("{}/rollback", SKILLS.path), csrf, &[("to", &r.id.to_string())], &format!("Roll back to rev {}", r.rev), "secondary"))
                    } @else if r.status == SkillStatus::Proposed {
                        a.button.secondary href={ (SKILLS.path) "#proposal-" (r.id) } { "Review" }
                    }
                }
            }
        }
    })
}

#[derive(Debug, Deserialize)]
pub(super) struct ApproveForm {
    id: i64,
    hash: String,
}

#[derive(Debug, Deserialize)]
pub(super) struct IdForm {
    id: i64,
}

#[derive(Debug, Deserialize)]
pub(super) struct RollbackForm {
    to: i64,
}

/// What an act on the `Skills` service led to, as the notice says it.
enum Outcome {
    Done(String),
    Refused(String),
}

fn outcome(
    result: steward_core::error::Result<Result<SkillRevision, SkillRefusal>>,
    id: i64,
    ok: impl FnOnce(&SkillRevision) -> String,
) -> Result<Outcome, DashError> {
    match result {
        Ok(Ok(r)) => Ok(Outcome::Done(ok(&r))),
        Ok(Err(refusal)) => Ok(Outcome::Refused(sentence(&refusal.to_string()))),
        Err(TurnError::Store(StoreError::NotFound(_))) => Ok(Outcome::Refused(format!(
            "There is no skill revision {id}."
        ))),
        Err(e) => Err(e.into()),
    }
}

/// `text` capitalised, ending with a full stop.
fn sentence(text: &str) -> String {
    let mut chars = text.chars();
    let mut out: String = chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default();
    if !out.ends_with('.') {
        out.push('.');
    }
    out
}

fn finish<T>(sent: Submitted<T>, outcome: Outcome, to: &str) -> Page {
    match outcome {
        Outcome::Done(text) => sent.done(true, text, to),
        Outcome::Refused(text) => sent.done(false, text, to),
    }
}

pub(super) async fn approve(sent: Submitted<ApproveForm>) -> Page {
    let state = &sent.state;
    let principal = sent.who.principal();
    let id = sent.form.id;
    let result = state
        .skills
        .approve(
            state.org(),
            &principal,
            id,
            sent.form.hash.trim(),
            state.now_ms(),
        )
        .await;
    let outcome = outcome(result, id, |r| {
        format!("Approved: {} rev {} is in force.", r.slug, r.rev)
    })?;
    finish(sent, outcome, SKILLS.path)
}

pub(super) async fn reject(sent: Submitted<IdForm>) -> Page {
    let state = &sent.state;
    let principal = sent.who.principal();
    let id = sent.form.id;
    let result = state
        .skills
        .reject(state.org(), &principal, id, state.now_ms())
        .await;
    let outcome = outcome(result, id, |r| {
        format!("Rejected: {} rev {} will not be followed.", r.slug, r.rev)
    })?;
    finish(sent, outcome, SKILLS.path)
}

pub(super) async fn rollback(sent: Submitted<RollbackForm>) -> Page {
    let state = &sent.state;
    let to = sent.form.to;
    let target = match state.db().skills().revision(state.org(), to).await {
        Ok(r) => r,
        Err(StoreError::NotFound(_)) => {
            return sent.done(
                false,
                format!("There is no skill revision {to}."),
                SKILLS.path,
            )
        }
        Err(e) => return Err(e.into()),
    };
    let back = history_href(target.skill_id);
    if target.status == SkillStatus::Active {
        let text = format!("{} rev {} is already in force.", target.slug, target.rev);
        return sent.done(false, text, &back);
    }
    let principal = sent.who.principal();
    let result = state
        .skills
        .rollback(
            state.org(),
            &principal,
            target.skill_id,
            Some(to),
            state.now_ms(),
        )
        .await;
    let outcome = outcome(result, to, |r| {
        format!("Rolled back: {} rev {} is in force.", r.slug, r.rev)
    })?;
    finish(sent, outcome, &back)
}
