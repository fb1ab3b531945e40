//! The steward gateway's core: the configuration, the turn loop and the
//! services it calls (models, learning, skills, tools, MCP, lifecycle), the
//! jobs and workers, the clock and the metrics. It names no channel, page or
//! route: the channels, web and binary crates sit above it.

// The 100-line limit is for production code; a test reads top to bottom.
#![cfg_attr(test, allow(clippy::too_many_lines))]

pub mod asker;
pub mod beliefs;
pub mod clock;
pub mod commands;
pub mod config;
pub mod consolidate;
pub mod context;
pub mod embeddings;
pub mod error;
pub mod export;
pub mod jobs;
pub mod learning;
pub mod lifecycle;
pub mod llm;
pub mod mcp;
pub mod metrics;
pub mod oversight;
pub mod role_commands;
pub mod services;
pub mod skills;
pub mod tools;
pub mod turn;
pub mod workers;

pub use config::Config;
pub use services::Services;
pub use turn::TurnLoop;
