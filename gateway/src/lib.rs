//! The steward gateway: configuration, the turn loop, HTTP, replay and the CLI.

pub mod cli;
pub mod config;
pub mod context;
pub mod discord;
pub mod export;
pub mod http;
pub mod jobs;
pub mod lifecycle;
pub mod llm;
pub mod replay;
pub mod teams;
pub mod turn;

pub use config::Config;
pub use turn::TurnLoop;

use std::sync::Arc;

/// Connect the database named in `cfg` and build the turn loop with the configured model.
pub async fn build(cfg: Config) -> Result<Arc<TurnLoop>, memory::StoreError> {
    let db = memory::Db::connect(&cfg.database.url).await?;
    Ok(Arc::new(with_db(db, cfg)))
}

/// The turn loop on an existing database, with the configured model.
pub fn with_db(db: memory::Db, cfg: Config) -> TurnLoop {
    TurnLoop::new(
        db,
        Arc::new(cfg),
        Arc::new(llm::offline::OfflineExtractor),
        Arc::new(llm::offline::OfflineResponder),
    )
}
