//! The turn loop (SPEC §4): every inbound message, from every channel, runs
//! through [`TurnLoop::handle`] in the same order of steps.
//!
//! Architecture Invariant: the speaker's authority is the `Principal` that
//! step 4 resolves from the pairing store. Nothing later re-reads it from the
//! message text, a display name, or an extractor's answer.

use crate::config::{Config, DmPolicy, GroupPolicy};
use crate::context;
use crate::llm::{Extractor, ReplyContext, Responder};
use adapters::{ConversationKind, Inbound, Reply, TurnFailed, TurnHandler};
use dashmap::DashMap;
use governor::clock::Clock;
use governor::middleware::NoOpMiddleware;
use governor::nanos::Nanos;
use governor::state::keyed::DashMapStateStore;
use governor::{Quota, RateLimiter};
use memory::policy::{self, Decision, DropReason, Origin, PolicySettings, ToolScope};
use memory::store::{NewMessage, RecordFilter, RetrievalScope};
use memory::{
    sanitize::sanitize, terms::terms, Candidate, Db, ItemChannel, NewRecord, Principal, Role,
    Scope, Status, StoreError, SystemPrincipal,
};
use pairing::{PairOutcome, Pairing, PairingError, PairingSettings};
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

#[derive(Debug, thiserror::Error)]
pub enum TurnError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Pairing(#[from] PairingError),
}

pub type Result<T, E = TurnError> = std::result::Result<T, E>;

const SLOW_DOWN: &str =
    "You're sending messages faster than I can answer. Please slow down for a moment.";
const IDENTITY_UNAVAILABLE: &str = "I can't check who you are right now, so I won't act on this message. Please try again shortly.";
const PAIR_HINT: &str =
    "Hi! I don't know you yet. Send /pair to request access; an administrator will approve it.";
/// Kinds a person may promote from the individual to the person tier (ADR-0033).
pub const PROMOTABLE_KINDS: &[&str] = &["preference", "vocabulary", "rubric_adjustment"];
const POLICY_ADMIN_ONLY: &str = "Only administrators can set organisation policy with @policy:.";
const NOTES_ADMIN_ONLY: &str =
    "Only administrators can teach the agent with @notes:. To keep something for yourself, say \"remember that …\".";

/// The rate limiters' clock: the newest message time seen. Platforms stamp
/// messages themselves, so replayed transcripts are limited as they happened.
#[derive(Clone, Default)]
struct MessageClock(Arc<AtomicU64>);

impl Clock for MessageClock {
    type Instant = Nanos;
    fn now(&self) -> Nanos {
        Nanos::from(self.0.load(Ordering::Relaxed))
    }
}

impl MessageClock {
    fn observe(&self, at_ms: i64) {
        // Never ahead of the wall clock (plus skew): one future-stamped message
        // must not freeze the limiters for everyone until that time arrives.
        let cap = chrono::Utc::now()
            .timestamp_millis()
            .saturating_add(MAX_CLOCK_SKEW_MS);
        let nanos = u64::try_from(at_ms.min(cap))
            .unwrap_or(0)
            .saturating_mul(1_000_000);
        self.0.fetch_max(nanos, Ordering::Relaxed);
    }
}

/// How far ahead of this machine's clock a platform's message time is believed.
const MAX_CLOCK_SKEW_MS: i64 = 5_000;

type Limiter = RateLimiter<String, DashMapStateStore<String>, MessageClock, NoOpMiddleware<Nanos>>;

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

