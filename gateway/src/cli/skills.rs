//! `steward skills …`: review, approve, reject and roll back skill revisions
//! as the operator (an administrator), run one in force now, and export or
//! import them as SKILL.md.

use super::memory::agent_or_default;
use super::{print_json, Ctx, SkillsCommand};
use crate::skills::review;
use crate::skills::skill_md::{self, ImportTo, Imported};
use ::memory::skill::{SkillRefusal, SkillRevision, SkillStatus};
use ::memory::{Principal, Role};
use anyhow::{bail, Context, Result};
use std::path::Path;

/// Who the operator is in the audit log and on approvals.
const OPERATOR: &str = "operator (cli)";
/// `proposed_by` of an imported SKILL.md.
const IMPORTER: &str = "import (cli)";

/// The operator as a principal: an administrator, as every CLI command acts.
fn operator() -> Principal {
    Principal::Human {
        user_id: OPERATOR.into(),
        name: "operator".into(),
        role: Role::Admin,
    }
}

pub(super) async fn run(ctx: &Ctx, cmd: SkillsCommand) -> Result<()> {
    match cmd {
        SkillsCommand::List { status, json } => list(ctx, status, json).await,
        SkillsCommand::Show { id, json } => show(ctx, id, json).await,
        SkillsCommand::Approve { id, hash } => {
            let r = ctx
                .services
                .skills()
                .approve(&ctx.org, &operator(), id, &hash, ctx.now_ms())
                .await?;
            done("approved, in force now", r)
        }
        SkillsCommand::Reject { id } => {
            let r = ctx
                .services
                .skills()
                .reject(&ctx.org, &operator(), id, ctx.now_ms())
                .await?;
            done("rejected", r)
        }
        SkillsCommand::Rollback { slug, to, agent } => rollback(ctx, &slug, to, agent).await,
        SkillsCommand::Revisions { slug, agent, json } => revisions(ctx, &slug, agent, json).await,
        SkillsCommand::Run {
            slug,
            agent,
            deliver,
        } => run_now(ctx, &slug, agent, deliver).await,
        SkillsCommand::Export { dir, agent } => export(ctx, &dir, agent).await,
        SkillsCommand::Import {
            path,
            approve,
            agent,
        } => import(ctx, &path, approve, agent).await,
    }
}

/// Print what a curation act did, or fail with why it was refused.
fn done(what: &str, r: std::result::Result<SkillRevision, SkillRefusal>) -> Result<()> {
    match r {
        Ok(r) => {
            println!("{what}: {}", review::line(&r));
            Ok(())
        }
        Err(why) => bail!("refused: {why}"),
    }
}

async fn list(ctx: &Ctx, status: Option<String>, json: bool) -> Result<()> {
    let status = status
        .map(|s| {
            s.parse::<SkillStatus>()
                .with_context(|| format!("unknown skill status {s}"))
        })
        .transpose()?;
    let all = ctx.services.db().skills().list(&ctx.org, status).await?;
    if json {
        return print_json(&all);
    }
    if all.is_empty() {
        println!("no skill revisions");
    }
    for r in &all {
        println!("{}", review::line(r));
    }
    Ok(())
}

async fn show(ctx: &Ctx, id: i64, json: bool) -> Result<()> {
    let rv = review::review(ctx.services.db(), &ctx.org, id)
        .await
        .with_context(|| format!("reading skill revision {id}"))?;
    if json {
        return print_json(&rv);
    }
    let text = review::text(&rv);
    // The chat's approval line, as this command line says it.
    let r = &rv.revision;
    let chat = format!(
        "Approve with: /skill approve {} {}",
        r.id,
        &r.hash[..r.hash.len().min(12)]
    );
    let cli = format!(
        "Approve with: steward skills approve {} --hash {}",
        r.id, r.hash
    );
    println!("{}", text.replace(&chat, &cli));
    Ok(())
}

/// The skill `slug` of `agent` (default `server.agent`).
async fn skill_named(
    ctx: &Ctx,
    slug: &str,
    agent: Option<String>,
) -> Result<::memory::skill::Skill> {
    let agent = agent_or_default(ctx, agent)?;
    ctx.services
        .db()
        .skills()
        .named(&ctx.org, slug)
        .await?
        .into_iter()
        .find(|s| s.agent == agent)
        .with_context(|| format!("agent {agent} has no skill named {slug}"))
}

/// Every revision of `skill`, newest first.
async fn revisions_of(
    ctx: &Ctx,
    skill: &::memory::skill::Skill,
) -> Result<Vec<::memory::skill::SkillRevision>> {
    Ok(ctx
        .services
        .db()
        .skills()
        .revisions_of(&ctx.org, skill.id)
        .await?)
}

