//! The one authorization point (README "Who may do what"): every action —
//! a chat command, a model's tool, a REST route, a dashboard action, a CLI
//! command that acts in an organisation, an automated run — is an [`Action`],
//! and [`authorize`] says whether an [`Actor`] may take it, with the reason
//! when not. The surfaces classify what they expose as actions (the chat's
//! `commands::ChatCommand`, the tools' `tools::Tool`, the API's `Caller` and
//! `Admin` extractors) by exhaustive matches, so a new command or tool cannot
//! exist without a row here.
//!
//! A delegated actor (a turn or key acting on someone's behalf) never holds
//! an administrator's capabilities, whatever the delegate's own role:
//! [`Actor::principal`] is the principal every later check of such a turn
//! sees, with its role lowered to `user`.

use crate::model::{Principal, Role};

/// Who acts: the principal the pairing store gives, and the person they act
/// for when a delegation lends the turn or key.
#[derive(Debug, Clone, Copy)]
pub struct Actor<'a> {
    pub principal: &'a Principal,
    pub on_behalf_of: Option<&'a str>,
}

impl<'a> Actor<'a> {
    /// A person or run acting in their own name.
    pub fn own(principal: &'a Principal) -> Self {
        Actor {
            principal,
            on_behalf_of: None,
        }
    }

    /// The principal a turn of this actor runs as: a delegate acting for
    /// someone is a `user`, whatever their own role, so no later check can
    /// find an administrator in a delegated turn.
    pub fn principal(&self) -> Principal {
        match (self.principal, self.on_behalf_of) {
            (Principal::Human { user_id, name, .. }, Some(_)) => Principal::Human {
                user_id: user_id.clone(),
                name: name.clone(),
                role: Role::User,
            },
            (p, _) => p.clone(),
        }
    }

    /// What kind of actor this is, for the table of [`authorize`].
    pub fn kind(&self) -> ActorKind {
        match (self.principal, self.on_behalf_of.is_some()) {
            (
                Principal::Human {
                    role: Role::Admin, ..
                },
                false,
            ) => ActorKind::Admin,
            (
                Principal::Human {
                    role: Role::Admin, ..
                },
                true,
            ) => ActorKind::DelegatedAdmin,
            (
                Principal::Human {
                    role: Role::User, ..
                },
                false,
            ) => ActorKind::User,
            (
                Principal::Human {
                    role: Role::User, ..
                },
                true,
            ) => ActorKind::DelegatedUser,
            (Principal::System(_), _) => ActorKind::System,
            (Principal::Unpaired, _) => ActorKind::Unpaired,
        }
    }
}

named_enum! {
    /// Every kind of actor [`authorize`] tells apart.
    pub enum ActorKind {
        /// A paired administrator, in their own name.
        Admin,
        /// A paired administrator acting on someone's behalf.
        DelegatedAdmin,
        /// A paired regular user, in their own name.
        User,
        /// A paired regular user acting on someone's behalf.
        DelegatedUser,
        /// An automated run (cron, SOP, webhook).
        System,
        /// A sender let in by policy but not paired.
        Unpaired,
    }
}

/// What an action needs of its actor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Capability {
    /// Anyone the channel lets in: the turn itself decides what an unpaired
    /// sender or a run may learn or read.
    Anyone,
    /// A paired person (in their own name or as a delegate): acts on their
    /// own memory, keys and delegations only.
    Paired,
    /// A paired person acting in their own name: what binds them (a key,
    /// a delegation, a curation decision) is never made on someone's behalf.
    OwnName,
    /// A paired administrator acting in their own name.
    Administer,
}

