//! Learning: reading a text for items (the extractor, best effort) and the
//! explicit writes beside the turn — `@policy:`, the `memory_write` tool, and
//! one archived line learned at trim or relearn. Each asks `memory::policy`
//! where an item may go and keeps it through `memory::write`.

use crate::beliefs::Beliefs;
use crate::config::Config;
use crate::error::Result;
use crate::llm::{offline, Extraction, Extractor};
use crate::metrics::{Duplicate, Metrics, PolicyOutcome};
use memory::grounding::{self, Grounding};
use memory::policy::{self, Decision, Origin, PolicySettings, ToolScope, WriteBy};
use memory::sanitize::sanitize;
use memory::terms::terms;
use memory::write::{split_refusal, Activation, Dedupe, Written};
use memory::{
    Candidate, Cause, Db, ItemChannel, NewRecord, Principal, Scope, Status, StoredMessage,
};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Where a receipt says a record of `scope` went.
pub fn place(scope: Scope) -> &'static str {
    match scope {
        Scope::AgentNotes | Scope::OrgPolicy | Scope::Role => scope.as_str(),
        Scope::Personal | Scope::Person => "personal memory",
    }
}

/// The receipt of a kept record ("Written: personal memory updated (id: 7).").
pub fn receipt(scope: Scope, id: i64) -> String {
    prompts::answers::english().receipt(place(scope), id)
}

/// The receipt of a record quarantined for review (a run's `memory_write`).
pub fn review_receipt(scope: Scope, id: i64) -> String {
    format!(
        "Queued for review: {} (id: {id}, unverified); an administrator confirms or rejects it.",
        scope.as_str()
    )
}

/// The `source` of a `memory_write`'s record: the tool and who wrote it (a
/// user id, or the system principal of a run), which the review queue shows.
/// `proposed` for a model's write asked as "Remember this?".
fn tool_source(principal: &Principal, proposed: bool) -> String {
    let author = principal.author_id();
    format!(
        "{}tool:memory_write:{}",
        if proposed { "proposal:" } else { "" },
        author.as_deref().unwrap_or("unknown")
    )
}

/// The item `item` points at, as kept: the clause the speaker said, as the
/// rules normalise it when they recognise it (their channel, kind and subject
/// too: a model's label is a guess, and the rules key one subject alike for
/// a note and its correction), else the clause itself under the model's labels.
fn as_said(clause: &str, item: Candidate) -> Candidate {
    match offline::label(clause) {
        // The rules know the text but not its subject: the model's labels
        // stay — except for a note the rules know only by its value, which
        // they already asked about under their own key (asked once).
        Some(rules)
            if rules.subject.starts_with(offline::UNKEYED)
                && rules.kind != "correction"
                && rules.kind != offline::VALUED_KIND =>
        {
            Candidate {
                content: rules.content,
                channel: rules.channel,
                ..item
            }
        }
        Some(rules) => rules,
        None => Candidate {
            content: offline::capitalise(clause.trim().trim_end_matches(['.', ',', ';']).trim()),
            ..item
        },
    }
}

/// Whether `clause` says something of its speaker: said in the first person,
/// in more than one word — "Moi!" greets in Finnish, though French "moi" is
/// "me" — where a script without spaces says a sentence in one "word".
fn says_of_the_speaker(clause: &str) -> bool {
    let worded = clause.split_whitespace().nth(1).is_some()
        || clause
            .chars()
            .filter(|c| crate::context::is_unspaced_script(*c))
            .nth(1)
            .is_some();
    worded && offline::first_person(clause)
}

/// Who reads a message's statements for memory ([`Learning::read`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reader {
    /// The rules, and the extractor model for the statements they do not know.
    RulesThenModel,
    /// The rules, and the extractor model only when a statement they do not
    /// know is the speaker's of themselves (a fact of theirs the rules miss).
    RulesThenModelOfTheSpeaker,
}

/// What [`Learning::read`] found in a message.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Read {
    pub items: Vec<Candidate>,
    /// The speaker's clause a model labelled a correction, when it is one of theirs.
    pub correction: Option<String>,
}

/// Where a model's proposal is asked: the turn's message (its org, agent and
/// conversation) and speaker.
pub struct ProposalPlace<'a> {
    pub msg: &'a adapters::Inbound,
    pub principal: &'a Principal,
    /// The turn's batch (its stored message id), answered by yes/no or a button.
    pub batch: i64,
    pub now: i64,
    pub expires_at: i64,
}

