//! The turn loop: every inbound message, from every channel, runs
//! through [`TurnLoop::take`] (what became of it, an [`Outcome`]; chat
//! channels call [`TurnLoop::handle`], its replies) in the same order of steps. The loop is this
//! one type; what it delegates — commands, learning, the lifecycle and belief
//! revision — are services it holds, built by `crate::services::Services`
//! beside the services the loop does not use (consolidation, export, jobs).
//!
//! The ten steps, each in the file named for it; this file runs them in order
//! ([`TurnLoop::take_message`], [`TurnLoop::run`], [`TurnLoop::steps`]):
//!
//! 1. normalise the text and ids (here);
//! 2. a message seen before gets its stored reply (`redelivery`);
//! 3. rate and length limits (`limits`);
//! 4. the speaker's principal, from the pairing store only (`identity`);
//! 5. store the message and spend its id (`history`);
//! 6. commands, and answers to "Remember this?" (`consent`);
//! 7. `@policy:` / `@notes:` from administrators (`directives`), and 7b, a
//!    correction of the last answer as a skill's evidence (`corrections`);
//! 8. what the message carries for memory, decided by policy (`routing`);
//! 9. the answer from memory (`answer`), assembled by `reply`;
//! 10. store the answer and trim the history past its budget (`history`).
//!
//! Architecture Invariant: the speaker's authority is the `Principal` that
//! step 4 resolves from the pairing store. Nothing later re-reads it from the
//! message text, a display name, or an extractor's answer.
//!
//! Architecture Invariant: the loop reads time only from its injected
//! [`Clock`] and the messages themselves, so a replay is a function of its
//! transcript.

use crate::asker::Asker;
use crate::beliefs::Beliefs;
use crate::clock::Clock;
use crate::commands::Commands;
use crate::config::Config;
use crate::learning::Learning;
use crate::lifecycle::Lifecycle;
use crate::llm::Responder;
use crate::metrics::Metrics;
use crate::skills::Skills;
use adapters::{ConversationKind, Inbound, Reply, Stored, TurnFailed, TurnHandler};
use memory::skill::SkillRevision;
use memory::store::{ConversationView, NewMessage};
use memory::{Db, MessageAuthor, Principal, SystemPrincipal};
use pairing::Pairing;
use std::sync::Arc;

pub use crate::error::{Result, TurnError};
pub use memory::policy::PROMOTABLE_KINDS;

mod answer;
mod consent;
mod corrections;
mod directives;
mod history;
mod identity;
mod limits;
mod redelivery;
mod reply;
mod routing;

pub use answer::nothing_on;
pub use consent::{WaitingQuestion, LAPSED};
pub use directives::OPERATIONAL_NOT_ON_BEHALF;
use identity::Gate;
pub use identity::IDENTITY_UNAVAILABLE;
use limits::RateLimits;
pub use prompts::answers::Choice;
use redelivery::{seen_key, InFlight, Known, Opened};
use reply::ReplyParts;
use routing::Routed;
pub use routing::KEEPS_BOTH;

/// What became of one inbound message ([`TurnLoop::take`]). The API answers
/// with a status from it; a chat channel shows [`Outcome::into_replies`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Stored and answered.
    Answered(Vec<Reply>),
    /// A retry of a message already answered: the reply stored for it, with
    /// no second turn.
    Again(Vec<Reply>),
    /// Stored, with nothing to say (a group line that did not mention the agent).
    Stored,
    /// Not stored, and its platform id not spent, so it may be sent again:
    /// why, and what a chat channel shows for it (the one "slow down" of a
    /// burst, a length refusal, a pairing hint).
    Refused { why: Refused, replies: Vec<Reply> },
}

/// Why a message was not stored ([`Outcome::Refused`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// Past `[rate_limit]` (the sender's or the conversation's): the whole
    /// seconds until one more message is let through.
    RateLimited { retry_after: u64 },
    /// Longer than `turn.max_message_chars`.
    TooLong { max: usize },
    /// The sender is not paired (or direct messages are off): only pairing is done.
    NotPaired,
    /// The pairing store did not answer: nothing is done (fail closed).
    IdentityUnavailable,
    /// Its platform id was spent by a line this replica is not answering
    /// (another replica's turn still running), or whose line is not found.
    InProgress,
}

