//! The services of one steward process, built in one place
//! (`Services::assemble`): configuration, clock, database, pairing,
//! learning, the lifecycle, skills, consolidation, export, the jobs, embeddings and
//! metrics, with the turn loop as one member. Front-ends (HTTP, CLI, replay,
//! channels, workers) take what they use from here; the turn loop holds only
//! what a turn needs.

use crate::beliefs::Beliefs;
use crate::clock::{Clock, SystemClock};
use crate::commands::Commands;
use crate::config::Config;
use crate::consolidate::Consolidation;
use crate::embeddings::Embeddings;
use crate::export::Export;
use crate::jobs::JobRunner;
use crate::learning::{AgentPolicies, Learning};
use crate::lifecycle::Lifecycle;
use crate::llm::{Models, Roles, UsageSnapshot};
use crate::metrics::Metrics;
use crate::skills::Skills;
use crate::turn::{TurnLoop, TurnParts};
use crate::workers::Worker;
use memory::Db;
use pairing::{Pairing, PairingSettings};
use std::sync::Arc;

/// Cheap to clone: every member is shared.
#[derive(Clone)]
pub struct Services {
    cfg: Arc<Config>,
    clock: Arc<dyn Clock>,
    db: Db,
    pairing: Pairing,
    /// Kept to build the services again on another clock or with other roles.
    models: Models,
    metrics: Metrics,
    learning: Arc<Learning>,
    lifecycle: Arc<Lifecycle>,
    consolidation: Arc<Consolidation>,
    export: Arc<Export>,
    jobs: JobRunner,
    embeddings: Embeddings,
    skills: Arc<Skills>,
    turns: Arc<TurnLoop>,
    /// The MCP servers and their approved tools, once started (`with_mcp`).
    mcp: Option<Arc<crate::mcp::Mcp>>,
}

impl Services {
    /// The services on `db` with these models, on the wall clock.
    /// Every model call is counted in their own [`Metrics`].
    pub fn new(db: Db, cfg: Arc<Config>, models: Models) -> Self {
        let metrics = Metrics::new();
        let models = models.metered(&metrics);
        Self::assemble(db, cfg, models, Arc::new(SystemClock), metrics, None)
    }

    /// Build every service from its parts; each gets only what it needs.
    fn assemble(
        db: Db,
        cfg: Arc<Config>,
        models: Models,
        clock: Arc<dyn Clock>,
        metrics: Metrics,
        mcp: Option<Arc<crate::mcp::Mcp>>,
    ) -> Self {
        // Every search of this database gets the query's vector, when on.
        let (db, embeddings) = Embeddings::attach(db, &cfg.embeddings);
        let pairing = Pairing::new(
            db.clone(),
            PairingSettings {
                code_ttl_ms: cfg.pairing.code_ttl_minutes * 60_000,
                max_pending_per_channel: cfg.pairing.max_pending_per_channel,
                hint_interval_ms: cfg.pairing.hint_interval_seconds * 1000,
            },
        );
        let policy = AgentPolicies::from_config(&cfg);
        let beliefs = Arc::new(Beliefs::new(db.clone(), models.roles.judge.clone()));
        let learning = Arc::new(Learning::new(
            db.clone(),
            policy,
            models.extractor.clone(),
            beliefs.clone(),
            metrics.clone(),
        ));
        let lifecycle = Arc::new(Lifecycle::new(
            db.clone(),
            cfg.clone(),
            pairing.clone(),
            learning.clone(),
            models.roles.summarizer.clone(),
        ));
        let skills =
            Arc::new(Skills::new(db.clone(), cfg.skills.clone()).with_embeddings(&cfg.embeddings));
        let turns = Arc::new(TurnLoop::new(TurnParts {
            db: db.clone(),
            pairing: pairing.clone(),
            cfg: cfg.clone(),
            clock: clock.clone(),
            responder: models.responder.clone(),
            beliefs,
            learning: learning.clone(),
            lifecycle: lifecycle.clone(),
            commands: Commands::new(
                db.clone(),
                pairing.clone(),
                lifecycle.clone(),
                skills.clone(),
            )
            .with_web_links(crate::commands::WebLinks::of(&cfg.dashboard)),
            skills: skills.clone(),
            metrics: metrics.clone(),
            mcp: mcp.clone(),
        }));
        Services {
            consolidation: Arc::new(Consolidation::new(
                db.clone(),
                models.roles.consolidator.clone(),
            )),
            export: Arc::new(Export::new(db.clone(), pairing.clone())),
            jobs: JobRunner::new(db.clone(), metrics.clone()),
            embeddings,
            learning,
            lifecycle,
            skills,
            turns,
            mcp,
            db,
            pairing,
            cfg,
            models,
            clock,
            metrics,
        }
    }

