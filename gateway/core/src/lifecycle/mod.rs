//! The memory lifecycle (docs/memory.md, "History and archives" under "Scopes, and
//! which wins"), a service of the turn loop: trim and
//! archive with batch extraction read person by person (linesBySpeaker),
//! relearn, review, forget, erase, undo, import, and the `memory_expire` retention job. One
//! operation per file.
//!
//! Architecture Invariant: the speaker of an archived line is the stored user
//! id it was saved with, and their authority is the role it was saved with —
//! never a name in the text (`memory::policy::stored_authority`). Unpaired
//! lines (no stored id) reach no extractor.

mod erase;
mod expire;
mod import;
mod relearn;
mod review;
mod summary;
mod trim;
mod undo;

pub use expire::{ExpireReport, EXPIRE_SLOT_MS, RETENTION_DAYS};
pub use import::{ImportError, ImportPlace, ImportReport};
pub use relearn::RelearnReport;
pub use summary::summarize;
pub use trim::TrimReport;
pub use undo::Undo;

use crate::config::Config;
use crate::learning::Learning;
use crate::llm::Summarizer;
use memory::Db;
use pairing::Pairing;
use std::sync::Arc;

pub struct Lifecycle {
    db: Db,
    cfg: Arc<Config>,
    pairing: Pairing,
    learning: Arc<Learning>,
    /// `None`: the deterministic summary.
    summarizer: Option<Arc<dyn Summarizer>>,
}

impl Lifecycle {
    /// The database the lifecycle keeps (the turn's tools read through it too).
    pub fn db(&self) -> &Db {
        &self.db
    }

    /// The learning service it writes through.
    pub fn learning(&self) -> &Learning {
        &self.learning
    }

    pub fn new(
        db: Db,
        cfg: Arc<Config>,
        pairing: Pairing,
        learning: Arc<Learning>,
        summarizer: Option<Arc<dyn Summarizer>>,
    ) -> Self {
        Lifecycle {
            db,
            cfg,
            pairing,
            learning,
            summarizer,
        }
    }
}
