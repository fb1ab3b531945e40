//! Governed long-term memory: what a record is, who may write it (the write
//! policy), how a new value retires an old one (supersession with revisions),
//! and the one database every subsystem shares (SQLite or PostgreSQL).
//!
//! Architecture Invariant: `policy::decide` is the only place that turns an
//! extracted item into a write. Whatever labelled the item (rules or a model),
//! the author's authority comes from the pairing store and is checked here.

// The 100-line limit is for production code; a test reads top to bottom.
#![cfg_attr(test, allow(clippy::too_many_lines))]
#[macro_use]
mod named;

#[macro_use]
pub mod admin_text;
pub mod authz;
pub mod credentials;
pub mod external_tool;
pub mod fulltext;
pub mod grounding;
pub mod model;
pub mod policy;
pub mod run;
pub mod sanitize;
pub mod screen;
pub mod scrub;
pub mod skill;
pub mod store;
pub mod terms;
pub mod write;

pub use model::*;
pub use store::role_memory;
pub use store::{Backend, Db, StoreError};
