//! The turn loop: every inbound message, from every channel, runs
//! through [`TurnLoop::take`] (what became of it, an [`Outcome`]; chat
//! channels call [`TurnLoop::handle`], its replies) in the same order of steps. The loop is this
//! one type; what it delegates — commands, learning, the lifecycle and belief
//! revision — are services it holds, built by `crate::services::Services`
//! beside the services the loop does not use (consolidation, export, jobs).
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
use crate::config::{Config, DmPolicy, GroupPolicy, HistoryFor};
use crate::context;
use crate::learning::{receipt, Learning, ProposalPlace};
use crate::lifecycle::Lifecycle;
use crate::llm::{offline, LlmError, ReplyContext, Responder};
use crate::metrics::{Duplicate, Metrics, PolicyOutcome, Refusal};
use crate::skills::{CorrectionAt, Learned, Skills};
use crate::tools::TurnTools;
use adapters::{ConversationKind, Inbound, Reply, TurnFailed, TurnHandler};
use dashmap::DashMap;
use governor::clock::Clock as LimiterClock;
use governor::middleware::NoOpMiddleware;
use governor::nanos::Nanos;
use governor::state::keyed::DashMapStateStore;
use governor::{Quota, RateLimiter};
use memory::authz::Action;
use memory::policy::{self, Consent, Decision, Directive, DropReason, ExtractionRule, Origin};
use memory::sanitize::sanitize;
use memory::skill::SkillRevision;
use memory::store::{ConversationView, NewMessage, Opening, RetrievalScope, Retrieved, ViewOf};
use memory::terms::terms;
use memory::write::{Activation, Dedupe, Written};
use memory::{
    Candidate, Cause, Db, ItemChannel, MessageAuthor, NewRecord, Principal, Status, SystemPrincipal,
};
use pairing::{PairOutcome, Pairing};
use prompts::answers::Choice;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

pub use crate::error::{Result, TurnError};
pub use memory::policy::PROMOTABLE_KINDS;

const SLOW_DOWN: &str =
    "You're sending messages faster than I can answer. Please slow down for a moment.";
/// The answer when the pairing store cannot say who the sender is: nothing is
/// done or stored (the load benchmark counts it as not acknowledged).
pub const IDENTITY_UNAVAILABLE: &str = "I can't check who you are right now, so I won't act on this message. Please try again shortly.";
/// Told to a delegate who writes `@notes:` or `@policy:` while acting for someone.
pub const OPERATIONAL_NOT_ON_BEHALF: &str =
    "Operational notes and org policy are written in your own name, not on someone's behalf: nothing was saved.";
/// A yes or no to a "Remember this?" the speaker passed over.
pub const LAPSED: &str = "That question lapsed when you wrote again, so nothing was saved. Tell me again if you want me to remember it.";
/// The answer in place of a model's about another person that no memory it
/// was shown supports (`TurnLoop::unknown_person`).
pub fn nothing_on(person: &str) -> String {
    format!("I don't have anything in memory about {person} that I may share.")
}
const PAIR_HINT: &str =
    "Hi! I don't know you yet. Send /pair to request access; an administrator will approve it.";

/// What a conflict question says of the third answer; the dashboard offers
/// it as a button beside yes and no.
pub const KEEPS_BOTH: &str = "both keeps both";

/// How the audit names what a proposal was asked as conflicting with
/// (`memory.conflict`, detail "with:3,5").
const CONFLICTS_WITH: &str = "with:";

/// "Remember this?" for a record that conflicts with ones the person keeps:
/// both values and the three answers (docs/memory.md, "Contradictions are
/// asked").
fn conflict_question(content: &str, conflicts: &[memory::MemoryRecord]) -> String {
    let kept: Vec<String> = conflicts
        .iter()
        .map(|c| format!("#{}: “{}”", c.id, sanitize(&c.content)))
        .collect();
    format!(
        "{content} (it conflicts with {}: yes replaces it, {KEEPS_BOTH}, no keeps only what you have)",
        kept.join(", ")
    )
}

/// The receipt's line for records a yes replaced.
fn replaced(conflicts: &[memory::MemoryRecord]) -> String {
    let ids: Vec<String> = conflicts.iter().map(|c| format!("#{}", c.id)).collect();
    format!("It replaces {}.", ids.join(", "))
}

/// The receipt's line for records kept beside the new one.
fn beside(conflicts: &[memory::MemoryRecord]) -> String {
    let ids: Vec<String> = conflicts.iter().map(|c| format!("#{}", c.id)).collect();
    format!("Kept beside {}.", ids.join(", "))
}

/// The rate limiters' clock: the newest message time seen. Platforms stamp
/// messages themselves, so replayed transcripts are limited as they happened.
#[derive(Clone, Default)]
struct MessageClock(Arc<AtomicU64>);

impl LimiterClock for MessageClock {
    type Instant = Nanos;
    fn now(&self) -> Nanos {
        Nanos::from(self.0.load(Ordering::Relaxed))
    }
}

impl MessageClock {
    /// Move to a message's time, never past `now_ms` (the loop's clock) plus
    /// skew: one future-stamped message must not freeze the limiters for
    /// everyone until that time arrives. Never backwards.
    fn observe(&self, at_ms: i64, now_ms: i64) {
        let cap = now_ms.saturating_add(MAX_CLOCK_SKEW_MS);
        let nanos = u64::try_from(at_ms.min(cap))
            .unwrap_or(0)
            .saturating_mul(1_000_000)
            .min(MAX_LIMITER_NANOS);
        self.0.fetch_max(nanos, Ordering::Relaxed);
    }
}

/// The answer to `/pair` in a group thread.
const PAIR_IN_PRIVATE: &str =
    "Pairing codes are given only in private: send /pair to me in a direct message.";

/// The limiters' clock stops here (about the year 2116): governor adds
/// periods to it, which must not overflow for a transcript dated far ahead.
const MAX_LIMITER_NANOS: u64 = u64::MAX / 4;

/// How far ahead of this machine's clock a platform's message time is believed.
const MAX_CLOCK_SKEW_MS: i64 = 5_000;

type Limiter = RateLimiter<String, DashMapStateStore<String>, MessageClock, NoOpMiddleware<Nanos>>;

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

/// The platform ids whose turns run on this replica: a retry that arrives
/// while its message's turn runs waits for that turn, then gets its stored
/// reply (it is not a second turn, nor a refusal).
#[derive(Default)]
struct InFlight(DashMap<String, Arc<tokio::sync::Mutex<()>>>);

/// A turn's hold on its platform id ([`InFlight::enter`]).
struct Entered<'a> {
    map: &'a InFlight,
    key: String,
    _held: tokio::sync::OwnedMutexGuard<()>,
}

impl InFlight {
    /// Wait until no other turn of this replica holds `key`, and hold it.
    async fn enter(&self, key: &str) -> Entered<'_> {
        let lock = self.0.entry(key.to_string()).or_default().clone();
        Entered {
            map: self,
            key: key.to_string(),
            _held: lock.lock_owned().await,
        }
    }
}

impl Drop for Entered<'_> {
    fn drop(&mut self) {
        // The last holder removes the entry: the map holds one reference and
        // this guard the other; a waiter holds a third.
        self.map
            .0
            .remove_if(&self.key, |_, lock| Arc::strong_count(lock) <= 2);
    }
}

/// Per-sender and per-conversation limits. In-process: each replica limits its own traffic.
struct RateLimits {
    clock: MessageClock,
    sender: Limiter,
    conversation: Limiter,
    warned: DashMap<String, ()>,
}

fn quota(per_minute: u32, burst: u32) -> Quota {
    let per = NonZeroU32::new(per_minute).unwrap_or(NonZeroU32::MIN);
    let burst = NonZeroU32::new(burst).unwrap_or(NonZeroU32::MIN);
    Quota::per_minute(per).allow_burst(burst)
}

