//! `steward memory …`: records, revisions, review, relearn, policy, export,
//! erasure, retention, consolidation and archives.

use super::{
    date, print_json, ArchiveAction, Ctx, ListArgs, MemoryCommand, PolicyAction, ReviewAction,
    RevisionAction, ACTOR,
};
use crate::oversight::{self, audit_view, Look, Looked};
use ::memory::policy::{self, Oversight};
use ::memory::store::RecordFilter;
use ::memory::{Scope, Status};
use anyhow::{bail, Context, Result};
use std::path::PathBuf;

pub(super) async fn run(ctx: &Ctx, cmd: MemoryCommand) -> Result<()> {
    match cmd {
        MemoryCommand::List {
            scope,
            status,
            owner,
            reason,
            json,
        } => list(ctx, scope, status, owner, reason, json).await,
        MemoryCommand::Show { id, reason, json } => show(ctx, id, reason, json).await,
        MemoryCommand::Search {
            text,
            as_,
            reason,
            agent,
            limit,
            json,
        } => {
            let how = Search {
                as_,
                reason,
                agent,
                limit,
                json,
            };
            search(ctx, &text, how).await
        }
        MemoryCommand::Import { file, agent } => import(ctx, &file, agent).await,
        MemoryCommand::Revisions { action } => revisions(ctx, action).await,
        MemoryCommand::Role { action } => super::roles::memory(ctx, action).await,
        MemoryCommand::Forget { id } => {
            ctx.services
                .lifecycle()
                .forget(&ctx.org, id, ACTOR, ctx.now_ms())
                .await?;
            println!("forgotten: record #{id} is deleted");
            Ok(())
        }
        MemoryCommand::Erase { user } => {
            let erased = ctx
                .services
                .lifecycle()
                .erase(&ctx.org, &user, ACTOR, ctx.now_ms())
                .await?;
            println!(
                "erased {user}: {} records deleted, {} lines' text removed, {} archives rewritten",
                erased.records,
                erased.messages,
                erased.archives.len()
            );
            Ok(())
        }
        MemoryCommand::Review { action } => review(ctx, action).await,
        MemoryCommand::Relearn {
            archive,
            conversation,
        } => relearn(ctx, archive, conversation).await,
        MemoryCommand::Policy { action } => policy(ctx, action).await,
        MemoryCommand::Export { markdown } => export(ctx, markdown).await,
        MemoryCommand::Expire => {
            let r = ctx
                .services
                .lifecycle()
                .expire(&ctx.org, ctx.now_ms())
                .await?;
            println!("{}", serde_json::to_string(&r)?);
            Ok(())
        }
        MemoryCommand::Distill => distill(ctx).await,
        MemoryCommand::Archives { action } => archives(ctx, action).await,
    }
}

async fn list(
    ctx: &Ctx,
    scope: Option<String>,
    status: Option<String>,
    owner: Option<String>,
    reason: Option<String>,
    json: bool,
) -> Result<()> {
    let Ctx { services, org } = ctx;
    let db = services.db();
    let status = status.filter(|s| s != "all");
    let scope = scope
        .map(|s| Scope::parse(&s).with_context(|| format!("unknown scope {s}")))
        .transpose()?;
    let status = status
        .map(|s| Status::parse(&s).with_context(|| format!("unknown status {s}")))
        .transpose()?;
    if scope == Some(Scope::Person) {
        bail!("the person tier is read only by its owner, never by oversight");
    }
    // One person's individual records at a time, with a reason, audited and
    // shown to them; the person tier never (`policy::oversight_shows`).
    let why = match (&owner, policy::oversight_reason(reason.as_deref())) {
        (Some(o), Some(reason)) => {
            let look = Look {
                org,
                actor: ACTOR,
                looked: Looked::Memory,
                person: o,
                surface: "steward memory list --owner",
                reason,
            };
            audit_view(db, look, ctx.now_ms()).await?;
            Oversight::Reasoned
        }
        (Some(_), None) => {
            bail!("--owner needs --reason TEXT: the look is audited and shown to the person")
        }
        (None, _) => Oversight::Unreasoned,
    };
    let filter = RecordFilter {
        scopes: scope.into_iter().collect(),
        owner: owner.clone(),
        status,
        ..Default::default()
    };
    let (shown, hidden): (Vec<_>, Vec<_>) = db
        .records()
        .list(org, &filter)
        .await?
        .into_iter()
        .partition(|r| policy::oversight_shows(r.scope, why));
    // Not even how many: a count of people's records is theirs too.
    let hidden = !hidden.is_empty();
    if json {
        return print_json(&shown);
    }
    for r in shown {
        println!(
            "#{:<5} {:<11} {:<10} {:<18} {}",
            r.id,
            r.scope.as_str(),
            r.status.as_str(),
            r.owner.as_deref().unwrap_or("-"),
            r.content
        );
    }
    if hidden || why == Oversight::Unreasoned {
        println!("(people's own records are not shown: list one person's with --owner ID --reason TEXT, which is audited and shown to them)");
    }
    Ok(())
}