impl ProposalPlace<'_> {
    /// A record said here: in the turn's message, its conversation and batch,
    /// by its principal.
    fn record(
        &self,
        scope: Scope,
        kind: impl Into<String>,
        subject: impl Into<String>,
        content: impl Into<String>,
    ) -> NewRecord {
        NewRecord::said(
            &self.msg.org,
            &self.msg.agent,
            scope,
            kind,
            subject,
            content,
            self.now,
        )
        .conversation(Some(self.msg.conversation.clone()))
        .batch(Some(self.batch))
        .author(self.principal.author_id())
        .on_behalf_of(self.msg.on_behalf_of.clone())
    }
}

/// What a model's `memory_write` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelWrite {
    /// A pending record, asked of the speaker as "Remember this?".
    Proposed {
        id: i64,
        content: String,
    },
    /// A run's write, kept unverified for an administrator's review.
    Quarantined {
        id: i64,
        content: String,
    },
    /// Already known, already asked or declined: nothing new.
    Known,
    Refused(String),
}

/// Statuses under which an item counts as already known to a relearn or trim:
/// kept, history, quarantined, forgotten (the tombstone) or declined.
const KNOWN: [Status; 5] = [
    Status::Active,
    Status::Superseded,
    Status::Unverified,
    Status::Deleted,
    Status::Rejected,
];

/// The write policy's settings of each agent: the global ones, and those of
/// agents with settings of their own (`[agents.<id>]`).
#[derive(Debug, Clone, Default)]
pub struct AgentPolicies {
    pub default: PolicySettings,
    pub agents: BTreeMap<String, PolicySettings>,
}

impl AgentPolicies {
    /// Every agent's settings from the configuration.
    pub fn from_config(cfg: &Config) -> AgentPolicies {
        let of = |agent: Option<&str>| PolicySettings {
            auto_keep: agent.map_or(cfg.memory.auto_keep, |a| cfg.auto_keep(a)),
            write_access: cfg.memory.write_access.clone(),
        };
        AgentPolicies {
            default: of(None),
            agents: cfg
                .agents
                .keys()
                .map(|id| (id.clone(), of(Some(id))))
                .collect(),
        }
    }

    pub fn of(&self, agent: &str) -> &PolicySettings {
        self.agents.get(agent).unwrap_or(&self.default)
    }
}

pub struct Learning {
    db: Db,
    policy: AgentPolicies,
    extractor: Arc<dyn Extractor>,
    beliefs: Arc<Beliefs>,
    metrics: Metrics,
}

impl Learning {
    pub fn new(
        db: Db,
        policy: AgentPolicies,
        extractor: Arc<dyn Extractor>,
        beliefs: Arc<Beliefs>,
        metrics: Metrics,
    ) -> Self {
        Learning {
            db,
            policy,
            extractor,
            beliefs,
            metrics,
        }
    }

    /// The write policy's settings for `agent`.
    pub fn policy(&self, agent: &str) -> &PolicySettings {
        self.policy.of(agent)
    }

    pub fn beliefs(&self) -> &Beliefs {
        &self.beliefs
    }

    /// What `text` holds to remember, each item grounded in the speaker's
    /// own words (ARCHITECTURE.md, "Only what was said"). Questions, requests
    /// and greetings are never read: a text with nothing else makes no model
    /// call. The extractor reads the statements only; each item it returns
    /// must point at one clause of them (`memory::grounding`), and what is
    /// kept is that clause as the rules normalise it, never the model's
    /// wording. Best effort: on failure the message is still answered, and
    /// nothing is learned from it.
    pub async fn extract(&self, text: &str) -> Vec<Candidate> {
        self.read(text, Reader::RulesThenModel).await.items
    }

