//! Step 8: what a message carries for memory, decided by policy and written, asked or refused.

use super::{strip_ci, ReplyParts, Result, Turn, TurnLoop};
use crate::learning::{receipt, Reader};
use crate::llm::offline;
use crate::metrics::{Duplicate, PolicyOutcome};
use adapters::Reply;
use memory::policy::{self, Decision, DropReason, ExtractionRule, Origin};
use memory::sanitize::sanitize;
use memory::terms::terms;
use memory::write::{Activation, Dedupe, Written};
use memory::{Candidate, Cause, ItemChannel, NewRecord, Status};

/// What a conflict question says of the third answer; the dashboard offers
/// it as a button beside yes and no.
pub const KEEPS_BOTH: &str = "both keeps both";

/// How the audit names what a proposal was asked as conflicting with
/// (`memory.conflict`, detail "with:3,5").
pub(super) const CONFLICTS_WITH: &str = "with:";

/// "Remember this?" for a record that conflicts with ones the person keeps:
/// both values and the three answers (docs/memory.md, "Contradictions are
/// asked").
pub(super) fn conflict_question(content: &str, conflicts: &[memory::MemoryRecord]) -> String {
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
pub(super) fn replaced(conflicts: &[memory::MemoryRecord]) -> String {
    let ids: Vec<String> = conflicts.iter().map(|c| format!("#{}", c.id)).collect();
    format!("It replaces {}.", ids.join(", "))
}

/// The receipt's line for records kept beside the new one.
pub(super) fn beside(conflicts: &[memory::MemoryRecord]) -> String {
    let ids: Vec<String> = conflicts.iter().map(|c| format!("#{}", c.id)).collect();
    format!("Kept beside {}.", ids.join(", "))
}

/// What a decided item is kept as: with its value carried into the words of
/// the note it `replaced` (`offline::carried_into`), so the note never says
/// the old value; a correction not carried, without its heading, which says
/// how it was said, not what holds.
fn kept_as(item: &Candidate, content: String, replaced: Option<&memory::MemoryRecord>) -> String {
    match replaced.and_then(|old| offline::carried_into(&old.content, &content)) {
        Some(carried) => carried,
        None if item.channel == ItemChannel::Operational && item.kind == "correction" => {
            offline::unheaded(&content)
        }
        None => content,
    }
}

/// What the policy decided for an item it lets be written.
struct Decided {
    scope: memory::Scope,
    owner: Option<String>,
    status: Status,
}

impl TurnLoop {
    /// The speaker's previous line here, from the conversation the turn
    /// read first when it holds one, else from the store.
    pub(super) async fn previous_text(&self, t: &Turn<'_>) -> Result<Option<String>> {
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

    /// Apply the write policy to each item and record what happened in `parts`.
    pub(super) async fn route(
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
        // Beside a refused claim, what only a model read as the speaker's
        // own ("Me lo ha dicho el capitán del puerto", "Admin here — Birgitta
        // asked me to cover") is the claim's support, not a fact to offer
        // them: the rules' own readings of the speaker are still asked.
        let posing = policy::poses(&t.principal, items, origin, settings);
        let support = |item: &Candidate| {
            posing
                && item.channel == ItemChannel::Personal
                && offline::label(&item.content).is_none()
        };
        for item in policy::without_a_pose(&t.principal, items, origin, settings)
            .filter(|item| !support(item))
        {
            let resolved = self.correction_subject(t, item).await?;
            let item = &resolved;
            let content = sanitize(&item.content);
            if content.is_empty() {
                continue;
            }
            match policy::decide(&t.principal, item, origin, settings) {
                Decision::Execute => {}
                Decision::Drop(reason) => {
                    self.parts.metrics.policy(PolicyOutcome::Dropped);
                    // Told: what needs an admin, and what is never kept. A user
                    // `memory.write_access` lists is not told it needs an admin:
                    // the model's `memory_write` may ask them "Remember this?".
                    let may_write = policy::writes_agent_notes(&t.principal, settings);
                    let told = match reason {
                        DropReason::NeedsAdmin => {
                            !may_write
                                && policy::told_needs_admin(
                                    item,
                                    origin == Origin::Implicit && offline::asks(&t.msg.text),
                                )
                        }
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
                    let decided = Decided {
                        scope,
                        owner,
                        status,
                    };
                    self.write_decided(t, item, content, decided, parts).await?;
                }
            }
        }
        Ok(())
    }

    /// The record `item` is written as, from this turn's message: a pending
    /// one (a proposal) expires unanswered after `memory.proposal_ttl_hours`.
    fn record_of(
        &self,
        t: &Turn<'_>,
        item: &Candidate,
        content: String,
        decided: Decided,
    ) -> NewRecord {
        let Decided {
            scope,
            owner,
            status,
        } = decided;
        let pending = status == Status::Pending;
        NewRecord::said(
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
        .expires_at(pending.then(|| t.now + self.parts.cfg.memory.proposal_ttl_hours * 3_600_000))
        .conversation(Some(t.msg.conversation.clone()))
        .batch(Some(t.message_id))
        .author(t.principal.author_id())
        .on_behalf_of(t.msg.on_behalf_of.clone())
    }

    /// A decided item written as the policy said: a person's record that
    /// conflicts with one they keep is asked with both, whatever asked it
    /// kept (an explicit "remember that", auto-keep), never replaced
    /// unasked; a new value on a subject names the live one it replaces.
    async fn write_decided(
        &self,
        t: &Turn<'_>,
        item: &Candidate,
        content: String,
        decided: Decided,
        parts: &mut ReplyParts,
    ) -> Result<()> {
        let Decided {
            scope,
            owner,
            status,
        } = decided;
        let conflicts = if scope.is_personal() {
            self.live_conflicts(
                (t.org(), t.agent()),
                scope,
                owner.as_deref(),
                (&item.subject, &content),
            )
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
        // A new value on a subject names the live note it replaces (a
        // person's own: the conflicts, asked below).
        let replaced = self
            .live_replaced(
                t.org(),
                t.agent(),
                scope,
                owner.as_deref(),
                (&item.subject, &content),
            )
            .await?;
        let content = kept_as(item, content, replaced.as_ref());
        let replaces = replaced.as_ref().map(replacing);
        let decided = Decided {
            scope,
            owner,
            status,
        };
        let rec = self.record_of(t, item, content, decided);
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
                return Ok(());
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
            Written::Stored { id, activation } if status == Status::Active => {
                self.parts.metrics.policy(PolicyOutcome::Written);
                let retired = activation.map(|a| a.retired).unwrap_or_default();
                let kept = self.receipt_naming(t.org(), receipt(scope, id), replaced, &retired);
                parts.receipts.push(kept.await?);
            }
            // Quarantined: kept for review, no receipt.
            Written::Stored { .. } => self.parts.metrics.policy(PolicyOutcome::Quarantined),
        }
        Ok(())
    }

    /// What the proposal `rec` was asked as conflicting with, still live:
    /// the records the judge named (audited with the question) and those on
    /// its subject.
    pub(super) async fn asked_conflicts(
        &self,
        org: &str,
        rec: &memory::MemoryRecord,
    ) -> Result<Vec<memory::MemoryRecord>> {
        if !rec.scope.is_personal() {
            return Ok(Vec::new());
        }
        // In the proposal's own place: the agent it was said to.
        let mut out = self
            .live_conflicts(
                (org, &rec.agent),
                rec.scope,
                rec.owner.as_deref(),
                (&rec.subject, &rec.content),
            )
            .await?;
        let asked = self
            .parts
            .db
            .audit()
            .about(org, "memory.conflict", &format!("record:{}", rec.id))
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
            let old = self.parts.db.records().get(org, id).await?;
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
    pub(super) async fn replace_on_consent(
        &self,
        org: &str,
        rec: &memory::MemoryRecord,
        conflicts: &[memory::MemoryRecord],
        run: &str,
        now: i64,
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
                .retire(org, old.id, rec.id, &meta, now)
                .await?;
        }
        Ok(())
    }

    /// Whether a note of the organisation's found for `text` names a code it
    /// names ("G3门的密码现在是多少？" of "Apron gate G3 code: 4062"): where one
    /// word is "password" and "door code" alike (密码, 暗証番号, 비밀번호), the
    /// question asks what that note says, and a note passed the credential
    /// screen when it was written: it holds none.
    async fn a_note_names_its_code(&self, t: &Turn<'_>, text: &str) -> Result<bool> {
        let code = |w: &String| {
            w.chars().any(|c| c.is_ascii_digit()) && w.chars().any(char::is_alphabetic)
        };
        let codes: Vec<String> = memory::fulltext::query_tokens(text)
            .into_iter()
            .filter(code)
            .collect();
        if codes.is_empty() {
            return Ok(false);
        }
        let scope = self.retrieval_scope(t).await?;
        let found = self.parts.db.records().retrieve(&scope, text, 10).await?;
        Ok(found.iter().any(|r| {
            !r.record.scope.is_personal()
                && memory::fulltext::document_tokens("", &r.record.content)
                    .iter()
                    .any(|w| codes.contains(w))
        }))
    }

    /// The speaker's live records on `subject` that say something else than
    /// `content`: what a new record of theirs would replace.
    pub(super) async fn live_conflicts(
        &self,
        (org, agent): (&str, &str),
        scope: memory::Scope,
        owner: Option<&str>,
        (subject, content): (&str, &str),
    ) -> Result<Vec<memory::MemoryRecord>> {
        let live = self
            .parts
            .db
            .records()
            .live_on_subject(org, agent, scope, owner, subject)
            .await?;
        Ok(live
            .into_iter()
            .filter(|old| old.content != content)
            .collect())
    }

    /// `conflicts` of the proposal `id` and what the judge finds it
    /// conflicts with among the person's records, audited
    /// (`memory.conflict`), so a yes replaces exactly what was shown.
    pub(super) async fn with_judged(
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

    /// The id of the live record a record of `content` on `subject` would
    /// supersede, having other words in its place, and "replaces #7: “old text”".
    pub(super) async fn replaces(
        &self,
        org: &str,
        agent: &str,
        scope: memory::Scope,
        owner: Option<&str>,
        said: (&str, &str),
    ) -> Result<Option<(i64, String)>> {
        let old = self.live_replaced(org, agent, scope, owner, said).await?;
        Ok(old.as_ref().map(|o| (o.id, replacing(o))))
    }

    /// The live note on `subject` with other words than `content`: what a
    /// note of `content` replaces. None for a person's own record: what it
    /// conflicts with is asked with it (`asked_conflicts`), and a yes's
    /// receipt names those.
    async fn live_replaced(
        &self,
        org: &str,
        agent: &str,
        scope: memory::Scope,
        owner: Option<&str>,
        (subject, content): (&str, &str),
    ) -> Result<Option<memory::MemoryRecord>> {
        if scope.is_personal() {
            return Ok(None);
        }
        let live = self
            .parts
            .db
            .records()
            .live_on_subject(org, agent, scope, owner, subject)
            .await?;
        Ok(live.into_iter().find(|old| old.content != content))
    }
}

impl TurnLoop {
    /// A live write's `receipt` with what it replaces: the live record the
    /// subject rule retired (`replaced`), then each other record of
    /// `retired` (the judge's).
    async fn receipt_naming(
        &self,
        org: &str,
        receipt: String,
        replaced: Option<memory::MemoryRecord>,
        retired: &[i64],
    ) -> Result<String> {
        let named = replaced.as_ref().map(|r| r.id);
        let judged = self.also_replaced(org, retired, named.as_slice()).await?;
        let old = replaced
            .map(|old| format!(" It {}.", replacing(&old)))
            .unwrap_or_default();
        Ok(format!("{receipt}{old}{judged}"))
    }

    /// " It replaces #7: “old text”." for each record in `retired` that is
    /// not `named` already: what the judge retired beside the subject rule
    /// (`crate::beliefs`), said in the receipt, never retired unsaid.
    pub(super) async fn also_replaced(
        &self,
        org: &str,
        retired: &[i64],
        named: &[i64],
    ) -> Result<String> {
        let mut out = String::new();
        for id in retired.iter().filter(|id| !named.contains(id)) {
            let old = self.parts.db.records().get(org, *id).await?;
            out.push_str(&format!(" It {}.", replacing(&old)));
        }
        Ok(out)
    }
}

/// "replaces #7: “old text”": what a new record says of the live one it replaces.
fn replacing(old: &memory::MemoryRecord) -> String {
    format!("replaces #{}: “{}”", old.id, sanitize(&old.content))
}

impl TurnLoop {
    /// Whether `text` asks for an external tool offered to its speaker
    /// (`crate::mcp::Mcp::requested`).
    async fn requests_tool(&self, t: &Turn<'_>, text: &str) -> Result<bool> {
        let Some(mcp) = self.parts.mcp.as_ref().filter(|m| m.configured()) else {
            return Ok(false);
        };
        let roles = self.roles_now(t).await?;
        let run = format!("turn:{}", t.message_id);
        let asked = mcp
            .requested(&self.tool_place(t, &roles, &run), text)
            .await?;
        if let Some(tool) = &asked {
            tracing::info!(%tool, "the message asks for an approved tool; not read for memory");
        }
        Ok(asked.is_some())
    }
}

/// What step 8 left for the reply ([`TurnLoop::read_for_memory`]).
pub(super) enum Routed {
    /// Answer the message (step 9), with what was kept or asked beside it.
    Answer,
    /// The receipts, question or refusal in the reply parts are the answer.
    Render,
    /// This reply is the whole answer.
    Reply(Reply),
}

impl TurnLoop {
    /// Step 8: what the message carries for memory, extracted and routed by
    /// policy into `parts` (receipts, a question, refusals). A message holding
    /// a credential is never read for memory.
    pub(super) async fn read_for_memory(
        &self,
        t: &Turn<'_>,
        text: &str,
        parts: &mut ReplyParts,
    ) -> Result<Routed> {
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
        if credential.is_none()
            && memory::credentials::asks_for_credential(text)
            && !self.a_note_names_its_code(t, text).await?
        {
            return Ok(Routed::Reply(t.reply(policy::CREDENTIAL_NOT_KEPT)));
        }
        if let Some(kind) = credential {
            // A message holding a credential is never read for memory (nor sent
            // to an extractor); the person is told it was not kept.
            self.parts.metrics.policy(PolicyOutcome::Dropped);
            parts.notes.push(policy::credential_refusal(kind).into());
            if !offline::asks(text) {
                return Ok(Routed::Render);
            }
        } else if explicit.is_none() && self.requests_tool(t, text).await? {
            // A request to an approved tool ("Open a ticket about …") is
            // answered (the model calls the tool), not read for memory: the
            // rules would take it for a rule about how the agent works.
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
                    // A question beside statements the rules do not know,
                    // from someone who may not change the team's notes: the
                    // reply is its one model call unless a statement is of
                    // themselves. An extraction call would double the wait
                    // to find, at most, a claim they may not make or a
                    // one-off ("Flat tyre this morning, total chaos. Can I
                    // swap my shift?"), and a small model mislabels the
                    // question itself (docs/models.md, fifth sitting).
                    let settings = self.parts.learning.policy(t.agent());
                    let reader = if offline::asks(text)
                        && !policy::writes_agent_notes(&t.principal, settings)
                    {
                        Reader::RulesThenModelOfTheSpeaker
                    } else {
                        Reader::RulesThenModel
                    };
                    let read = self.parts.learning.read(text, reader).await;
                    // The same extraction call labels a correction the
                    // rules missed (7b): kept as a skill's evidence, not
                    // memory, when it passes the rules' screens.
                    // Unless the message holds memory the rules read: "wait,
                    // correction - handover is 22:00 now. HR changed the rota
                    // this morning" corrects a note, and a small model's label
                    // on its other sentence must not answer it instead.
                    if let Some(clause) = read.correction.as_ref().filter(|_| read.items.is_empty())
                    {
                        if let Some(reply) = self.learn_labelled(t, text, clause).await? {
                            return Ok(Routed::Reply(reply));
                        }
                    }
                    (read.items, Origin::Implicit)
                }
            };
            self.route(t, &items, origin, parts).await?;
            // A statement that was kept or asked about is answered by its receipt or
            // question. A message that asks or requests anything is answered from
            // memory, the notes, receipts and question added to the answer, never
            // instead of it: the rules decide that, not an extractor's labels.
            // A statement that was refused (an operational change by a regular
            // user) is answered by the refusal: a model asked to answer it only
            // repeats the claim back. A rule told to everyone ("Heads up
            // everyone — … Please tell the owners") asks nothing of the agent.
            let kept = !parts.receipts.is_empty() || !parts.question.is_empty();
            let refused = !parts.notes.is_empty();
            let asks = offline::asks(text) && !offline::told_to_everyone(text);
            if (kept || refused) && !asks {
                return Ok(Routed::Render);
            }
        }
        Ok(Routed::Answer)
    }
}