async fn show(ctx: &Ctx, id: i64, reason: Option<String>, json: bool) -> Result<()> {
    let Ctx { services, org } = ctx;
    let db = services.db();
    let r = db.records().get(org, id).await?;
    if r.scope == Scope::Person {
        bail!("record #{id} is in the person tier, read only by its owner, never by oversight");
    }
    if let (true, Some(owner)) = (r.scope.is_personal(), &r.owner) {
        let Some(reason) = policy::oversight_reason(reason.as_deref()) else {
            bail!("record #{id} is {owner}'s: give --reason TEXT (audited, shown to them)");
        };
        let surface = format!("steward memory show {id}");
        let look = Look {
            org,
            actor: ACTOR,
            looked: Looked::Memory,
            person: owner,
            surface: &surface,
            reason,
        };
        audit_view(db, look, ctx.now_ms()).await?;
    }
    if json {
        return print_json(&r);
    }
    println!("record #{}", r.id);
    let optional = |v: Option<&str>| v.unwrap_or("-").to_string();
    for (key, value) in [
        ("scope", r.scope.as_str().to_string()),
        ("status", r.status.as_str().to_string()),
        ("agent", r.agent.clone()),
        ("owner", optional(r.owner.as_deref())),
        ("kind", r.kind.clone()),
        ("subject", r.subject.clone()),
        ("said", date(r.said_at)),
        ("recorded", date(r.recorded_at)),
        (
            "expires",
            r.expires_at.map(date).unwrap_or_else(|| "-".into()),
        ),
        ("source", r.source.clone()),
        ("author", optional(r.author.as_deref())),
        ("content", r.content.clone()),
    ] {
        println!("  {key:<9} {value}");
    }
    Ok(())
}

/// How `memory search` searches and prints.
struct Search {
    as_: Option<String>,
    reason: Option<String>,
    agent: Option<String>,
    limit: i64,
    json: bool,
}

/// The agent a command names, checked, or the configured one.
pub(super) fn agent_or_default(ctx: &Ctx, agent: Option<String>) -> Result<String> {
    let agent = agent.unwrap_or_else(|| ctx.services.config().server.agent.clone());
    if let Err(why) = ::memory::check_agent_id(&agent) {
        bail!("--agent {agent}: {why}");
    }
    Ok(agent)
}

/// The same entry point and scope as a turn (`Db::retrieve`).
async fn search(ctx: &Ctx, text: &str, how: Search) -> Result<()> {
    let Ctx { services, org } = ctx;
    let speaker = match &how.as_ {
        None => None,
        Some(who) => {
            let user = services
                .pairing()
                .person(org, who)
                .await
                .with_context(|| format!("--as {who}: no paired person by that id"))?;
            // Reading someone's records needs a reason and is audited, as `list --owner` is.
            let Some(reason) = policy::oversight_reason(how.reason.as_deref()) else {
                bail!("--as needs --reason TEXT: the look is audited and shown to the person");
            };
            let surface = format!("steward memory search --as: {text}");
            let look = Look {
                org,
                actor: ACTOR,
                looked: Looked::Memory,
                person: &user.user_id,
                surface: &surface,
                reason,
            };
            audit_view(services.db(), look, ctx.now_ms()).await?;
            Some(user.user_id)
        }
    };
    let roles = match &speaker {
        Some(who) => services.db().role_memory().roles_of(org, who).await?,
        None => Vec::new(),
    };
    let scope = ::memory::store::RetrievalScope {
        org: org.clone(),
        agent: agent_or_default(ctx, how.agent)?,
        speaker,
        shared: false,
        roles,
    };
    let why = match scope.speaker {
        Some(_) => Oversight::Reasoned,
        None => Oversight::Unreasoned,
    };
    let mut found = services
        .db()
        .records()
        .retrieve(&scope, text, how.limit)
        .await?;
    found.retain(|r| policy::oversight_shows(r.record.scope, why));
    if how.json {
        let rows: Vec<serde_json::Value> = found
            .iter()
            .map(|r| {
                serde_json::json!({
                    "id": r.record.id,
                    "scope": r.record.scope.as_str(),
                    "content": r.record.content,
                    "score": r.score,
                })
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&rows)?);
        return Ok(());
    }
    if found.is_empty() {
        println!("nothing found");
    }
    for r in &found {
        println!(
            "#{:<5} {:<11} {:>7.3}  {}",
            r.record.id,
            r.record.scope.as_str(),
            r.score,
            r.record.content
        );
    }
    Ok(())
}

