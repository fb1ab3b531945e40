//! What each subcommand accepts (clap): the subcommands of `steward
//! dashboard`, `pairing`, `role`, `memory`, `tools`, `skills`, `runs`,
//! `api-key` and `delegate`, with the closed lists their values come from.

use ::memory::{Role, Scope, Status};
use clap::builder::PossibleValuesParser;
use clap::Subcommand;
use std::path::PathBuf;
use strum::VariantArray;

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
