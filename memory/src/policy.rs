//! The write policy (SPEC §6): RBAC × learning, decided in code.
//!
//! Classification is soft, authorization is hard: the extractor says *what*
//! an item is; this module alone says whether it may be written, where, and
//! with which status. It never looks at message text.

use crate::model::{Candidate, ItemChannel, Principal, Role, Scope, Status};

/// How an item reached the policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// Detected in a live message without being asked: needs consent.
    Implicit,
    /// The speaker asked for it ("remember that …", `@notes:`): consent given.
    Explicit,
    /// Relearned from a session archive. `trusted` is the archive's `admin` trust.
    Relearn { trusted: bool },
}

/// Operator settings the policy reads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PolicySettings {
    /// Save implicit items without asking (still with a receipt).
    pub auto_keep: bool,
    /// Users (unified ids) or roles (`user`) allowed to `memory_write` agent_notes beside admins.
    pub write_access: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Write the item with this scope, owner and status
    /// (`Active` saved, `Pending` asks "Remember this?", `Unverified` quarantined).
    Write {
        scope: Scope,
        owner: Option<String>,
        status: Status,
    },
    /// A one-off task: executed, never stored.
    Execute,
    Drop(DropReason),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropReason {
    /// A regular user's operational item: operational changes need an administrator.
    NeedsAdmin,
    /// Automated runs execute procedures; they never author them.
    SystemNeverLearns,
    /// System principals have no personal channel.
    NoPersonalChannel,
    /// Unpaired lines are nobody's.
    Unpaired,
    /// Personal lines are not relearned from archives.
    PersonalNotRelearned,
}

impl DropReason {
    /// What the speaker is told, when they are told anything.
    pub fn explain(self) -> &'static str {
        match self {
            DropReason::NeedsAdmin => {
                "Operational changes need an administrator, so I kept the current procedure."
            }
            DropReason::SystemNeverLearns => "Automated runs do not teach the agent.",
            DropReason::NoPersonalChannel => "Automated runs have no personal memory.",
            DropReason::Unpaired => {
                "I only remember things for paired people. Send /pair to request access."
            }
            DropReason::PersonalNotRelearned => "Personal lines are not relearned from archives.",
        }
    }
}

/// Decide what happens to one extracted item spoken by `author`.
pub fn decide(
    author: &Principal,
    item: &Candidate,
    origin: Origin,
    settings: &PolicySettings,
) -> Decision {
    if item.channel == ItemChannel::Task {
        return Decision::Execute;
    }
    let consented_status = |origin: Origin| match origin {
        Origin::Explicit => Status::Active,
        Origin::Implicit if settings.auto_keep => Status::Active,
        Origin::Implicit => Status::Pending,
        Origin::Relearn { trusted: true } => Status::Active,
        Origin::Relearn { trusted: false } => Status::Unverified,
    };
    match (author, item.channel) {
        (Principal::Unpaired, _) => Decision::Drop(DropReason::Unpaired),
        (Principal::System(_), ItemChannel::Personal) => {
            Decision::Drop(DropReason::NoPersonalChannel)
        }
        (Principal::System(_), _) => Decision::Drop(DropReason::SystemNeverLearns),
        (Principal::Human { .. }, ItemChannel::Personal)
            if matches!(origin, Origin::Relearn { .. }) =>
        {
            Decision::Drop(DropReason::PersonalNotRelearned)
        }
        (Principal::Human { user_id, .. }, ItemChannel::Personal) => Decision::Write {
            scope: Scope::Personal,
            owner: Some(user_id.clone()),
            status: consented_status(origin),
        },
        (Principal::Human { role, .. }, ItemChannel::Operational) => match (role, origin) {
            (Role::Admin, origin) => Decision::Write {
                scope: Scope::AgentNotes,
                owner: None,
                status: consented_status(origin),
            },
            // A regular user's relearned operational line waits for an admin's review.
            (Role::User, Origin::Relearn { .. }) => Decision::Write {
                scope: Scope::AgentNotes,
                owner: None,
                status: Status::Unverified,
            },
            (Role::User, _) => Decision::Drop(DropReason::NeedsAdmin),
        },
        (_, ItemChannel::Task) => Decision::Execute,
    }
}

