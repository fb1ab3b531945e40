//! Step 4: the speaker's principal, from the pairing store only; and what steward promises a person it meets.

use super::redelivery::{APPROVED, PROMISED};
use super::{Result, Turn, TurnLoop};
use crate::config::{DmPolicy, GroupPolicy};
use adapters::{ConversationKind, Inbound, Reply};
use memory::Principal;
use pairing::PairOutcome;

/// The answer when the pairing store cannot say who the sender is: nothing is
/// done or stored (the load benchmark counts it as not acknowledged).
pub const IDENTITY_UNAVAILABLE: &str = "I can't check who you are right now, so I won't act on this message. Please try again shortly.";

pub(super) const PAIR_HINT: &str =
    "Hi! I don't know you yet. Send /pair to request access; an administrator will approve it.";

/// The answer to `/pair` in a group thread.
pub(super) const PAIR_IN_PRIVATE: &str =
    "Pairing codes are given only in private: send /pair to me in a direct message.";

pub(super) enum Gate {
    Let(Principal),
    Stop(Vec<Reply>),
}

impl TurnLoop {
    /// Step 4, from what the pairing store said of the sender (`known`).
    pub(super) async fn resolve(
        &self,
        msg: &Inbound,
        known: std::result::Result<Option<pairing::User>, pairing::PairingError>,
        now: i64,
    ) -> Result<Gate> {
        let Some(stored) = &msg.sender else {
            return Ok(Gate::Let(Principal::Unpaired));
        };
        if let Some(u) = known? {
            let own = Principal::Human {
                user_id: u.user_id,
                name: u.name,
                role: u.role,
            };
            // A delegated turn runs as a `user`, whatever the delegate's role:
            // no check after this one can find an administrator in it.
            let actor = memory::authz::Actor {
                principal: &own,
                on_behalf_of: msg.on_behalf_of.as_deref(),
            };
            return Ok(Gate::Let(actor.principal()));
        }
        let reply = |text: String| {
            Gate::Stop(vec![Reply {
                conversation: msg.conversation.clone(),
                text,
                proposal: None,
            }])
        };
        let wants_pair = {
            let t = msg.text.trim().to_ascii_lowercase();
            t == "/pair" || t == "pair"
        };
        // `/pair` works under every DM policy that reads DMs (`pairing`,
        // `allowlist`, `open`): the policy says whom an unknown sender is
        // answered as, not whether they may become known. A code is
        // given only in private: a thread would show it to everyone.
        let pairs_in_private = self.parts.cfg.pairing.dm_policy != DmPolicy::Disabled;
        if wants_pair && pairs_in_private && msg.kind == ConversationKind::Group {
            return Ok(reply(PAIR_IN_PRIVATE.into()));
        }
        if wants_pair && pairs_in_private {
            return Ok(match self.parts.pairing.request(&msg.org, &msg.channel, stored, &msg.sender_name, now).await? {
                PairOutcome::Code { code, .. } => reply(format!(
                    "Your pairing code is {code}. Give it to an administrator; it is valid for {} minutes.",
                    self.parts.cfg.pairing.code_ttl_minutes
                )),
                PairOutcome::TooManyPending => reply(
                    "There are too many pairing requests waiting right now. Please ask an administrator and try again later."
                        .into(),
                ),
            });
        }
        let allowed = self
            .parts
            .cfg
            .pairing
            .allow_from
            .iter()
            .any(|a| a == stored);
        let let_in = match msg.kind {
            ConversationKind::Direct => match self.parts.cfg.pairing.dm_policy {
                DmPolicy::Open => true,
                DmPolicy::Allowlist => allowed,
                DmPolicy::Disabled => return Ok(Gate::Stop(Vec::new())),
                DmPolicy::Pairing => false,
            },
            ConversationKind::Group => match self.parts.cfg.pairing.group_policy {
                GroupPolicy::Open => true,
                GroupPolicy::Allowlist => allowed,
                GroupPolicy::Paired => false,
            },
        };
        if let_in {
            return Ok(Gate::Let(Principal::Unpaired));
        }
        if msg.kind == ConversationKind::Direct
            && self
                .parts
                .pairing
                .should_hint(&msg.org, stored, now)
                .await?
        {
            return Ok(reply(PAIR_HINT.into()));
        }
        Ok(Gate::Stop(Vec::new()))
    }

    /// A person's first turn after they were approved with `/pair` ends with
    /// steward's two promises (`oversight::PROMISES`), once: the promise is
    /// audited (`oversight.promised`) and not repeated in later replies.
    pub(super) async fn first_contact(&self, t: &Turn<'_>, replies: &mut [Reply]) -> Result<()> {
        let Some(user) = t.principal.user_id() else {
            return Ok(());
        };
        let Some(first) = replies.first_mut() else {
            return Ok(());
        };
        if t.msg.on_behalf_of.is_some() {
            return Ok(());
        }
        // The turn's first read said whether they are owed (a system run's
        // or a turn without it reads the audit log here).
        let owed = match &t.known {
            Some(k) => k.promises_owed,
            None => {
                let audit = self.parts.db.audit();
                !audit.about(t.org(), APPROVED, user).await?.is_empty()
                    && audit.about(t.org(), PROMISED, user).await?.is_empty()
            }
        };
        if !owed {
            return Ok(());
        }
        if !first.text.contains(crate::oversight::KEEP_PROMISE) {
            first.text.push_str(&crate::commands::promises());
        }
        // Audited in the transaction that stores the reply.
        t.writes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .audit
            .push(memory::store::AuditRow {
                org: t.org().to_string(),
                actor: user.to_string(),
                action: PROMISED.into(),
                target: user.to_string(),
                detail: memory::admin_text::AdminText::fixed("first contact"),
                at: t.now,
            });
        Ok(())
    }
}
