//! Automated runs: turns no person started. A schedule's slot
//! (`schedules.rs`), a signed webhook delivery (`webhooks.rs`) or an
//! administrator's "run this skill now" each becomes one run: a conversation
//! `run:<name>/<id>` whose one message is the procedure — an approved skill
//! followed as a standing procedure, or an administrator's instruction — sent
//! under a system principal, answered by the turn loop under the memory rules
//! of system runs (`memory::policy`), and delivered to its target through the
//! channel's outbound path (`channels::deliver`).

pub mod schedules;
pub mod webhooks;

use crate as channels;
use crate::{ConversationRef, DeliveryError};
use adapters::{ConversationKind, Inbound};
use chrono::{TimeZone, Utc};
use memory::run::{Run, RunOutcome, Trigger};
use memory::skill::SkillRevision;
use memory::store::NewRun;
use memory::{StoredMessage, SystemPrincipal};
use std::sync::Arc;
use std::time::Instant;
use steward_core::config::{Deliver, Procedure, RunTarget};
use steward_core::context;
use steward_core::services::Services;

/// The channel name a run's lines are stored with.
pub const CHANNEL: &str = "run";

/// Why a run could not start.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("agent `{agent}` has no approved skill `{slug}` in organisation `{org}`")]
    NoSkill {
        org: String,
        agent: String,
        slug: String,
    },
    #[error(transparent)]
    Store(#[from] memory::StoreError),
}

/// A run about to start: what it follows and under whom.
#[derive(Debug, Clone)]
pub struct Prepared {
    pub target: RunTarget,
    pub trigger: Trigger,
    pub principal: SystemPrincipal,
    /// The skill revision followed, for a standing procedure.
    pub skill: Option<SkillRevision>,
}

/// Who started a run, beside its trigger.
#[derive(Debug, Clone, Default)]
pub struct Start {
    /// The administrator (on demand) or the webhook's delivery id.
    pub by: String,
    /// A webhook's body: data for the model, never a directive.
    pub payload: Option<String>,
}

/// Starts runs and carries them out. Cheap to clone.
#[derive(Clone)]
pub struct Runner {
    services: Arc<Services>,
}

impl Runner {
    pub fn new(services: &Services) -> Runner {
        Runner {
            services: Arc::new(services.clone()),
        }
    }

    pub fn services(&self) -> &Services {
        &self.services
    }

    /// What `target` would run as on `trigger`: its principal, and the skill
    /// revision in force now when it follows one (refused when there is none).
    pub async fn prepare(
        &self,
        target: &RunTarget,
        trigger: Trigger,
    ) -> Result<Prepared, RunError> {
        let skill = match &target.procedure {
            Procedure::Text(_) => None,
            Procedure::Skill(slug) => Some(self.skill_in_force(target, slug).await?),
        };
        let principal = principal_of(trigger, &target.procedure);
        Ok(Prepared {
            target: target.clone(),
            trigger,
            principal,
            skill,
        })
    }

    async fn skill_in_force(
        &self,
        target: &RunTarget,
        slug: &str,
    ) -> Result<SkillRevision, RunError> {
        let active = self
            .services
            .db()
            .skills()
            .active(&target.org, &target.agent)
            .await?;
        active
            .into_iter()
            .find(|r| r.slug == slug)
            .ok_or_else(|| RunError::NoSkill {
                org: target.org.clone(),
                agent: target.agent.clone(),
                slug: slug.to_string(),
            })
    }

    /// Record `prepared` as started; [`Runner::carry_out`] does the rest.
    pub async fn start(
        &self,
        prepared: &Prepared,
        start: &Start,
    ) -> Result<Run, memory::StoreError> {
        let t = &prepared.target;
        let deliver = t.deliver.to_string();
        let run = self
            .services
            .db()
            .runs()
            .start(&NewRun {
                org: &t.org,
                agent: &t.agent,
                name: &t.name,
                trigger: prepared.trigger,
                principal: prepared.principal.as_str(),
                skill: prepared.skill.as_ref().map(|s| (s.slug.as_str(), s.rev)),
                started_by: &start.by,
                deliver: &deliver,
                at: self.services.clock().now_ms(),
            })
            .await?;
        Ok(run)
    }