    /// [`Learning::extract`], and the statement the same model call labelled
    /// a correction of how a task was answered: the speaker's own clause it
    /// points at (`memory::grounding`), never the model's wording. Whether
    /// that clause is a correction the skills rules decide
    /// (`skills::corrections::read_labelled`), not the label.
    pub async fn read(&self, text: &str, reader: Reader) -> Read {
        let said = offline::statements(text);
        if said.is_empty() {
            return Read::default();
        }
        let clauses: Vec<&str> = said.iter().map(String::as_str).collect();
        let labels: Vec<Option<Candidate>> = clauses.iter().map(|c| offline::label(c)).collect();
        let reason_of = reasons(&labels);
        // A statement the rules do not know, or know only by its words.
        let unknown = |l: &Option<Candidate>| {
            l.as_ref()
                .is_none_or(|c| c.subject.starts_with(offline::UNKEYED))
        };
        let keyed: Vec<bool> = labels.iter().map(|l| !unknown(l)).collect();
        // Every statement is one the rules know and key: a model has nothing to add.
        let known = !labels.iter().any(unknown);
        let of_the_speaker = clauses
            .iter()
            .zip(&labels)
            .any(|(c, l)| unknown(l) && says_of_the_speaker(c));
        let by_rules = offline::joined(labels.into_iter().flatten().collect());
        if known || (reader == Reader::RulesThenModelOfTheSpeaker && !of_the_speaker) {
            return Read {
                items: by_rules,
                correction: None,
            };
        }
        let Extraction {
            items,
            correction: label,
        } = match self.extractor.extract_labelled(&said.join("\n")).await {
            Ok(answer) => answer,
            Err(e) => {
                tracing::warn!(error = %e, "extractor failed; nothing learned from this message");
                return Read::default();
            }
        };
        let correction = label.and_then(|label| match grounding::ground(&label, &clauses) {
            // A rule framed for everyone is a note, whatever the label (the
            // real model labelled "Standing rule: always tag releases with
            // the ticket number" a correction of its last answer).
            Grounding::Supported { clause } if offline::frames_a_rule(clause) => None,
            Grounding::Supported { clause } => Some(clause.to_string()),
            unsupported => {
                self.metrics.policy(PolicyOutcome::Unsupported);
                tracing::warn!(
                    label = %label.chars().take(200).collect::<String>(),
                    why = %unsupported.why(),
                    "correction label not supported by the speaker's words; dropped"
                );
                None
            }
        });
        let read = Clauses {
            said: &clauses,
            keyed: &keyed,
            reason_of: &reason_of,
        };
        let out = self.models_items(items, &read, by_rules);
        Read {
            items: out,
            correction,
        }
    }

    /// The model's `items` kept, each as the speaker's own `clauses` said it,
    /// and the rules' items `by_rules` beside them: what the speaker said of
    /// themselves, in their words, never the model's.
    fn models_items(
        &self,
        items: Vec<Candidate>,
        read: &Clauses<'_>,
        mut by_rules: Vec<Candidate>,
    ) -> Vec<Candidate> {
        let clauses = read.said;
        let mut out: Vec<Candidate> = Vec::new();
        for item in items {
            if item.channel == ItemChannel::Task {
                continue;
            }
            let clause = match grounding::ground(&item.content, clauses) {
                Grounding::Supported { clause } => clause,
                unsupported => {
                    self.metrics.policy(PolicyOutcome::Unsupported);
                    tracing::warn!(
                        item = %item.content.chars().take(200).collect::<String>(),
                        why = %unsupported.why(),
                        "extracted item not supported by the speaker's words; dropped"
                    );
                    continue;
                }
            };
            let at = clauses.iter().position(|c| *c == clause);
            // A clause the rules know and key is theirs: the model's reading of
            // it would ask the same thing twice, worded two ways.
            if at.is_some_and(|k| read.keyed[k]) {
                continue;
            }
            let wish = at.and_then(|k| read.reason_of[k].as_deref());
            if wish.is_some_and(|wish| joined_as_reason(&mut by_rules, wish, clause)) {
                continue;
            }
            let mut kept = as_said(clause, item);
            // A statement the speaker made of themselves that the rules do not
            // know is theirs, whatever a model's label: personal memory is the
            // speaker's own, so this never widens what anyone may change.
            if kept.channel == ItemChannel::Operational
                && offline::label(clause).is_none()
                && offline::first_person(clause)
            {
                kept.channel = ItemChannel::Personal;
            }
            // About the speaker means said of themselves: "He told you in
            // private" is no fact about the speaker, whatever the label.
            if kept.channel == ItemChannel::Personal && !offline::of_themselves(clause) {
                self.metrics.policy(PolicyOutcome::Unsupported);
                tracing::warn!(
                    clause,
                    "a personal item not said in the first person; dropped"
                );
                continue;
            }
            if !out.iter().any(|o| o.content == kept.content) {
                out.push(kept);
            }
        }
        // What the rules recognise is never lost to a model that missed it:
        // the same normalisation of the speaker's own clause, offline or not.
        for rules in by_rules {
            if !out.iter().any(|o| o.content == rules.content) {
                out.push(rules);
            }
        }
        out
    }

