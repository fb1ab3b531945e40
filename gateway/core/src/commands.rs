//! Chat commands of the turn loop (step 6): `/pair …`, `/memory` ("what do
//! you remember about me"), `/promote <id>`, `/forget <id>`, and `/skills`,
//! `/skill show|approve|reject|rollback …` for administrators.

use crate::error::Result;
use crate::lifecycle::Lifecycle;
use crate::skills::{review, Skills};
use memory::sanitize::sanitize;
use memory::store::RecordFilter;
use memory::{Db, Principal, Role, Scope, Status, StoreError};
use pairing::{Pairing, PairingError};
use std::sync::Arc;

use crate::asker::Asker;
use memory::authz::{self, Action};

/// Every chat command steward answers, each one action of the one
/// authorization point: the match in [`ChatCommand::action`] is exhaustive,
/// so a new command cannot exist unclassified.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::VariantArray)]
pub enum ChatCommand {
    /// `/pair` alone: where the speaker stands.
    Pair,
    /// `/pair approve|deny CODE`.
    PairDecide,
    /// `/skills`, `/skill show|approve|reject|rollback …`.
    Skills,
    /// `/share …`, `/role list …`.
    Role,
    /// `/role accept|confirm …`: a curation decision, in one's own name.
    RoleDecide,
    /// `/memory`, "what do you remember about me".
    Memory,
    /// `/autokeep [on|off]`.
    AutoKeep,
    /// `/promote ID`.
    Promote,
    /// `/forget ID`.
    Forget,
    /// `/apikey`: a key of one's own, in private.
    ApiKey,
    /// `/web`: a one-time dashboard sign-in link, in private.
    Web,
}

impl ChatCommand {
    /// The command a message is, if it is one.
    pub fn parse(text: &str) -> Option<ChatCommand> {
        let mut words = text.split_whitespace();
        let first = words.next()?.to_ascii_lowercase();
        let second = words.next().map(str::to_ascii_lowercase);
        Some(match first.as_str() {
            "/pair" if matches!(second.as_deref(), Some("approve" | "deny")) => {
                ChatCommand::PairDecide
            }
            "/pair" => ChatCommand::Pair,
            "/skills" | "/skill" => ChatCommand::Skills,
            "/role" if matches!(second.as_deref(), Some("accept" | "confirm")) => {
                ChatCommand::RoleDecide
            }
            "/share" | "/role" => ChatCommand::Role,
            "/memory" => ChatCommand::Memory,
            "/autokeep" => ChatCommand::AutoKeep,
            "/promote" => ChatCommand::Promote,
            "/forget" => ChatCommand::Forget,
            "/apikey" => ChatCommand::ApiKey,
            "/web" => ChatCommand::Web,
            _ if text.trim().trim_end_matches('?').trim().to_lowercase()
                == "what do you remember about me" =>
            {
                ChatCommand::Memory
            }
            _ => return None,
        })
    }

    /// What the command does, as the one authorization point knows it.
    pub fn action(self) -> Action {
        match self {
            ChatCommand::Pair => Action::Converse,
            ChatCommand::PairDecide => Action::ManagePeople,
            ChatCommand::Skills => Action::CurateSkills,
            ChatCommand::Role => Action::RoleWork,
            ChatCommand::RoleDecide => Action::CurateRoleMemory,
            ChatCommand::Memory
            | ChatCommand::AutoKeep
            | ChatCommand::Promote
            | ChatCommand::Forget => Action::OwnMemory,
            ChatCommand::ApiKey | ChatCommand::Web => Action::OwnKeys,
        }
    }

    /// What the speaker is told when the authorization point says no.
    fn refusal(self, denial: authz::Denial) -> String {
        match (self, denial) {
            (ChatCommand::PairDecide, authz::Denial::NotAdmin) => {
                "Only administrators can approve or deny pairing requests.".into()
            }
            (ChatCommand::Skills, authz::Denial::NotAdmin) => {
                memory::skill::SkillRefusal::NotAdmin.to_string()
            }
            (
                ChatCommand::Memory
                | ChatCommand::AutoKeep
                | ChatCommand::Promote
                | ChatCommand::Forget,
                authz::Denial::Unpaired | authz::Denial::System,
            ) => "I keep no memory for unpaired senders.".into(),
            (_, denial) => format!("Refused: {denial}. Nothing was changed."),
        }
    }
}