    /// Start `prepared` and carry it out before returning its record.
    pub async fn run_now(
        &self,
        prepared: &Prepared,
        start: &Start,
    ) -> Result<Run, memory::StoreError> {
        let run = self.start(prepared, start).await?;
        Ok(self.carry_out(&run, prepared, start).await)
    }

    /// Run skill `target` now on an administrator's word (`by`, recorded as
    /// `started_by`), under `sop-system`, and return the finished run. The
    /// run goes on in its own task, so a caller that stops waiting (a closed
    /// connection) never cuts it off midway. [`RunError::NoSkill`] when the
    /// skill is not in force for the target's agent.
    pub async fn on_demand(&self, target: &RunTarget, by: &str) -> Result<Run, RunError> {
        let prepared = self.prepare(target, Trigger::OnDemand).await?;
        let start = Start {
            by: by.to_string(),
            payload: None,
        };
        let run = self.start(&prepared, &start).await?;
        let (runner, started) = (self.clone(), run.clone());
        let task = tokio::spawn(async move { runner.carry_out(&started, &prepared, &start).await });
        match task.await {
            Ok(done) => Ok(done),
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            // The runtime is stopping: the run stays recorded as running.
            Err(_) => Ok(run),
        }
    }

    /// The lines of `run`'s conversation, oldest first: its instruction (a
    /// system line) and the agent's answer.
    pub async fn lines(&self, run: &Run) -> Result<Vec<StoredMessage>, memory::StoreError> {
        self.services
            .db()
            .conversations()
            .history(&run.org, &run.agent, &run.conversation)
            .await
    }

    /// Start `prepared` and carry it out in the background; returns the
    /// run as started (a webhook answers 202 with its id).
    pub async fn spawn(&self, prepared: Prepared, start: Start) -> Result<Run, memory::StoreError> {
        let run = self.start(&prepared, &start).await?;
        let runner = self.clone();
        let started = run.clone();
        tokio::spawn(async move {
            runner.carry_out(&started, &prepared, &start).await;
        });
        Ok(run)
    }

    /// The run's turn, then its delivery, then its end recorded (and
    /// counted). A failure is recorded on the run, never raised.
    pub async fn carry_out(&self, run: &Run, prepared: &Prepared, start: &Start) -> Run {
        let began = Instant::now();
        let services = &self.services;
        let (outcome, error) = match self.answer(run, prepared, start).await {
            Err(e) => (RunOutcome::Failed, format!("the turn failed: {e}")),
            Ok(answer) => match self.deliver(run, &prepared.target.deliver, &answer).await {
                Ok(()) => (RunOutcome::Answered, String::new()),
                Err(e) => (RunOutcome::Undelivered, e.to_string()),
            },
        };
        if !error.is_empty() {
            tracing::warn!(run = %run.conversation, %error, "automated run did not complete");
        }
        let now = services.clock().now_ms();
        let finished = services
            .db()
            .runs()
            .finish(&run.org, run.id, outcome, &error, now)
            .await;
        services
            .metrics()
            .run(prepared.trigger.as_str(), outcome.as_str(), began.elapsed());
        match finished {
            Ok(r) => r,
            Err(e) => {
                tracing::error!(run = %run.conversation, error = %e, "could not record how a run ended");
                Run {
                    outcome,
                    error,
                    finished_at: Some(now),
                    ..run.clone()
                }
            }
        }
    }