    /// Kind and subject for an explicit operational text (`@notes:`, `@policy:`,
    /// `memory_write`), from the rules alone (no model call): their label when
    /// they recognise the text, else a note keyed by its words.
    pub fn operational_item(&self, content: &str) -> Candidate {
        let (kind, subject) = offline::clauses(content)
            .iter()
            .find_map(|c| offline::label(c))
            // Known only by the value it names: keyed by all its words below.
            .filter(|c| c.kind != offline::VALUED_KIND)
            .map(|c| (c.kind, c.subject))
            .unwrap_or_else(|| {
                (
                    offline::VALUED_KIND.into(),
                    format!("note:{}", terms(content).join(" ")),
                )
            });
        Candidate {
            channel: ItemChannel::Operational,
            kind,
            subject,
            content: content.to_string(),
        }
    }

    /// Write org-wide policy memory. Callers check that `actor` is an admin
    /// (chat, through `policy::decide_directive`) or an operator (CLI,
    /// dashboard); nothing learned ever lands here. What memory never keeps
    /// is refused by the write path (`StoreError::Write`), which each caller
    /// answers: chat's reply, the API's 422, the CLI's exit status.
    pub async fn write_policy(&self, org: &str, text: &str, actor: &str, at: i64) -> Result<i64> {
        let content = text.trim();
        let item = self.operational_item(content);
        let rec = NewRecord::said(
            org,
            memory::ANY_AGENT,
            Scope::OrgPolicy,
            "policy",
            item.subject,
            content,
            at,
        )
        .source(format!("policy:{actor}"))
        .author(Some(actor.to_string()));
        let id = self
            .db
            .records()
            .write_in_own_run(&rec, "policy", &memory::write::NoRevision)
            .await?;
        self.db
            .audit()
            .append(
                org,
                actor,
                "policy.add",
                &format!("record:{id}"),
                &memory::admin_text::AdminText::empty(),
                at,
            )
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
        // The body's `return`s leave this block, so each outcome is counted once.
        let written: Result<std::result::Result<String, String>> = async {
            let Some(tool_scope) = ToolScope::parse(scope) else {
                return Ok(Err(format!(
                    "unknown scope `{scope}` (personal, agent_notes)"
                )));
            };
            let (scope, owner) =
                match policy::decide_tool(principal, tool_scope, self.policy(agent)) {
                    Ok(place) => place,
                    Err(refusal) => return Ok(Err(refusal.to_string())),
                };
            if content.trim().is_empty() {
                return Ok(Err("memory_write needs content".into()));
            }
            // What memory never keeps, the write path refuses (`WriteRefusal`).
            let content = content.trim().to_string();
            let Candidate { kind, subject, .. } = self.operational_item(&content);
            let status = policy::write_status(principal, WriteBy::Speaker);
            let rec = NewRecord::said(org, agent, scope, kind, subject, content, at)
                .owner(owner)
                .source(tool_source(principal, false))
                .author(principal.author_id());
            if status == Status::Active {
                let written = self
                    .db
                    .records()
                    .write_in_own_run(&rec, "tool", self.beliefs.as_ref())
                    .await;
                return Ok(split_refusal(written)?
                    .map(|id| receipt(scope, id))
                    .map_err(|refusal| refusal.to_string()));
            }
            // A run's write waits in the review queue.
            let written = self
                .db
                .records()
                .write(
                    &rec.status(status),
                    Dedupe::SkipIfAny(&KNOWN),
                    Activation::None,
                    self.beliefs.as_ref(),
                )
                .await;
            let written = match split_refusal(written)? {
                Ok(written) => written,
                Err(refusal) => return Ok(Err(refusal.to_string())),
            };
            Ok(Ok(match written {
                Written::Skipped => {
                    "Nothing new: that is already known, waiting for review, or was declined."
                        .into()
                }
                Written::Stored { id, .. } => review_receipt(scope, id),
            }))
        }
        .await;
        if let Ok(outcome) = &written {
            self.metrics.policy(match outcome {
                Ok(text) if text.starts_with("Queued for review") => PolicyOutcome::Quarantined,
                Ok(_) => PolicyOutcome::Written,
                Err(_) => PolicyOutcome::Refused,
            });
        }
        written
    }