named_enum! {
    /// Every action of steward that [`authorize`] decides.
    pub enum Action {
        /// Send a message and be answered (the turn decides what it may learn).
        Converse,
        /// End one's own signed-in session (the dashboard's sign-out).
        SignOut,
        /// Read, forget or promote one's own records; `/memory`, auto-keep.
        OwnMemory,
        /// Make, list and revoke one's own API keys (in one's own name).
        OwnKeys,
        /// Grant and end one's own delegations (in one's own name).
        OwnDelegations,
        /// Accept, confirm, edit or retire a work role's entry: a decision
        /// of one of its two people, in their own name.
        CurateRoleMemory,
        /// Work-role memory: list, propose, accept, confirm, retire — who
        /// holds or manages the role is the role store's to check.
        RoleWork,
        /// Read a skill in force.
        LoadSkill,
        /// Call an approved external tool (MCP): only a paired person, and
        /// only a tool approved for their role (the tool's approval decides that).
        CallExternalTool,
        /// Approve or deny pairing requests; add, link, revoke users; set roles.
        ManagePeople,
        /// Grant and remove work roles.
        ManageRoles,
        /// Draft, approve, reject and roll back skills.
        CurateSkills,
        /// Approve, reject and suspend external tools (MCP).
        CurateTools,
        /// Confirm or reject a quarantined record (the review queue).
        ReviewLearned,
        /// Write and retire organisation policy and operational notes.
        WriteOperational,
        /// List and revoke any key of the organisation.
        ManageKeys,
        /// A reasoned read of one person's records or direct conversation.
        Oversee,
        /// Undo revisions and runs; relearn, erase, expire, import, back up.
        Maintain,
        /// Start a run, read runs and the audit log.
        Operate,
        /// Any other administrator's REST route or dashboard page (the API's
        /// `Admin` extractor, the dashboard's sign-in).
        Administer,
    }
}

impl Action {
    /// What the action needs of its actor.
    pub fn needs(self) -> Capability {
        match self {
            Action::Converse | Action::LoadSkill | Action::SignOut => Capability::Anyone,
            Action::OwnMemory | Action::RoleWork | Action::CallExternalTool => Capability::Paired,
            Action::OwnKeys | Action::OwnDelegations | Action::CurateRoleMemory => {
                Capability::OwnName
            }
            Action::ManagePeople
            | Action::ManageRoles
            | Action::CurateSkills
            | Action::CurateTools
            | Action::ReviewLearned
            | Action::WriteOperational
            | Action::ManageKeys
            | Action::Oversee
            | Action::Maintain
            | Action::Operate
            | Action::Administer => Capability::Administer,
        }
    }
}

/// Why [`authorize`] said no.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Denial {
    #[error("this needs a paired account: send /pair in a direct message first")]
    Unpaired,
    #[error("only administrators can do that")]
    NotAdmin,
    #[error("you are acting on someone's behalf, and a delegation lends no administration and no decision: do that in your own name")]
    Delegated,
    #[error("automated runs administer nothing")]
    System,
}

impl Denial {
    /// Its name, for the audit log.
    pub fn code(self) -> &'static str {
        match self {
            Denial::Unpaired => "unpaired",
            Denial::NotAdmin => "not_admin",
            Denial::Delegated => "delegated",
            Denial::System => "system",
        }
    }
}

