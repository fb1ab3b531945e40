//! The command line: `serve`, `chat`, `replay`, `pairing …`, `memory …`,
//! `skills …`, `runs …`, `api-key …`, `dashboard …`, `backup`. The argument types live here; each subcommand
//! runs in its own module.

mod access;
mod api_key;
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
use ::memory::{Role, Scope, Status};
use anyhow::{bail, Context, Result};
use clap::builder::PossibleValuesParser;
use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::sync::Arc;
use strum::VariantArray;

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
    /// A person's work roles (`analyst`, `sre`, …): list them, add or remove
    /// some (each change audited). Work roles are not authority.
    Roles {
        /// The paired user's id.
        user: String,
        /// Give the person this role (repeatable).
        #[arg(long)]
        add: Vec<String>,
        /// Take this role from the person (repeatable).
        #[arg(long)]
        remove: Vec<String>,
    },
    /// Grant a permission for one role (`role_memory.manage`: accept
    /// proposals to the role's memory).
    Grant {
        /// The paired user's id.
        user: String,
        /// The permission.
        #[arg(value_parser = permission_names())]
        permission: String,
        /// The role it is held for.
        #[arg(long)]
        role: String,
    },
    /// Withdraw a permission granted for one role.
    Ungrant {
        /// The paired user's id.
        user: String,
        /// The permission.
        #[arg(value_parser = permission_names())]
        permission: String,
        /// The role it was held for.
        #[arg(long)]
        role: String,
    },
}

/// The permissions a role grant may name.
fn permission_names() -> PossibleValuesParser {
    use ::memory::role_memory::Permission;
    PossibleValuesParser::new(Permission::VARIANTS.iter().map(|p| p.as_str()))
}

/// The kinds of a role entry.
fn role_kind_names() -> PossibleValuesParser {
    use ::memory::role_memory::RoleKind;
    PossibleValuesParser::new(RoleKind::VARIANTS.iter().map(|k| k.as_str()))
}

/// `steward memory role …`: a role's shared memory and its two-party curation.
#[derive(Debug, Subcommand)]
pub enum RoleCommand {
    /// The proposals and entries of a role (pending, accepted, active, retired, expired).
    List {
        /// The role's name.
        role: String,
        /// Print a JSON array.
        #[arg(long)]
        json: bool,
    },
    /// Propose an entry for a person (who holds the role, manages it, or is an administrator).
    Propose {
        /// The role's name.
        role: String,
        /// What the entry is.
        #[arg(long, value_parser = role_kind_names())]
        kind: String,
        /// The entry's text: no names, ids or personal data.
        text: String,
        /// The person proposing it (audited as the operator acting for them).
        #[arg(long = "as")]
        as_: String,
    },
    /// Accept a proposal for a person who holds `role_memory.manage` for its
    /// role. The holder confirms it as themselves (chat, their own API key):
    /// the command line takes one of the two decisions, never both.
    Accept {
        /// The proposal's id.
        id: i64,
        /// The hash `memory role list` printed (its 32 characters at least):
        /// accepts that text only.
        #[arg(long)]
        hash: String,
        /// The manager accepting it (audited as the operator acting for them).
        #[arg(long = "as")]
        as_: String,
    },
    /// Retire an active entry (undo with `memory revisions undo REVISION`).
    Retire {
        /// The proposal's id.
        id: i64,
    },
}

/// `memory list --scope`'s values: every scope's name.
fn scope_names() -> PossibleValuesParser {
    PossibleValuesParser::new(Scope::VARIANTS.iter().map(|s| s.as_str()))
}

/// `memory list --status`'s values: `all`, then every status's name, live
/// first, then those awaiting an answer, then those retired.
fn status_names() -> PossibleValuesParser {
    let listed = |s: &Status| match s {
        Status::Active => 0,
        Status::Pending => 1,
        Status::Unverified => 2,
        Status::Superseded => 3,
        Status::Rejected => 4,
        Status::Deleted => 5,
    };
    let mut statuses = Status::VARIANTS.to_vec();
    statuses.sort_by_key(listed);
    PossibleValuesParser::new(
        std::iter::once("all").chain(statuses.into_iter().map(Status::as_str)),
    )
}