    /// A `memory_write` a model made during a reply (`policy::decide_model_tool`):
    /// a proposal asked of the speaker, never a saved record; or the refusal
    /// saying where the item may go.
    pub async fn propose_model_write(
        &self,
        at: &ProposalPlace<'_>,
        scope: &str,
        content: &str,
    ) -> Result<ModelWrite> {
        // The body's `return`s leave this block, so each outcome is counted once.
        let proposed: Result<ModelWrite> = async {
            let Some(tool_scope) = ToolScope::parse(scope) else {
                return Ok(ModelWrite::Refused(format!(
                    "unknown scope `{scope}` (personal, agent_notes)"
                )));
            };
            let Decision::Write {
                scope,
                owner,
                status,
            } = (match policy::decide_model_tool(
                at.principal,
                tool_scope,
                content,
                self.policy(&at.msg.agent),
            ) {
                Ok(decision) => decision,
                Err(refusal) => return Ok(ModelWrite::Refused(refusal.to_string())),
            })
            else {
                return Ok(ModelWrite::Refused("memory_write cannot keep that".into()));
            };
            if content.trim().is_empty() {
                return Ok(ModelWrite::Refused("memory_write needs content".into()));
            }
            // The write path's own screen, before the text is grounded: its
            // refusal, not a grounding one, for what memory never keeps.
            let content = match memory::write::screen_text("", content) {
                Ok(kept) => kept,
                Err(refusal) => return Ok(ModelWrite::Refused(refusal.to_string())),
            };
            // A run's write is reviewed, not grounded (`policy::grounds_model_write`).
            if !policy::grounds_model_write(at.principal) {
                return self
                    .keep_for_review(at, scope, owner, status, content)
                    .await;
            }
            // Only what the speaker stated in this message, in their words: a
            // model's proposal is a pointer like an extractor's item.
            let said = offline::statements(&at.msg.text);
            let clauses: Vec<&str> = said.iter().map(String::as_str).collect();
            let Grounding::Supported { clause } = grounding::ground(&content, &clauses) else {
                return Ok(ModelWrite::Refused(
                    "memory_write keeps only what the speaker said in this message, in their words".into(),
                ));
            };
            let asked = Candidate {
                channel: if scope.is_personal() {
                    ItemChannel::Personal
                } else {
                    ItemChannel::Operational
                },
                ..self.operational_item(&content)
            };
            let item = as_said(clause, asked);
            if scope.is_personal() && item.channel == ItemChannel::Operational {
                return Ok(ModelWrite::Refused(
                    "that is how the organisation works, not something about the speaker: only an administrator can teach it".into(),
                ));
            }
            if scope.is_personal() && !offline::first_person(clause) {
                return Ok(ModelWrite::Refused(
                    "personal memory keeps what the speaker said about themselves".into(),
                ));
            }
            let Candidate {
                kind,
                subject,
                content,
                ..
            } = item;
            let rec = at
                .record(scope, kind, subject, content)
                .owner(owner)
                .status(status)
                .source(tool_source(at.principal, true))
                .expires_at(Some(at.expires_at));
            // Already known, already asked, or declined before: do not ask again.
            let known = [Status::Active, Status::Pending, Status::Rejected];
            self.write_unconfirmed(rec, &known, |id, content| ModelWrite::Proposed { id, content })
                .await
        }
        .await;
        match &proposed {
            Ok(ModelWrite::Proposed { .. }) => self.metrics.policy(PolicyOutcome::Proposed),
            Ok(ModelWrite::Quarantined { .. }) => self.metrics.policy(PolicyOutcome::Quarantined),
            Ok(ModelWrite::Refused(_)) => self.metrics.policy(PolicyOutcome::Refused),
            Ok(ModelWrite::Known) => self.metrics.duplicate(Duplicate::Record),
            Err(_) => {}
        }
        proposed
    }

    /// A run's `memory_write`, with the status the policy gave it
    /// (`policy::write_status`: unverified, the review queue): kept as the
    /// model wrote it — a run records a result its instruction never said, so
    /// it is not grounded in the message (`policy::grounds_model_write`); an
    /// administrator's review is the check. Its source names the principal,
    /// its conversation and batch the run.
    async fn keep_for_review(
        &self,
        at: &ProposalPlace<'_>,
        scope: Scope,
        owner: Option<String>,
        status: Status,
        content: String,
    ) -> Result<ModelWrite> {
        if status != Status::Unverified {
            return Ok(ModelWrite::Refused(
                "memory_write keeps only what the speaker said in this message, in their words"
                    .into(),
            ));
        }
        let Candidate { kind, subject, .. } = self.operational_item(&content);
        let rec = at
            .record(scope, kind, subject, content)
            .owner(owner)
            .status(Status::Unverified)
            .source(tool_source(at.principal, false));
        // Already known, already queued, forgotten or declined: not again.
        self.write_unconfirmed(rec, &KNOWN, |id, content| ModelWrite::Quarantined {
            id,
            content,
        })
        .await
    }