async fn rollback(ctx: &Ctx, slug: &str, to: Option<i64>, agent: Option<String>) -> Result<()> {
    let skill = skill_named(ctx, slug, agent).await?;
    let to = match to {
        None => None,
        Some(rev) => {
            let all = revisions_of(ctx, &skill).await?;
            let r = all
                .iter()
                .find(|r| r.rev == rev)
                .with_context(|| format!("skill {slug} has no rev {rev}"))?;
            Some(r.id)
        }
    };
    let r = ctx
        .services
        .skills()
        .rollback(&ctx.org, &operator(), skill.id, to, ctx.now_ms())
        .await?;
    done("rolled back, in force now", r)
}

async fn revisions(ctx: &Ctx, slug: &str, agent: Option<String>, json: bool) -> Result<()> {
    let skill = skill_named(ctx, slug, agent).await?;
    let all = revisions_of(ctx, &skill).await?;
    if json {
        return print_json(&all);
    }
    for r in &all {
        let approved = match (&r.approved_by, r.approved_at) {
            (Some(by), Some(at)) => format!(" (approved by {by} on {})", super::date(at)),
            _ => String::new(),
        };
        println!("{}{approved}", review::line(r));
    }
    Ok(())
}

/// Run skill `slug` now under `sop-system`, the operator recorded as who
/// started it; print the run and its answer. A run that did not end answered
/// is an error (exit 1) after what it said is printed.
async fn run_now(
    ctx: &Ctx,
    slug: &str,
    agent: Option<String>,
    deliver: crate::config::Deliver,
) -> Result<()> {
    let agent = agent_or_default(ctx, agent)?;
    if let Err(why) = ctx.services.config().check_deliver(&deliver) {
        bail!("--deliver {deliver}: {why}");
    }
    let runner = crate::runs::Runner::new(&ctx.services);
    let target = crate::runs::on_demand(&ctx.org, &agent, slug, deliver);
    let run = runner.on_demand(&target, OPERATOR).await?;
    let lines = runner.lines(&run).await?;
    println!("{}", super::runs::line(&run));
    for m in lines.iter().filter(|m| m.author == "agent") {
        println!("{}", m.text);
    }
    if run.outcome != ::memory::run::RunOutcome::Answered {
        bail!(
            "run #{} ended {}: {}",
            run.id,
            run.outcome.as_str(),
            run.error
        );
    }
    Ok(())
}

async fn export(ctx: &Ctx, dir: &Path, agent: Option<String>) -> Result<()> {
    let agent = agent_or_default(ctx, agent)?;
    let active = ctx.services.db().skills().active(&ctx.org, &agent).await?;
    let written = skill_md::write_all(dir, &active)?;
    for (r, file) in active.iter().zip(&written) {
        println!("{} rev {} → {}", r.slug, r.rev, file.display());
    }
    println!(
        "{} skill(s) of agent {agent} in force written to {}",
        written.len(),
        dir.display()
    );
    Ok(())
}

async fn import(ctx: &Ctx, path: &Path, approve: bool, agent: Option<String>) -> Result<()> {
    let agent = agent_or_default(ctx, agent)?;
    let files = match skill_md::load(path) {
        Ok(files) => files,
        Err(errors) => {
            for e in &errors {
                eprintln!("error: {e}");
            }
            bail!(
                "{} file(s) refused; nothing was imported",
                errors.len().max(1)
            );
        }
    };
    for f in &files {
        for w in &f.warnings {
            eprintln!("warning: {w}");
        }
    }
    let principal = operator();
    let to = ImportTo {
        org: &ctx.org,
        agent: &agent,
        proposed_by: IMPORTER,
        approve_as: approve.then_some(&principal),
        now: ctx.now_ms(),
    };
    let outcomes = skill_md::import(ctx.services.db(), ctx.services.skills(), &to, &files)
        .await
        .context("importing skills")?;
    let mut refused = 0;
    for o in &outcomes {
        match o {
            Imported::Proposed(r) => println!(
                "proposed: {} (approve with: steward skills approve {} --hash {})",
                review::line(r),
                r.id,
                r.hash
            ),
            Imported::Approved(r) => println!("approved: {}", review::line(r)),
            Imported::Unchanged(r) => println!("unchanged, already in force: {}", review::line(r)),
            Imported::Refused(r, why) => {
                refused += 1;
                eprintln!("error: {}: proposed but not approved: {why}", r.slug);
            }
        }
    }
    if refused > 0 {
        bail!("{refused} approval(s) refused");
    }
    Ok(())
}