    /// The same services with these roles (judge, consolidator, summarizer).
    pub fn with_roles(self, roles: Roles) -> Self {
        let models = Models {
            roles: roles.metered(&self.metrics),
            ..self.models
        };
        Self::assemble(
            self.db,
            self.cfg,
            models,
            self.clock,
            self.metrics,
            self.mcp,
        )
    }

    /// The same services on another clock (replay, tests).
    pub fn with_clock(self, clock: Arc<dyn Clock>) -> Self {
        Self::assemble(
            self.db,
            self.cfg,
            self.models,
            clock,
            self.metrics,
            self.mcp,
        )
    }

    /// These services with the MCP servers of `[mcp]` connected and their
    /// tools listed (`steward serve`; tests).
    pub async fn with_mcp(self) -> Self {
        let mcp = crate::mcp::Mcp::start(
            &self.cfg,
            self.db.clone(),
            self.metrics.clone(),
            self.clock.clone(),
        )
        .await;
        Self::assemble(
            self.db,
            self.cfg,
            self.models,
            self.clock,
            self.metrics,
            Some(mcp),
        )
    }

    /// The MCP servers, when started.
    pub fn mcp(&self) -> Option<&Arc<crate::mcp::Mcp>> {
        self.mcp.as_ref()
    }

    /// The turn loop: every inbound message of every channel.
    pub fn turns(&self) -> &Arc<TurnLoop> {
        &self.turns
    }
    pub fn db(&self) -> &Db {
        &self.db
    }
    pub fn pairing(&self) -> &Pairing {
        &self.pairing
    }
    pub fn config(&self) -> &Arc<Config> {
        &self.cfg
    }
    /// The one clock every front-end, job and turn reads.
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }
    /// Token use of the configured provider so far.
    pub fn token_usage(&self) -> UsageSnapshot {
        self.models.roles.usage.snapshot()
    }
    /// `@policy:`, `memory_write`, and reading texts for items.
    pub fn learning(&self) -> &Arc<Learning> {
        &self.learning
    }
    /// Trim, relearn, review, forget, `memory_expire`.
    pub fn lifecycle(&self) -> &Arc<Lifecycle> {
        &self.lifecycle
    }
    /// Skills: learning from corrections, curation, and what turns follow.
    pub fn skills(&self) -> &Arc<Skills> {
        &self.skills
    }
    pub fn consolidation(&self) -> &Arc<Consolidation> {
        &self.consolidation
    }
    pub fn export(&self) -> &Arc<Export> {
        &self.export
    }
    pub fn jobs(&self) -> &JobRunner {
        &self.jobs
    }
    /// Records' vectors (`[embeddings]`): the worker, the backfill job, imports.
    pub fn embeddings(&self) -> &Embeddings {
        &self.embeddings
    }
    /// What `/metrics` shows of this process.
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// What `steward serve` does before it listens: every record holding a
    /// credential (kept before the screen knew its format) is forgotten, out
    /// of every reply, search and review, and each is audited
    /// (`memory.credential_forgotten`). Returns how many.
    pub async fn forget_credentials(&self) -> memory::store::Result<usize> {
        let now = self.clock.now_ms();
        let forgotten = self.db.records().forget_credentials().await?;
        for (org, id, kind) in &forgotten {
            tracing::warn!(org = %org, record = id, kind = kind.as_str(), "a record holding a credential was forgotten");
            self.db
                .audit()
                .append(
                    org,
                    "steward",
                    "memory.credential_forgotten",
                    &format!("record:{id}"),
                    &memory::admin_text!("{}", kind.as_str()),
                    now,
                )
                .await?;
        }
        Ok(forgotten.len())
    }

    /// The background workers of these services that the configuration turns
    /// on: the jobs and the embeddings worker.
    pub fn workers(&self) -> Vec<Box<dyn Worker>> {
        let (jobs, clock) = (&self.jobs, &self.clock);
        let mut list: Vec<Box<dyn Worker>> =
            vec![Box::new(jobs.worker(self.lifecycle.clone(), clock.clone()))];
        if self.cfg.llm.auto_consolidate {
            list.push(Box::new(
                jobs.worker(self.consolidation.clone(), clock.clone()),
            ));
        }
        // Records' vectors: after writes, and the backfill of what is missing.
        if self.embeddings.enabled() {
            list.push(Box::new(self.embeddings.worker()));
            list.push(Box::new(
                jobs.worker(Arc::new(self.embeddings.clone()), clock.clone()),
            ));
        }
        list
    }
}
