//! Step 9: the answer from memory: what the reply reads, the model's answer, and the screens it passes.

use super::{ReplyParts, Result, Turn, TurnLoop};
use crate::config::HistoryFor;
use crate::context;
use crate::learning::ProposalPlace;
use crate::llm::{offline, LlmError, ReplyContext};
use crate::tools::TurnTools;
use memory::skill::SkillRevision;
use memory::store::{RetrievalScope, Retrieved};
use memory::{MessageAuthor, StoredMessage};

/// The answer in place of a model's about another person that no memory it
/// was shown supports (`TurnLoop::unknown_person`).
pub fn nothing_on(person: &str) -> String {
    format!("I don't have anything in memory about {person} that I may share.")
}

/// Whether `text` reads as a follow-up to the line before it: it opens like
/// one ("and …", "what about …") or is too short to stand alone.
pub(super) fn follows_up(text: &str) -> bool {
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
pub(super) fn asks_what_they_said(text: &str) -> bool {
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

/// What the reply reads, gathered once ([`TurnLoop::gather`]).
struct Gathered {
    scope: RetrievalScope,
    /// The conversation's live lines.
    history: Vec<StoredMessage>,
    /// The memory found for the message, in precedence order.
    found: Vec<Retrieved>,
    /// Records an org policy overrides.
    overridden: Vec<context::Overridden>,
    /// The skills the answer follows, and their revisions.
    followed: Vec<crate::skills::InForce>,
    skills: Vec<SkillRevision>,
    /// The prompt, for a responder that reads one (the rules read none).
    prompt: Option<context::Prompt>,
    /// What the answer may cite: the records found and the standing notes.
    citable: Vec<Retrieved>,
    /// What memory was found with: the message, or a follow-up read with
    /// the speaker's previous line.
    searched_with: Option<String>,
}

impl TurnLoop {
    /// What the reply reads of the conversation: its live lines before this
    /// message, newest kept, within `turn.history_messages` and
    /// `turn.history_chars`, oldest first; and the newest three summaries.
    /// Read with the turn's first read, or here (system runs). Notes the live
    /// history's size on the turn for the trim check.
    pub(super) async fn conversation(
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
    pub(super) async fn standing_notes(
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
        let mut standing: Vec<Retrieved> = notes.into_iter().map(Retrieved::given).collect();
        // Oldest first, whatever the scope: a new note or policy goes at the
        // end, and the server still holds everything before it.
        let overridden = context::apply_policy_overrides(&mut standing);
        Ok((standing, overridden))
    }

    /// The speaker's own records, added whole to what a model is given in a
    /// private conversation when they fit `turn.standing_notes_chars`: a
    /// question in another language than the record ("w której strefie
    /// teraz pracuję?" of "Przenieśli mnie do strefy D1") shares no word
    /// with it, so a search alone would give the model nothing. None for
    /// the rules, which read no prompt.
    async fn with_speakers_own(
        &self,
        t: &Turn<'_>,
        scope: &RetrievalScope,
        found: &mut Vec<Retrieved>,
    ) -> Result<()> {
        /// More records than this are not given whole, whatever their length.
        const MOST: usize = 30;
        let budget = self.parts.cfg.turn.standing_notes_chars;
        if budget == 0 || t.shared() || !self.parts.responder.reads_prompt() {
            return Ok(());
        }
        let own = self
            .parts
            .db
            .records()
            .speakers_own(scope, MOST as i64 + 1)
            .await?;
        let chars: usize = own.iter().map(|r| r.content.chars().count()).sum();
        if own.len() > MOST || chars > budget {
            return Ok(());
        }
        for record in own {
            if !found.iter().any(|f| f.record.id == record.id) {
                found.push(Retrieved::given(record));
            }
        }
        Ok(())
    }

    /// Where and for whom the turn calls external tools.
    pub(super) fn tool_place<'t>(
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
    pub(super) async fn roles_now(&self, t: &Turn<'_>) -> Result<Vec<String>> {
        Ok(match (t.principal.user_id(), &t.known) {
            // Read with the turn's first read, this turn.
            (Some(_), Some(known)) => known.roles.clone(),
            (Some(user), None) => self.parts.db.role_memory().roles_of(t.org(), user).await?,
            (None, _) => Vec::new(),
        })
    }

    /// What the turn's speaker may read from memory.
    pub(super) async fn retrieval_scope(&self, t: &Turn<'_>) -> Result<RetrievalScope> {
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

    /// Step 9: the answer from memory. What the reply reads is gathered
    /// ([`TurnLoop::gather`]), the model answers with the tools the speaker
    /// may use, and its answer passes the screens ([`TurnLoop::screen`]);
    /// an answer with nothing a person may see is the rules' instead.
    pub(super) async fn answer(
        &self,
        t: &Turn<'_>,
        text: &str,
        parts: &mut ReplyParts,
    ) -> Result<String> {
        let read = self.gather(t, text).await?;
        let run = format!("turn:{}", t.message_id);
        let tools = TurnTools::new(
            &self.parts.lifecycle,
            &read.scope,
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
                mcp.for_turn(&tools, self.tool_place(t, &read.scope.roles, &run))
                    .await?,
            ),
            None => None,
        };
        let offered: &dyn crate::llm::Tools = external
            .as_ref()
            .map_or(&tools as &dyn crate::llm::Tools, |e| e);
        let ctx = ReplyContext {
            principal: &t.principal,
            text,
            searched_with: read.searched_with.as_deref().unwrap_or(text),
            memory: &read.found,
            history: self.shown_history(t, text, &read.history),
            shared: t.shared(),
            overridden: &read.overridden,
            prompt: read.prompt.as_ref().unwrap_or(context::Prompt::unread()),
            tools: Some(offered),
            skills: &read.skills,
        };
        let responded = self.parts.responder.respond(&ctx).await;
        self.record_skill_uses(t, &read.followed);
        // A skill the model drafted is reported by steward, whatever the model said.
        parts.receipts.extend(tools.skill_receipt());
        // A call that waits for the speaker's yes is asked by steward, and
        // one a rate limit stopped is said by steward.
        parts.notes.extend(external.iter().flat_map(|e| e.notes()));
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
        // The records the model found with its own `memory_search`.
        let searched = tools.searched();
        let results: Vec<String> = external.iter().flat_map(|e| e.results()).collect();
        let answered: Vec<String> = external.iter().flat_map(|e| e.answered()).collect();
        let screened = self.screen(
            t,
            text,
            responded,
            &read,
            (&searched, &results, &answered),
            parts,
        );
        let answer = match screened {
            Ok(answer) if !answer.is_empty() => {
                self.checked(t, text, answer, &read.citable, ctx.history)
                    .await?
            }
            // Nothing a person may see, but an external tool answered: what
            // it answered is the answer, shown as a "yes" to a call shows it.
            Ok(_) | Err(LlmError::Invalid(_)) if !results.is_empty() => {
                tracing::warn!(
                    "the model's answer had no text to show; the tool's result is shown"
                );
                results.join("\n")
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
        Ok(finished(t, text, answer, &read))
    }

    /// What the reply reads for `text`: the memory found for it (a follow-up
    /// with none of its own is read with the speaker's previous line), the
    /// standing notes, the skills it follows, the conversation and the prompt.
    async fn gather(&self, t: &Turn<'_>, text: &str) -> Result<Gathered> {
        let scope = self.retrieval_scope(t).await?;
        let (history, previous) = self.conversation(t).await?;
        // A run's webhook payload is data for the reply, never the request:
        // memory and skills are found with the instruction above it.
        let asked = context::instruction_of(text);
        let mut found = self.parts.db.records().retrieve(&scope, asked, 10).await?;
        let mut searched_with = None;
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
                searched_with = Some(both);
            }
        }
        self.with_speakers_own(t, &scope, &mut found).await?;
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
        let skills: Vec<SkillRevision> = followed.iter().map(|s| s.revision.clone()).collect();
        let prompt = self.parts.responder.reads_prompt().then(|| {
            let on_the_question = context::notes_found_for(&found, &standing, |note| {
                crate::beliefs::may_be_about(asked, note)
            });
            context::assemble(
                t.org(),
                t.agent(),
                &t.principal,
                &context::PromptParts {
                    on_the_question: &on_the_question,
                    found: &found,
                    overridden: &overridden,
                    previous: &previous,
                    skills: &skills,
                    standing: &standing,
                    standing_overridden: &standing_overridden,
                },
            )
        });
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
        Ok(Gathered {
            scope,
            history,
            found,
            overridden,
            followed,
            skills,
            prompt,
            citable,
            searched_with,
        })
    }

    /// The conversation lines the model is shown for `text` (`turn.history_for`).
    fn shown_history<'h>(
        &self,
        t: &Turn<'_>,
        text: &str,
        history: &'h [StoredMessage],
    ) -> &'h [StoredMessage] {
        match self.parts.cfg.turn.history_for {
            HistoryFor::Every => history,
            // "What did I ask you …?" is about the conversation itself.
            HistoryFor::FollowUps if asks_what_they_said(text) => history,
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
        }
    }

    /// The skills the answer followed, written with the turn and counted.
    fn record_skill_uses(&self, t: &Turn<'_>, followed: &[crate::skills::InForce]) {
        let actor = t.principal.author_id().unwrap_or_else(|| "unpaired".into());
        let uses = self
            .parts
            .skills
            .uses(t.org(), &actor, t.message_id, followed, t.now);
        {
            let mut writes = t.writes.lock().unwrap_or_else(|e| e.into_inner());
            writes.skill_uses.extend(uses.skill_uses);
            writes.audit.extend(uses.audit);
        }
        for s in followed {
            self.parts.metrics.skill_used(&s.revision.slug);
        }
    }

    /// The screens a model's answer passes before a person sees it: no
    /// prompt or credential echoed, no promise to remember that the turn did
    /// not keep, values that match the note (or an external tool's result
    /// this turn: `results`), and the citation.
    fn screen(
        &self,
        t: &Turn<'_>,
        text: &str,
        responded: std::result::Result<String, LlmError>,
        read: &Gathered,
        (searched, results, answered): (&[i64], &[String], &[String]),
        parts: &ReplyParts,
    ) -> std::result::Result<String, LlmError> {
        // The rules quote the records found whole, as they do when they
        // stand in for a failed model: no model's words to screen.
        let Some(prompt) = &read.prompt else {
            return responded;
        };
        // The message and the records are read once for every check below.
        let words = context::Reading::new(text, &read.citable);
        let scrubbed = responded.map(|a| context::scrub_answer(&a, &words, prompt, &read.found));
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
        let best = offline::best_matches(&read.found);
        // What memory says is opened in the speaker's reply language.
        let memory_says = asked_language(t, read).map_or(context::MEMORY_SAYS, |l| l.memory_says);
        // Everything the model was given, where a value it states must come from.
        let seen: Vec<&str> = [prompt.fixed(), prompt.context(), text]
            .into_iter()
            .chain(read.history.iter().map(|m| m.text.as_str()))
            .chain(answered.iter().map(String::as_str))
            .collect();
        scrubbed.map(|a| {
            let a =
                context::without_unrelated_values(a, &words, &read.found, searched, &read.citable);
            // A record the model's own `memory_search` returned is not in
            // the prompt: its values are not checked against it.
            let a = if searched.is_empty() {
                let kept = context::without_invented_values(a.clone(), &seen);
                context::with_the_note_of_the_dropped(&a, kept, &read.citable, &words, memory_says)
            } else {
                a
            };
            if a.is_empty() {
                a
            } else {
                // A note beside the answer is for a message that asks: a
                // statement ("Hoy he pagado 200 MAD de taxi …") is not
                // answered with what memory says of something near it.
                let a = if offline::asks(text) {
                    context::grounded_given(a, &words, &best, t.shared(), memory_says, results)
                } else {
                    a
                };
                context::cite(a, &words, &read.citable, t.shared())
            }
        })
    }

    /// A screened `answer`, unless it guesses: about a person no memory it
    /// was shown supports, or about what the speaker said when it was shown
    /// none of their lines and none of their memory (the real model answered
    /// Ben "You asked me to remind me about the VPN endpoint"): the rules
    /// answer those.
    async fn checked(
        &self,
        t: &Turn<'_>,
        text: &str,
        answer: String,
        citable: &[Retrieved],
        shown: &[StoredMessage],
    ) -> Result<String> {
        Ok(
            match self.unknown_person(t, text, &answer, citable).await? {
                Some(name) => nothing_on(&name),
                None if shown.is_empty()
                    && asks_what_they_said(text)
                    && !context::cites(&answer)
                    && !citable.iter().any(|r| r.record.scope.is_personal()) =>
                {
                    offline::NOTHING_IN_MEMORY.to_string()
                }
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
    pub(super) async fn unknown_person(
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
    pub(super) async fn reply_language(
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
        Ok(language_asked_for(&asked))
    }
}

/// `answer` as the person reads it: the approved procedure's steps, shown
/// even when a model left them out; each day named in another language than
/// the one the speaker asked for said in theirs too (without one asked for,
/// each day a note quoted word for word names, in the message's language);
/// and a word when two active records
/// hold one subject (an undo brought one back).
fn finished(t: &Turn<'_>, text: &str, answer: String, read: &Gathered) -> String {
    let answer = crate::skills::with_steps(answer, &read.skills);
    // Asked for a language, every day said in another is glossed; else only
    // a note quoted as written, in the language of the message.
    let answer = match asked_language(t, read) {
        Some(lang) => context::days_glossed(&answer, lang),
        None => match context::written_in(text) {
            Some(lang) => context::notes_glossed(answer, &read.citable, lang),
            None => answer,
        },
    };
    match context::disagreement_note(&context::disagreements(&read.found)) {
        Some(note) => format!("{answer}\n\n{note}"),
        None => answer,
    }
}

/// The language the speaker asked to be answered in: a preference among the
/// records `read` found (in a group thread, none: no personal record is read
/// out there), when the answers table has it.
fn asked_language(t: &Turn<'_>, read: &Gathered) -> Option<&'static prompts::answers::Language> {
    read.citable
        .iter()
        .filter(|r| !(t.shared() && r.record.scope.is_personal()))
        .find_map(|r| context::reply_language(&r.record))
        .and_then(|name| prompts::answers::named(&name))
}

/// The language a reply-language preference among `records` asks for, when
/// the answers table has it.
pub(super) fn language_asked_for(
    records: &[memory::MemoryRecord],
) -> Option<&'static prompts::answers::Language> {
    records
        .iter()
        .find_map(context::reply_language)
        .and_then(|name| prompts::answers::named(&name))
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
}
