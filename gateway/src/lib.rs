//! The steward gateway: configuration, the turn loop, HTTP, replay and the CLI.

// The 100-line limit is for production code; a test reads top to bottom.
#![cfg_attr(test, allow(clippy::too_many_lines))]
pub mod api;
pub mod asker;
pub mod beliefs;
pub mod body;
pub mod channels;
pub mod cli;
pub mod clock;
pub mod commands;
pub mod config;
pub mod consolidate;
pub mod context;
pub mod dashboard;
pub mod embeddings;
pub mod error;
pub mod export;
pub mod http;
pub mod jobs;
pub mod learning;
pub mod lifecycle;
pub mod llm;
pub mod mcp;
pub mod metrics;
pub mod oversight;
pub mod replay;
pub mod role_commands;
pub mod runs;
pub mod services;
pub mod skills;
pub mod tools;
pub mod turn;
pub mod workers;

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