impl Outcome {
    /// What a chat channel shows: the replies, the refusal's words, or nothing.
    pub fn into_replies(self) -> Vec<Reply> {
        match self {
            Outcome::Answered(replies)
            | Outcome::Again(replies)
            | Outcome::Refused { replies, .. } => replies,
            Outcome::Stored => Vec::new(),
        }
    }

    fn refused(why: Refused) -> Outcome {
        Outcome::Refused {
            why,
            replies: Vec::new(),
        }
    }
}

/// Everything a turn knows once the speaker is resolved.
struct Turn<'a> {
    msg: &'a Inbound,
    principal: Principal,
    now: i64,
    /// Id of the stored inbound message (groups a turn's proposals).
    message_id: i64,
    /// The conversation as read with the turn's first read, before the
    /// message was stored; taken by the reply (else it reads it then).
    view: std::sync::Mutex<Option<ConversationView>>,
    /// The live history's size (this message included) when the reply read
    /// the conversation; the trim check adds the replies instead of reading again.
    live: std::sync::OnceLock<memory::store::LiveSize>,
    /// The skill an SOP run follows, whatever its text asks.
    procedure: Option<&'a SkillRevision>,
    /// A secret steward itself shows this once (`/apikey`): put into the
    /// reply as it is sent, after the screen, and never stored.
    shown_once: std::sync::OnceLock<String>,
    /// What the turn's first read told of the speaker (none for system runs).
    known: Option<Known>,
    /// What the turn writes besides its reply lines, stored with them by the
    /// group commit (audit entries, the skills it followed).
    writes: std::sync::Mutex<memory::store::TurnWrites>,
}

/// What [`TurnLoop::run`] takes beside the message and its principal.
struct RunParts<'a> {
    /// The message's id (namespaced, see [`seen_key`]), spent when it is stored.
    seen: Option<&'a str>,
    /// Its conversation as read before it was stored.
    view: Option<ConversationView>,
    procedure: Option<&'a SkillRevision>,
    /// The message's line when it was stored already (a retry of a message
    /// whose turn never finished): it is answered, not stored again.
    stored: Option<i64>,
    /// What the turn's first read told of the speaker.
    known: Option<Known>,
    /// Told once the message is stored (a platform acknowledges it then).
    on_stored: Option<Stored>,
}

impl Turn<'_> {
    fn org(&self) -> &str {
        &self.msg.org
    }
    fn agent(&self) -> &str {
        &self.msg.agent
    }
    fn shared(&self) -> bool {
        self.msg.kind == ConversationKind::Group
    }
    fn reply(&self, text: impl Into<String>) -> Reply {
        Reply {
            conversation: self.msg.conversation.clone(),
            text: text.into(),
            proposal: None,
        }
    }
    fn asker(&self) -> Asker<'_> {
        Asker {
            org: self.org(),
            principal: &self.principal,
            shared: self.shared(),
            now: self.now,
            on_behalf_of: self.msg.on_behalf_of.as_deref(),
            shown_once: &self.shown_once,
        }
    }
}

/// What a turn uses: the services [`crate::services::Services`] builds
/// beside the loop, and the loop's own configuration and clock.
pub struct TurnParts {
    pub db: Db,
    pub pairing: Pairing,
    pub cfg: Arc<Config>,
    pub clock: Arc<dyn Clock>,
    pub responder: Arc<dyn Responder>,
    pub beliefs: Arc<Beliefs>,
    pub learning: Arc<Learning>,
    pub lifecycle: Arc<Lifecycle>,
    pub commands: Commands,
    pub skills: Arc<Skills>,
    pub metrics: Metrics,
    /// External tools (`crate::mcp`), when servers are started.
    pub mcp: Option<Arc<crate::mcp::Mcp>>,
}

pub struct TurnLoop {
    /// The services and configuration it was built on.
    parts: TurnParts,
    limits: RateLimits,
    in_flight: InFlight,
}

fn strip_ci<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    let head = s.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| s[prefix.len()..].trim())
}

/// A line of `msg`'s conversation by `author`, with no sender (set one for a person's line).
fn line_of<'m>(msg: &'m Inbound, author: MessageAuthor, text: &'m str, now: i64) -> NewMessage<'m> {
    NewMessage {
        org: &msg.org,
        agent: &msg.agent,
        channel: &msg.channel,
        conversation: &msg.conversation,
        conversation_kind: msg.kind.as_str(),
        author: author.as_str(),
        sender: None,
        sender_role: None,
        text,
        said_at: now,
    }
}

