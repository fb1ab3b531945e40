//! `steward backup FILE`: a consistent copy of the SQLite store.

use crate::config::Config;
use ::memory::Db;
use anyhow::{Context, Result};
use std::path::Path;

pub(super) async fn run(cfg: &Config, file: &Path) -> Result<()> {
    let url = ::memory::store::without_password(&cfg.database.url);
    let db = Db::connect(&cfg.database.url)
        .await
        .with_context(|| format!("opening database {url}"))?;
    let copied = db.backup_to(file).await;
    db.close().await;
    copied.with_context(|| format!("backing up {url}"))?;
    println!("backed up {url} to {}", file.display());
    Ok(())
}