    /// The run's message through the turn loop; its replies, as one text.
    async fn answer(
        &self,
        run: &Run,
        prepared: &Prepared,
        start: &Start,
    ) -> steward_core::error::Result<String> {
        let services = &self.services;
        let at = Utc
            .timestamp_millis_opt(services.clock().now_ms())
            .single()
            .unwrap_or_default();
        let msg = Inbound {
            org: run.org.clone(),
            agent: run.agent.clone(),
            channel: CHANNEL.into(),
            conversation: run.conversation.clone(),
            kind: ConversationKind::Direct,
            sender: None,
            sender_name: prepared.principal.as_str().into(),
            text: instruction(prepared, start.payload.as_deref()),
            platform_id: None,
            at,
            mentioned: true,
            answer: None,
            on_behalf_of: None,
        };
        let replies = services
            .turns()
            .system_run(&msg, prepared.principal, prepared.skill.as_ref())
            .await?;
        Ok(replies
            .into_iter()
            .map(|r| r.text)
            .collect::<Vec<_>>()
            .join("\n\n"))
    }

    /// Post `answer` where the run delivers it. The dashboard shows the run's
    /// own conversation, so `dashboard` and `none` post nothing.
    async fn deliver(
        &self,
        run: &Run,
        deliver: &Deliver,
        answer: &str,
    ) -> Result<(), DeliveryError> {
        let Some((channel, conversation)) = deliver.channel() else {
            return Ok(());
        };
        let to = ConversationRef {
            org: run.org.clone(),
            agent: run.agent.clone(),
            conversation: conversation.to_string(),
        };
        // Each channel retries what may be retried (429, 5xx) with backoff
        // and gives up on the rest: a message is never posted twice here.
        channels::deliver(&self.services, channel, &to, answer)
            .await
            .map(|_| ())
    }
}

/// What "run skill `slug` now" runs: that skill of `agent` in `org` as a
/// standing procedure, named by its slug.
pub fn on_demand(org: &str, agent: &str, slug: &str, deliver: Deliver) -> RunTarget {
    RunTarget {
        name: slug.to_string(),
        org: org.to_string(),
        agent: agent.to_string(),
        procedure: Procedure::Skill(slug.to_string()),
        deliver,
    }
}

/// The principal a run carries: a webhook's is `webhook-system`; a skill
/// followed as a standing procedure `sop-system`; an instruction `cron-system`.
pub fn principal_of(trigger: Trigger, procedure: &Procedure) -> SystemPrincipal {
    match (trigger, procedure) {
        (Trigger::Webhook, _) => SystemPrincipal::Webhook,
        (_, Procedure::Skill(_)) => SystemPrincipal::Sop,
        (_, Procedure::Text(_)) => SystemPrincipal::Cron,
    }
}

/// The run's one message: what to do, and a webhook's payload framed as
/// data below it. A skill's run asks for its task as a person would ("the
/// daily report, now"): the real 1.5B model, given the skill's description
/// instead, described the procedure rather than doing it.
pub fn instruction(prepared: &Prepared, payload: Option<&str>) -> String {
    let what = match &prepared.target.procedure {
        Procedure::Text(text) => text.trim().to_string(),
        Procedure::Skill(slug) => format!(
            "The {} now, please (standing procedure {slug}).",
            slug.replace('-', " ")
        ),
    };
    match payload {
        None => what,
        Some(p) => format!(
            "{what}\n\n{}",
            context::payload_frame(&prepared.target.name, p)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_principal_follows_the_trigger_and_the_procedure() {
        let skill = Procedure::Skill("daily-report".into());
        let text = Procedure::Text("Post the digest".into());
        for (trigger, procedure, want) in [
            (Trigger::Schedule, &skill, SystemPrincipal::Sop),
            (Trigger::Schedule, &text, SystemPrincipal::Cron),
            (Trigger::OnDemand, &skill, SystemPrincipal::Sop),
            (Trigger::Webhook, &skill, SystemPrincipal::Webhook),
            (Trigger::Webhook, &text, SystemPrincipal::Webhook),
        ] {
            assert_eq!(
                principal_of(trigger, procedure),
                want,
                "{trigger:?} {procedure:?}"
            );
        }
    }
}