#[async_trait::async_trait]
impl TurnHandler for TurnLoop {
    async fn handle(&self, msg: Inbound) -> std::result::Result<Vec<Reply>, TurnFailed> {
        TurnLoop::handle(self, &msg).await.map_err(|e| {
            tracing::error!(error = %e, "turn failed");
            TurnFailed(e.to_string())
        })
    }

    async fn handle_new(&self, msg: Inbound) -> std::result::Result<Vec<Reply>, TurnFailed> {
        self.handle_new_acked(msg, Stored::pair().0).await
    }

    async fn handle_new_acked(
        &self,
        msg: Inbound,
        stored: Stored,
    ) -> std::result::Result<Vec<Reply>, TurnFailed> {
        match TurnLoop::take_acked(self, &msg, Some(stored)).await {
            Ok(Outcome::Again(_)) => Ok(Vec::new()),
            Ok(outcome) => Ok(outcome.into_replies()),
            Err(e) => {
                tracing::error!(error = %e, "turn failed");
                Err(TurnFailed(e.to_string()))
            }
        }
    }
}

impl TurnLoop {
    /// The loop on services built by [`crate::services::Services`].
    pub fn new(parts: TurnParts) -> Self {
        TurnLoop {
            limits: RateLimits::new(&parts.cfg),
            in_flight: InFlight::default(),
            parts,
        }
    }

    /// Run one inbound message through the loop: what became of it. Its
    /// latency is counted by channel.
    pub async fn take(&self, msg: &Inbound) -> Result<Outcome> {
        self.take_acked(msg, None).await
    }

    /// [`TurnLoop::take`], telling `on_stored` once the message is stored
    /// (step 5), or dropping it when the turn ends without storing it.
    async fn take_acked(&self, msg: &Inbound, on_stored: Option<Stored>) -> Result<Outcome> {
        let started = std::time::Instant::now();
        let out = Box::pin(self.take_message(msg, on_stored)).await;
        self.parts.metrics.turn(&msg.channel, started.elapsed());
        out
    }

    /// [`TurnLoop::take`] as a chat channel shows it: the replies (none for
    /// a refused message past the burst's one "slow down").
    pub async fn handle(&self, msg: &Inbound) -> Result<Vec<Reply>> {
        self.take(msg).await.map(Outcome::into_replies)
    }

    async fn take_message(&self, msg: &Inbound, on_stored: Option<Stored>) -> Result<Outcome> {
        // 1. Text and ids as every database stores them alike (no NUL).
        let normalised = msg.normalised();
        let msg = normalised.as_ref().unwrap_or(msg);
        let now = msg.at.timestamp_millis();
        // 2. Platforms redeliver and clients retry: a message id seen before
        // is answered with the reply stored for it, or, when its turn never
        // finished (a crash came between), its turn runs now. The id is spent
        // only when the message is stored (step 5), so a message refused
        // below (rate limit, length) can be sent again with the same id.
        // A retry arriving while its turn runs here waits for that turn.
        // One read answers this step and step 4's lookup of the speaker.
        // The same read brings the conversation as the reply will read it
        // (the message is not stored yet, so every live line is before it).
        let seen = seen_key(msg);
        let _entered = match &seen {
            Some(key) => Some(self.in_flight.enter(key).await),
            None => None,
        };
        let Opened {
            known,
            view,
            stored,
            first_read,
        } = match self.open(msg, seen.as_deref()).await? {
            Ok(opened) => opened,
            Err(again) => return Ok(again),
        };
        // 3. Rate limits, with one polite warning per burst; the length limit.
        if let Some(refused) = self.limit(msg, now, stored.is_some()) {
            return Ok(refused);
        }
        // 4. The speaker's principal, from the pairing store only.
        let principal = match self.resolve(msg, known, now).await {
            Ok(Gate::Let(p)) => p,
            Ok(Gate::Stop(replies)) => {
                return Ok(Outcome::Refused {
                    why: Refused::NotPaired,
                    replies,
                })
            }
            Err(e) => {
                // Fail closed: a pairing-store error denies the message.
                tracing::error!(error = %e, "pairing store unavailable; message denied");
                return Ok(Outcome::Refused {
                    why: Refused::IdentityUnavailable,
                    replies: vec![Reply {
                        conversation: msg.conversation.clone(),
                        text: IDENTITY_UNAVAILABLE.into(),
                        proposal: None,
                    }],
                });
            }
        };
        // Every model call of the turn draws on one token budget. The turn's
        // steps are one large future: boxed, the budget's scope and every
        // caller above move a pointer, not the steps' state (docs/benchmarks.md,
        // "The sixth sitting").
        crate::llm::budget::per_turn(
            self.parts.cfg.llm.turn_token_budget,
            Box::pin(self.run(
                msg,
                principal,
                now,
                RunParts {
                    seen: seen.as_deref(),
                    view,
                    procedure: None,
                    stored,
                    known: first_read,
                    on_stored,
                },
            )),
        )
        .await
    }