/// Everything a turn knows once the speaker is resolved.
struct Turn<'a> {
    msg: &'a Inbound,
    principal: Principal,
    now: i64,
    /// Id of the stored inbound message (groups a turn's proposals).
    message_id: i64,
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
    fn author(&self) -> Option<String> {
        match &self.principal {
            Principal::Human { user_id, .. } => Some(user_id.clone()),
            Principal::System(s) => Some(s.as_str().to_string()),
            Principal::Unpaired => None,
        }
    }
    fn reply(&self, text: impl Into<String>) -> Reply {
        Reply {
            conversation: self.msg.conversation.clone(),
            text: text.into(),
            proposal: None,
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

pub struct TurnLoop {
    pub(crate) db: Db,
    pairing: Pairing,
    pub(crate) cfg: Arc<Config>,
    pub(crate) policy: PolicySettings,
    extractor: Arc<dyn Extractor>,
    responder: Arc<dyn Responder>,
    /// Judge, consolidator, summarizer (`llm::roles`); offline unless `with_roles` says otherwise.
    pub(crate) roles: crate::llm::Roles,
    limits: RateLimits,
}

fn normalise_answer(text: &str) -> Option<bool> {
    let t = text.trim().trim_end_matches(['.', '!']).to_lowercase();
    match t.as_str() {
        "yes" | "y" | "yes please" | "yep" | "yeah" | "sure" | "ok" | "okay" | "remember it" => {
            Some(true)
        }
        "no" | "n" | "nope" | "no thanks" | "don't" | "do not" | "forget it" => Some(false),
        _ => None,
    }
}

fn strip_ci<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    let head = s.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| s[prefix.len()..].trim())
}

fn target_name(scope: Scope) -> &'static str {
    match scope {
        Scope::AgentNotes => "agent_notes",
        Scope::OrgPolicy => "org_policy",
        Scope::Personal | Scope::Person => "personal memory",
    }
}

impl TurnLoop {
    pub fn new(
        db: Db,
        cfg: Arc<Config>,
        extractor: Arc<dyn Extractor>,
        responder: Arc<dyn Responder>,
    ) -> Self {
        let pairing = Pairing::new(
            db.clone(),
            PairingSettings {
                code_ttl_ms: cfg.pairing.code_ttl_minutes * 60_000,
                max_pending_per_channel: cfg.pairing.max_pending_per_channel,
                hint_interval_ms: cfg.pairing.hint_interval_seconds * 1000,
            },
        );
        let rl = &cfg.rate_limit;
        let clock = MessageClock::default();
        let limits = RateLimits {
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
        };
        let policy = PolicySettings {
            auto_keep: cfg.memory.auto_keep,
            write_access: cfg.memory.write_access.clone(),
        };
        TurnLoop {
            db,
            pairing,
            cfg,
            policy,
            extractor,
            responder,
            roles: crate::llm::Roles::offline(),
            limits,
        }
    }

    pub fn db(&self) -> &Db {
        &self.db
    }

    pub fn pairing(&self) -> &Pairing {
        &self.pairing
    }

    pub fn config(&self) -> &Config {
        &self.cfg
    }

    /// Run one inbound message through the loop.
    pub async fn handle(&self, msg: &Inbound) -> Result<Vec<Reply>> {
        let now = msg.at.timestamp_millis();
        // 2. Platforms redeliver: a message id seen before is dropped.
        if let Some(pid) = &msg.platform_id {
            if !self.db.mark_seen(&msg.org, &msg.channel, pid, now).await? {
                return Ok(Vec::new());
            }
        }
        // 3. Rate limits, with one polite warning per burst.
        let sender_key = format!(
            "{}|{}",
            msg.org,
            msg.sender.as_deref().unwrap_or(&msg.conversation)
        );
        self.limits.clock.observe(now);
        let conv_key = format!("{}|{}|{}", msg.org, msg.channel, msg.conversation);
        if self.limits.sender.check_key(&sender_key).is_err()
            || self.limits.conversation.check_key(&conv_key).is_err()
        {
            if self.limits.warned.insert(sender_key, ()).is_none() {
                return Ok(vec![Reply {
                    conversation: msg.conversation.clone(),
                    text: SLOW_DOWN.into(),
                    proposal: None,
                }]);
            }
            return Ok(Vec::new());
        }
        self.limits.warned.remove(&sender_key);
        if msg.text.chars().count() > self.cfg.turn.max_message_chars {
            return Ok(vec![Reply {
                conversation: msg.conversation.clone(),
                text: format!(
                    "That message is too long for me ({} characters at most). Nothing was stored.",
                    self.cfg.turn.max_message_chars
                ),
                proposal: None,
            }]);
        }
        // 4. The speaker's principal, from the pairing store only.
        let principal = match self.resolve(msg, now).await {
            Ok(Gate::Let(p)) => p,
            Ok(Gate::Stop(replies)) => return Ok(replies),
            Err(e) => {
                // Fail closed: a pairing-store error denies the message.
                tracing::error!(error = %e, "pairing store unavailable; message denied");
                return Ok(vec![Reply {
                    conversation: msg.conversation.clone(),
                    text: IDENTITY_UNAVAILABLE.into(),
                    proposal: None,
                }]);
            }
        };
        // Every model call of the turn draws on one token budget.
        crate::llm::budget::per_turn(
            self.cfg.llm.turn_token_budget,
            self.run(msg, principal, now),
        )
        .await
    }

