//! The command line: `serve`, `chat`, `replay`, `pairing …`, `memory …`, `api-key …`.

use crate::config::Config;
use crate::http::{app, AppState};
use adapters::{ConversationKind, Inbound};
use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand};
use memory::store::RecordFilter;
use memory::{Role, Scope, Status};
use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "steward",
    version,
    about = "Chat-platform bot gateway with governed long-term memory"
)]
pub struct Cli {
    /// Configuration file (default: ./steward.toml when present).
    #[arg(long, global = true)]
    pub config: Option<PathBuf>,
    /// Organisation to act in (default: server.org).
    #[arg(long, global = true)]
    pub org: Option<String>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the gateway: HTTP API (and, when configured, the channels).
    Serve,
    /// A terminal conversation through the turn loop.
    Chat {
        /// Who you are: `admin` (the dashboard admin) or a stored user id such as `cli:bob`.
        #[arg(long = "as", default_value = "admin")]
        as_: String,
        /// Conversation id (default: one per speaker).
        #[arg(long)]
        conversation: Option<String>,
        /// Chat in a group thread (you are mentioned on every line).
        #[arg(long)]
        group: bool,
    },
    /// Run a JSON Lines transcript on a fresh in-memory database.
    Replay {
        file: PathBuf,
        /// Print one JSON object {replies, memory, revisions}.
        #[arg(long)]
        json: bool,
    },
    /// Pairing requests and paired users.
    #[command(subcommand)]
    Pairing(PairingCommand),
    /// Memory records and revisions.
    #[command(subcommand)]
    Memory(MemoryCommand),
    /// API keys for /api/v1.
    #[command(subcommand, name = "api-key")]
    ApiKey(ApiKeyCommand),
    /// The web dashboard's admin token.
    #[command(subcommand)]
    Dashboard(DashboardCommand),
}

#[derive(Debug, Subcommand)]
pub enum DashboardCommand {
    /// Generate a new admin token (printed once) and sign every browser out.
    ResetToken,
}

