//! The steward binary's library: the CLI (`cli`), the transcript replay
//! (`replay`) and the assembly of the services (`build`). The layers below
//! are crates of their own — `steward_core` (configuration, the turn loop,
//! services, models, jobs), `channels` (the channels and automated runs) and
//! `web` (HTTP, the REST API, the dashboard) — re-exported here under the
//! module names they had, so `steward::turn`, `steward::http`, … still name them.

// The 100-line limit is for production code; a test reads top to bottom.
#![cfg_attr(test, allow(clippy::too_many_lines))]
pub mod cli;
pub mod replay;

/// The channels crate, and its automated runs, where they were.
pub use ::channels::{self, runs};
pub use steward_core::{
    asker, beliefs, clock, commands, config, consolidate, context, embeddings, error, export, jobs,
    learning, lifecycle, llm, mcp, metrics, oversight, role_commands, services, skills, tools,
    turn, workers,
};
pub use web::{api, body, dashboard, http};

pub use config::Config;
pub use services::Services;
pub use turn::TurnLoop;

use std::sync::Arc;

/// Connect the database named in `cfg` and build the services (the turn loop
/// among them) with the configured model. With embeddings on, a PostgreSQL
/// server without pgvector is refused here.
pub async fn build(cfg: Config) -> Result<Arc<Services>, memory::StoreError> {
    let db = memory::Db::connect(&cfg.database.url).await?;
    if cfg.embeddings.enabled() {
        db.records().enable_vectors().await?;
    }
    Ok(Arc::new(with_db(db, cfg)))
}

/// The services on an existing database, with the model `llm.provider` names.
/// A provider that cannot be set up (its API key variable unset) fails every
/// model call — replies say "I can't answer right now" and nothing is learned —
/// rather than quietly using other rules; `steward serve` refuses to start instead.
pub fn with_db(db: memory::Db, cfg: Config) -> Services {
    let models = llm::Models::from_config(&cfg.llm).unwrap_or_else(|e| {
        tracing::error!(error = %e, "language model unavailable");
        llm::Models::unavailable(e.to_string())
    });
    with_models(db, cfg, models)
}

/// The services on an existing database with these models.
pub fn with_models(db: memory::Db, cfg: Config, models: llm::Models) -> Services {
    Services::new(db, Arc::new(cfg), models)
}