    /// A run by a system principal (cron, SOP, webhook, delegated).
    pub async fn system_turn(&self, msg: &Inbound, who: SystemPrincipal) -> Result<Vec<Reply>> {
        let now = msg.at.timestamp_millis();
        crate::llm::budget::per_turn(
            self.cfg.llm.turn_token_budget,
            self.run(msg, Principal::System(who), now),
        )
        .await
    }

    async fn run(&self, msg: &Inbound, principal: Principal, now: i64) -> Result<Vec<Reply>> {
        // 5. Store with the sender id and the role it was sent with.
        let (sender, role) = match &principal {
            Principal::Human { user_id, role, .. } => (Some(user_id.as_str()), Some(role.as_str())),
            Principal::System(s) => (Some(s.as_str()), Some(s.as_str())),
            Principal::Unpaired => (None, None),
        };
        let message_id = self
            .db
            .insert_message(&NewMessage {
                org: &msg.org,
                agent: &msg.agent,
                channel: &msg.channel,
                conversation: &msg.conversation,
                conversation_kind: msg.kind.as_str(),
                author: if matches!(principal, Principal::System(_)) {
                    "system"
                } else {
                    "person"
                },
                sender,
                sender_role: role,
                text: &msg.text,
                said_at: now,
            })
            .await?;
        if msg.kind == ConversationKind::Group
            && self.cfg.turn.require_mention
            && !msg.mentioned
            && msg.answer.is_none()
        {
            return Ok(Vec::new());
        }
        let turn = Turn {
            msg,
            principal,
            now,
            message_id,
        };
        let replies = self.steps(&turn).await?;
        for r in &replies {
            self.db
                .insert_message(&NewMessage {
                    org: &msg.org,
                    agent: &msg.agent,
                    channel: &msg.channel,
                    conversation: &msg.conversation,
                    conversation_kind: msg.kind.as_str(),
                    author: "agent",
                    sender: None,
                    sender_role: None,
                    text: &r.text,
                    said_at: now,
                })
                .await?;
        }
        // 10. Trim when the history passes its budget. A failed trim loses nothing:
        // the slice stays live and is tried again on the next turn.
        if let Err(e) = self.trim_if_over_budget(msg, &turn.principal, now).await {
            tracing::error!(error = %e, conversation = %msg.conversation, "trim failed");
        }
        Ok(replies)
    }