async fn import(ctx: &Ctx, file: &std::path::Path, agent: Option<String>) -> Result<()> {
    let text =
        std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?;
    let agent = agent_or_default(ctx, agent)?;
    let place = crate::lifecycle::ImportPlace {
        org: &ctx.org,
        agent: &agent,
        actor: ACTOR,
        now: ctx.now_ms(),
    };
    let report = ctx.services.lifecycle().import(&place, &text).await?;
    println!(
        "imported {} record(s) from {} ({} already known), run {}",
        report.written,
        file.display(),
        report.already_known,
        report.run_id
    );
    // With embeddings, the command ends when its records can be found by meaning.
    let embeddings = ctx.services.embeddings();
    if embeddings.enabled() && report.written > 0 {
        match embeddings.catch_up(Some(&ctx.org), false).await {
            Ok(n) => println!("embedded {n} record(s)"),
            Err(e) => eprintln!(
                "warning: records imported but not embedded ({e}); the embeddings backfill job of `steward serve` computes them later"
            ),
        }
    }
    Ok(())
}

async fn revisions(ctx: &Ctx, action: Option<RevisionAction>) -> Result<()> {
    let Ctx { services, org } = ctx;
    let db = services.db();
    match action {
        None | Some(RevisionAction::List(ListArgs { json: false })) => {
            for r in db.records().revisions(org).await? {
                println!(
                    "rev {:<4} {} -> retired #{} by #{} via {} ({}) run {}{}",
                    r.id,
                    date(r.created_at),
                    r.retired_id,
                    r.replacing_id,
                    r.via,
                    r.cause,
                    r.run_id,
                    if r.undone_at.is_some() {
                        " [undone]"
                    } else {
                        ""
                    }
                );
            }
        }
        Some(RevisionAction::List(ListArgs { json: true })) => {
            print_json(&db.records().revisions(org).await?)?;
        }
        Some(RevisionAction::Undo { id: Some(id), .. }) => {
            let undo = ctx
                .services
                .lifecycle()
                .undo(org, id, ACTOR, ctx.now_ms())
                .await?;
            println!(
                "{}",
                undo.message(id, |r| {
                    ::memory::admin_text!("`steward memory forget {}` retires it", r)
                })
            );
        }
        Some(RevisionAction::Undo {
            id: None,
            run: Some(run),
        }) => {
            let undone = db
                .records()
                .undo_run(org, &run, ACTOR, ctx.now_ms())
                .await?;
            println!(
                "undone {} revision(s) of run {run}: {undone:?}",
                undone.len()
            );
        }
        Some(RevisionAction::Undo {
            id: None,
            run: None,
        }) => bail!("undo needs a revision id or --run RUN"),
    }
    Ok(())
}

async fn review(ctx: &Ctx, action: Option<ReviewAction>) -> Result<()> {
    let Ctx { services, org } = ctx;
    let (id, confirm) = match action {
        None | Some(ReviewAction::List(_)) => {
            let filter = RecordFilter {
                status: Some(Status::Unverified),
                ..Default::default()
            };
            let mut records = services.db().records().list(org, &filter).await?;
            // Oversight without a reason shows no one's personal records or person tier.
            records.retain(|r| policy::oversight_shows(r.scope, Oversight::Unreasoned));
            if matches!(action, Some(ReviewAction::List(ListArgs { json: true }))) {
                return print_json(&records);
            }
            // The source names who wrote it (a run's principal), the
            // conversation where (a run's conversation).
            for r in records {
                let place = r
                    .conversation
                    .as_deref()
                    .map(|c| format!(" in {c}"))
                    .unwrap_or_default();
                println!(
                    "#{:<5} {:<11} said {} ({}{place}): {}",
                    r.id,
                    r.scope.as_str(),
                    date(r.said_at),
                    r.source,
                    r.content
                );
            }
            return Ok(());
        }
        Some(ReviewAction::Confirm { id }) => (id, true),
        Some(ReviewAction::Reject { id }) => (id, false),
    };
    match services
        .lifecycle()
        .review(org, id, confirm, ACTOR, ctx.now_ms())
        .await?
    {
        Ok(text) => println!("{text}"),
        Err(reason) => bail!(reason),
    }
    Ok(())
}

