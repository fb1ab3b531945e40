//! `steward chat`: a terminal conversation through the turn loop.

use super::{now_ms, Ctx, ACTOR};
use adapters::{ConversationKind, Inbound};
use anyhow::Result;
use memory::Role;
use std::io::{BufRead, IsTerminal, Write};

pub(super) async fn run(
    ctx: &Ctx,
    as_: &str,
    conversation: Option<String>,
    group: bool,
) -> Result<()> {
    let Ctx { turns, org } = ctx;
    let stored = if as_ == "admin" || as_.contains(':') {
        as_.to_string()
    } else {
        format!("cli:{as_}")
    };
    if stored == "admin" && turns.pairing().resolve(org, "admin").await?.is_none() {
        turns
            .pairing()
            .add_user(
                org,
                "admin",
                "Dashboard admin",
                Role::Admin,
                ACTOR,
                now_ms(),
            )
            .await?;
    }
    let channel = stored
        .split_once(':')
        .map(|(c, _)| c.to_string())
        .unwrap_or_else(|| "dashboard".into());
    let conversation = conversation.unwrap_or_else(|| format!("chat:{stored}"));
    let interactive = std::io::stdin().is_terminal();
    if interactive {
        println!("Chatting as {stored} in {conversation}. Ctrl-D to leave.");
    }
    let stdin = std::io::stdin();
    let mut lines = stdin.lock().lines();
    loop {
        if interactive {
            print!("you> ");
            std::io::stdout().flush()?;
        }
        let Some(line) = lines.next() else { break };
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let msg = Inbound {
            org: org.clone(),
            agent: turns.config().server.agent.clone(),
            channel: channel.clone(),
            conversation: conversation.clone(),
            kind: if group {
                ConversationKind::Group
            } else {
                ConversationKind::Direct
            },
            sender: Some(stored.clone()),
            sender_name: stored.clone(),
            text: line,
            platform_id: None,
            at: chrono::Utc::now(),
            mentioned: true,
            answer: None,
        };
        for r in turns.handle(&msg).await? {
            println!("steward> {}", r.text.replace('\n', "\n         "));
        }
    }
    Ok(())
}
