//! The command line: `serve`, `chat`, `replay`, `pairing …`, `memory …`,
//! `skills …`, `runs …`, `api-key …`, `dashboard …`, `backup`. The argument types live here; each subcommand
//! runs in its own module.

mod access;
mod api_key;
mod args;
mod backup;
mod chat;
mod dashboard;
mod delegate;
mod memory;
mod pairing;
mod replay;
mod roles;
mod runs;
mod serve;
mod skills;
mod tools;

use crate::config::Config;
use crate::services::Services;
use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::sync::Arc;

pub use args::{
    ApiKeyCommand, ArchiveAction, DashboardCommand, DelegateCommand, ListArgs, MemoryCommand,
    PairingCommand, PolicyAction, ReviewAction, RevisionAction, RoleArg, RoleCommand, RunsCommand,
    SkillsCommand, ToolsCommand,
};

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
        /// Why you act as this person (support, bootstrap): needed for anyone
        /// but `admin`, audited and shown to them wherever they read their memory.
        #[arg(long)]
        reason: Option<String>,
        /// Conversation id (default: one per speaker).
        #[arg(long)]
        conversation: Option<String>,
        /// Chat in a group thread (you are mentioned on every line).
        #[arg(long)]
        group: bool,
    },
    /// Run a JSON Lines transcript on a fresh in-memory database.
    Replay {
        /// The transcript: JSON Lines, one event an object (pair, msg, system,
        /// tool, trim, relearn, undo, review).
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
    /// Skills: review, approve, reject, roll back, run now, export and import SKILL.md.
    #[command(subcommand)]
    Skills(SkillsCommand),
    /// External tools (MCP): list, show, approve, reject, suspend.
    #[command(subcommand)]
    Tools(ToolsCommand),
    /// Automated runs: schedules, webhooks and skills run on demand.
    #[command(subcommand)]
    Runs(RunsCommand),
    /// API keys for /api/v1.
    #[command(subcommand, name = "api-key")]
    ApiKey(ApiKeyCommand),
    /// Delegation: who may act for whom (through a key made `--on-behalf-of`).
    #[command(subcommand)]
    Delegate(DelegateCommand),
    /// The web dashboard's admin token.
    #[command(subcommand)]
    Dashboard(DashboardCommand),
    /// Copy the SQLite store to a new file, consistently, even while `serve`
    /// runs (copying the database file itself is not safe then).
    Backup {
        /// The new file (an existing file is never overwritten).
        file: PathBuf,
    },
}

/// Run one command line; the error is what `steward` prints before it exits 1.
pub async fn run(cli: Cli) -> Result<()> {
    check(&cli)?;
    if !matches!(cli.command, Command::Serve) {
        end_quietly_on_a_closed_pipe();
    }
    let mut cfg = Config::load(cli.config.as_deref())?;
    for w in cfg.warnings() {
        tracing::warn!("{w}");
        eprintln!("warning: {w}");
    }
    let org = cli.org.unwrap_or_else(|| cfg.server.org.clone());
    // A command that calls the model fails here when its provider cannot be set up
    // (an unset API key variable) instead of running degraded.
    if uses_model(&cli.command) {
        crate::llm::Models::from_config(&cfg.llm)
            .context("configuring the language model (llm.*)")?;
        log_model_settings(crate::llm::local_model::settle(&mut cfg).await);
    }
    // The operator is the organisation's built-in administrator: the one
    // authorization point still decides, by the command's row (`access`).
    if let Some(action) = cli.command.action() {
        let operator = ::memory::Principal::Human {
            user_id: ACTOR.to_string(),
            name: ACTOR.to_string(),
            role: ::memory::Role::Admin,
        };
        ::memory::authz::authorize(::memory::authz::Actor::own(&operator), action)
            .map_err(|denial| anyhow::anyhow!("{denial}"))?;
    }
    match cli.command {
        Command::Replay { file, json } => replay::run(&file, json, cfg).await,
        Command::Serve => {
            // The MCP servers start with `serve` only: their tools are listed now.
            let services = open(cfg).await?.as_ref().clone().with_mcp().await;
            serve::run(Arc::new(services)).await
        }
        Command::Chat {
            as_,
            reason,
            conversation,
            group,
        } => {
            let who = chat::Who {
                as_: &as_,
                reason: reason.as_deref(),
            };
            chat::run(&Ctx::open(cfg, org).await?, who, conversation, group).await
        }
        Command::Pairing(cmd) => pairing::run(&Ctx::open(cfg, org).await?, cmd).await,
        Command::Memory(cmd) => memory::run(&Ctx::open(cfg, org).await?, cmd).await,
        Command::Skills(cmd) => skills::run(&Ctx::open(cfg, org).await?, cmd).await,
        Command::Tools(cmd) => tools::run(&Ctx::open(cfg, org).await?, cmd).await,
        Command::Runs(cmd) => runs::run(&Ctx::open(cfg, org).await?, cmd).await,
        Command::ApiKey(cmd) => api_key::run(&Ctx::open(cfg, org).await?, cmd).await,
        Command::Delegate(cmd) => delegate::run(&Ctx::open(cfg, org).await?, cmd).await,
        Command::Dashboard(cmd) => dashboard::run(&Ctx::open(cfg, org).await?, cmd).await,
        Command::Backup { file } => backup::run(&cfg, &file).await,
    }
}