#[derive(Debug, Subcommand)]
pub enum PairingCommand {
    /// Pending requests and paired users.
    List,
    /// Approve a pairing code with a role.
    Approve {
        code: String,
        #[arg(long, default_value = "user")]
        role: Role,
    },
    /// Deny a pairing code.
    Deny { code: String },
    /// Revoke a paired user.
    Revoke { user: String },
    /// Change a paired user's role.
    SetRole { user: String, role: Role },
    /// Link another channel identity (e.g. `teams:<aad id>`) to a paired user:
    /// both are then one person, with one role and one personal memory.
    Link {
        identity: String,
        #[arg(long)]
        user: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum MemoryCommand {
    /// List records.
    List {
        #[arg(long)]
        scope: Option<String>,
        #[arg(long)]
        status: Option<String>,
        #[arg(long)]
        owner: Option<String>,
    },
    /// Show one record.
    Show { id: i64 },
    /// Records whose text contains a phrase.
    Search { text: String },
    /// Revisions: list them, or undo one (or a whole run).
    Revisions {
        #[command(subcommand)]
        action: Option<RevisionAction>,
    },
    /// Delete a record; its tombstone keeps relearn from bringing it back.
    Forget { id: i64 },
    /// Review unverified (quarantined) records.
    Review {
        #[command(subcommand)]
        action: Option<ReviewAction>,
    },
    /// Relearn an archive, or every archive of a conversation.
    Relearn {
        archive: Option<i64>,
        #[arg(long, conflicts_with = "archive")]
        conversation: Option<String>,
    },
    /// Org-wide policy memory (admin-authored; never learned).
    Policy {
        #[command(subcommand)]
        action: Option<PolicyAction>,
    },
    /// One person's data as JSON (--user), or everything as Markdown files (--markdown DIR).
    Export {
        #[arg(long)]
        user: Option<String>,
        #[arg(long, conflicts_with = "user")]
        markdown: Option<PathBuf>,
    },
    /// Run the retention job (memory_expire) now.
    Expire,
    /// Run consolidation now: merge live records that say the same thing (undo with `revisions undo --run RUN`).
    Distill,
    /// Session archives: list them, or print one as Markdown.
    Archives {
        #[command(subcommand)]
        action: Option<ArchiveAction>,
    },
}

#[derive(Debug, Subcommand)]
pub enum ReviewAction {
    List,
    Confirm { id: i64 },
    Reject { id: i64 },
}

#[derive(Debug, Subcommand)]
pub enum PolicyAction {
    List,
    Add { text: String },
    Retire { id: i64 },
}

#[derive(Debug, Subcommand)]
pub enum ArchiveAction {
    List,
    Show { id: i64 },
}

#[derive(Debug, Subcommand)]
pub enum RevisionAction {
    List,
    /// Bring the retired record back; the pair stands as a veto.
    Undo {
        id: Option<i64>,
        /// Undo every revision of a run instead.
        #[arg(long, conflicts_with = "id")]
        run: Option<String>,
    },
}

#[derive(Debug, Subcommand)]
pub enum ApiKeyCommand {
    /// Mint a key bound to a paired user.
    Create {
        #[arg(long)]
        user: String,
    },
}

fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

fn date(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.format("%Y-%m-%d %H:%M").to_string())
        .unwrap_or_default()
}

pub async fn run(cli: Cli) -> Result<()> {
    let cfg = Config::load(cli.config.as_deref())?;
    for w in cfg.warnings() {
        tracing::warn!("{w}");
        eprintln!("warning: {w}");
    }
    let org = cli.org.clone().unwrap_or_else(|| cfg.server.org.clone());
    // A command that calls the model fails here when its provider cannot be set up
    // (an unset API key variable) instead of running degraded.
    if uses_model(&cli.command) {
        crate::llm::Models::from_config(&cfg.llm)
            .context("configuring the language model (llm.*)")?;
    }
    if let Command::Replay { file, json } = &cli.command {
        let input =
            std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
        let out = crate::replay::replay(&input, cfg).await?;
        if *json {
            println!("{}", serde_json::to_string_pretty(&out)?);
        } else {
            for r in &out.replies {
                println!("[{}] {}", r.conversation, r.text.replace('\n', "\n    "));
            }
            println!("-- memory");
            for m in &out.memory {
                println!(
                    "#{} {} {} {:?}: {}",
                    m.id, m.scope, m.status, m.owner, m.content
                );
            }
        }
        return Ok(());
    }
    let url = cfg.database.url.clone();
    let turns = crate::build(cfg)
        .await
        .with_context(|| format!("opening database {url}"))?;
    let db = turns.db().clone();
    match cli.command {
        Command::Replay { .. } => {}
        Command::Serve => {
            let listen = turns.config().server.listen.clone();
            let listener = tokio::net::TcpListener::bind(&listen)
                .await
                .with_context(|| format!("binding {listen}"))?;
            let addr = listener.local_addr()?;
            println!(
                "steward listening on http://{addr} (database {url}, model {})",
                turns.config().llm.provider
            );
            if turns.config().dashboard.enabled {
                crate::dashboard::ensure_admin_user(&turns).await?;
                let token = crate::dashboard::ensure_admin_token(&turns)
                    .await
                    .context("setting up the dashboard admin token")?;
                let how = match token {
                    crate::dashboard::AdminToken::Generated(t) => format!(
                        "dashboard admin token (shown once; `steward dashboard reset-token` makes a new one): {t}"
                    ),
                    crate::dashboard::AdminToken::Stored => "dashboard: sign in with the admin token printed when it was generated (`steward dashboard reset-token` makes a new one)".into(),
                    crate::dashboard::AdminToken::Configured => {
                        "dashboard: sign in with dashboard.admin_token".into()
                    }
                };
                // Whoever reads stdout may have stopped; the server keeps running.
                let mut out = std::io::stdout().lock();
                if writeln!(out, "dashboard: http://{addr}/dashboard\n{how}")
                    .and_then(|()| out.flush())
                    .is_err()
                {
                    eprintln!("warning: could not print the dashboard sign-in line to stdout; `steward dashboard reset-token` makes a new token");
                }
            }
            if turns.config().teams.security_token.is_some() {
                println!("Teams outgoing webhook: POST http://{addr}/teams/<agent>");
            }
            let discord =
                crate::discord::start(turns.clone()).context("starting the Discord channel")?;
            if discord.is_some() {
                println!("discord channel connecting to the gateway");
            }
            let expire = turns
                .jobs()
                .spawn(turns.lifecycle().clone(), turns.clock().clone());
            let consolidation = turns.config().llm.auto_consolidate.then(|| {
                turns
                    .jobs()
                    .spawn(turns.consolidation().clone(), turns.clock().clone())
            });
            let server = axum::serve(
                listener,
                app(AppState {
                    turns: turns.clone(),
                }),
            )
            .with_graceful_shutdown(async {
                let _ = tokio::signal::ctrl_c().await;
            });
            match discord {
                Some(discord) => discord.beside(server).await?,
                None => server.await?,
            }
            expire.abort();
            if let Some(job) = consolidation {
                job.abort();
            }
            db.close().await;
        }
        Command::Chat {
            as_,
            conversation,
            group,
        } => {
            let stored = if as_ == "admin" || as_.contains(':') {
                as_.clone()
            } else {
                format!("cli:{as_}")
            };
            if stored == "admin" && turns.pairing().resolve(&org, "admin").await?.is_none() {
                turns
                    .pairing()
                    .add_user(
                        &org,
                        "admin",
                        "Dashboard admin",
                        Role::Admin,
                        "cli",
                        now_ms(),
                    )
                    .await?;
            }
            let channel = stored
                .split_once(':')
                .map(|(c, _)| c.to_string())
                .unwrap_or_else(|| "dashboard".into());
            let conversation = conversation.unwrap_or_else(|| format!("chat:{stored}"));
            let interactive = std::io::stdin().is_terminal();
            if interactive {
                println!("Chatting as {stored} in {conversation}. Ctrl-D to leave.");
            }
            let stdin = std::io::stdin();
            let mut lines = stdin.lock().lines();
            loop {
                if interactive {
                    print!("you> ");
                    std::io::stdout().flush()?;
                }
                let Some(line) = lines.next() else { break };
                let line = line?;
                if line.trim().is_empty() {
                    continue;
                }
                let msg = Inbound {
                    org: org.clone(),
                    agent: turns.config().server.agent.clone(),
                    channel: channel.clone(),
                    conversation: conversation.clone(),
                    kind: if group {
                        ConversationKind::Group
                    } else {
                        ConversationKind::Direct
                    },
                    sender: Some(stored.clone()),
                    sender_name: stored.clone(),
                    text: line,
                    platform_id: None,
                    at: chrono::Utc::now(),
                    mentioned: true,
                    answer: None,
                };
                for r in turns.handle(&msg).await? {
                    println!("steward> {}", r.text.replace('\n', "\n         "));
                }
            }
        }
        Command::Pairing(cmd) => {
            let p = turns.pairing();
            match cmd {
                PairingCommand::List => {
                    let pending = p.pending(&org, now_ms()).await?;
                    println!("pending requests: {}", pending.len());
                    for r in pending {
                        println!(
                            "  {}  {} ({})  expires {}",
                            r.code,
                            r.stored_id,
                            r.name,
                            date(r.expires_at)
                        );
                    }
                    let users = p.users(&org).await?;
                    println!("paired users: {}", users.len());
                    for u in users {
                        println!("  {}  {}  {}  {}", u.user_id, u.role, u.status, u.name);
                    }
                }
                PairingCommand::Approve { code, role } => {
                    let u = p.approve(&org, &code, role, "cli", now_ms()).await?;
                    println!(
                        "approved: {} ({}) is paired as {}",
                        u.name, u.user_id, u.role
                    );
                }
                PairingCommand::Deny { code } => {
                    let r = p.deny(&org, &code, "cli", now_ms()).await?;
                    println!("denied: {} from {}", r.code, r.stored_id);
                }
                PairingCommand::Revoke { user } => {
                    p.revoke(&org, &user, "cli", now_ms()).await?;
                    println!("revoked: {user}");
                }
                PairingCommand::SetRole { user, role } => {
                    p.set_role(&org, &user, role, "cli", now_ms()).await?;
                    println!("{user} is now {role}");
                }
                PairingCommand::Link { identity, user } => {
                    let u = p
                        .link_identity(&org, &identity, &user, "cli", now_ms())
                        .await?;
                    println!(
                        "linked: {identity} now speaks as {} ({}, {})",
                        u.name, u.user_id, u.role
                    );
                }
            }
        }
        Command::Memory(cmd) => match cmd {
            MemoryCommand::List {
                scope,
                status,
                owner,
            } => {
                let scope = match scope {
                    Some(s) => {
                        Some(Scope::parse(&s).with_context(|| format!("unknown scope {s}"))?)
                    }
                    None => None,
                };
                let status = match status {
                    Some(s) => {
                        Some(Status::parse(&s).with_context(|| format!("unknown status {s}"))?)
                    }
                    None => None,
                };
                // Personal memory is shown one person at a time, and each look is audited.
                if let Some(o) = &owner {
                    db.audit(
                        &org,
                        "operator (cli)",
                        "memory.view",
                        o,
                        "steward memory list --owner",
                        now_ms(),
                    )
                    .await?;
                }
                let filter = RecordFilter {
                    agent: None,
                    scope,
                    owner: owner.clone(),
                    status,
                };
                let mut hidden = 0;
                for r in db.records(&org, &filter).await? {
                    if owner.is_none() && r.scope.is_personal() {
                        hidden += 1;
                        continue;
                    }
                    println!(
                        "#{:<5} {:<11} {:<10} {:<18} {}",
                        r.id,
                        r.scope.as_str(),
                        r.status.as_str(),
                        r.owner.as_deref().unwrap_or("-"),
                        r.content
                    );
                }
                if hidden > 0 {
                    println!("({hidden} personal record(s) not shown: list one person's with --owner ID, which is audited)");
                }
            }
            MemoryCommand::Show { id } => {
                let r = db.record(&org, id).await?;
                if let (true, Some(owner)) = (r.scope.is_personal(), &r.owner) {
                    db.audit(
                        &org,
                        "operator (cli)",
                        "memory.view",
                        owner,
                        &format!("record:{id}"),
                        now_ms(),
                    )
                    .await?;
                }
                println!("{}", serde_json::to_string_pretty(&r)?);
            }
            MemoryCommand::Search { text } => {
                for r in db
                    .search_records(&org, &text, 50)
                    .await?
                    .into_iter()
                    .filter(|r| !r.scope.is_personal())
                {
                    println!(
                        "#{:<5} {:<11} {:<10} {}",
                        r.id,
                        r.scope.as_str(),
                        r.status.as_str(),
                        r.content
                    );
                }
            }
            MemoryCommand::Revisions { action } => match action {
                None | Some(RevisionAction::List) => {
                    for r in db.revisions(&org).await? {
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
                Some(RevisionAction::Undo { id: Some(id), .. }) => {
                    let rev = db.revision(&org, id).await?;
                    if db.undo_revision(&org, id, "cli", now_ms()).await? {
                        println!(
                            "undone: record #{} is back; #{} may not replace it again",
                            rev.retired_id, rev.replacing_id
                        );
                    } else {
                        println!("revision {id} was already undone");
                    }
                }
                Some(RevisionAction::Undo {
                    id: None,
                    run: Some(run),
                }) => {
                    let undone = db.undo_run(&org, &run, "cli", now_ms()).await?;
                    println!(
                        "undone {} revision(s) of run {run}: {undone:?}",
                        undone.len()
                    );
                }
                Some(RevisionAction::Undo {
                    id: None,
                    run: None,
                }) => bail!("undo needs a revision id or --run RUN"),
            },
            MemoryCommand::Forget { id } => {
                turns.lifecycle().forget(&org, id, "cli", now_ms()).await?;
                println!("forgotten: record #{id} is deleted");
            }
            MemoryCommand::Review { action } => match action {
                None | Some(ReviewAction::List) => {
                    let filter = RecordFilter {
                        status: Some(Status::Unverified),
                        ..Default::default()
                    };
                    for r in db.records(&org, &filter).await? {
                        println!(
                            "#{:<5} {:<11} said {} ({}): {}",
                            r.id,
                            r.scope.as_str(),
                            date(r.said_at),
                            r.source,
                            r.content
                        );
                    }
                }
                Some(ReviewAction::Confirm { id }) | Some(ReviewAction::Reject { id }) => {
                    let confirm = matches!(action, Some(ReviewAction::Confirm { .. }));
                    match turns
                        .lifecycle()
                        .review(&org, id, confirm, "cli", now_ms())
                        .await?
                    {
                        Ok(text) => println!("{text}"),
                        Err(reason) => bail!(reason),
                    }
                }
            },
            MemoryCommand::Relearn {
                archive,
                conversation,
            } => {
                let ids: Vec<i64> = match (archive, conversation) {
                    (Some(id), _) => vec![id],
                    (None, Some(c)) => db
                        .archives(&org, Some(&c))
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
                    let r = turns.lifecycle().relearn(&org, id, "cli", now_ms()).await?;
                    println!(
                        "archive {id}: {} active, {} unverified (review them with `steward memory review`), {} skipped; run {}",
                        r.active.len(),
                        r.unverified.len(),
                        r.skipped,
                        r.run_id
                    );
                }
            }
            MemoryCommand::Policy { action } => match action {
                None | Some(PolicyAction::List) => {
                    let filter = RecordFilter {
                        scope: Some(Scope::OrgPolicy),
                        status: Some(Status::Active),
                        ..Default::default()
                    };
                    for r in db.records(&org, &filter).await? {
                        println!("#{:<5} {}", r.id, r.content);
                    }
                }
                Some(PolicyAction::Add { text }) => {
                    let id = turns
                        .learning()
                        .write_policy(&org, &text, "cli", now_ms())
                        .await?;
                    println!("Written: org_policy updated (id: {id}).");
                }
                Some(PolicyAction::Retire { id }) => {
                    let r = db.record(&org, id).await?;
                    if r.scope != Scope::OrgPolicy {
                        bail!("record {id} is not org policy");
                    }
                    turns.lifecycle().forget(&org, id, "cli", now_ms()).await?;
                    println!("retired: org policy #{id}");
                }
            },
            MemoryCommand::Export { user, markdown } => match (user, markdown) {
                (Some(user), _) => {
                    let v = turns
                        .export()
                        .export_user(&org, &user, "cli", now_ms())
                        .await?;
                    println!("{}", serde_json::to_string_pretty(&v)?);
                }
                (None, Some(dir)) => {
                    let n = turns
                        .export()
                        .export_markdown(&org, &dir, "cli", now_ms())
                        .await?;
                    println!("wrote {n} file(s) under {}", dir.display());
                }
                (None, None) => bail!("export needs --user ID or --markdown DIR"),
            },
            MemoryCommand::Expire => {
                let r = turns.lifecycle().expire(&org, now_ms()).await?;
                println!("{}", serde_json::to_string(&r)?);
            }
            MemoryCommand::Distill => {
                let r = turns.consolidation().distill(&org, now_ms()).await?;
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
            }
            MemoryCommand::Archives { action } => match action {
                None | Some(ArchiveAction::List) => {
                    for a in db.archives(&org, None).await? {
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
                Some(ArchiveAction::Show { id }) => {
                    println!("{}", db.archive(&org, id).await?.markdown)
                }
            },
        },
        Command::Dashboard(DashboardCommand::ResetToken) => {
            if turns.config().dashboard.admin_token.is_some() {
                bail!("dashboard.admin_token is set in the configuration; change it there instead");
            }
            let token = crate::dashboard::reset_admin_token(&turns).await?;
            println!("{token}");
        }
        Command::ApiKey(ApiKeyCommand::Create { user }) => {
            let key = turns
                .pairing()
                .create_api_key(&org, &user, "cli", now_ms())
                .await?;
            println!("{key}");
        }
    }
    Ok(())
}

/// Commands that call the language model (extraction, replies, judge, consolidation, summaries).
fn uses_model(c: &Command) -> bool {
    matches!(
        c,
        Command::Serve
            | Command::Chat { .. }
            | Command::Replay { .. }
            | Command::Memory(
                MemoryCommand::Distill
                    | MemoryCommand::Relearn { .. }
                    | MemoryCommand::Review { .. }
            )
    )
}

/// Exit with a message instead of a panic on unusable arguments.
pub fn check(cli: &Cli) -> Result<()> {
    if let Command::Chat { as_, .. } = &cli.command {
        if as_.trim().is_empty() {
            bail!("--as needs an identity");
        }
    }
    Ok(())
}
