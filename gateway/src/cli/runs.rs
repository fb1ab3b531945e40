//! `steward runs …`: the organisation's automated runs (schedules, webhooks,
//! skills run on demand), and one run with its lines.

use super::{date, print_json, Ctx, RunsCommand};
use crate::runs::Runner;
use ::memory::run::Run;
use ::memory::StoredMessage;
use anyhow::{Context, Result};

pub(super) async fn run(ctx: &Ctx, cmd: RunsCommand) -> Result<()> {
    match cmd {
        RunsCommand::List { name, limit, json } => list(ctx, name.as_deref(), limit, json).await,
        RunsCommand::Show { id, json } => show(ctx, id, json).await,
    }
}

/// A run on one line: id, name, trigger, principal, skill@rev, outcome,
/// started and finished (UTC), deliver.
pub(super) fn line(r: &Run) -> String {
    let skill = if r.skill.is_empty() {
        "-".to_string()
    } else {
        format!("{}@{}", r.skill, r.skill_rev)
    };
    let finished = r.finished_at.map(date).unwrap_or_else(|| "-".into());
    format!(
        "#{} {} [{}] trigger {} as {} skill {} started {} finished {} deliver {}",
        r.id,
        r.name,
        r.outcome.as_str(),
        r.trigger.as_str(),
        r.principal,
        skill,
        date(r.started_at),
        finished,
        r.deliver
    )
}

async fn list(ctx: &Ctx, name: Option<&str>, limit: i64, json: bool) -> Result<()> {
    let runs = ctx.services.db().runs().list(&ctx.org, name, limit).await?;
    if json {
        return print_json(&runs);
    }
    if runs.is_empty() {
        println!("no runs");
    }
    for r in &runs {
        println!("{}", line(r));
    }
    Ok(())
}

/// Who said a line: the principal of the instruction, or the agent.
fn speaker(m: &StoredMessage) -> &str {
    match m.author.as_str() {
        "agent" => "steward",
        _ => m
            .sender
            .as_deref()
            .or(m.sender_role.as_deref())
            .unwrap_or(&m.author),
    }
}

async fn show(ctx: &Ctx, id: i64, json: bool) -> Result<()> {
    let run = ctx
        .services
        .db()
        .runs()
        .find(&ctx.org, id)
        .await?
        .with_context(|| format!("there is no run {id} in organisation {}", ctx.org))?;
    let lines = Runner::new(&ctx.services).lines(&run).await?;
    if json {
        return print_json(&serde_json::json!({ "run": run, "lines": lines }));
    }
    println!("{}", line(&run));
    if !run.started_by.is_empty() {
        println!("started by: {}", run.started_by);
    }
    println!("conversation: {}", run.conversation);
    if !run.error.is_empty() {
        println!("error: {}", run.error);
    }
    println!();
    for m in &lines {
        // A line's own line breaks are indented under it.
        let text = m.text.replace('\n', "\n    ");
        println!("[{}] {}: {text}", date(m.said_at), speaker(m));
    }
    Ok(())
}