pub struct Commands {
    db: Db,
    pairing: Pairing,
    lifecycle: Arc<Lifecycle>,
    skills: Arc<Skills>,
    web: WebLinks,
}

/// Where `/web` links lead and how long they wait (`dashboard.public_url`,
/// `dashboard.sign_in_link_minutes`); no address, no links.
#[derive(Debug, Clone, Default)]
pub struct WebLinks {
    pub public_url: Option<String>,
    pub minutes: i64,
}

impl WebLinks {
    pub fn of(dashboard: &crate::config::DashboardConfig) -> WebLinks {
        WebLinks {
            public_url: dashboard
                .enabled
                .then(|| dashboard.public_url.clone())
                .flatten(),
            minutes: dashboard.sign_in_link_minutes,
        }
    }
}

impl Commands {
    pub fn new(db: Db, pairing: Pairing, lifecycle: Arc<Lifecycle>, skills: Arc<Skills>) -> Self {
        Commands {
            db,
            pairing,
            lifecycle,
            skills,
            web: WebLinks::default(),
        }
    }

    /// The same, sending `/web` links as `web` says.
    pub fn with_web_links(self, web: WebLinks) -> Self {
        Commands { web, ..self }
    }

    /// `/pair …`, `/memory`, "what do you remember about me", `/forget <id>`,
    /// `/apikey`, `/skills`, `/role …`: each asks the one authorization point
    /// (`memory::authz::authorize`) for its action before it runs.
    pub async fn run(&self, t: &Asker<'_>, text: &str) -> Result<Option<String>> {
        let words: Vec<&str> = text.split_whitespace().collect();
        let Some(command) = ChatCommand::parse(text) else {
            return Ok(None);
        };
        if let Err(denial) = authz::authorize(t.actor(), command.action()) {
            return Ok(Some(command.refusal(denial)));
        }
        let first = words
            .first()
            .map(|w| w.to_ascii_lowercase())
            .unwrap_or_default();
        let text = match command {
            ChatCommand::Pair | ChatCommand::PairDecide => {
                self.pair_command(t, &words[1..]).await?
            }
            ChatCommand::Skills => self.skill_command(t, &first, &words[1..]).await?,
            ChatCommand::Role | ChatCommand::RoleDecide => {
                let roles = crate::role_commands::RoleCommands { db: &self.db };
                roles.run(t, &first, &words[1..]).await?
            }
            ChatCommand::ApiKey => self.api_key(t).await?,
            ChatCommand::Web => self.web_link(t).await?,
            ChatCommand::Memory => self.memory(t).await?,
            ChatCommand::AutoKeep => self.autokeep(t, &words[1..]).await?,
            ChatCommand::Promote | ChatCommand::Forget => {
                let (user, id) = match t.sender_and_id(&first, &words) {
                    Ok(named) => named,
                    Err(refusal) => return Ok(Some(refusal)),
                };
                if command == ChatCommand::Promote {
                    match self.lifecycle.promote_own(t.org, user, id, t.now).await? {
                        Ok(()) => format!(
                            "Promoted: record {id} now applies with every agent of the organisation."
                        ),
                        Err(reason) => reason,
                    }
                } else {
                    match self.lifecycle.forget_own(t.org, id, user, t.now).await? {
                        Ok(()) => format!("Forgotten: record {id} is deleted."),
                        Err(refusal) => refusal,
                    }
                }
            }
        };
        Ok(Some(text))
    }