#[derive(Debug, Subcommand)]
pub enum MemoryCommand {
    /// List records (personal ones only with --owner, which is audited).
    List {
        /// Only records of this scope.
        #[arg(long, value_parser = scope_names())]
        scope: Option<String>,
        /// Only records with this status (`all`, the default: any).
        #[arg(long, value_parser = status_names())]
        status: Option<String>,
        /// One person's individual records (their stored user id); needs
        /// --reason, audited as `memory.view` and shown to the person. Their
        /// person tier is never shown.
        #[arg(long, requires = "reason")]
        owner: Option<String>,
        /// Why you look at this person's records (audited, shown to them).
        #[arg(long)]
        reason: Option<String>,
        /// Print a JSON array of records.
        #[arg(long)]
        json: bool,
    },
    /// Show one record (a person's individual record needs --reason and is
    /// audited as `memory.view`; the person tier is never shown).
    Show {
        /// The record's id (`#12` in lists).
        id: i64,
        /// Why you look at a person's record (audited, shown to them).
        #[arg(long)]
        reason: Option<String>,
        /// Print it as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Ranked search with the scope of a turn: org policy and the agent's
    /// notes, plus one person's own records with `--as` (audited).
    Search {
        /// What to look for, as a person would ask it.
        text: String,
        /// Search as this person (a user id or a linked identity such as
        /// `discord:123`); needs --reason. Their person tier is never shown.
        #[arg(long = "as", requires = "reason")]
        as_: Option<String>,
        /// Why you read this person's records (audited, shown to them).
        #[arg(long)]
        reason: Option<String>,
        /// Whose notes to search (default: `server.agent`).
        #[arg(long)]
        agent: Option<String>,
        /// At most this many records.
        #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(i64).range(1..=100))]
        limit: i64,
        /// JSON: a list of records with `id`, `scope`, `content`, `score`.
        #[arg(long)]
        json: bool,
    },
    /// Load agent notes and org policy from a JSON Lines file (operator-authored, audited):
    /// `{"scope": "agent_notes"|"org_policy", "content", "subject"?, "kind"?, "said_at"?}`.
    Import {
        /// The JSON Lines file.
        file: PathBuf,
        /// Whose notes `agent_notes` lines fill (default: `server.agent`).
        #[arg(long)]
        agent: Option<String>,
    },
    /// Revisions: list them, or undo one (or a whole run).
    Revisions {
        #[command(subcommand)]
        action: Option<RevisionAction>,
    },
    /// Delete a record and its text; its tombstone keeps relearn from bringing it back.
    Forget {
        /// The record's id.
        id: i64,
    },
    /// Erase a person: their records, the text of their lines, their words in archives.
    Erase {
        /// The person's stored user id.
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
        /// The archive's id (`steward memory archives list`).
        archive: Option<i64>,
        /// Every archive of this conversation instead.
        #[arg(long, conflicts_with = "archive")]
        conversation: Option<String>,
    },
    /// Org-wide policy memory (admin-authored; never learned).
    Policy {
        #[command(subcommand)]
        action: Option<PolicyAction>,
    },
    /// The team's shared memory as Markdown files: agent notes, org policy
    /// and archives, never anyone's personal records (a person exports their
    /// own with `GET /api/v1/me/export`).
    Export {
        /// The directory to write into.
        #[arg(long)]
        markdown: PathBuf,
    },
    /// A work role's shared memory: list, propose, accept, confirm, retire.
    Role {
        #[command(subcommand)]
        action: RoleCommand,
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

/// `--json` of a list.
#[derive(Debug, Clone, Copy, Default, clap::Args)]
pub struct ListArgs {
    /// Print a JSON array.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum ReviewAction {
    /// Quarantined (unverified) records waiting for review.
    List(ListArgs),
    /// Make a quarantined record active (under the subject rule).
    Confirm {
        /// The record's id.
        id: i64,
    },
    /// Keep a quarantined record out.
    Reject {
        /// The record's id.
        id: i64,
    },
}

#[derive(Debug, Subcommand)]
pub enum PolicyAction {
    /// Active org policy.
    List(ListArgs),
    /// Add org policy (wins over agent notes on its subject).
    Add {
        /// The policy's text (at most 500 characters).
        text: String,
    },
    /// Retire org policy (deletes it).
    Retire {
        /// The record's id.
        id: i64,
    },
}

#[derive(Debug, Subcommand)]
pub enum ArchiveAction {
    /// Session archives, newest first.
    List(ListArgs),
    /// Print one archive as Markdown (a person's direct conversation needs
    /// --reason and is audited as `archive.view`).
    Show {
        /// The archive's id.
        id: i64,
        /// Why you read a person's direct conversation (audited, shown to them).
        #[arg(long)]
        reason: Option<String>,
    },
}

#[derive(Debug, Subcommand)]
pub enum RevisionAction {
    /// Every retirement, newest first.
    List(ListArgs),
    /// Bring the retired record back; the pair stands as a veto.
    Undo {
        /// The revision's id (`rev N` in the list).
        id: Option<i64>,
        /// Undo every revision of a run instead.
        #[arg(long, conflicts_with = "id")]
        run: Option<String>,
    },
}

/// `skills list --status`'s values: every skill status's name.
fn skill_status_names() -> PossibleValuesParser {
    PossibleValuesParser::new(
        ::memory::skill::SkillStatus::VARIANTS
            .iter()
            .map(|s| s.as_str()),
    )
}

fn tool_status_names() -> PossibleValuesParser {
    PossibleValuesParser::new(
        ::memory::external_tool::ExternalToolStatus::VARIANTS
            .iter()
            .map(|s| s.as_str()),
    )
}

#[derive(Debug, Subcommand)]
pub enum ToolsCommand {
    /// Tool listings, newest first.
    List {
        /// Only listings with this status.
        #[arg(long, value_parser = tool_status_names())]
        status: Option<String>,
        /// Print a JSON array of listings.
        #[arg(long)]
        json: bool,
    },
    /// One listing as an approval shows it: its description escaped, what the
    /// screen found, its input schema and its hash.
    Show {
        /// The listing's id.
        id: i64,
        /// Print the listing as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Approve a proposed listing for roles (audited as `tool.approve`).
    Approve {
        /// The listing's id.
        id: i64,
        /// The hash `show` printed (8 characters of it at least): approves that listing only.
        #[arg(long)]
        hash: String,
        /// A role that may be offered it (`admin`, `user` or a work role); repeat for more.
        #[arg(long = "role", required = true)]
        roles: Vec<String>,
        /// Each call waits for the speaker's yes to the arguments shown.
        #[arg(long)]
        confirm: bool,
        /// Automated runs (schedules, webhooks, on demand) may call it too.
        #[arg(long)]
        runs: bool,
        /// Calls of it a minute, all speakers together (default `[mcp] tool_calls_per_minute`).
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..=100_000))]
        per_minute: Option<u32>,
        /// Each call carries the organisation and the speaker's stored id to
        /// the server (MCP `_meta`); without it, neither leaves steward.
        #[arg(long)]
        identity: bool,
    },
    /// Decline a proposed listing (audited as `tool.reject`).
    Reject {
        /// The listing's id.
        id: i64,
    },
    /// Take a listing out of use (audited as `tool.suspend`).
    Suspend {
        /// The listing's id.
        id: i64,
        /// Why, for the audit log.
        #[arg(long, default_value = "suspended by the operator")]
        reason: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum SkillsCommand {
    /// Skill revisions, newest first.
    List {
        /// Only revisions with this status.
        #[arg(long, value_parser = skill_status_names())]
        status: Option<String>,
        /// Print a JSON array of revisions.
        #[arg(long)]
        json: bool,
    },
    /// A revision as its review shows it: the text, the change against the
    /// revision in force, the corrections it came from.
    Show {
        /// The revision's id (`#12` in lists).
        id: i64,
        /// Print the review as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Put a proposed revision in force (audited as `skill.approve`).
    Approve {
        /// The revision's id.
        id: i64,
        /// The hash `show` printed (8 characters of it at least): approves that content only.
        #[arg(long)]
        hash: String,
    },
    /// Decline a proposed revision (audited as `skill.reject`).
    Reject {
        /// The revision's id.
        id: i64,
    },
    /// Put an earlier approved revision of a skill back in force (audited as `skill.rollback`).
    Rollback {
        /// The skill's name.
        slug: String,
        /// The revision number to put back (`rev N`; default: the one before the revision in force).
        #[arg(long)]
        to: Option<i64>,
        /// Whose skill (default: `server.agent`).
        #[arg(long)]
        agent: Option<String>,
    },
    /// Every revision of one skill, newest first.
    Revisions {
        /// The skill's name.
        slug: String,
        /// Whose skill (default: `server.agent`).
        #[arg(long)]
        agent: Option<String>,
        /// Print a JSON array of revisions.
        #[arg(long)]
        json: bool,
    },
    /// Run a skill in force now as a standing procedure (principal
    /// `sop-system`, started by the operator; audited) and print its answer.
    Run {
        /// The skill's name.
        slug: String,
        /// Whose skill (default: `server.agent`).
        #[arg(long)]
        agent: Option<String>,
        /// Where the answer goes: `dashboard` (its Runs page), `none`,
        /// `discord:<channel id>`, `slack:<channel id>`, `teams:<channel>` or
        /// `teams_bot:<conversation id>`.
        #[arg(long, default_value = "dashboard")]
        deliver: crate::config::Deliver,
    },
    /// Write every skill in force as `DIR/<slug>/SKILL.md` (Agent Skills format).
    Export {
        /// The directory to write into (created when missing).
        dir: PathBuf,
        /// Whose skills (default: `server.agent`).
        #[arg(long)]
        agent: Option<String>,
    },
    /// Propose skills from a SKILL.md file or a directory of `<slug>/SKILL.md`:
    /// every file is checked first, and nothing is imported unless all are good.
    Import {
        /// A SKILL.md file, or a directory of `<slug>/SKILL.md`.
        path: PathBuf,
        /// Approve each proposal at once, as the operator (audited as `skill.approve`).
        #[arg(long)]
        approve: bool,
        /// Whose skills they become (default: `server.agent`).
        #[arg(long)]
        agent: Option<String>,
    },
}

#[derive(Debug, Subcommand)]
pub enum RunsCommand {
    /// Automated runs, newest first.
    List {
        /// Only the runs of this schedule, webhook or skill.
        #[arg(long)]
        name: Option<String>,
        /// At most this many runs.
        #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(i64).range(1..=500))]
        limit: i64,
        /// Print a JSON array of runs.
        #[arg(long)]
        json: bool,
    },
    /// One run with its lines (who said what).
    Show {
        /// The run's id (`#3` in lists).
        id: i64,
        /// Print the run and its lines as JSON.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum ApiKeyCommand {
    /// Mint a key bound to an active paired user: prints the key (shown
    /// once) on stdout and its id on stderr.
    Create {
        /// The paired user the key acts as.
        #[arg(long)]
        user: String,
        /// The person `--user` acts for (a delegate's key): it works only
        /// while `steward delegate add PRINCIPAL USER` holds.
        #[arg(long = "on-behalf-of")]
        on_behalf_of: Option<String>,
        /// Why you make a key that acts as this person (bootstrap, support):
        /// needed for anyone but `admin`, audited and shown to them wherever
        /// they read their memory, where they can revoke it.
        #[arg(long)]
        reason: Option<String>,
    },
    /// API keys by id, user, creation and revocation (never the secret).
    List {
        /// Only this user's keys.
        #[arg(long)]
        user: Option<String>,
        /// Print a JSON array.
        #[arg(long)]
        json: bool,
    },
    /// Revoke one key by its id (`key-…`); it never works again.
    Revoke {
        /// The key's id, `key-…` (the prefix and case are forgiven).
        id: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum DelegateCommand {
    /// Let DELEGATE act for PRINCIPAL (both paired people). The delegate
    /// acts with their own role and memory, never the principal's.
    Add {
        /// The person acted for.
        principal: String,
        /// The person who acts.
        delegate: String,
    },
    /// End a grant: keys made on its behalf are revoked at once.
    Remove {
        /// The person acted for.
        principal: String,
        /// The person who acted.
        delegate: String,
    },
    /// The grants (of one person, as principal or delegate, when given).
    List {
        /// Only the grants naming this person (as principal or delegate).
        who: Option<String>,
        /// Print a JSON array.
        #[arg(long)]
        json: bool,
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
mod tests {
    use super::Cli;
    use clap::CommandFactory;

    /// Arguments still without help text, each a debt (`memory search` is
    /// being reworked beside this file).
    const WITHOUT_HELP: &[&str] = &["steward memory search text"];

    /// Every argument of every subcommand, with its help text if any.
    fn arguments(cmd: &clap::Command, path: &str, out: &mut Vec<(String, bool)>) {
        for arg in cmd.get_arguments() {
            if matches!(arg.get_id().as_str(), "help" | "version") {
                continue;
            }
            out.push((format!("{path} {}", arg.get_id()), arg.get_help().is_some()));
        }
        for sub in cmd.get_subcommands() {
            arguments(sub, &format!("{path} {}", sub.get_name()), out);
        }
    }

    #[test]
    fn every_argument_has_help_text() {
        let mut all = Vec::new();
        arguments(&Cli::command(), "steward", &mut all);
        assert!(all.len() > 30, "walked the commands: {all:?}");
        let missing: Vec<&str> = all
            .iter()
            .filter(|(name, has)| !has && !WITHOUT_HELP.contains(&name.as_str()))
            .map(|(name, _)| name.as_str())
            .collect();
        assert!(missing.is_empty(), "arguments without help: {missing:#?}");
    }
}