    /// A run by a system principal (cron, SOP, webhook, delegated).
    pub async fn system_turn(&self, msg: &Inbound, who: SystemPrincipal) -> Result<Vec<Reply>> {
        self.system_run(msg, who, None).await
    }

    /// A run by a system principal that follows `procedure`, an approved
    /// skill, as a standing procedure (an SOP run), whatever the text asks.
    pub async fn system_run(
        &self,
        msg: &Inbound,
        who: SystemPrincipal,
        procedure: Option<&SkillRevision>,
    ) -> Result<Vec<Reply>> {
        let now = msg.at.timestamp_millis();
        let parts = RunParts {
            seen: None,
            view: None,
            procedure,
            stored: None,
            known: None,
            on_stored: None,
        };
        crate::llm::budget::per_turn(
            self.parts.cfg.llm.turn_token_budget,
            self.run(msg, Principal::System(who), now, parts),
        )
        .await
        .map(Outcome::into_replies)
    }

    /// Steps 5–10 for a message whose id (namespaced, see [`seen_key`]) is
    /// `seen`; `view`, its conversation as read before it was stored.
    async fn run(
        &self,
        msg: &Inbound,
        principal: Principal,
        now: i64,
        parts: RunParts<'_>,
    ) -> Result<Outcome> {
        let RunParts {
            seen,
            view,
            procedure,
            stored,
            known,
            on_stored,
        } = parts;
        // 5. Store with the sender id and the role it was sent with, and spend
        // its id in the same transaction (a racing redelivery stores nothing).
        let message_id = match stored {
            Some(id) => id,
            None => match self.store_message(msg, &principal, now, seen).await? {
                Some(id) => id,
                // Another replica stored it first and is answering it.
                None => return Ok(Outcome::refused(Refused::InProgress)),
            },
        };
        if let Some(stored) = on_stored {
            stored.done();
        }
        if msg.kind == ConversationKind::Group
            && self.parts.cfg.turn.require_mention
            && !msg.mentioned
            && msg.answer.is_none()
        {
            return Ok(Outcome::Stored);
        }
        let turn = Turn {
            msg,
            principal,
            now,
            message_id,
            view: std::sync::Mutex::new(view),
            live: std::sync::OnceLock::new(),
            procedure,
            shown_once: std::sync::OnceLock::new(),
            known,
            writes: Default::default(),
        };
        let mut replies = self.steps(&turn).await?;
        self.first_contact(&turn, &mut replies).await?;
        // 10. Store the answer, then trim the history past its budget.
        self.store_answer(&turn, &mut replies).await?;
        self.trim(&turn, &replies).await;
        Ok(if replies.is_empty() {
            Outcome::Stored
        } else {
            Outcome::Answered(replies)
        })
    }

    /// Steps 6–9 for a resolved speaker.
    async fn steps(&self, t: &Turn<'_>) -> Result<Vec<Reply>> {
        let text = t.msg.text.trim();
        // 6. Commands and answers to "Remember this?".
        if let Some(reply) = self.command_or_answer(t, text).await? {
            return Ok(vec![reply]);
        }
        // 7. @policy: sets org-wide policy memory, @notes: teaches the agent; admins only.
        if let Some(reply) = self.directive(t, text).await? {
            return Ok(vec![reply]);
        }
        // 7b. A correction of the previous answer is a skill's evidence, not memory.
        if let Some(reply) = self.learn_skill(t, text).await? {
            return Ok(vec![reply]);
        }
        // 8. Memory routing. Unpaired lines are nobody's; webhook payloads are untrusted.
        let mut parts = ReplyParts::default();
        match self.read_for_memory(t, text, &mut parts).await? {
            Routed::Answer => {}
            Routed::Render => return Ok(vec![self.render(t, parts)]),
            Routed::Reply(reply) => return Ok(vec![reply]),
        }
        // 9. Answer from memory.
        let answer = self.answer(t, text, &mut parts).await?;
        parts.answer = Some(answer);
        Ok(vec![self.render(t, parts)])
    }
}