    /// `/memory`, "what do you remember about me": the speaker's own records,
    /// who looked at them and why, their delegations and the two promises.
    async fn memory(&self, t: &Asker<'_>) -> Result<String> {
        let Some(user) = t.principal.user_id() else {
            return Ok("I keep no memory for unpaired senders.".into());
        };
        if t.shared {
            return Ok("I'll list what I remember about you in a direct message, not here.".into());
        }
        let mut own: Vec<_> = Vec::new();
        for scope in [Scope::Personal, Scope::Person] {
            own.extend(
                self.db
                    .records()
                    .list(
                        t.org,
                        &RecordFilter {
                            scopes: vec![scope],
                            owner: Some(user.into()),
                            status: Some(Status::Active),
                            ..Default::default()
                        },
                    )
                    .await?,
            );
        }
        if own.is_empty() {
            let viewed = self.viewed_by(t.org, user).await?;
            let delegations = self.delegations(t.org, user).await?;
            return Ok(format!(
                "I don't remember anything about you yet.{viewed}{delegations}{}",
                promises()
            ));
        }
        let mut out = String::from("Here is what I remember about you:");
        for r in own {
            let tier = if r.scope == Scope::Person {
                " (everywhere in the org)"
            } else {
                ""
            };
            // What a delegate said while acting for someone says so.
            let behalf = r
                .on_behalf_of
                .as_deref()
                .map(|p| format!(" (said on behalf of {p})"))
                .unwrap_or_default();
            out.push_str(&format!(
                "\n- [{}] {}{tier}{behalf}",
                r.id,
                sanitize(&r.content)
            ));
        }
        out.push_str("\nSay /forget <id> to delete one, or /promote <id> to use a preference with every agent.");
        out.push_str(&self.viewed_by(t.org, user).await?);
        out.push_str(&self.delegations(t.org, user).await?);
        out.push_str(&promises());
        Ok(out)
    }

    /// `/apikey`: a key of the speaker's own, shown once and only in a
    /// direct message. A key acts as the person who made it; a delegated
    /// turn makes none (a delegate makes their delegated key through
    /// `POST /api/v1/me/keys`). Audited (`api_key.create`, by the person).
    async fn api_key(&self, t: &Asker<'_>) -> Result<String> {
        let Some(user) = t.principal.user_id() else {
            return Ok("API keys are for paired people. Send /pair to request access.".into());
        };
        if t.on_behalf_of.is_some() {
            return Ok("Refused: a key is made in your own name, not on someone's behalf. Nothing was made.".into());
        }
        if t.shared {
            return Ok(
                "API keys are given only in private: send /apikey to me in a direct message."
                    .into(),
            );
        }
        let new = self
            .pairing
            .create_api_key(t.org, user, user, t.now)
            .await?;
        if t.shown_once.set(new.key).is_err() {
            return Ok("Refused: one key a message. Nothing more was made.".into());
        }
        Ok(format!(
            "Your API key {}: {}\nIt acts as you on /api/v1 and is shown this once (I keep only its hash). Revoke it with DELETE /api/v1/me/keys/{}.",
            new.id,
            pairing::KEY_SHOWN_ONCE,
            new.id
        ))
    }

    /// `/web`: a link that signs the speaker in to the dashboard as
    /// themselves, once, within `dashboard.sign_in_link_minutes`; shown once
    /// and only in a direct message, and kept only as its hash
    /// (`Pairing::create_sign_in_link`, audited as `dashboard.link_issued`).
    async fn web_link(&self, t: &Asker<'_>) -> Result<String> {
        let Some(user) = t.principal.user_id() else {
            return Ok("Sign-in links are for paired people. Send /pair to request access.".into());
        };
        if t.on_behalf_of.is_some() {
            return Ok("Refused: a sign-in link is made in your own name, not on someone's behalf. Nothing was made.".into());
        }
        if t.shared {
            return Ok(
                "Sign-in links are given only in private: send /web to me in a direct message."
                    .into(),
            );
        }
        let Some(base) = &self.web.public_url else {
            return Ok("The dashboard's address is not configured (dashboard.public_url), so I can't send a sign-in link. Ask an administrator.".into());
        };
        let ttl_ms = self.web.minutes.saturating_mul(60_000);
        let token = self
            .pairing
            .create_sign_in_link(t.org, user, t.now, ttl_ms)
            .await?;
        let link = format!(
            "{}{}{token}",
            base.trim_end_matches('/'),
            pairing::SIGN_IN_LINK_PATH
        );
        if t.shown_once.set(link).is_err() {
            return Ok("Refused: one secret a message. Nothing more was made.".into());
        }
        Ok(format!(
            "Your sign-in link: {}\nIt signs you in to the dashboard as yourself, once, within {} minutes (I keep only its hash).",
            pairing::KEY_SHOWN_ONCE,
            self.web.minutes
        ))
    }