/// The services on the configured database.
async fn open(cfg: Config) -> Result<Arc<Services>> {
    let url = ::memory::store::without_password(&cfg.database.url);
    crate::build(cfg)
        .await
        .with_context(|| format!("opening database {url}"))
}

/// What an operator command acts on: the services and the organisation.
struct Ctx {
    services: Arc<Services>,
    org: String,
}

impl Ctx {
    async fn open(cfg: Config, org: String) -> Result<Ctx> {
        Ok(Ctx {
            services: open(cfg).await?,
            org,
        })
    }
}

/// Who the operator commands act as, in the audit log and on revisions.
const ACTOR: &str = "cli";

/// The reason the operator gives for acting as `person` (a key that acts as
/// them, a chat as them): none is needed for the built-in `admin`, the
/// operator's own; anyone else's needs one.
fn acting_as_reason<'a>(person: &str, reason: Option<&'a str>) -> Result<Option<&'a str>> {
    if person.trim() == crate::dashboard::BUILT_IN_ADMIN {
        return Ok(None);
    }
    match reason.map(str::trim).filter(|r| !r.is_empty()) {
        Some(r) => Ok(Some(r)),
        None => anyhow::bail!(
            "acting as {person} needs --reason: it is audited and shown to {person} wherever they read their memory"
        ),
    }
}

/// Audit the operator acting as `person` (`person.act_as`, with the reason):
/// the person is shown it as they are shown an oversight read.
async fn audit_acting_as(ctx: &Ctx, person: &str, surface: &str, reason: &str) -> Result<()> {
    let look = crate::oversight::Look {
        org: &ctx.org,
        actor: ACTOR,
        looked: crate::oversight::Looked::ActedAs,
        person,
        surface,
        reason,
    };
    crate::oversight::audit_view(ctx.services.db(), look, ctx.now_ms()).await?;
    Ok(())
}

impl Ctx {
    /// The time now, from the injected clock (the wall clock outside tests).
    fn now_ms(&self) -> i64 {
        self.services.clock().now_ms()
    }
}

/// `value` with every `…_at` number (ms since the epoch) written as an ISO
/// 8601 time, as the plain output writes them.
fn with_iso_times(value: serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| {
                    let v = match (k.ends_with("_at"), v.as_i64()) {
                        (true, Some(ms)) => Value::String(date(ms)),
                        _ => with_iso_times(v),
                    };
                    (k, v)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(with_iso_times).collect()),
        other => other,
    }
}

/// Print `value` as pretty JSON, its times in ISO 8601.
fn print_json(value: &impl serde::Serialize) -> Result<()> {
    let v = with_iso_times(serde_json::to_value(value)?);
    println!("{}", serde_json::to_string_pretty(&v)?);
    Ok(())
}

/// A time as every command prints it: ISO 8601 in UTC, to the second
/// (`2026-01-05T09:00:00Z`).
fn date(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.format("%Y-%m-%dT%H:%M:%SZ").to_string())
        .unwrap_or_default()
}

/// A command whose reader stops reading (`steward pairing list | head -1`)
/// ends quietly, as any Unix tool does, instead of panicking in `println!`:
/// SIGPIPE gets its default action back (Rust ignores it). Not for `serve`,
/// which must outlive a closed stdout; sockets are written with
/// `MSG_NOSIGNAL` and raise no SIGPIPE either way.
#[cfg(unix)]
fn end_quietly_on_a_closed_pipe() {
    // SAFETY: only the disposition of SIGPIPE changes, to the default, which
    // runs no code of this process; `signal` may be called from any thread.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

#[cfg(not(unix))]
fn end_quietly_on_a_closed_pipe() {}

/// Commands that call the language model (extraction, replies, judge, consolidation, summaries).
/// Say at start which settings `llm.preset` chose, so an operator sees why a
/// reply is capped or offered no tools.
fn log_model_settings(chosen: crate::llm::local_model::Chosen) {
    use crate::llm::local_model::Chosen;
    match chosen {
        Chosen::Nothing => {}
        Chosen::UnknownSize => tracing::info!(
            "llm.preset = \"auto\": the server did not say how big its model is; settings as configured (set llm.preset = \"local\" for a small local model)"
        ),
        Chosen::Large(m) => tracing::info!(
            params = m.params,
            source = m.source,
            "llm.preset = \"auto\": a large model; settings as configured"
        ),
        Chosen::Local { why, applied } => tracing::info!(
            applied = %applied.join(", "),
            "small local model settings ({why}): temperature 0, max_output_tokens 320, tools off, history for follow-ups only, except where the configuration sets them"
        ),
    }
}

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
            | Command::Skills(SkillsCommand::Run { .. })
    )
}

/// Exit with a message instead of a panic on unusable arguments.
fn check(cli: &Cli) -> Result<()> {
    if let Command::Chat { as_, .. } = &cli.command {
        if as_.trim().is_empty() {
            bail!("--as needs an identity");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