/// Whether `actor` may take `action`: the one decision every surface asks.
pub fn authorize(actor: Actor<'_>, action: Action) -> Result<(), Denial> {
    let kind = actor.kind();
    match (action.needs(), kind) {
        (Capability::Anyone, _) => Ok(()),
        (_, ActorKind::Unpaired) => Err(Denial::Unpaired),
        (_, ActorKind::System) => Err(Denial::System),
        (Capability::Paired, _) => Ok(()),
        (Capability::OwnName, ActorKind::Admin | ActorKind::User) => Ok(()),
        (Capability::OwnName, ActorKind::DelegatedAdmin | ActorKind::DelegatedUser) => {
            Err(Denial::Delegated)
        }
        (Capability::Administer, ActorKind::Admin) => Ok(()),
        // A delegated turn's principal is already a `user` (`Actor::principal`):
        // either way the answer names the delegation.
        (Capability::Administer, ActorKind::DelegatedAdmin | ActorKind::DelegatedUser) => {
            Err(Denial::Delegated)
        }
        (Capability::Administer, ActorKind::User) => Err(Denial::NotAdmin),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::SystemPrincipal;
    use strum::VariantArray;

    fn human(role: Role) -> Principal {
        Principal::Human {
            user_id: "discord:1".into(),
            name: "Ana".into(),
            role,
        }
    }

    /// What each capability answers each kind of actor, written out.
    const TABLE: &[(Capability, ActorKind, Result<(), Denial>)] = {
        use ActorKind as K;
        use Capability as C;
        &[
            (C::Anyone, K::Admin, Ok(())),
            (C::Anyone, K::DelegatedAdmin, Ok(())),
            (C::Anyone, K::User, Ok(())),
            (C::Anyone, K::DelegatedUser, Ok(())),
            (C::Anyone, K::System, Ok(())),
            (C::Anyone, K::Unpaired, Ok(())),
            (C::Paired, K::Admin, Ok(())),
            (C::Paired, K::DelegatedAdmin, Ok(())),
            (C::Paired, K::User, Ok(())),
            (C::Paired, K::DelegatedUser, Ok(())),
            (C::Paired, K::System, Err(Denial::System)),
            (C::Paired, K::Unpaired, Err(Denial::Unpaired)),
            (C::OwnName, K::Admin, Ok(())),
            (C::OwnName, K::DelegatedAdmin, Err(Denial::Delegated)),
            (C::OwnName, K::User, Ok(())),
            (C::OwnName, K::DelegatedUser, Err(Denial::Delegated)),
            (C::OwnName, K::System, Err(Denial::System)),
            (C::OwnName, K::Unpaired, Err(Denial::Unpaired)),
            (C::Administer, K::Admin, Ok(())),
            (C::Administer, K::DelegatedAdmin, Err(Denial::Delegated)),
            (C::Administer, K::User, Err(Denial::NotAdmin)),
            (C::Administer, K::DelegatedUser, Err(Denial::Delegated)),
            (C::Administer, K::System, Err(Denial::System)),
            (C::Administer, K::Unpaired, Err(Denial::Unpaired)),
        ]
    };

    /// Every action × every kind of actor: allowed, or the denial.
    #[test]
    fn every_action_for_every_actor() {
        use ActorKind as K;
        let admin = human(Role::Admin);
        let user = human(Role::User);
        let system = Principal::System(SystemPrincipal::Cron);
        let unpaired = Principal::Unpaired;
        let actors = [
            (K::Admin, Actor::own(&admin)),
            (
                K::DelegatedAdmin,
                Actor {
                    principal: &admin,
                    on_behalf_of: Some("discord:2"),
                },
            ),
            (K::User, Actor::own(&user)),
            (
                K::DelegatedUser,
                Actor {
                    principal: &user,
                    on_behalf_of: Some("discord:2"),
                },
            ),
            (K::System, Actor::own(&system)),
            (K::Unpaired, Actor::own(&unpaired)),
        ];
        // Each kind of actor is in the table once.
        let kinds: Vec<K> = actors.iter().map(|(k, _)| *k).collect();
        assert_eq!(kinds, K::VARIANTS);
        for action in Action::VARIANTS {
            for (kind, actor) in &actors {
                assert_eq!(actor.kind(), *kind);
                let want = TABLE
                    .iter()
                    .find(|(need, k, _)| *need == action.needs() && k == kind)
                    .map(|(_, _, want)| *want)
                    .unwrap();
                assert_eq!(authorize(*actor, *action), want, "{action} by {kind}");
            }
        }
    }

    /// The table, spelled out for the actions whose answer matters most.
    #[test]
    fn a_delegate_administers_nothing_whatever_their_role() {
        let admin = human(Role::Admin);
        let delegated = Actor {
            principal: &admin,
            on_behalf_of: Some("discord:2"),
        };
        for action in Action::VARIANTS {
            if matches!(action.needs(), Capability::Administer | Capability::OwnName) {
                assert_eq!(
                    authorize(delegated, *action),
                    Err(Denial::Delegated),
                    "{action}"
                );
                // As the turn sees it: the lowered principal, still delegated.
                let lowered = delegated.principal();
                let as_turn = Actor {
                    principal: &lowered,
                    on_behalf_of: delegated.on_behalf_of,
                };
                assert_eq!(
                    authorize(as_turn, *action),
                    Err(Denial::Delegated),
                    "{action}"
                );
                assert_eq!(authorize(Actor::own(&admin), *action), Ok(()), "{action}");
            }
        }
        // And the principal the delegated turn runs as is no administrator.
        assert!(!delegated.principal().is_human_admin());
        assert_eq!(delegated.principal().user_id(), Some("discord:1"));
        assert!(Actor::own(&admin).principal().is_human_admin());
    }
}