impl RateLimits {
    fn new(cfg: &Config) -> Self {
        let rl = &cfg.rate_limit;
        let clock = MessageClock::default();
        RateLimits {
            sender: RateLimiter::dashmap_with_clock(
                quota(rl.per_sender_per_minute, rl.sender_burst),
                clock.clone(),
            ),
            conversation: RateLimiter::dashmap_with_clock(
                quota(rl.per_conversation_per_minute, rl.conversation_burst),
                clock.clone(),
            ),
            clock,
            warned: DashMap::new(),
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
}

/// What a turn's first read (`Conversations::opening`) told of the speaker
/// besides who they are, so the turn reads none of it again: the work
/// roles they hold, the agent's skills generation, and whether steward's
/// promises are owed to them (approved with `/pair`, not yet promised).
#[derive(Debug, Clone, Default)]
struct Known {
    roles: Vec<String>,
    skill_generation: Option<i64>,
    promises_owed: bool,
}

/// The audit actions a turn's first read asks about its speaker: approved
/// through `/pair`, and promised (`TurnLoop::first_contact`).
const APPROVED: &str = "pairing.approve";
const PROMISED: &str = "oversight.promised";

impl Known {
    fn of(o: &memory::store::Opened) -> Known {
        let audited = |a: &str| o.audited.iter().any(|x| x == a);
        Known {
            roles: o.roles.clone(),
            skill_generation: o.skill_generation,
            promises_owed: audited(APPROVED) && !audited(PROMISED),
        }
    }
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

/// The parts of a reply, assembled in a fixed order: answer, notes, receipts, question.
#[derive(Default)]
struct ReplyParts {
    answer: Option<String>,
    notes: Vec<String>,
    receipts: Vec<String>,
    question: Vec<String>,
    batch: Option<i64>,
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

/// The replies stored for a message ([`memory::store::Answer`]), as its turn
/// gave them: one asking "Remember this?" carries the batch it asks about,
/// which is the message's own id.
fn stored_replies(a: memory::store::Answer) -> Vec<Reply> {
    a.replies
        .into_iter()
        .map(|m| Reply {
            proposal: m
                .text
                .lines()
                .any(|l| l.starts_with("Remember this? "))
                .then_some(a.message),
            conversation: m.conversation,
            // One stored before replies were screened shows no credential either.
            text: memory::credentials::masked(&m.text).into_owned(),
        })
        .collect()
}

/// The id a redelivery of `msg` is known by: the platform's message id within
/// its sender's own namespace, so one API user's `order-1` never drops another's.
fn seen_key(msg: &Inbound) -> Option<String> {
    let id = msg.platform_id.as_deref()?;
    Some(format!("{}/{id}", msg.sender.as_deref().unwrap_or("")))
}

/// Whether `text` reads as a follow-up to the line before it: it opens like
/// one ("and …", "what about …") or is too short to stand alone.
fn follows_up(text: &str) -> bool {
    let t = text.trim().to_lowercase();
    const OPENINGS: &[&str] = &[
        "and ",
        "and?",
        "also ",
        "what about",
        "how about",
        "same for",
        "then ",
        "again",
    ];
    // A pronoun points back at the line before ("which port does it use?").
    const BACK: &[&str] = &[
        "it", "its", "they", "them", "those", "he", "she", "him", "her",
    ];
    let points_back = t
        .split(|c: char| !c.is_alphanumeric())
        .any(|w| BACK.contains(&w));
    OPENINGS.iter().any(|o| t.starts_with(o)) || t.split_whitespace().count() <= 2 || points_back
}

/// Whether `text` asks what the speaker said before ("What did I ask you to
/// remind me about?", "what have I told you about my team?"): only the
/// conversation's lines or memory of their own can answer it.
fn asks_what_they_said(text: &str) -> bool {
    const SAID: &[&str] = &[
        "ask",
        "asked",
        "tell",
        "told",
        "say",
        "said",
        "mention",
        "mentioned",
        "request",
        "requested",
    ];
    let t = text.to_lowercase();
    let words: Vec<&str> = t
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    words
        .windows(3)
        .any(|w| matches!(w[0], "did" | "have" | "had") && w[1] == "i" && SAID.contains(&w[2]))
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
        let started = std::time::Instant::now();
        let out = self.take_message(msg).await;
        self.parts.metrics.turn(&msg.channel, started.elapsed());
        out
    }

    /// [`TurnLoop::take`] as a chat channel shows it: the replies (none for
    /// a refused message past the burst's one "slow down").
    pub async fn handle(&self, msg: &Inbound) -> Result<Vec<Reply>> {
        self.take(msg).await.map(Outcome::into_replies)
    }

    async fn take_message(&self, msg: &Inbound) -> Result<Outcome> {
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
        let opened = self
            .parts
            .pairing
            .open_turn(&Opening {
                org: &msg.org,
                channel: &msg.channel,
                platform_id: seen.as_deref(),
                stored_id: msg.sender.as_deref(),
                view: Some(self.view_of(msg)),
                audited: &[APPROVED, PROMISED],
            })
            .await;
        let first_read = opened.as_ref().ok().map(Known::of);
        let (known, view, stored) = match opened {
            Ok(o) if o.seen => {
                self.parts.metrics.duplicate(Duplicate::Message);
                let spent = seen.as_deref().unwrap_or_default();
                match self
                    .parts
                    .db
                    .conversations()
                    .answer_of(&msg.org, &msg.channel, spent)
                    .await?
                {
                    Some(a) if !a.replies.is_empty() => {
                        return Ok(Outcome::Again(stored_replies(a)))
                    }
                    // Stored, never answered: its turn runs (and is limited) now.
                    Some(a) => (Ok(o.user), None, Some(a.message)),
                    None => return Ok(Outcome::refused(Refused::InProgress)),
                }
            }
            Ok(o) => (Ok(o.user), o.view, None),
            // Denied at step 4 (fail closed), after the refusals below.
            Err(e) => (Err(e), None, None),
        };
        // 3. Rate limits, with one polite warning per burst.
        let sender_key = format!(
            "{}|{}",
            msg.org,
            msg.sender.as_deref().unwrap_or(&msg.conversation)
        );
        self.limits.clock.observe(now, self.parts.clock.now_ms());
        let conv_key = format!("{}|{}|{}", msg.org, msg.channel, msg.conversation);
        let limited = self
            .limits
            .sender
            .check_key(&sender_key)
            .err()
            .or_else(|| self.limits.conversation.check_key(&conv_key).err());
        if let Some(not_until) = limited {
            self.parts.metrics.refused(Refusal::RateLimit);
            let wait = not_until.wait_time_from(self.limits.clock.now());
            let why = Refused::RateLimited {
                retry_after: (wait.as_secs() + u64::from(wait.subsec_nanos() > 0)).max(1),
            };
            // A chat channel is told once a burst; the API answers each 429.
            let replies = if self.limits.warned.insert(sender_key, ()).is_none() {
                vec![Reply {
                    conversation: msg.conversation.clone(),
                    text: SLOW_DOWN.into(),
                    proposal: None,
                }]
            } else {
                Vec::new()
            };
            return Ok(Outcome::Refused { why, replies });
        }
        self.limits.warned.remove(&sender_key);
        let max = self.parts.cfg.turn.max_message_chars;
        if stored.is_none() && msg.text.chars().count() > max {
            self.parts.metrics.refused(Refusal::TooLong);
            return Ok(Outcome::Refused {
                why: Refused::TooLong { max },
                replies: vec![Reply {
                    conversation: msg.conversation.clone(),
                    text: format!(
                        "That message is too long for me ({max} characters at most). Nothing was stored."
                    ),
                    proposal: None,
                }],
            });
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
        // Every model call of the turn draws on one token budget.
        crate::llm::budget::per_turn(
            self.parts.cfg.llm.turn_token_budget,
            self.run(
                msg,
                principal,
                now,
                RunParts {
                    seen: seen.as_deref(),
                    view,
                    procedure: None,
                    stored,
                    known: first_read,
                },
            ),
        )
        .await
    }

    /// Which part of `msg`'s conversation a reply reads: the live lines of
    /// the window (none when `turn.history_chars` is 0) and three summaries.
    fn view_of<'m>(&self, msg: &'m Inbound) -> ViewOf<'m> {
        let (lines, chars) = (
            self.parts.cfg.turn.history_messages,
            self.parts.cfg.turn.history_chars,
        );
        ViewOf {
            agent: &msg.agent,
            conversation: &msg.conversation,
            lines: if chars == 0 {
                0
            } else {
                i64::try_from(lines).unwrap_or(i64::MAX)
            },
            summaries: 3,
        }
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
        } = parts;
        // 5. Store with the sender id and the role it was sent with, and spend
        // its id in the same transaction (a racing redelivery stores nothing).
        let (sender, role) = match &principal {
            Principal::Human { user_id, role, .. } => (Some(user_id.as_str()), Some(role.as_str())),
            Principal::System(s) => (Some(s.as_str()), Some(s.as_str())),
            Principal::Unpaired => (None, None),
        };
        let author = if matches!(principal, Principal::System(_)) {
            MessageAuthor::System
        } else {
            MessageAuthor::Person
        };
        let line = NewMessage {
            sender,
            sender_role: role,
            ..line_of(msg, author, &msg.text, now)
        };
        let message_id = match stored {
            Some(id) => id,
            None => match self
                .parts
                .db
                .conversations()
                .insert_message_once(&line, seen)
                .await?
            {
                Some(id) => id,
                // Another replica stored it first and is answering it.
                None => {
                    self.parts.metrics.duplicate(Duplicate::Message);
                    return Ok(Outcome::refused(Refused::InProgress));
                }
            },
        };
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
        // No reply repeats a credential, whatever a model said or a record
        // kept before the screen knew its format.
        for r in &mut replies {
            if let std::borrow::Cow::Owned(m) = memory::credentials::masked(&r.text) {
                r.text = m;
            }
        }
        // The reply lines name the message they answer, and are stored in
        // one transaction: a retry of its id gets them again. A key shown
        // once (`/apikey`) is a placeholder here, put in below.
        let lines: Vec<NewMessage<'_>> = replies
            .iter()
            .map(|r| line_of(msg, MessageAuthor::Agent, &r.text, now))
            .collect();
        let writes = std::mem::take(&mut *turn.writes.lock().unwrap_or_else(|e| e.into_inner()));
        self.parts
            .db
            .conversations()
            .insert_answer(&lines, message_id, writes)
            .await?;
        // What steward shows once reaches the person, and only them.
        if let Some(secret) = turn.shown_once.get() {
            for r in &mut replies {
                r.text = r.text.replace(pairing::KEY_SHOWN_ONCE, secret);
            }
        }
        // 10. Trim when the history passes its budget. A failed trim loses nothing:
        // the slice stays live and is tried again on the next turn.
        // The size the reply read, or else the one the turn's first read
        // brought (a turn answered by a receipt reads no conversation),
        // with this message added: the trim check reads nothing again.
        let read = match turn.live.get() {
            Some(size) => Some(*size),
            None => turn
                .view
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .as_ref()
                .map(|v| memory::store::LiveSize {
                    messages: v.live.messages + 1,
                    chars: v.live.chars + msg.text.chars().count() as i64,
                }),
        };
        let live = read.map(|size| memory::store::LiveSize {
            messages: size.messages + replies.len() as i64,
            chars: size.chars
                + replies
                    .iter()
                    .map(|r| r.text.chars().count() as i64)
                    .sum::<i64>(),
        });
        if let Err(e) = self
            .parts
            .lifecycle
            .trim_if_over_budget(msg, &turn.principal, now, live)
            .await
        {
            tracing::error!(error = %e, conversation = %msg.conversation, "trim failed");
        }
        Ok(if replies.is_empty() {
            Outcome::Stored
        } else {
            Outcome::Answered(replies)
        })
    }

    /// Step 4, from what the pairing store said of the sender (`known`).
    async fn resolve(
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

    /// Steps 6–9 for a resolved speaker.
    async fn steps(&self, t: &Turn<'_>) -> Result<Vec<Reply>> {
        let text = t.msg.text.trim();
        // 6. Commands and answers to "Remember this?".
        if let Some(r) = self.parts.commands.run(&t.asker(), text).await? {
            return Ok(vec![t.reply(r)]);
        }
        if let Some(mcp) = self.parts.mcp.as_ref().filter(|m| m.configured()) {
            let (roles, run) = (self.roles_now(t).await?, format!("turn:{}", t.message_id));
            let place = self.tool_place(t, &roles, &run);
            if let Some(r) = mcp.answer_waiting(place, text).await? {
                return Ok(vec![t.reply(r)]);
            }
        }
        if let Some(reply) = self.answer_proposal(t, text).await? {
            return Ok(vec![reply]);
        }
        let mut parts = ReplyParts::default();
        // 7. @policy: sets org-wide policy memory, @notes: teaches the agent; admins only.
        for (prefix, directive) in [
            ("@policy:", Directive::Policy),
            ("@notes:", Directive::Notes),
        ] {
            let Some(body) = strip_ci(text, prefix) else {
                continue;
            };
            // A delegation lends no administration (the one authorization point).
            if t.msg.on_behalf_of.is_some() {
                self.parts.metrics.policy(PolicyOutcome::Refused);
                return Ok(vec![t.reply(OPERATIONAL_NOT_ON_BEHALF.to_string())]);
            }
            if let Err(refusal) = policy::decide_directive(&t.principal, directive) {
                self.parts.metrics.policy(PolicyOutcome::Refused);
                return Ok(vec![t.reply(refusal.to_string())]);
            }
            if body.trim().is_empty() {
                return Ok(vec![t.reply(format!(
                    "An {prefix} directive needs some text after it."
                ))]);
            }
            // What memory never keeps (a credential, an instruction for the
            // model, a text over the cap) the write path refuses, whoever asks.
            let content = body.trim();
            let actor = t.principal.author_id().unwrap_or_default();
            return Ok(vec![match directive {
                Directive::Policy => {
                    let written = self
                        .parts
                        .learning
                        .write_policy(t.org(), content, &actor, t.now)
                        .await;
                    match crate::error::refused(written)? {
                        Ok(id) => {
                            self.parts.metrics.policy(PolicyOutcome::Written);
                            t.reply(receipt(memory::Scope::OrgPolicy, id))
                        }
                        Err(refusal) => {
                            self.parts.metrics.policy(PolicyOutcome::Refused);
                            t.reply(refusal.to_string())
                        }
                    }
                }
                Directive::Notes => {
                    let item = self.parts.learning.operational_item(content);
                    self.route(t, &[item], Origin::Explicit, &mut parts).await?;
                    self.render(t, parts)
                }
            }]);
        }
        // 7b. A correction of the previous answer is a skill's evidence, not memory.
        if let Some(reply) = self.learn_skill(t, text).await? {
            return Ok(vec![reply]);
        }
        // 8. Memory routing. Unpaired lines are nobody's; webhook payloads are untrusted.
        let explicit = ["remember that ", "please remember that ", "remember: "]
            .iter()
            .find_map(|p| strip_ci(text, p));
        let credential = match memory::credentials::credential_in(text) {
            Some(kind) => Some(kind),
            // One completed across the speaker's two lines ("the deploy
            // password is", then "hunter22") is one too; only a line that is
            // a bare value can complete one, so no other line reads the one before.
            None if memory::credentials::may_complete(text) => self
                .previous_text(t)
                .await?
                .and_then(|before| memory::credentials::credential_across(&before, text)),
            None => None,
        };
        if credential.is_none() && memory::credentials::asks_for_credential(text) {
            return Ok(vec![t.reply(policy::CREDENTIAL_NOT_KEPT.to_string())]);
        }
        if let Some(kind) = credential {
            // A message holding a credential is never read for memory (nor sent
            // to an extractor); the person is told it was not kept.
            self.parts.metrics.policy(PolicyOutcome::Dropped);
            parts.notes.push(policy::credential_refusal(kind).into());
            if !offline::asks(text) {
                return Ok(vec![self.render(t, parts)]);
            }
        } else if policy::extraction(&t.principal) == ExtractionRule::Read {
            let (items, origin) = match explicit {
                Some(rest) => {
                    let mut items: Vec<Candidate> = self
                        .parts
                        .learning
                        .extract(rest)
                        .await
                        .into_iter()
                        .filter(|c| c.channel != ItemChannel::Task)
                        .collect();
                    if items.is_empty() && !rest.is_empty() {
                        items.push(Candidate {
                            channel: ItemChannel::Personal,
                            kind: "fact".into(),
                            subject: format!(
                                "fact:{}",
                                terms(rest)
                                    .into_iter()
                                    .take(3)
                                    .collect::<Vec<_>>()
                                    .join(" ")
                            ),
                            content: rest.trim_end_matches('.').to_string(),
                        });
                    }
                    (items, Origin::Explicit)
                }
                None => {
                    let read = self.parts.learning.read(text).await;
                    // The same extraction call labels a correction the
                    // rules missed (7b): kept as a skill's evidence, not
                    // memory, when it passes the rules' screens.
                    if let Some(clause) = &read.correction {
                        if let Some(reply) = self.learn_labelled(t, text, clause).await? {
                            return Ok(vec![reply]);
                        }
                    }
                    (read.items, Origin::Implicit)
                }
            };
            self.route(t, &items, origin, &mut parts).await?;
            // A statement that was kept or asked about is answered by its receipt or
            // question. A message that asks or requests anything is answered from
            // memory, the notes, receipts and question added to the answer, never
            // instead of it: the rules decide that, not an extractor's labels.
            // A statement that was refused (an operational change by a regular
            // user) is answered by the refusal: a model asked to answer it only
            // repeats the claim back.
            let kept = !parts.receipts.is_empty() || !parts.question.is_empty();
            let refused = !parts.notes.is_empty();
            if (kept || refused) && !offline::asks(text) {
                return Ok(vec![self.render(t, parts)]);
            }
        }
        // 9. Answer from memory.
        let answer = self.answer(t, text, &mut parts).await?;
        parts.answer = Some(answer);
        Ok(vec![self.render(t, parts)])
    }

    /// The speaker's previous line here, from the conversation the turn
    /// read first when it holds one, else from the store.
    async fn previous_text(&self, t: &Turn<'_>) -> Result<Option<String>> {
        let Some(author) = t.principal.user_id() else {
            return Ok(None);
        };
        let seen = t
            .view
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .and_then(|v| {
                v.recent
                    .iter()
                    .find(|m| m.sender.as_deref() == Some(author))
                    .map(|m| m.text.clone())
            });
        if seen.is_some() {
            return Ok(seen);
        }
        Ok(self
            .parts
            .db
            .conversations()
            .previous_line_of(
                t.org(),
                t.agent(),
                &t.msg.conversation,
                author,
                t.message_id,
            )
            .await?
            .map(|(_, text)| text))
    }

    /// A paired person's correction of the previous answer, or an
    /// administrator's "make this a skill" (`/learn`): kept as a skill's
    /// evidence and answered with what it led to. `None` for other lines.
    async fn learn_skill(&self, t: &Turn<'_>, text: &str) -> Result<Option<Reply>> {
        if !self.parts.skills.enabled() || t.principal.user_id().is_none() {
            return Ok(None);
        }
        let lower = text.trim_end_matches(['.', '!']).to_lowercase();
        if lower == "/learn" || lower == "make this a skill" {
            if let Err(denial) = memory::authz::authorize(t.asker().actor(), Action::CurateSkills) {
                return Ok(Some(t.reply(match denial {
                    memory::authz::Denial::NotAdmin => "Only administrators turn corrections into skills; your corrections are kept for them to review.".to_string(),
                    other => format!("Refused: {other}. Nothing was drafted."),
                })));
            }
            let drafted = self
                .parts
                .skills
                .learn_now(t.org(), t.agent(), &t.msg.conversation, t.now)
                .await?;
            return Ok(Some(t.reply(match drafted {
                Some(r) => format!(
                    "Drafted skill “{}” rev {} from the corrections of this kind of request. Review it with /skill show {}.",
                    r.slug, r.rev, r.id
                ),
                None => "There is no correction in this conversation to learn from yet.".into(),
            })));
        }
        let Some(rule) = crate::skills::corrections::read_correction(text) else {
            return Ok(None);
        };
        self.keep_correction(t, text, &rule).await
    }

    /// The extractor model labelled `clause` of a paired person's line a
    /// correction: kept as a skill's evidence only when the line passes the
    /// rules' screens (`corrections::read_labelled`). `None` otherwise.
    async fn learn_labelled(
        &self,
        t: &Turn<'_>,
        text: &str,
        clause: &str,
    ) -> Result<Option<Reply>> {
        if !self.parts.skills.enabled() || t.principal.user_id().is_none() {
            return Ok(None);
        }
        let Some(rule) = crate::skills::corrections::read_labelled(text, clause) else {
            return Ok(None);
        };
        self.keep_correction(t, text, &rule).await
    }

    /// `rule`, read from `text`, kept as a correction of the previous answer
    /// and answered with what it led to; `None` when it corrects nothing.
    async fn keep_correction(&self, t: &Turn<'_>, text: &str, rule: &str) -> Result<Option<Reply>> {
        let (history, _) = self.conversation(t).await?;
        let learned = self
            .parts
            .skills
            .observe_rule(
                &CorrectionAt {
                    org: t.org(),
                    agent: t.agent(),
                    conversation: &t.msg.conversation,
                    principal: &t.principal,
                    message_id: t.message_id,
                    text,
                    history: &history,
                    now: t.now,
                },
                rule,
            )
            .await?;
        let Some(learned) = learned else {
            return Ok(None);
        };
        let noted = format!("Thanks, noted as a correction of my last answer: {rule}.");
        let next = match learned {
            Learned::Noted => String::new(),
            Learned::Proposed(r) if t.principal.is_human_admin() => format!(
                "\nCorrections like this one are now skill proposal “{}” rev {}. Review it with /skill show {}.",
                r.slug, r.rev, r.id
            ),
            Learned::Proposed(r) => format!(
                "\nCorrections like this one are now a proposed procedure (“{}”) for an administrator to review.",
                r.slug
            ),
            Learned::Suspended(r) => format!(
                "\nThe procedure “{}” rev {} I followed was corrected too often, so I stopped following it; an administrator will review it.",
                r.slug, r.rev
            ),
        };
        Ok(Some(t.reply(format!("{noted}{next}"))))
    }

    /// Apply the write policy to each item and record what happened in `parts`.
    async fn route(
        &self,
        t: &Turn<'_>,
        items: &[Candidate],
        origin: Origin,
        parts: &mut ReplyParts,
    ) -> Result<()> {
        // The operator's per-agent auto_keep is the ceiling: implicit items
        // are kept without asking only when the person opted in too.
        let mut settings = self.parts.learning.policy(t.agent()).clone();
        if settings.auto_keep {
            let person = match t.principal.user_id() {
                Some(user) => {
                    self.parts
                        .db
                        .identity()
                        .person_auto_keep(t.org(), user)
                        .await?
                }
                None => false,
            };
            settings.auto_keep = policy::auto_keeps(settings.auto_keep, person);
        }
        let settings = &settings;
        for item in items {
            let content = sanitize(&item.content);
            if content.is_empty() {
                continue;
            }
            let resolved = self.correction_subject(t, item).await?;
            let item = &resolved;
            match policy::decide(&t.principal, item, origin, settings) {
                Decision::Execute => {}
                Decision::Drop(reason) => {
                    self.parts.metrics.policy(PolicyOutcome::Dropped);
                    // Told: what needs an admin, and what is never kept. A user
                    // `memory.write_access` lists is not told it needs an admin:
                    // the model's `memory_write` may ask them "Remember this?".
                    let may_write = policy::writes_agent_notes(&t.principal, settings);
                    let told = match reason {
                        DropReason::NeedsAdmin => !may_write,
                        DropReason::Credential(_) => true,
                        _ => false,
                    };
                    if told && !parts.notes.iter().any(|n| n == reason.explain()) {
                        parts.notes.push(reason.explain().into());
                    }
                }
                Decision::Write {
                    scope,
                    owner,
                    status,
                } => {
                    // A person's own record that conflicts with one they keep
                    // is asked with both, whatever asked it kept (an explicit
                    // "remember that", auto-keep): never replaced unasked.
                    let conflicts = if scope.is_personal() {
                        self.live_conflicts(t, scope, owner.as_deref(), (&item.subject, &content))
                            .await?
                    } else {
                        Vec::new()
                    };
                    let status = if conflicts.is_empty() {
                        status
                    } else {
                        Status::Pending
                    };
                    let pending = status == Status::Pending;
                    let rec = NewRecord::said(
                        t.org(),
                        t.agent(),
                        scope,
                        &item.kind,
                        &item.subject,
                        content,
                        t.now,
                    )
                    .owner(owner)
                    .status(status)
                    .source(format!(
                        "{}:{}:message:{}",
                        if pending { "proposal" } else { "live" },
                        t.msg.channel,
                        t.message_id
                    ))
                    .expires_at(
                        pending
                            .then(|| t.now + self.parts.cfg.memory.proposal_ttl_hours * 3_600_000),
                    )
                    .conversation(Some(t.msg.conversation.clone()))
                    .batch(Some(t.message_id))
                    .author(t.principal.author_id())
                    .on_behalf_of(t.msg.on_behalf_of.clone());
                    // A new value on a subject names the live one it replaces
                    // (a person's own: the conflicts, asked below).
                    let replaces = if scope.is_personal() {
                        None
                    } else {
                        self.replaces(
                            t.org(),
                            t.agent(),
                            scope,
                            rec.owner.as_deref(),
                            (&rec.subject, &rec.content),
                        )
                        .await?
                    };
                    let run = format!("turn:{}", t.message_id);
                    let dedupe = if pending {
                        // Already known, or declined before: do not ask again. One
                        // still pending from an earlier turn has lapsed: ask again.
                        Dedupe::SkipIfAny(&[Status::Active, Status::Rejected])
                    } else {
                        Dedupe::ReuseActive
                    };
                    let written = self
                        .parts
                        .db
                        .records()
                        .write(
                            &rec,
                            dedupe,
                            Activation::Run {
                                cause: Cause::Live,
                                run_id: &run,
                            },
                            self.parts.beliefs.as_ref(),
                        )
                        .await;
                    let written = match memory::write::split_refusal(written)? {
                        Ok(written) => written,
                        // What memory never keeps: the person is told why.
                        Err(refusal) => {
                            self.parts.metrics.policy(PolicyOutcome::Refused);
                            let why = refusal.to_string();
                            if !parts.notes.contains(&why) {
                                parts.notes.push(why);
                            }
                            continue;
                        }
                    };
                    match written {
                        Written::Skipped => self.parts.metrics.duplicate(Duplicate::Record),
                        Written::Stored { id, .. } if pending => {
                            self.parts.metrics.policy(PolicyOutcome::Proposed);
                            let conflicts = self.with_judged(t, id, conflicts).await?;
                            parts
                                .question
                                .push(match (&replaces, conflicts.as_slice()) {
                                    (_, [_, ..]) => conflict_question(&rec.content, &conflicts),
                                    (Some(old), []) => format!("{} ({old})", rec.content),
                                    (None, []) => rec.content.clone(),
                                });
                            parts.batch = Some(t.message_id);
                        }
                        Written::Stored { id, .. } if status == Status::Active => {
                            self.parts.metrics.policy(PolicyOutcome::Written);
                            parts.receipts.push(match &replaces {
                                Some(old) => format!("{} It {old}.", receipt(scope, id)),
                                None => receipt(scope, id),
                            });
                        }
                        // Quarantined: kept for review, no receipt.
                        Written::Stored { .. } => {
                            self.parts.metrics.policy(PolicyOutcome::Quarantined)
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// A correction whose subject no pattern named ("Correction: deploys now
    /// happen only before 14:00") takes the subject of the live agent note
    /// it shares the most words with (two at least), so it supersedes that
    /// note under the subject rule. Other items are kept as they are.
    async fn correction_subject(&self, t: &Turn<'_>, item: &Candidate) -> Result<Candidate> {
        let unkeyed = item.channel == ItemChannel::Operational
            && item.kind == "correction"
            && item.subject.starts_with(offline::UNKEYED);
        if !unkeyed {
            return Ok(item.clone());
        }
        let scope = self.retrieval_scope(t).await?;
        let found = self
            .parts
            .db
            .records()
            .retrieve(&scope, &item.content, 5)
            .await?;
        let note = found
            .into_iter()
            .filter(|r| r.record.scope == memory::Scope::AgentNotes && r.hits >= 2)
            .max_by_key(|r| r.hits);
        Ok(match note {
            Some(r) => Candidate {
                subject: r.record.written.subject,
                ..item.clone()
            },
            None => item.clone(),
        })
    }

    /// "replaces #7: “old text”" when a record of `content` on `subject`
    /// would supersede a live record with other words in its place.
    /// What the proposal `rec` was asked as conflicting with, still live:
    /// the records the judge named (audited with the question) and those on
    /// its subject.
    async fn asked_conflicts(
        &self,
        t: &Turn<'_>,
        rec: &memory::MemoryRecord,
    ) -> Result<Vec<memory::MemoryRecord>> {
        if !rec.scope.is_personal() {
            return Ok(Vec::new());
        }
        let mut out = self
            .live_conflicts(
                t,
                rec.scope,
                rec.owner.as_deref(),
                (&rec.subject, &rec.content),
            )
            .await?;
        let asked = self
            .parts
            .db
            .audit()
            .about(t.org(), "memory.conflict", &format!("record:{}", rec.id))
            .await?;
        let ids = asked
            .iter()
            .filter_map(|e| e.detail.strip_prefix(CONFLICTS_WITH))
            .flat_map(|ids| ids.split(','))
            .filter_map(|id| id.parse::<i64>().ok());
        for id in ids {
            if out.iter().any(|o| o.id == id) {
                continue;
            }
            let old = self.parts.db.records().get(t.org(), id).await?;
            // Only the person's own live records: the audit names ids, and a
            // record may have been forgotten or replaced since.
            if old.status == Status::Active && old.owner == rec.owner && old.scope == rec.scope {
                out.push(old);
            }
        }
        Ok(out)
    }

    /// A yes to a conflict question: the records it was asked with that the
    /// subject rule did not retire (the judge's) are retired by the new one,
    /// on the person's word.
    async fn replace_on_consent(
        &self,
        t: &Turn<'_>,
        rec: &memory::MemoryRecord,
        conflicts: &[memory::MemoryRecord],
        run: &str,
    ) -> Result<()> {
        let meta = memory::store::RevisionMeta {
            via: "consent",
            cause: Cause::Live.as_str(),
            run_id: run,
            reason: &crate::beliefs::personal_revision(),
            model: None,
            prompt_version: None,
        };
        for old in conflicts.iter().filter(|o| o.subject != rec.subject) {
            self.parts
                .db
                .records()
                .retire(t.org(), old.id, rec.id, &meta, t.now)
                .await?;
        }
        Ok(())
    }

    /// The speaker's live records on `subject` that say something else than
    /// `content`: what a new record of theirs would replace.
    async fn live_conflicts(
        &self,
        t: &Turn<'_>,
        scope: memory::Scope,
        owner: Option<&str>,
        (subject, content): (&str, &str),
    ) -> Result<Vec<memory::MemoryRecord>> {
        let live = self
            .parts
            .db
            .records()
            .live_on_subject(t.org(), t.agent(), scope, owner, subject)
            .await?;
        Ok(live
            .into_iter()
            .filter(|old| old.content != content)
            .collect())
    }

    /// `conflicts` of the proposal `id` and what the judge finds it
    /// conflicts with among the person's records, audited
    /// (`memory.conflict`), so a yes replaces exactly what was shown.
    async fn with_judged(
        &self,
        t: &Turn<'_>,
        id: i64,
        mut conflicts: Vec<memory::MemoryRecord>,
    ) -> Result<Vec<memory::MemoryRecord>> {
        for judged in self.parts.beliefs.conflicts(t.org(), id).await {
            if !conflicts.iter().any(|c| c.id == judged.id) {
                conflicts.push(judged);
            }
        }
        if !conflicts.is_empty() {
            let ids: Vec<i64> = conflicts.iter().map(|c| c.id).collect();
            let by = t.principal.author_id().unwrap_or_else(|| "unpaired".into());
            self.parts
                .db
                .audit()
                .append(
                    t.org(),
                    &by,
                    "memory.conflict",
                    &format!("record:{id}"),
                    &memory::admin_text!("{}{}", CONFLICTS_WITH, memory::admin_text::Ids(&ids)),
                    t.now,
                )
                .await?;
        }
        Ok(conflicts)
    }

    async fn replaces(
        &self,
        org: &str,
        agent: &str,
        scope: memory::Scope,
        owner: Option<&str>,
        (subject, content): (&str, &str),
    ) -> Result<Option<String>> {
        let live = self
            .parts
            .db
            .records()
            .live_on_subject(org, agent, scope, owner, subject)
            .await?;
        Ok(live
            .into_iter()
            .find(|old| old.content != content)
            .map(|old| format!("replaces #{}: “{}”", old.id, sanitize(&old.content))))
    }

    /// A person's first turn after they were approved with `/pair` ends with
    /// steward's two promises (`oversight::PROMISES`), once: the promise is
    /// audited (`oversight.promised`) and not repeated in later replies.
    async fn first_contact(&self, t: &Turn<'_>, replies: &mut [Reply]) -> Result<()> {
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

    fn render(&self, t: &Turn<'_>, parts: ReplyParts) -> Reply {
        let mut lines: Vec<String> = Vec::new();
        lines.extend(parts.answer);
        lines.extend(parts.notes);
        lines.extend(parts.receipts);
        if !parts.question.is_empty() {
            lines.push(format!(
                "Remember this? {} — reply yes or no",
                parts.question.join("; ")
            ));
        }
        if lines.is_empty() {
            lines.push("Noted.".into());
        }
        Reply {
            conversation: t.msg.conversation.clone(),
            text: lines.join("\n"),
            proposal: if parts.question.is_empty() {
                None
            } else {
                parts.batch
            },
        }
    }

    /// What the reply reads of the conversation: its live lines before this
    /// message, newest kept, within `turn.history_messages` and
    /// `turn.history_chars`, oldest first; and the newest three summaries.
    /// Read with the turn's first read, or here (system runs). Notes the live
    /// history's size on the turn for the trim check.
    async fn conversation(
        &self,
        t: &Turn<'_>,
    ) -> Result<(Vec<memory::StoredMessage>, Vec<String>)> {
        let (max_lines, max_chars) = (
            self.parts.cfg.turn.history_messages,
            self.parts.cfg.turn.history_chars,
        );
        let read_first = t.view.lock().unwrap_or_else(|e| e.into_inner()).take();
        let view = match read_first {
            // Read before the message was stored: its size is added.
            Some(mut view) => {
                view.live.messages += 1;
                view.live.chars += t.msg.text.chars().count() as i64;
                view
            }
            None => {
                // Only the window is read, not the whole live history.
                let of = self.view_of(t.msg);
                self.parts
                    .db
                    .conversations()
                    .conversation_view(
                        t.org(),
                        of.agent,
                        of.conversation,
                        t.message_id,
                        of.lines,
                        of.summaries,
                    )
                    .await?
            }
        };
        let _ = t.live.set(view.live);
        let mut kept = Vec::new();
        let mut chars = 0;
        for m in view.recent {
            chars += m.text.chars().count();
            if kept.len() == max_lines || chars > max_chars {
                break;
            }
            kept.push(m);
        }
        kept.reverse();
        Ok((kept, view.summaries))
    }

    /// Org policy and the agent's notes, given whole to a model when they fit
    /// `turn.standing_notes_chars` (the same for every turn, so a server's
    /// prompt cache keeps them), overrides applied; none for the rules, which
    /// read no prompt, or when they do not fit.
    async fn standing_notes(
        &self,
        scope: &RetrievalScope,
    ) -> Result<(Vec<Retrieved>, Vec<context::Overridden>)> {
        /// More records than this are not given whole, whatever their length.
        const MOST: usize = 100;
        let budget = self.parts.cfg.turn.standing_notes_chars;
        if budget == 0 || !self.parts.responder.reads_prompt() {
            return Ok(Default::default());
        }
        let limit = budget.min(MOST) + 1;
        let notes = self
            .parts
            .db
            .records()
            .standing_notes(scope, limit as i64)
            .await?;
        let chars: usize = notes.iter().map(|r| r.content.chars().count()).sum();
        if notes.len() == limit || chars > budget {
            return Ok(Default::default());
        }
        let mut standing: Vec<Retrieved> = notes
            .into_iter()
            .map(|record| Retrieved {
                record,
                hits: 0,
                score: 0.0,
                similarity: None,
            })
            .collect();
        // Oldest first, whatever the scope: a new note or policy goes at the
        // end, and the server still holds everything before it.
        let overridden = context::apply_policy_overrides(&mut standing);
        Ok((standing, overridden))
    }

    /// Where and for whom the turn calls external tools.
    fn tool_place<'t>(
        &self,
        t: &'t Turn<'_>,
        work_roles: &'t [String],
        run: &'t str,
    ) -> crate::mcp::TurnPlace<'t> {
        crate::mcp::TurnPlace {
            org: t.org(),
            agent: t.agent(),
            conversation: &t.msg.conversation,
            principal: &t.principal,
            on_behalf_of: t.msg.on_behalf_of.as_deref(),
            work_roles,
            message_id: t.message_id,
            run,
            now: t.now,
        }
    }

    /// The work roles the speaker holds now (none for system principals and unpaired senders).
    async fn roles_now(&self, t: &Turn<'_>) -> Result<Vec<String>> {
        Ok(match (t.principal.user_id(), &t.known) {
            // Read with the turn's first read, this turn.
            (Some(_), Some(known)) => known.roles.clone(),
            (Some(user), None) => self.parts.db.role_memory().roles_of(t.org(), user).await?,
            (None, _) => Vec::new(),
        })
    }

    /// What the turn's speaker may read from memory.
    async fn retrieval_scope(&self, t: &Turn<'_>) -> Result<RetrievalScope> {
        Ok(RetrievalScope {
            org: t.org().into(),
            agent: t.agent().into(),
            // System principals and unpaired senders get no personal memory.
            speaker: t.principal.user_id().map(str::to_string),
            shared: t.shared(),
            // The roles the speaker holds at this turn: leaving one stops its reading at once.
            roles: self.roles_now(t).await?,
        })
    }

    async fn answer(&self, t: &Turn<'_>, text: &str, parts: &mut ReplyParts) -> Result<String> {
        let scope = self.retrieval_scope(t).await?;
        let (history, previous) = self.conversation(t).await?;
        // A run's webhook payload is data for the reply, never the request:
        // memory and skills are found with the instruction above it.
        let asked = context::instruction_of(text);
        let mut found = self.parts.db.records().retrieve(&scope, asked, 10).await?;
        // A follow-up ("and the weekly one?") with no memory of its own is read
        // with the speaker's previous line; a new question is not.
        if found.is_empty() && follows_up(text) {
            let speaker = t.principal.author_id();
            let previous = history
                .iter()
                .rev()
                .find(|m| m.written_by() != MessageAuthor::Agent && m.sender == speaker);
            if let Some(before) = previous {
                let both = format!("{} {text}", before.text);
                found = self.parts.db.records().retrieve(&scope, &both, 10).await?;
            }
        }
        context::order_by_precedence(&mut found);
        let overridden = context::apply_policy_overrides(&mut found);
        let (standing, standing_overridden) = self.standing_notes(&scope).await?;
        let followed = match t.procedure {
            Some(skill) => vec![crate::skills::InForce::standing(skill.clone())],
            None => {
                let generation = t.known.as_ref().and_then(|k| k.skill_generation);
                self.parts
                    .skills
                    .for_request_at(t.org(), t.agent(), asked, generation)
                    .await?
            }
        };
        let skills: Vec<memory::skill::SkillRevision> =
            followed.iter().map(|s| s.revision.clone()).collect();
        let prompt = context::assemble(
            t.org(),
            t.agent(),
            &t.principal,
            &context::PromptParts {
                found: &found,
                overridden: &overridden,
                previous: &previous,
                skills: &skills,
                standing: &standing,
                standing_overridden: &standing_overridden,
            },
        );
        let run = format!("turn:{}", t.message_id);
        let tools = TurnTools::new(
            &self.parts.lifecycle,
            &scope,
            ProposalPlace {
                msg: t.msg,
                principal: &t.principal,
                batch: t.message_id,
                now: t.now,
                expires_at: t.now + self.parts.cfg.memory.proposal_ttl_hours * 3_600_000,
            },
            &run,
        );
        // Approved external tools for this speaker's role (`crate::mcp`).
        let external = match self.parts.mcp.as_ref().filter(|m| m.configured()) {
            Some(mcp) => Some(
                mcp.for_turn(&tools, self.tool_place(t, &scope.roles, &run))
                    .await?,
            ),
            None => None,
        };
        let offered: &dyn crate::llm::Tools = match &external {
            Some(e) => e,
            None => &tools,
        };
        // "What did I ask you …?" is about the conversation itself.
        let about_their_words = asks_what_they_said(text);
        let shown: &[memory::StoredMessage] = match self.parts.cfg.turn.history_for {
            HistoryFor::Every => &history,
            HistoryFor::FollowUps if about_their_words => &history,
            HistoryFor::FollowUps if !follows_up(text) => &[],
            // A follow-up is read with the exchange it follows: the speaker's
            // previous line and what came after it, not the whole window.
            HistoryFor::FollowUps => {
                let speaker = t.principal.author_id();
                let from = history
                    .iter()
                    .rposition(|m| m.written_by() != MessageAuthor::Agent && m.sender == speaker)
                    .unwrap_or(0);
                &history[from..]
            }
        };
        let ctx = ReplyContext {
            principal: &t.principal,
            text,
            memory: &found,
            history: shown,
            shared: t.shared(),
            overridden: &overridden,
            prompt: &prompt,
            tools: Some(offered),
            skills: &skills,
        };
        let responded = self.parts.responder.respond(&ctx).await;
        let actor = t.principal.author_id().unwrap_or_else(|| "unpaired".into());
        let uses = self
            .parts
            .skills
            .uses(t.org(), &actor, t.message_id, &followed, t.now);
        {
            let mut writes = t.writes.lock().unwrap_or_else(|e| e.into_inner());
            writes.skill_uses.extend(uses.skill_uses);
            writes.audit.extend(uses.audit);
        }
        for s in &followed {
            self.parts.metrics.skill_used(&s.revision.slug);
        }
        // A skill the model drafted is reported by steward, whatever the model said.
        parts.receipts.extend(tools.skill_receipt());
        // A call that waits for the speaker's yes is asked by steward.
        parts
            .notes
            .extend(external.iter().flat_map(|e| e.questions()));
        // What the model proposed is asked, whether or not it then answered.
        let proposed = tools.proposed();
        if !proposed.is_empty() {
            // The rules may have asked the same statement already: asked once.
            for p in proposed {
                if !parts.question.contains(&p) {
                    parts.question.push(p);
                }
            }
            parts.batch = Some(t.message_id);
        }
        let scrubbed = responded.map(|a| context::scrub_answer(&a, text, &prompt, &found));
        // A promise to remember is the turn's to keep (its receipt, or its
        // "Remember this?"): the model's is not shown to a person as one.
        let asked = !parts.question.is_empty();
        let person = t.principal.user_id().is_some();
        let scrubbed = scrubbed.map(|a| {
            if person {
                context::unpromised(&a, asked)
            } else {
                a
            }
        });
        let best = offline::best_matches(&found);
        // What the answer shows is cited, found for the message or given whole.
        let citable: Vec<Retrieved> = found
            .iter()
            .chain(
                standing
                    .iter()
                    .filter(|s| !found.iter().any(|f| f.record.id == s.record.id)),
            )
            .cloned()
            .collect();
        // What memory says is opened in the speaker's reply language.
        let memory_says = citable
            .iter()
            .filter(|r| !(t.shared() && r.record.scope.is_personal()))
            .find_map(|r| context::reply_language(&r.record))
            .and_then(|name| prompts::answers::named(&name))
            .map_or(context::MEMORY_SAYS, |l| l.memory_says);
        let searched = tools.searched();
        let scrubbed = scrubbed.map(|a| {
            let a = context::without_unrelated_values(a, text, &found, &searched, &citable);
            if a.is_empty() {
                a
            } else {
                let a = context::grounded(a, text, &best, t.shared(), memory_says);
                context::cite(a, &citable, t.shared())
            }
        });
        let answer = match scrubbed {
            Ok(answer) if !answer.is_empty() => {
                match self.unknown_person(t, text, &answer, &citable).await? {
                    Some(name) => nothing_on(&name),
                    // What the speaker said, asked of a model shown none of
                    // their lines and none of their memory, is a guess (the
                    // real model answered Ben "You asked me to remind me about
                    // the VPN endpoint"): the rules answer.
                    None if shown.is_empty()
                        && about_their_words
                        && !context::cites(&answer)
                        && !citable.iter().any(|r| r.record.scope.is_personal()) =>
                    {
                        offline::NOTHING_IN_MEMORY.to_string()
                    }
                    None => answer,
                }
            }
            // An answer with nothing a person may see (only a tool call, JSON,
            // an imitated receipt): the rules answer from the same memory.
            Ok(_) | Err(LlmError::Invalid(_)) => {
                tracing::warn!(
                    "the model's answer had no text to show; answered from memory by the rules"
                );
                offline::respond(&ctx)
            }
            // The model failed (down, too slow, out of budget): what memory
            // holds on the question is still the answer a person needs.
            Err(e) => match offline::respond_if_known(&ctx) {
                Some(answer) => {
                    tracing::warn!(error = %e, "responder failed; answered from memory by the rules");
                    answer
                }
                None => {
                    tracing::warn!(error = %e, "responder failed");
                    return Ok(
                        "I can't answer right now; your message is saved. Please try again shortly."
                            .into(),
                    );
                }
            },
        };
        // The approved procedure is shown even when a model left its steps out.
        let answer = crate::skills::with_steps(answer, &skills);
        // Two active records on one subject (an undo brought one back): say so.
        Ok(
            match context::disagreement_note(&context::disagreements(&found)) {
                Some(note) => format!("{answer}\n\n{note}"),
                None => answer,
            },
        )
    }

    /// The paired person other than the speaker whom `message` names, when
    /// the model's `answer` cites nothing and no record it was shown (`given`:
    /// the records found and the standing notes) names them and shares a
    /// word with the answer: a small
    /// model answers such a question with an invention ("Ben works from the
    /// office in the city"), and memory it may not show (another person's,
    /// in a group) is no more its to guess. `None` otherwise.
    async fn unknown_person(
        &self,
        t: &Turn<'_>,
        message: &str,
        answer: &str,
        given: &[Retrieved],
    ) -> Result<Option<String>> {
        if context::cites(answer) {
            return Ok(None);
        }
        let named: Vec<&str> = message
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| w.chars().next().is_some_and(char::is_uppercase))
            .collect();
        if named.is_empty() {
            return Ok(None);
        }
        let speaker = t.principal.user_id();
        let said = memory::grounding::content_words(answer);
        let people = self.parts.db.identity().paired_users(t.org()).await?;
        Ok(people
            .into_iter()
            .filter(|p| Some(p.user_id.as_str()) != speaker)
            .find(|p| {
                // Every word of the name in the message ("Ben", "Ben Ito").
                let name: Vec<String> = p.name.split_whitespace().map(str::to_lowercase).collect();
                let in_message = !name.is_empty()
                    && p.name.chars().count() >= 2
                    && p.name.split_whitespace().all(|n| named.contains(&n));
                // Memory supports the answer when a record naming them
                // shares one of its words besides the name.
                in_message
                    && !given.iter().any(|r| {
                        let words = memory::grounding::content_words(&r.record.content);
                        name.iter().all(|n| words.contains(n))
                            && words.iter().any(|w| !name.contains(w) && said.contains(w))
                    })
            })
            .map(|p| p.name))
    }

    /// The language the speaker asked to be answered in, when the answers
    /// table has it (`prompts::answers::named`).
    async fn reply_language(
        &self,
        t: &Turn<'_>,
        user: &str,
    ) -> Result<Option<&'static prompts::answers::Language>> {
        let asked = self
            .parts
            .db
            .records()
            .live_on_subject(
                t.org(),
                t.agent(),
                memory::Scope::Personal,
                Some(user),
                offline::ANSWER_IN_SUBJECT,
            )
            .await?;
        Ok(asked
            .iter()
            .find_map(context::reply_language)
            .and_then(|name| prompts::answers::named(&name)))
    }

    /// Yes/no to the newest "Remember this?" batch the speaker was asked here.
    async fn answer_proposal(&self, t: &Turn<'_>, text: &str) -> Result<Option<Reply>> {
        // A yes or no in the person's language is steward's to answer, in
        // that language (`prompts::answers`); a button's is English.
        let Some(author) = t.principal.user_id() else {
            return Ok(None);
        };
        let read = match t.msg.answer {
            Some(_) => None,
            None if prompts::answers::read(text).is_none() => return Ok(None),
            None => {
                let preferred = self.reply_language(t, author).await?;
                prompts::answers::read_preferring(text, preferred)
            }
        };
        let (batch, choice, said_in) = match (t.msg.answer, read) {
            (Some((batch, true)), _) => (Some(batch), Choice::Yes, prompts::answers::english()),
            (Some((batch, false)), _) => (Some(batch), Choice::No, prompts::answers::english()),
            (None, Some(a)) => (None, a.choice, a.language),
            (None, None) => return Ok(None),
        };
        let yes = choice != Choice::No;
        let mut pending = self
            .parts
            .db
            .records()
            .pending_proposals(t.org(), t.agent(), &t.msg.conversation, author, t.now)
            .await?;
        match batch {
            // A button names the question it answers.
            Some(b) => pending.retain(|r| r.batch == Some(b)),
            // A typed yes or no answers the question asked at the speaker's
            // previous line here, nothing older: one passed over has lapsed.
            None if !pending.is_empty() => {
                let asked = self
                    .parts
                    .db
                    .conversations()
                    .previous_line_of(
                        t.org(),
                        t.agent(),
                        &t.msg.conversation,
                        author,
                        t.message_id,
                    )
                    .await?
                    .map(|(id, _)| id);
                if pending[0].batch != asked {
                    for rec in &pending {
                        self.parts.db.records().lapse(t.org(), rec.id).await?;
                    }
                    return Ok(Some(t.reply(LAPSED)));
                }
            }
            None => {}
        }
        if pending.is_empty() {
            return Ok(Some(t.reply(if batch.is_some() {
                "That question was not asked to you, or it has expired."
            } else {
                said_in.nothing_waiting
            })));
        }
        let mut parts = ReplyParts::default();
        for rec in pending {
            if !yes {
                self.parts.db.records().reject(t.org(), rec.id).await?;
                continue;
            }
            // Authority is checked again at consent time: a role, or who
            // `memory.write_access` lists, may have changed since.
            let settings = self.parts.learning.policy(&rec.agent);
            if let Consent::Refuse(reason) = policy::consent(&t.principal, rec.scope, settings) {
                self.parts.metrics.policy(PolicyOutcome::Refused);
                self.parts.db.records().reject(t.org(), rec.id).await?;
                parts.notes.push(reason.explain().into());
                continue;
            }
            let replaces = self
                .replaces(
                    t.org(),
                    &rec.agent,
                    rec.scope,
                    rec.owner.as_deref(),
                    (&rec.subject, &rec.content),
                )
                .await?;
            let run = format!("turn:{}", t.message_id);
            let conflicts = self.asked_conflicts(t, &rec).await?;
            if choice == Choice::Both {
                for old in &conflicts {
                    let keep = memory::store::KeepBeside {
                        org: t.org(),
                        old: old.id,
                        new: rec.id,
                        actor: author,
                        run_id: &run,
                        now: t.now,
                    };
                    self.parts.db.records().keep_beside(&keep).await?;
                }
            }
            self.parts
                .db
                .records()
                .activate_kept(
                    t.org(),
                    rec.id,
                    Cause::Live,
                    &run,
                    t.now,
                    self.parts.beliefs.as_ref(),
                )
                .await?;
            if choice == Choice::Yes {
                self.replace_on_consent(t, &rec, &conflicts, &run).await?;
            }
            self.parts.metrics.policy(PolicyOutcome::Written);
            let kept = said_in.receipt(crate::learning::place(rec.scope), rec.id);
            parts
                .receipts
                .push(match (choice, conflicts.as_slice(), replaces) {
                    (Choice::Both, [_, ..], _) => format!("{kept} {}", beside(&conflicts)),
                    (_, [_, ..], _) => format!("{kept} {}", replaced(&conflicts)),
                    (_, [], Some(old)) => format!("{kept} It {old}."),
                    (_, [], None) => kept,
                });
        }
        if !yes {
            parts.notes.push(said_in.declined.into());
        }
        Ok(Some(self.render(t, parts)))
    }
}

enum Gate {
    Let(Principal),
    Stop(Vec<Reply>),
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
        match TurnLoop::take(self, &msg).await {
            Ok(Outcome::Again(_)) => Ok(Vec::new()),
            Ok(outcome) => Ok(outcome.into_replies()),
            Err(e) => {
                tracing::error!(error = %e, "turn failed");
                Err(TurnFailed(e.to_string()))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_question_about_what_the_speaker_said_is_known_by_its_words() {
        for (text, asks) in [
            ("What did I ask you to remind me about?", true),
            ("What have I told you about my team?", true),
            ("Did I mention the VPN host?", true),
            ("what did i say yesterday", true),
            ("What did Ben ask you?", false),
            ("How do I connect to the VPN?", false),
            ("Remind me to renew my badge on Friday.", false),
            ("I told you I work on payments.", false),
        ] {
            assert_eq!(asks_what_they_said(text), asks, "{text}");
        }
    }

    #[test]
    fn the_limiter_clock_never_runs_ahead_of_the_loops_clock() {
        let clock = MessageClock::default();
        let now = 1_767_603_600_000; // 2026-01-05 09:00 UTC
        clock.observe(now - 60_000, now);
        assert_eq!(
            u64::from(clock.now()),
            u64::try_from(now - 60_000).unwrap() * 1_000_000
        );
        // A message stamped a year ahead moves the clock at most the allowed skew,
        // so later, correctly stamped traffic is limited normally within seconds.
        clock.observe(now + 365 * 86_400_000, now);
        let ahead_ms = i64::try_from(u64::from(clock.now()) / 1_000_000).unwrap() - now;
        assert!(ahead_ms <= MAX_CLOCK_SKEW_MS + 1_000, "{ahead_ms}");
        // Older messages never move it back.
        clock.observe(now - 120_000, now);
        assert!(i64::try_from(u64::from(clock.now()) / 1_000_000).unwrap() >= now);
    }
}