    /// `/autokeep on|off`: the person's own opt-in to having what they say
    /// kept without a "Remember this?" (the operator's setting is the
    /// ceiling). `/autokeep` alone says where it stands. Audited.
    async fn autokeep(&self, t: &Asker<'_>, args: &[&str]) -> Result<String> {
        let Some(user) = t.principal.user_id() else {
            return Ok("I keep no memory for unpaired senders.".into());
        };
        let on = match args.first().map(|a| a.to_ascii_lowercase()).as_deref() {
            Some("on") => true,
            Some("off") => false,
            None => {
                let on = self.db.identity().person_auto_keep(t.org, user).await?;
                return Ok(format!(
                    "Auto-keep is {} for you. Say /autokeep on or /autokeep off.",
                    if on { "on" } else { "off" }
                ));
            }
            Some(_) => return Ok("Usage: /autokeep on, /autokeep off".into()),
        };
        self.db
            .identity()
            .set_person_auto_keep(t.org, user, on, user, t.now)
            .await?;
        Ok(if on {
            "Auto-keep is on: what you tell me about yourself is kept without asking, with a receipt, where the operator allows it. /autokeep off to be asked again.".into()
        } else {
            "Auto-keep is off: I ask before keeping anything I learn from you.".into()
        })
    }

    /// Who acts for this person, and for whom they act: a delegation is
    /// never hidden from either side.
    async fn delegations(&self, org: &str, user: &str) -> Result<String> {
        let mut out = String::new();
        for g in self.pairing.delegations(org, Some(user)).await? {
            if g.principal == user {
                out.push_str(&format!("\n{} may act for you.", g.delegate));
            } else {
                out.push_str(&format!("\nYou may act for {}.", g.principal));
            }
        }
        Ok(out)
    }

    /// "Viewed by <name> on <date>: <reason>." for each time an admin opened
    /// this person's records or the archive of their direct conversation.
    async fn viewed_by(&self, org: &str, user: &str) -> Result<String> {
        let mut out = String::new();
        for v in crate::oversight::views(&self.db, org, user).await? {
            let name = match self.pairing.user(org, &v.who).await {
                Ok(u) => u.name,
                Err(_) => v.who.clone(),
            };
            let date = chrono::DateTime::from_timestamp_millis(v.at_ms)
                .map(|d| d.format("%Y-%m-%d").to_string())
                .unwrap_or_default();
            let how = v
                .acted_as
                .as_deref()
                .map(|how| format!(" {how}"))
                .unwrap_or_default();
            out.push_str(&format!("\n{} {name}{how} on {date}.", v.looked.told()));
            if let Some(reason) = v.reason {
                out.push_str(&format!(" Reason: {}", sanitize(&reason)));
            }
        }
        Ok(out)
    }

