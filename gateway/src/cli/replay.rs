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
    println!("replies ({}):", out.replies.len());
    for r in &out.replies {
        println!("  [{}]", r.conversation);
        for line in r.text.lines() {
            println!("    {line}");
        }
    }
    println!("memory ({} records):", out.memory.len());
    for m in &out.memory {
        let owner = m
            .owner
            .as_deref()
            .map(|o| format!(" of {o}"))
            .unwrap_or_default();
        println!(
            "  #{:<4} {} {}{owner}, said {}: {}",
            m.id, m.status, m.scope, m.said_at, m.content
        );
    }
    println!("revisions ({}):", out.revisions.len());
    for r in &out.revisions {
        println!(
            "  rev {:<3} #{} retired by #{} via {} ({}){}: {}",
            r.id,
            r.retired_id,
            r.replacing_id,
            r.via,
            r.cause,
            if r.undone { " [undone]" } else { "" },
            r.reason
        );
    }
    Ok(())
}