    async fn resolve(&self, msg: &Inbound, now: i64) -> Result<Gate> {
        let Some(stored) = &msg.sender else {
            return Ok(Gate::Let(Principal::Unpaired));
        };
        if let Some(u) = self.pairing.resolve(&msg.org, stored).await? {
            return Ok(Gate::Let(Principal::Human {
                user_id: u.user_id,
                name: u.name,
                role: u.role,
            }));
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
        // Pairing by command exists only under dm_policy = pairing.
        if wants_pair && self.cfg.pairing.dm_policy == DmPolicy::Pairing {
            return Ok(match self.pairing.request(&msg.org, &msg.channel, stored, &msg.sender_name, now).await? {
                PairOutcome::Code { code, .. } => reply(format!(
                    "Your pairing code is {code}. Give it to an administrator; it is valid for {} minutes.",
                    self.cfg.pairing.code_ttl_minutes
                )),
                PairOutcome::TooManyPending => reply(
                    "There are too many pairing requests waiting right now. Please ask an administrator and try again later."
                        .into(),
                ),
            });
        }
        let allowed = self.cfg.pairing.allow_from.iter().any(|a| a == stored);
        let let_in = match msg.kind {
            ConversationKind::Direct => match self.cfg.pairing.dm_policy {
                DmPolicy::Open => true,
                DmPolicy::Allowlist => allowed,
                DmPolicy::Disabled => return Ok(Gate::Stop(Vec::new())),
                DmPolicy::Pairing => false,
            },
            ConversationKind::Group => match self.cfg.pairing.group_policy {
                GroupPolicy::Open => true,
                GroupPolicy::Allowlist => allowed,
                GroupPolicy::Paired => false,
            },
        };
        if let_in {
            return Ok(Gate::Let(Principal::Unpaired));
        }
        if msg.kind == ConversationKind::Direct
            && self.pairing.should_hint(&msg.org, stored, now).await?
        {
            return Ok(reply(PAIR_HINT.into()));
        }
        Ok(Gate::Stop(Vec::new()))
    }

    /// Steps 6–9 for a resolved speaker.
    async fn steps(&self, t: &Turn<'_>) -> Result<Vec<Reply>> {
        let text = t.msg.text.trim();
        // 6. Commands and answers to "Remember this?".
        if let Some(r) = self.command(t, text).await? {
            return Ok(vec![t.reply(r)]);
        }
        if let Some(reply) = self.answer_proposal(t, text).await? {
            return Ok(vec![reply]);
        }
        let mut parts = ReplyParts::default();
        // 7. @policy: sets org-wide policy memory, @notes: teaches the agent; admins only.
        if let Some(policy) = strip_ci(text, "@policy:") {
            let Principal::Human {
                user_id,
                role: Role::Admin,
                ..
            } = &t.principal
            else {
                return Ok(vec![t.reply(POLICY_ADMIN_ONLY)]);
            };
            let content = sanitize(policy);
            if content.is_empty() {
                return Ok(vec![
                    t.reply("An @policy: directive needs some text after it.")
                ]);
            }
            let id = self.write_policy(t.org(), &content, user_id, t.now).await?;
            return Ok(vec![
                t.reply(format!("Written: org_policy updated (id: {id})."))
            ]);
        }
        if let Some(note) = strip_ci(text, "@notes:") {
            if !t.principal.is_human_admin() {
                return Ok(vec![t.reply(NOTES_ADMIN_ONLY)]);
            }
            let content = sanitize(note);
            if content.is_empty() {
                return Ok(vec![
                    t.reply("An @notes: directive needs some text after it.")
                ]);
            }
            let item = self.operational_item(&content).await;
            self.route(t, &[item], Origin::Explicit, &mut parts).await?;
            return Ok(vec![self.render(t, parts)]);
        }
        // 8. Memory routing. Unpaired lines are nobody's; webhook payloads are untrusted.
        let explicit = ["remember that ", "please remember that ", "remember: "]
            .iter()
            .find_map(|p| strip_ci(text, p));
        let skip_extraction = matches!(
            t.principal,
            Principal::Unpaired | Principal::System(SystemPrincipal::Webhook)
        );
        if !skip_extraction {
            let (items, origin) = match explicit {
                Some(rest) => {
                    let mut items: Vec<Candidate> = self
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
                None => (self.extract(text).await, Origin::Implicit),
            };
            let tasks = items
                .iter()
                .filter(|c| c.channel == ItemChannel::Task)
                .count();
            self.route(t, &items, origin, &mut parts).await?;
            // A statement is answered by its receipt, note or question; a request by memory.
            if tasks == 0 && !items.is_empty() {
                return Ok(vec![self.render(t, parts)]);
            }
        }
        // 9. Answer from memory.
        parts.answer = Some(self.answer(t, text).await?);
        Ok(vec![self.render(t, parts)])
    }

    pub(crate) async fn extract(&self, text: &str) -> Vec<Candidate> {
        match self.extractor.extract(text).await {
            Ok(items) => items,
            Err(e) => {
                // Extraction is best effort: the message is stored and still answered.
                tracing::warn!(error = %e, "extractor failed; nothing learned from this message");
                Vec::new()
            }
        }
    }

    /// Apply the write policy to each item and record what happened in `parts`.
    async fn route(
        &self,
        t: &Turn<'_>,
        items: &[Candidate],
        origin: Origin,
        parts: &mut ReplyParts,
    ) -> Result<()> {
        for item in items {
            let content = sanitize(&item.content);
            if content.is_empty() {
                continue;
            }
            match policy::decide(&t.principal, item, origin, &self.policy) {
                Decision::Execute => {}
                Decision::Drop(reason) => {
                    if matches!(reason, DropReason::NeedsAdmin)
                        && !parts.notes.iter().any(|n| n == reason.explain())
                    {
                        parts.notes.push(reason.explain().into());
                    }
                }
                Decision::Write {
                    scope,
                    owner,
                    status,
                } => {
                    let pending = status == Status::Pending;
                    let rec = NewRecord {
                        org: t.org().into(),
                        agent: t.agent().into(),
                        scope,
                        owner,
                        subject: item.subject.clone(),
                        kind: item.kind.clone(),
                        content,
                        status,
                        source: format!(
                            "{}:{}:message:{}",
                            if pending { "proposal" } else { "live" },
                            t.msg.channel,
                            t.message_id
                        ),
                        said_at: t.now,
                        recorded_at: t.now,
                        expires_at: pending
                            .then(|| t.now + self.cfg.memory.proposal_ttl_hours * 3_600_000),
                        conversation: Some(t.msg.conversation.clone()),
                        batch: Some(t.message_id),
                        author: t.author(),
                    };
                    if pending {
                        // Already known, already asked, or declined before: do not ask again.
                        if self
                            .db
                            .has_same(&rec, &[Status::Active, Status::Pending, Status::Rejected])
                            .await?
                        {
                            continue;
                        }
                        self.db.insert_record(&rec).await?;
                        parts.question.push(rec.content.clone());
                        parts.batch = Some(t.message_id);
                    } else {
                        // Saying a live note again re-affirms that record (vetoes still hold)
                        // rather than writing a duplicate.
                        let id = match self.db.find_same(&rec, &[Status::Active]).await? {
                            Some(existing) if status == Status::Active => existing,
                            _ => self.db.insert_record(&rec).await?,
                        };
                        if status == Status::Active {
                            let run = format!("turn:{}", t.message_id);
                            let s = self.db.activate(t.org(), id, "live", &run, t.now).await?;
                            self.revise_beliefs(t.org(), id, &s, "live", &run, t.now)
                                .await;
                            parts.receipts.push(format!(
                                "Written: {} updated (id: {id}).",
                                target_name(scope)
                            ));
                        }
                    }
                }
            }
        }
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

    async fn answer(&self, t: &Turn<'_>, text: &str) -> Result<String> {
        let scope = RetrievalScope {
            org: t.org().into(),
            agent: t.agent().into(),
            // System principals and unpaired senders get no personal memory.
            speaker: t.principal.user_id().map(str::to_string),
            shared: t.shared(),
        };
        let mut found = self.db.retrieve(&scope, &terms(text), 10).await?;
        context::order_by_precedence(&mut found);
        let overridden = context::apply_policy_overrides(&mut found);
        let previous = self
            .db
            .recent_summaries(t.org(), t.agent(), &t.msg.conversation, 3)
            .await?;
        let prompt = context::assemble(
            t.org(),
            t.agent(),
            &t.principal,
            &found,
            &overridden,
            &previous,
        );
        let ctx = ReplyContext {
            principal: &t.principal,
            text,
            memory: &found,
            shared: t.shared(),
            overridden: &overridden,
            prompt: &prompt,
        };
        Ok(match self.responder.respond(&ctx).await {
            Ok(answer) => answer,
            Err(e) => {
                tracing::warn!(error = %e, "responder failed");
                "I can't answer right now; your message is saved. Please try again shortly.".into()
            }
        })
    }

    /// Yes/no to the newest "Remember this?" batch the speaker was asked here.
    async fn answer_proposal(&self, t: &Turn<'_>, text: &str) -> Result<Option<Reply>> {
        let (batch, yes) = match (t.msg.answer, normalise_answer(text)) {
            (Some((batch, yes)), _) => (Some(batch), yes),
            (None, Some(yes)) => (None, yes),
            (None, None) => return Ok(None),
        };
        let Some(author) = t.principal.user_id() else {
            return Ok(None);
        };
        let mut pending = self
            .db
            .pending_proposals(t.org(), t.agent(), &t.msg.conversation, author, t.now)
            .await?;
        if let Some(b) = batch {
            pending.retain(|r| r.batch == Some(b));
        }
        if pending.is_empty() {
            return Ok(Some(t.reply(if batch.is_some() {
                "That question was not asked to you, or it has expired."
            } else {
                "There is nothing waiting for a yes or no."
            })));
        }
        let mut parts = ReplyParts::default();
        for rec in pending {
            if !yes {
                self.db
                    .set_status(t.org(), rec.id, Status::Rejected)
                    .await?;
                continue;
            }
            // Authority is checked again at consent time: a role may have changed since.
            if rec.scope == Scope::AgentNotes && !t.principal.is_human_admin() {
                self.db
                    .set_status(t.org(), rec.id, Status::Rejected)
                    .await?;
                parts.notes.push(DropReason::NeedsAdmin.explain().into());
                continue;
            }
            let run = format!("turn:{}", t.message_id);
            let s = self
                .db
                .activate(t.org(), rec.id, "live", &run, t.now)
                .await?;
            self.revise_beliefs(t.org(), rec.id, &s, "live", &run, t.now)
                .await;
            parts.receipts.push(format!(
                "Written: {} updated (id: {}).",
                target_name(rec.scope),
                rec.id
            ));
        }
        if !yes {
            parts.notes.push("Okay, I won't remember that.".into());
        }
        Ok(Some(self.render(t, parts)))
    }

    /// `/pair …`, `/memory`, "what do you remember about me", `/forget <id>`.
    async fn command(&self, t: &Turn<'_>, text: &str) -> Result<Option<String>> {
        let words: Vec<&str> = text.split_whitespace().collect();
        let lower = text.to_lowercase();
        let first = words
            .first()
            .map(|w| w.to_ascii_lowercase())
            .unwrap_or_default();
        if first == "/pair" {
            return Ok(Some(self.pair_command(t, &words[1..]).await?));
        }
        if first == "/memory"
            || lower.trim_end_matches('?').trim() == "what do you remember about me"
        {
            let Some(user) = t.principal.user_id() else {
                return Ok(Some("I keep no memory for unpaired senders.".into()));
            };
            if t.shared() {
                return Ok(Some(
                    "I'll list what I remember about you in a direct message, not here.".into(),
                ));
            }
            let mut own: Vec<_> = Vec::new();
            for scope in [Scope::Personal, Scope::Person] {
                own.extend(
                    self.db
                        .records(
                            t.org(),
                            &RecordFilter {
                                scope: Some(scope),
                                owner: Some(user.into()),
                                status: Some(Status::Active),
                                ..Default::default()
                            },
                        )
                        .await?,
                );
            }
            if own.is_empty() {
                let viewed = self.viewed_by(t.org(), user).await?;
                return Ok(Some(format!(
                    "I don't remember anything about you yet.{viewed}"
                )));
            }
            let mut out = String::from("Here is what I remember about you:");
            for r in own {
                let tier = if r.scope == Scope::Person {
                    " (everywhere in the org)"
                } else {
                    ""
                };
                out.push_str(&format!("\n- [{}] {}{tier}", r.id, sanitize(&r.content)));
            }
            out.push_str("\nSay /forget <id> to delete one, or /promote <id> to use a preference with every agent.");
            out.push_str(&self.viewed_by(t.org(), user).await?);
            return Ok(Some(out));
        }
        if first == "/promote" {
            let Some(user) = t.principal.user_id() else {
                return Ok(Some("I keep no memory for unpaired senders.".into()));
            };
            let Some(id) = words
                .get(1)
                .and_then(|w| w.trim_start_matches('#').parse::<i64>().ok())
            else {
                return Ok(Some("Usage: /promote <id> (see /memory for ids).".into()));
            };
            return Ok(Some(match self.promote(t.org(), user, id, t.now).await? {
                Ok(()) => format!(
                    "Promoted: record {id} now applies with every agent of the organisation."
                ),
                Err(reason) => reason,
            }));
        }
        if first == "/forget" {
            let Some(user) = t.principal.user_id() else {
                return Ok(Some("I keep no memory for unpaired senders.".into()));
            };
            let Some(id) = words
                .get(1)
                .and_then(|w| w.trim_start_matches('#').parse::<i64>().ok())
            else {
                return Ok(Some("Usage: /forget <id> (see /memory for ids).".into()));
            };
            let rec = match self.db.record(t.org(), id).await {
                Ok(r) => r,
                Err(StoreError::NotFound(_)) => {
                    return Ok(Some(format!("You have no record {id}.")))
                }
                Err(e) => return Err(e.into()),
            };
            if rec.owner.as_deref() != Some(user)
                || !rec.scope.is_personal()
                || rec.status == Status::Deleted
            {
                return Ok(Some(format!("You have no record {id}.")));
            }
            self.db.set_status(t.org(), id, Status::Deleted).await?;
            self.db
                .audit(
                    t.org(),
                    user,
                    "memory.forget",
                    &format!("record:{id}"),
                    &rec.source,
                    t.now,
                )
                .await?;
            return Ok(Some(format!("Forgotten: record {id} is deleted.")));
        }
        Ok(None)
    }

    /// "Viewed by <name> on <date>." for each time an admin opened this person's memory.
    async fn viewed_by(&self, org: &str, user: &str) -> Result<String> {
        let mut out = String::new();
        for e in self.db.audit_about(org, "memory.view", user).await? {
            let name = match self.pairing.user(org, &e.actor).await {
                Ok(u) => u.name,
                Err(_) => e.actor.clone(),
            };
            let date = chrono::DateTime::from_timestamp_millis(e.at)
                .map(|d| d.format("%Y-%m-%d").to_string())
                .unwrap_or_default();
            out.push_str(&format!("\nViewed by {name} on {date}."));
        }
        Ok(out)
    }

    /// Promote one's own individual record to the person tier. Only how the
    /// person likes to work travels: other kinds are `kind_not_promotable`.
    pub async fn promote(
        &self,
        org: &str,
        user: &str,
        id: i64,
        at: i64,
    ) -> Result<std::result::Result<(), String>> {
        let rec = match self.db.record(org, id).await {
            Ok(r) => r,
            Err(StoreError::NotFound(_)) => return Ok(Err(format!("You have no record {id}."))),
            Err(e) => return Err(e.into()),
        };
        if rec.owner.as_deref() != Some(user)
            || rec.scope != Scope::Personal
            || rec.status != Status::Active
        {
            return Ok(Err(format!(
                "You have no individual record {id} to promote."
            )));
        }
        if !PROMOTABLE_KINDS.contains(&rec.kind.as_str()) {
            return Ok(Err(format!(
                "kind_not_promotable: record {id} is a {} record; only preference, vocabulary and rubric_adjustment records can be promoted.",
                rec.kind
            )));
        }
        // Promotion crosses agents: the text passes the sanitiser again.
        self.db
            .move_to_person_tier(org, id, &sanitize(&rec.content))
            .await?;
        self.db
            .audit(
                org,
                user,
                "memory.promote",
                &format!("record:{id}"),
                &rec.kind,
                at,
            )
            .await?;
        Ok(Ok(()))
    }

    async fn pair_command(&self, t: &Turn<'_>, args: &[&str]) -> Result<String> {
        let sub = args.first().map(|s| s.to_ascii_lowercase());
        match sub.as_deref() {
            None => Ok(match &t.principal {
                Principal::Human { role, .. } => format!("You're already paired as {role}."),
                _ => "Pairing needs a direct message from your own account.".into(),
            }),
            Some(action @ ("approve" | "deny")) => {
                if !t.principal.is_human_admin() {
                    return Ok("Only administrators can approve or deny pairing requests.".into());
                }
                let actor = t.author().unwrap_or_default();
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
                        .approve(t.org(), code, role, &actor, t.now)
                        .await
                        .map(|u| {
                            format!(
                                "Approved: {} ({}) is paired as {}.",
                                u.name, u.user_id, u.role
                            )
                        })
                } else {
                    self.pairing
                        .deny(t.org(), code, &actor, t.now)
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

    /// Kind and subject for an explicit operational text (`@notes:`, `@policy:`,
    /// `memory_write`): the extractor's label when it has one, else a note keyed by its words.
    async fn operational_item(&self, content: &str) -> Candidate {
        let (kind, subject) = self
            .extract(content)
            .await
            .into_iter()
            .find(|c| c.channel != ItemChannel::Task)
            .map(|c| (c.kind, c.subject))
            .unwrap_or_else(|| ("note".into(), format!("note:{}", terms(content).join(" "))));
        Candidate {
            channel: ItemChannel::Operational,
            kind,
            subject,
            content: content.to_string(),
        }
    }

    /// Write org-wide policy memory. Callers check that `actor` is an admin
    /// (chat) or an operator (CLI, dashboard); nothing learned ever lands here.
    pub async fn write_policy(&self, org: &str, text: &str, actor: &str, at: i64) -> Result<i64> {
        let content = sanitize(text);
        let item = self.operational_item(&content).await;
        let id = self
            .db
            .insert_record(&NewRecord {
                org: org.into(),
                agent: memory::ANY_AGENT.into(),
                scope: Scope::OrgPolicy,
                owner: None,
                subject: item.subject,
                kind: "policy".into(),
                content,
                status: Status::Active,
                source: format!("policy:{actor}"),
                said_at: at,
                recorded_at: at,
                expires_at: None,
                conversation: None,
                batch: None,
                author: Some(actor.to_string()),
            })
            .await?;
        self.db
            .activate(org, id, "live", &format!("policy:{id}"), at)
            .await?;
        self.db
            .audit(org, actor, "policy.add", &format!("record:{id}"), "", at)
            .await?;
        Ok(id)
    }

    /// The `memory_write` tool: an explicit write with a named scope.
    /// Returns the receipt, or the refusal saying where the item may go.
    pub async fn memory_write(
        &self,
        org: &str,
        agent: &str,
        principal: &Principal,
        scope: &str,
        content: &str,
        at: i64,
    ) -> Result<std::result::Result<String, String>> {
        let Some(tool_scope) = ToolScope::parse(scope) else {
            return Ok(Err(format!(
                "unknown scope `{scope}` (personal, agent_notes)"
            )));
        };
        let (scope, owner) = match policy::decide_tool(principal, tool_scope, &self.policy) {
            Ok(place) => place,
            Err(refusal) => return Ok(Err(refusal.to_string())),
        };
        let content = sanitize(content);
        if content.is_empty() {
            return Ok(Err("memory_write needs content".into()));
        }
        let Candidate { kind, subject, .. } = self.operational_item(&content).await;
        let author = match principal {
            Principal::Human { user_id, .. } => Some(user_id.clone()),
            Principal::System(s) => Some(s.as_str().to_string()),
            Principal::Unpaired => None,
        };
        let id = self
            .db
            .insert_record(&NewRecord {
                org: org.into(),
                agent: agent.into(),
                scope,
                owner,
                subject,
                kind,
                content,
                status: Status::Active,
                source: format!(
                    "tool:memory_write:{}",
                    author.as_deref().unwrap_or("unknown")
                ),
                said_at: at,
                recorded_at: at,
                expires_at: None,
                conversation: None,
                batch: None,
                author,
            })
            .await?;
        let run = format!("tool:{id}");
        let s = self.db.activate(org, id, "live", &run, at).await?;
        self.revise_beliefs(org, id, &s, "live", &run, at).await;
        Ok(Ok(format!(
            "Written: {} updated (id: {id}).",
            target_name(scope)
        )))
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limiter_clock_never_runs_ahead_of_the_wall_clock() {
        let clock = MessageClock::default();
        let now = chrono::Utc::now().timestamp_millis();
        clock.observe(now - 60_000);
        assert_eq!(
            u64::from(clock.now()),
            u64::try_from(now - 60_000).unwrap() * 1_000_000
        );
        // A message stamped a year ahead moves the clock at most the allowed skew,
        // so later, correctly stamped traffic is limited normally within seconds.
        clock.observe(now + 365 * 86_400_000);
        let ahead_ms = i64::try_from(u64::from(clock.now()) / 1_000_000).unwrap() - now;
        assert!(ahead_ms <= MAX_CLOCK_SKEW_MS + 1_000, "{ahead_ms}");
        // Older messages never move it back.
        clock.observe(now - 120_000);
        assert!(i64::try_from(u64::from(clock.now()) / 1_000_000).unwrap() >= now);
    }
}
