//! The command line's rows of the authorization table (README "Who may do
//! what"): what each operator command does, as an [`Action`] of the one
//! authorization point. The matches are exhaustive, so a new command cannot
//! exist without its row; `run` asks `memory::authz::authorize` with it
//! before the command runs.

use super::{
    ApiKeyCommand, ArchiveAction, Command, DashboardCommand, DelegateCommand, MemoryCommand,
    PairingCommand, PolicyAction, ReviewAction, RevisionAction, RoleCommand, RunsCommand,
    SkillsCommand, ToolsCommand,
};
use memory::authz::Action;

impl Command {
    /// The action the command takes in an organisation; `None` for those
    /// that act in none: `serve` starts the gateway, `replay` runs on a fresh
    /// in-memory database, `backup` copies the database file.
    pub fn action(&self) -> Option<Action> {
        Some(match self {
            Command::Serve | Command::Replay { .. } | Command::Backup { .. } => return None,
            Command::Chat { .. } => Action::Converse,
            Command::Pairing(cmd) => cmd.action(),
            Command::Memory(cmd) => cmd.action(),
            Command::Skills(cmd) => cmd.action(),
            Command::Tools(
                ToolsCommand::List { .. }
                | ToolsCommand::Show { .. }
                | ToolsCommand::Approve { .. }
                | ToolsCommand::Reject { .. }
                | ToolsCommand::Suspend { .. },
            ) => Action::CurateTools,
            Command::Runs(RunsCommand::List { .. } | RunsCommand::Show { .. }) => Action::Operate,
            Command::ApiKey(
                ApiKeyCommand::Create { .. }
                | ApiKeyCommand::List { .. }
                | ApiKeyCommand::Revoke { .. },
            ) => Action::ManageKeys,
            Command::Delegate(
                DelegateCommand::Add { .. }
                | DelegateCommand::Remove { .. }
                | DelegateCommand::List { .. },
            ) => Action::ManagePeople,
            Command::Dashboard(DashboardCommand::ResetToken) => Action::Administer,
        })
    }
}

impl PairingCommand {
    fn action(&self) -> Action {
        match self {
            PairingCommand::List { .. }
            | PairingCommand::Approve { .. }
            | PairingCommand::Deny { .. }
            | PairingCommand::Add { .. }
            | PairingCommand::Revoke { .. }
            | PairingCommand::SetRole { .. }
            | PairingCommand::Link { .. } => Action::ManagePeople,
            PairingCommand::Roles { .. }
            | PairingCommand::Grant { .. }
            | PairingCommand::Ungrant { .. } => Action::ManageRoles,
        }
    }
}

impl MemoryCommand {
    fn action(&self) -> Action {
        match self {
            // A person's records only with a reason: `Oversee` is the
            // administrator's either way.
            MemoryCommand::List { owner: Some(_), .. }
            | MemoryCommand::Show { .. }
            | MemoryCommand::Search { as_: Some(_), .. } => Action::Oversee,
            MemoryCommand::List { owner: None, .. } | MemoryCommand::Search { as_: None, .. } => {
                Action::Administer
            }
            MemoryCommand::Archives { action } => match action {
                None | Some(ArchiveAction::List(_)) => Action::Administer,
                Some(ArchiveAction::Show { .. }) => Action::Oversee,
            },
            MemoryCommand::Review { action } => match action {
                None
                | Some(ReviewAction::List(_))
                | Some(ReviewAction::Confirm { .. })
                | Some(ReviewAction::Reject { .. }) => Action::ReviewLearned,
            },
            MemoryCommand::Policy { action } => match action {
                None
                | Some(PolicyAction::List(_))
                | Some(PolicyAction::Add { .. })
                | Some(PolicyAction::Retire { .. }) => Action::WriteOperational,
            },
            MemoryCommand::Revisions { action } => match action {
                None | Some(RevisionAction::List(_)) => Action::Administer,
                Some(RevisionAction::Undo { .. }) => Action::Maintain,
            },
            MemoryCommand::Role { action } => match action {
                RoleCommand::List { .. }
                | RoleCommand::Propose { .. }
                | RoleCommand::Retire { .. } => Action::RoleWork,
                RoleCommand::Accept { .. } => Action::CurateRoleMemory,
            },
            MemoryCommand::Import { .. }
            | MemoryCommand::Forget { .. }
            | MemoryCommand::Erase { .. }
            | MemoryCommand::Relearn { .. }
            | MemoryCommand::Export { .. }
            | MemoryCommand::Expire
            | MemoryCommand::Distill => Action::Maintain,
        }
    }
}

impl SkillsCommand {
    fn action(&self) -> Action {
        match self {
            SkillsCommand::List { .. }
            | SkillsCommand::Show { .. }
            | SkillsCommand::Approve { .. }
            | SkillsCommand::Reject { .. }
            | SkillsCommand::Rollback { .. }
            | SkillsCommand::Revisions { .. }
            | SkillsCommand::Export { .. }
            | SkillsCommand::Import { .. } => Action::CurateSkills,
            SkillsCommand::Run { .. } => Action::Operate,
        }
    }
}