    /// `/skills` lists proposals and skills in force; `/skill show ID`,
    /// `/skill approve ID HASH`, `/skill reject ID`, `/skill rollback ID
    /// [TO]` (ID of a revision of the skill). Administrators only.
    async fn skill_command(&self, t: &Asker<'_>, first: &str, args: &[&str]) -> Result<String> {
        const USAGE: &str = "Usage: /skills, /skill show ID, /skill approve ID HASH, /skill reject ID, /skill rollback ID [TO]";
        if first == "/skills" {
            let all = self.db.skills().list(t.org, None).await?;
            let waiting: Vec<_> = all
                .iter()
                .filter(|r| r.status == memory::skill::SkillStatus::Proposed)
                .collect();
            let in_force: Vec<_> = all
                .iter()
                .filter(|r| r.status == memory::skill::SkillStatus::Active)
                .collect();
            let suspended: Vec<_> = all
                .iter()
                .filter(|r| r.status == memory::skill::SkillStatus::Suspended)
                .collect();
            if all.is_empty() {
                return Ok(
                    "No skills yet: corrections of my answers become proposals here.".into(),
                );
            }
            let mut out = String::new();
            for (title, list) in [
                ("Waiting for approval", &waiting),
                ("In force", &in_force),
                ("Suspended", &suspended),
            ] {
                if list.is_empty() {
                    continue;
                }
                out.push_str(&format!("{title}:\n"));
                for r in list.iter() {
                    out.push_str(&format!("- {}\n", review::line(r)));
                }
            }
            out.push_str("See one with /skill show ID.");
            return Ok(out);
        }
        let id = args
            .get(1)
            .and_then(|w| w.trim_start_matches('#').parse::<i64>().ok());
        let (Some(action), Some(id)) = (args.first().map(|a| a.to_ascii_lowercase()), id) else {
            return Ok(USAGE.into());
        };
        let shown =
            |r: std::result::Result<memory::skill::SkillRevision, memory::skill::SkillRefusal>,
             done: &str| match r {
                Ok(r) => format!("{done}: {}", review::line(&r)),
                Err(refusal) => refusal.to_string(),
            };
        let found = match self.db.skills().revision(t.org, id).await {
            Ok(r) => r,
            Err(StoreError::NotFound(_)) => return Ok(format!("There is no skill revision {id}.")),
            Err(e) => return Err(e.into()),
        };
        Ok(match action.as_str() {
            "show" => review::text(&review::review(&self.db, t.org, id).await?),
            "approve" => match args.get(2) {
                None => format!("Approve names the hash you reviewed: /skill approve {id} HASH (see /skill show {id})."),
                Some(hash) => shown(
                    self.skills.approve(t.org, t.principal, id, hash, t.now).await?,
                    "Approved, now in force",
                ),
            },
            "reject" => shown(
                self.skills.reject(t.org, t.principal, id, t.now).await?,
                "Rejected",
            ),
            "rollback" => {
                let to = args
                    .get(2)
                    .and_then(|w| w.trim_start_matches('#').parse::<i64>().ok());
                shown(
                    self.skills
                        .rollback(t.org, t.principal, found.skill_id, to, t.now)
                        .await?,
                    "Rolled back, now in force",
                )
            }
            _ => USAGE.into(),
        })
    }

    async fn pair_command(&self, t: &Asker<'_>, args: &[&str]) -> Result<String> {
        let sub = args.first().map(|s| s.to_ascii_lowercase());
        match sub.as_deref() {
            None => Ok(match t.principal {
                Principal::Human { role, .. } => format!("You're already paired as {role}."),
                _ => "Pairing needs a direct message from your own account.".into(),
            }),
            Some(action @ ("approve" | "deny")) => {
                let actor = t.principal.author_id().unwrap_or_default();
                let Some(code) = args.get(1) else {
                    return Ok(format!(
                        "Usage: /pair {action} CODE{}",
                        if action == "approve" { " [admin]" } else { "" }
                    ));
                };
                let role = match args.get(2).map(|r| r.to_ascii_lowercase()) {
                    None => Role::User,
                    Some(r) => match r.parse::<Role>() {
                        Ok(role) => role,
                        Err(e) => return Ok(e.to_string()),
                    },
                };
                let result = if action == "approve" {
                    self.pairing
                        .approve(t.org, code, role, &actor, t.now)
                        .await
                        .map(|u| {
                            format!(
                                "Approved: {} ({}) is paired as {}.",
                                u.name, u.user_id, u.role
                            )
                        })
                } else {
                    self.pairing
                        .deny(t.org, code, &actor, t.now)
                        .await
                        .map(|r| format!("Denied pairing request {} from {}.", r.code, r.stored_id))
                };
                match result {
                    Ok(text) => Ok(text),
                    Err(
                        e @ (PairingError::UnknownCode(_)
                        | PairingError::CodeExpired(_)
                        | PairingError::CodeNotPending { .. }),
                    ) => Ok(e.to_string()),
                    Err(e) => Err(e.into()),
                }
            }
            Some(_) => Ok("Usage: /pair, /pair approve CODE [admin], /pair deny CODE".into()),
        }
    }
}

/// Steward's two promises, each on its own line, as `/memory` ends.
pub fn promises() -> String {
    crate::oversight::PROMISES
        .iter()
        .map(|p| format!("\n{p}"))
        .collect()
}