async fn relearn(ctx: &Ctx, archive: Option<i64>, conversation: Option<String>) -> Result<()> {
    let Ctx { services, org } = ctx;
    let ids: Vec<i64> = match (archive, conversation) {
        (Some(id), _) => vec![id],
        (None, Some(c)) => services
            .db()
            .conversations()
            .archives(org, Some(&c))
            .await?
            .into_iter()
            .map(|a| a.id)
            .collect(),
        (None, None) => bail!("relearn needs an archive id or --conversation C"),
    };
    if ids.is_empty() {
        bail!("nothing to relearn: no archive");
    }
    for id in ids {
        let r = services
            .lifecycle()
            .relearn(org, id, ACTOR, ctx.now_ms())
            .await?;
        println!(
            "archive {id}: {} active, {} unverified (review them with `steward memory review`), {} skipped; run {}",
            r.active.len(),
            r.unverified.len(),
            r.skipped,
            r.run_id
        );
    }
    Ok(())
}

async fn policy(ctx: &Ctx, action: Option<PolicyAction>) -> Result<()> {
    let Ctx { services, org } = ctx;
    match action {
        None | Some(PolicyAction::List(_)) => {
            let filter = RecordFilter {
                scopes: vec![Scope::OrgPolicy],
                status: Some(Status::Active),
                ..Default::default()
            };
            let records = services.db().records().list(org, &filter).await?;
            if matches!(action, Some(PolicyAction::List(ListArgs { json: true }))) {
                return print_json(&records);
            }
            for r in records {
                println!("#{:<5} {}", r.id, r.content);
            }
        }
        Some(PolicyAction::Add { text }) => {
            let id = services
                .learning()
                .write_policy(org, &text, ACTOR, ctx.now_ms())
                .await?;
            println!("Written: org_policy updated (id: {id}).");
        }
        Some(PolicyAction::Retire { id }) => {
            if let Err(refused) = services
                .lifecycle()
                .retire_policy(org, id, ACTOR, ctx.now_ms())
                .await?
            {
                bail!(refused);
            }
            println!("retired: org policy #{id}");
        }
    }
    Ok(())
}

async fn export(ctx: &Ctx, dir: PathBuf) -> Result<()> {
    let n = ctx
        .services
        .export()
        .export_markdown(&ctx.org, &dir, ACTOR, ctx.now_ms())
        .await?;
    println!("wrote {n} file(s) under {}", dir.display());
    Ok(())
}

async fn distill(ctx: &Ctx) -> Result<()> {
    let r = ctx
        .services
        .consolidation()
        .distill(&ctx.org, ctx.now_ms())
        .await?;
    for m in &r.merges {
        println!("merged {:?} into #{}", m.retired, m.into);
    }
    println!(
        "consolidation run {}: {} record(s) shown in {} call(s), {} failed, {} merge(s), {} refused, {} waiting for the next run{}",
        r.run_id,
        r.shown,
        r.calls,
        r.failed_calls,
        r.merges.len(),
        r.refused,
        r.waiting,
        if r.merges.is_empty() {
            String::new()
        } else {
            format!("; undo with `steward memory revisions undo --run {}`", r.run_id)
        }
    );
    Ok(())
}

async fn archives(ctx: &Ctx, action: Option<ArchiveAction>) -> Result<()> {
    let Ctx { services, org } = ctx;
    match action {
        None | Some(ArchiveAction::List(_)) => {
            let list = services.db().conversations().archives(org, None).await?;
            if matches!(action, Some(ArchiveAction::List(ListArgs { json: true }))) {
                return print_json(&list);
            }
            for a in list {
                println!(
                    "archive {:<4} {} {} – {} trust {}",
                    a.id,
                    a.conversation,
                    date(a.started_at),
                    date(a.ended_at),
                    a.trust
                );
            }
        }
        Some(ArchiveAction::Show { id, reason }) => {
            let db = services.db();
            let a = db.conversations().archive(org, id).await?;
            let mut audited = None;
            if let Some(person) = oversight::direct_person(db, &a).await? {
                let Some(reason) = policy::oversight_reason(reason.as_deref()) else {
                    bail!("archive {id} is {person}'s direct conversation: give --reason TEXT (audited, shown to them)");
                };
                let surface = format!("steward memory archives show {id}");
                let look = Look {
                    org,
                    actor: ACTOR,
                    looked: Looked::Archive,
                    person: &person,
                    surface: &surface,
                    reason,
                };
                audited = Some(audit_view(db, look, ctx.now_ms()).await?);
            }
            match a.words(audited.as_ref()) {
                Some(words) => println!("{}", words.markdown()),
                None => bail!("archive {id} is a person's direct conversation: give --reason TEXT (audited, shown to them)"),
            }
        }
    }
    Ok(())
}