    /// Write a model's record that someone confirms first (pending for the
    /// speaker, unverified for review), unless a record of a `known` status
    /// says it already: refused, known, or `kept` with its id and content.
    async fn write_unconfirmed(
        &self,
        rec: NewRecord,
        known: &[Status],
        kept: fn(i64, String) -> ModelWrite,
    ) -> Result<ModelWrite> {
        let written = self
            .db
            .records()
            .write(
                &rec,
                Dedupe::SkipIfAny(known),
                Activation::None,
                self.beliefs.as_ref(),
            )
            .await;
        Ok(match split_refusal(written)? {
            Err(refusal) => ModelWrite::Refused(refusal.to_string()),
            Ok(Written::Skipped) => ModelWrite::Known,
            Ok(Written::Stored { id, .. }) => kept(id, rec.content),
        })
    }

    /// Learn one item said in an archived `line` by `author` (whose authority
    /// `policy::stored_authority` gave): the policy decides; the item is
    /// written unless the same item is already known, was forgotten (a
    /// tombstone) or declined. Proposals are never made from archives.
    #[allow(clippy::too_many_arguments)]
    pub async fn learn_line(
        &self,
        author: &Principal,
        item: &Candidate,
        origin: Origin,
        line: &StoredMessage,
        source: &str,
        cause: Cause,
        run_id: &str,
        now: i64,
    ) -> Result<Option<(i64, Status)>> {
        let content = sanitize(&item.content);
        if content.is_empty() {
            return Ok(None);
        }
        let Decision::Write {
            scope,
            owner,
            status,
        } = policy::decide(author, item, origin, self.policy(&line.agent))
        else {
            return Ok(None);
        };
        if status == Status::Pending {
            return Ok(None);
        }
        let rec = NewRecord::said(
            &line.org,
            &line.agent,
            scope,
            &item.kind,
            &item.subject,
            content,
            line.said_at,
        )
        .owner(owner)
        .status(status)
        .source(source)
        .recorded_at(now)
        .conversation(Some(line.conversation.clone()))
        .author(line.sender.clone());
        let written = self
            .db
            .records()
            .write(
                &rec,
                Dedupe::SkipIfAny(&KNOWN),
                Activation::Run { cause, run_id },
                self.beliefs.as_ref(),
            )
            .await;
        // What memory never keeps is skipped like a known item.
        Ok(split_refusal(written)?
            .ok()
            .and_then(|w| w.id())
            .map(|id| (id, status)))
    }
}

/// For each clause, the subject of the preference the rules read in the
/// clause before it, when they do not know this one: its reason, not a
/// second thing to remember ("¿Me puedes contestar en español? Es que leo
/// más rápido en mi idioma" is one record, as the rules join their own).
fn reasons(labels: &[Option<Candidate>]) -> Vec<Option<String>> {
    let wished = |l: &Option<Candidate>| {
        l.as_ref()
            .filter(|c| c.channel == ItemChannel::Personal && c.kind == "preference")
            .map(|c| c.subject.clone())
    };
    (0..labels.len())
        .map(|k| match k.checked_sub(1) {
            Some(before) if labels[k].is_none() => wished(&labels[before]),
            _ => None,
        })
        .collect()
}

/// The statements of one message as the rules read them: whether they know
/// and key each, and the preference each is the reason of, if any.
struct Clauses<'a> {
    said: &'a [&'a str],
    keyed: &'a [bool],
    reason_of: &'a [Option<String>],
}

/// `clause` joined to the rules' preference on `wish` as its reason; false
/// when the rules kept no such preference. A reply language's record names
/// the language alone (`offline::joined`): its reason is not kept.
fn joined_as_reason(by_rules: &mut [Candidate], wish: &str, clause: &str) -> bool {
    let Some(joined) = by_rules.iter_mut().find(|r| r.subject == wish) else {
        return false;
    };
    if wish != offline::ANSWER_IN_SUBJECT && !joined.content.contains(clause) {
        joined.content = offline::continued(&joined.content, clause);
    }
    true
}
