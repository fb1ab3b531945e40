//! Runs: the organisation's automated runs (schedules, webhooks, skills run
//! on demand), newest first, and one run — its principal, trigger, skill
//! revision, outcome, timings and delivery — with its lines. "Run now" on
//! the Skills page starts one and opens it here.
//!
//! A run's lines are a model's answer and, for a webhook, a framed payload
//! from outside: maud escapes every one, so they are shown, never run.

use super::auth::{Screen, Submitted};
use super::view::{self, RUNS, SKILLS};
use super::{Page, PAGE_ROWS};
use axum::extract::Path;
use axum::http::StatusCode;
use channels::runs::RunError;
use maud::{html, Markup};
use memory::run::{Run, RunOutcome};
use memory::StoredMessage;
use serde::Deserialize;
use steward_core::config::Deliver;

/// Where run `id` is shown.
pub(super) fn run_href(id: i64) -> String {
    format!("{}/{id}", RUNS.path)
}

pub(super) async fn page(screen: Screen) -> Page {
    let state = &screen.state;
    let runs = state.db().runs().list(state.org(), None, PAGE_ROWS).await?;
    screen.show(RUNS, template(&runs))
}

fn outcome_badge(o: RunOutcome) -> Markup {
    html! { span class={ "badge outcome " (o.as_str()) } { (o.as_str()) } }
}

/// `slug@rev`, or "—" when the run followed no skill.
fn skill_of(r: &Run) -> String {
    if r.skill.is_empty() {
        "—".into()
    } else {
        format!("{}@{}", r.skill, r.skill_rev)
    }
}

fn finished(r: &Run) -> String {
    r.finished_at.map(view::date).unwrap_or_else(|| "—".into())
}

fn template(runs: &[Run]) -> Markup {
    let intro = html! {
        p.muted {
            "Runs no person started: a schedule's slot, a signed webhook delivery, or a skill an administrator ran now (the Skills page's “Run now”). Each runs under a system principal and is audited."
        }
    };
    view::Table {
        class: "runs",
        head: &[
            "Run",
            "Name",
            "Trigger",
            "Principal",
            "Skill",
            "Outcome",
            "Started",
            "Finished",
            "Deliver",
        ],
        none: "No run yet.",
    }
    .card(intro, runs, |r| {
        html! {
            tr id={ "run-" (r.id) } data-outcome=(r.outcome.as_str()) {
                td.num { a href=(run_href(r.id)) { "#" (r.id) } }
                td { code { (r.name) } }
                td { (r.trigger.as_str()) }
                td { code { (r.principal) } }
                td { (skill_of(r)) }
                td { (outcome_badge(r.outcome)) }
                td.when { (view::date(r.started_at)) }
                td.when { (finished(r)) }
                td { code { (r.deliver) } }
            }
        }
    })
}

pub(super) async fn show(screen: Screen, Path(id): Path<i64>) -> Page {
    let state = &screen.state;
    let Some(run) = state.db().runs().find(state.org(), id).await? else {
        let text = format!("There is no run {id}.");
        let mut resp = screen.show(RUNS, html! { section.card { (view::empty(&text)) } })?;
        *resp.status_mut() = StatusCode::NOT_FOUND;
        return Ok(resp);
    };
    let lines = state.runner.lines(&run).await?;
    screen.show(RUNS, run_template(&run, &lines))
}

/// Who said a line: the principal of the run's instruction, or the agent.
fn speaker(m: &StoredMessage) -> String {
    match m.author.as_str() {
        "agent" => "steward".into(),
        _ => m
            .sender
            .clone()
            .or_else(|| m.sender_role.clone())
            .unwrap_or_else(|| m.author.clone()),
    }
}

fn run_template(r: &Run, lines: &[StoredMessage]) -> Markup {
    let started_by = if r.started_by.is_empty() {
        "—"
    } else {
        r.started_by.as_str()
    };
    html! {
        p { a href=(RUNS.path) { "← All runs" } }
        section.card id="run" data-outcome=(r.outcome.as_str()) {
            h2 { "Run #" (r.id) " of " code { (r.name) } " " (outcome_badge(r.outcome)) }
            table.fields {
                tbody {
                    tr { th { "Trigger" } td { (r.trigger.as_str()) } }
                    tr { th { "Principal" } td { code { (r.principal) } } }
                    tr { th { "Started by" } td { (started_by) } }
                    tr { th { "Agent" } td { (r.agent) } }
                    tr { th { "Skill" } td { (skill_of(r)) } }
                    tr { th { "Started" } td { (view::date(r.started_at)) } }
                    tr { th { "Finished" } td { (finished(r)) } }
                    tr { th { "Deliver" } td { code { (r.deliver) } } }
                    tr { th { "Conversation" } td { code { (r.conversation) } } }
                    @if !r.error.is_empty() {
                        tr.error { th { "Error" } td { (r.error) } }
                    }
                }
            }
        }
        section.card id="lines" {
            h2 { "Lines" }
            @if lines.is_empty() {
                (view::empty("No line is stored for this run (yet)."))
            }
            @for m in lines {
                @let bot = m.author == "agent";
                div class={ "msg " @if bot { "bot" } @else { "me" } } id={ "line-" (m.id) } {
                    div.meta { (speaker(m)) " · " (view::date(m.said_at)) }
                    div.text { (m.text) }
                }
            }
        }
    }
}

#[derive(Debug, Deserialize)]
pub(super) struct RunForm {
    slug: String,
    agent: String,
}

/// "Run now" on the Skills page: the skill runs as a standing procedure
/// (principal `sop-system`, started by the signed-in administrator), delivered to
/// this page; then its page opens.
pub(super) async fn run_now(sent: Submitted<RunForm>) -> Page {
    let state = &sent.state;
    let slug = sent.form.slug.trim();
    let agent = sent.form.agent.trim();
    let target = channels::runs::on_demand(state.org(), agent, slug, Deliver::Dashboard);
    let run = match state.runner.on_demand(&target, sent.who.user_id()).await {
        Ok(run) => run,
        Err(RunError::NoSkill { .. }) => {
            let text = format!("Agent {agent} has no skill {slug} in force, so nothing was run.");
            return sent.done(false, text, SKILLS.path);
        }
        Err(RunError::Store(e)) => return Err(e.into()),
    };
    let ok = run.outcome == RunOutcome::Answered;
    let text = if ok {
        format!("Ran {slug}: run #{} answered.", run.id)
    } else {
        format!(
            "Ran {slug}: run #{} ended {}: {}",
            run.id,
            run.outcome.as_str(),
            run.error
        )
    };
    sent.done(ok, text, &run_href(run.id))
}
