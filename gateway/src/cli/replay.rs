//! `steward replay FILE [--json]`: a transcript on a fresh in-memory database
//! (the engine is [`crate::replay`]).

use crate::config::Config;
use anyhow::{Context, Result};
use std::path::Path;

pub(super) async fn run(file: &Path, json: bool, cfg: Config) -> Result<()> {
    let input =
        std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
    let out = crate::replay::replay(&input, cfg).await?;
    if json {
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    for r in &out.replies {
        println!("[{}] {}", r.conversation, r.text.replace('\n', "\n    "));
    }
    println!("-- memory");
    for m in &out.memory {
        println!(
            "#{} {} {} {:?}: {}",
            m.id, m.scope, m.status, m.owner, m.content
        );
    }
    Ok(())
}
