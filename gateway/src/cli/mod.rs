//! The command line: `serve`, `chat`, `replay`, `pairing …`, `memory …`,
//! `api-key …`, `dashboard …`. The argument types live here; each subcommand
//! runs in its own module.

mod api_key;
mod chat;
mod dashboard;
mod memory;
mod pairing;
mod replay;
mod serve;

use crate::config::Config;
use crate::turn::TurnLoop;
use ::memory::Role;
use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::sync::Arc;

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

/// A role as the command line names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum RoleArg {
    /// Served from what admins taught; keeps personal memory.
    User,
    /// May teach the agent (`@notes:`), set org policy and approve pairing.
    Admin,
}

impl From<RoleArg> for Role {
    fn from(r: RoleArg) -> Role {
        match r {
            RoleArg::User => Role::User,
            RoleArg::Admin => Role::Admin,
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum PairingCommand {
    /// Pending requests and paired users.
    List {
        /// Print one JSON object {pending, users}.
        #[arg(long)]
        json: bool,
    },
    /// Approve a pairing code with a role.
    Approve {
        /// The 8-character code the bot gave (any case).
        code: String,
        /// The role the person gets.
        #[arg(long, value_enum, default_value_t = RoleArg::User)]
        role: RoleArg,
    },
    /// Deny a pairing code.
    Deny {
        /// The 8-character code the bot gave (any case).
        code: String,
    },
    /// Pair a channel identity directly, without a /pair code (audited as
    /// `pairing.add`); works under every `pairing.dm_policy`.
    Add {
        /// The stored identity: `discord:<snowflake>`, `teams:<aad id>`, `cli:<name>`, …
        identity: String,
        /// The role the person gets.
        #[arg(long, value_enum)]
        role: RoleArg,
        /// A display name (default: the identity).
        #[arg(long)]
        name: Option<String>,
    },
    /// Revoke a paired user (and their API keys, for good).
    Revoke {
        /// The paired user's id.
        user: String,
    },
    /// Change a paired user's role.
    SetRole {
        /// The paired user's id.
        user: String,
        /// The new role.
        #[arg(value_enum)]
        role: RoleArg,
    },
    /// Link another channel identity (e.g. `teams:<aad id>`) to a paired user:
    /// both are then one person, with one role and one personal memory.
    Link {
        /// The identity to link, e.g. `teams:<aad id>`.
        identity: String,
        /// The paired user it becomes.
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
    /// Delete a record and its text; its tombstone keeps relearn from bringing it back.
    Forget { id: i64 },
    /// Erase a person: their records, the text of their lines, their words in archives.
    Erase {
        #[arg(long)]
        user: String,
    },
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
    /// Mint a key bound to an active paired user: prints the key (shown
    /// once) on stdout and its id on stderr.
    Create {
        #[arg(long)]
        user: String,
    },
    /// API keys by id, user, creation and revocation (never the secret).
    List {
        #[arg(long)]
        user: Option<String>,
    },
    /// Revoke one key by its id (`key-…`); it never works again.
    Revoke { id: String },
}

/// Run one command line; the error is what `steward` prints before it exits 1.
pub async fn run(cli: Cli) -> Result<()> {
    check(&cli)?;
    let cfg = Config::load(cli.config.as_deref())?;
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
    }
    match cli.command {
        Command::Replay { file, json } => replay::run(&file, json, cfg).await,
        Command::Serve => serve::run(open(cfg).await?).await,
        Command::Chat {
            as_,
            conversation,
            group,
        } => chat::run(&Ctx::open(cfg, org).await?, &as_, conversation, group).await,
        Command::Pairing(cmd) => pairing::run(&Ctx::open(cfg, org).await?, cmd).await,
        Command::Memory(cmd) => memory::run(&Ctx::open(cfg, org).await?, cmd).await,
        Command::ApiKey(cmd) => api_key::run(&Ctx::open(cfg, org).await?, cmd).await,
        Command::Dashboard(cmd) => dashboard::run(&Ctx::open(cfg, org).await?, cmd).await,
    }
}

/// The turn loop on the configured database.
async fn open(cfg: Config) -> Result<Arc<TurnLoop>> {
    let url = ::memory::store::without_password(&cfg.database.url);
    crate::build(cfg)
        .await
        .with_context(|| format!("opening database {url}"))
}

/// What an operator command acts on: the turn loop and the organisation.
struct Ctx {
    turns: Arc<TurnLoop>,
    org: String,
}

impl Ctx {
    async fn open(cfg: Config, org: String) -> Result<Ctx> {
        Ok(Ctx {
            turns: open(cfg).await?,
            org,
        })
    }
}

/// Who the operator commands act as, in the audit log and on revisions.
const ACTOR: &str = "cli";

fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// A time as every command prints it: ISO 8601 in UTC, to the second
/// (`2026-01-05T09:00:00Z`).
fn date(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.format("%Y-%m-%dT%H:%M:%SZ").to_string())
        .unwrap_or_default()
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
fn check(cli: &Cli) -> Result<()> {
    if let Command::Chat { as_, .. } = &cli.command {
        if as_.trim().is_empty() {
            bail!("--as needs an identity");
        }
    }
    Ok(())
}