/// Scopes the `memory_write` tool may name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolScope {
    Personal,
    AgentNotes,
    /// Shapes every conversation: never writable by an automated run.
    Global,
    /// Shapes every conversation: never writable by an automated run.
    AgentConfig,
}

impl ToolScope {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "personal" => Some(ToolScope::Personal),
            "agent_notes" => Some(ToolScope::AgentNotes),
            "global" => Some(ToolScope::Global),
            "agent_config" => Some(ToolScope::AgentConfig),
            _ => None,
        }
    }
}

/// Why a `memory_write` was refused; the text says where the item may go.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolRefusal {
    #[error("memory_write to agent_notes is for administrators; write it for yourself with scope='personal'")]
    AgentNotesNeedsAdmin,
    #[error("automated runs have no personal memory; write operational results with scope='agent_notes'")]
    SystemHasNoPersonal,
    #[error(
        "automated runs may not write `{0}`; write operational results with scope='agent_notes'"
    )]
    SystemMayNotWrite(&'static str),
    #[error("unpaired senders cannot write memory; send /pair to request access")]
    Unpaired,
    #[error("`{0}` is not writable through memory_write here")]
    NotSupported(&'static str),
}

/// Decide an explicit `memory_write` tool call. `Ok` carries where it is saved.
pub fn decide_tool(
    author: &Principal,
    scope: ToolScope,
    settings: &PolicySettings,
) -> Result<(Scope, Option<String>), ToolRefusal> {
    match (author, scope) {
        (Principal::Unpaired, _) => Err(ToolRefusal::Unpaired),
        (Principal::System(_), ToolScope::Personal) => Err(ToolRefusal::SystemHasNoPersonal),
        (Principal::System(_), ToolScope::Global) => Err(ToolRefusal::SystemMayNotWrite("global")),
        (Principal::System(_), ToolScope::AgentConfig) => {
            Err(ToolRefusal::SystemMayNotWrite("agent_config"))
        }
        (Principal::System(_), ToolScope::AgentNotes) => Ok((Scope::AgentNotes, None)),
        (Principal::Human { user_id, .. }, ToolScope::Personal) => {
            Ok((Scope::Personal, Some(user_id.clone())))
        }
        (Principal::Human { user_id, role, .. }, ToolScope::AgentNotes) => {
            let listed = settings
                .write_access
                .iter()
                .any(|entry| entry == user_id || entry == role.as_str());
            if *role == Role::Admin || listed {
                Ok((Scope::AgentNotes, None))
            } else {
                Err(ToolRefusal::AgentNotesNeedsAdmin)
            }
        }
        (Principal::Human { .. }, ToolScope::Global) => Err(ToolRefusal::NotSupported("global")),
        (Principal::Human { .. }, ToolScope::AgentConfig) => {
            Err(ToolRefusal::NotSupported("agent_config"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::SystemPrincipal;

    fn human(role: Role) -> Principal {
        Principal::Human {
            user_id: "discord:1".into(),
            name: "P".into(),
            role,
        }
    }

    fn item(channel: ItemChannel) -> Candidate {
        Candidate {
            channel,
            kind: "x".into(),
            subject: "s".into(),
            content: "c".into(),
        }
    }

    const ALL_ORIGINS: [Origin; 4] = [
        Origin::Implicit,
        Origin::Explicit,
        Origin::Relearn { trusted: true },
        Origin::Relearn { trusted: false },
    ];

    #[test]
    fn no_origin_lets_a_non_admin_write_active_operational_memory() {
        let settings = PolicySettings {
            auto_keep: true,
            write_access: vec!["user".into(), "discord:1".into()],
        };
        for author in [
            human(Role::User),
            Principal::Unpaired,
            Principal::System(SystemPrincipal::Cron),
            Principal::System(SystemPrincipal::Webhook),
        ] {
            for origin in ALL_ORIGINS {
                let d = decide(&author, &item(ItemChannel::Operational), origin, &settings);
                assert!(
                    !matches!(
                        d,
                        Decision::Write {
                            status: Status::Active | Status::Pending,
                            ..
                        }
                    ),
                    "{author:?} {origin:?} -> {d:?}"
                );
            }
        }
    }

    #[test]
    fn admin_operational_asks_first_unless_explicit_or_auto_keep() {
        let s = PolicySettings::default();
        let admin = human(Role::Admin);
        let op = item(ItemChannel::Operational);
        assert_eq!(
            decide(&admin, &op, Origin::Implicit, &s),
            Decision::Write {
                scope: Scope::AgentNotes,
                owner: None,
                status: Status::Pending
            }
        );
        assert!(matches!(
            decide(&admin, &op, Origin::Explicit, &s),
            Decision::Write {
                status: Status::Active,
                ..
            }
        ));
        let keep = PolicySettings {
            auto_keep: true,
            ..Default::default()
        };
        assert!(matches!(
            decide(&admin, &op, Origin::Implicit, &keep),
            Decision::Write {
                status: Status::Active,
                ..
            }
        ));
    }

    #[test]
    fn personal_items_go_to_their_speaker_and_never_to_system_or_unpaired() {
        let s = PolicySettings::default();
        let p = item(ItemChannel::Personal);
        assert_eq!(
            decide(&human(Role::User), &p, Origin::Implicit, &s),
            Decision::Write {
                scope: Scope::Personal,
                owner: Some("discord:1".into()),
                status: Status::Pending
            }
        );
        assert_eq!(
            decide(
                &Principal::System(SystemPrincipal::Sop),
                &p,
                Origin::Explicit,
                &s
            ),
            Decision::Drop(DropReason::NoPersonalChannel)
        );
        assert_eq!(
            decide(&Principal::Unpaired, &p, Origin::Explicit, &s),
            Decision::Drop(DropReason::Unpaired)
        );
        assert_eq!(
            decide(
                &human(Role::Admin),
                &p,
                Origin::Relearn { trusted: true },
                &s
            ),
            Decision::Drop(DropReason::PersonalNotRelearned)
        );
    }

    #[test]
    fn tasks_are_executed_for_everyone() {
        for author in [
            human(Role::User),
            Principal::Unpaired,
            Principal::System(SystemPrincipal::Cron),
        ] {
            assert_eq!(
                decide(
                    &author,
                    &item(ItemChannel::Task),
                    Origin::Implicit,
                    &PolicySettings::default()
                ),
                Decision::Execute
            );
        }
    }

    #[test]
    fn memory_write_rules() {
        let s = PolicySettings::default();
        assert_eq!(
            decide_tool(&human(Role::User), ToolScope::AgentNotes, &s),
            Err(ToolRefusal::AgentNotesNeedsAdmin)
        );
        assert!(ToolRefusal::AgentNotesNeedsAdmin
            .to_string()
            .contains("scope='personal'"));
        let listed = PolicySettings {
            write_access: vec!["discord:1".into()],
            ..Default::default()
        };
        assert!(decide_tool(&human(Role::User), ToolScope::AgentNotes, &listed).is_ok());
        let cron = Principal::System(SystemPrincipal::Cron);
        assert!(decide_tool(&cron, ToolScope::AgentNotes, &s).is_ok());
        let everyone = PolicySettings {
            write_access: vec!["cron-system".into(), "user".into(), "admin".into()],
            ..Default::default()
        };
        for scope in [
            ToolScope::Global,
            ToolScope::AgentConfig,
            ToolScope::Personal,
        ] {
            assert!(decide_tool(&cron, scope, &everyone).is_err());
            assert!(decide_tool(
                &Principal::System(SystemPrincipal::Webhook),
                scope,
                &everyone
            )
            .is_err());
        }
        assert_eq!(
            decide_tool(&Principal::Unpaired, ToolScope::Personal, &everyone),
            Err(ToolRefusal::Unpaired)
        );
    }
}
