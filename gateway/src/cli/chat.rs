//! `steward chat`: a terminal conversation through the turn loop. On a
//! terminal, lines are edited and recalled with `rustyline` (arrows, Ctrl-R,
//! the session's history); piped input is read line by line. The operator
//! speaks as whoever `--as` names, so the decisions of role memory's
//! two-party curation are not taken here (`decides_role_memory`): the
//! command line takes only a manager's acceptance (`cli/roles.rs`).

use super::{Ctx, ACTOR};
use adapters::{ConversationKind, Inbound};
use anyhow::{Context, Result};
use memory::Role;
use rustyline::error::ReadlineError;
use rustyline::DefaultEditor;
use std::io::{BufRead, IsTerminal};

/// Where the lines come from: an editor on a terminal, else stdin as it is.
enum Lines {
    Editor(Option<Box<DefaultEditor>>),
    Piped(std::io::Lines<std::io::StdinLock<'static>>),
}

impl Lines {
    /// The next line; `None` at the end (Ctrl-D, Ctrl-C, end of input).
    async fn next(&mut self) -> Result<Option<String>> {
        match self {
            Lines::Piped(lines) => Ok(lines.next().transpose()?),
            Lines::Editor(slot) => {
                let Some(mut editor) = slot.take() else {
                    return Ok(None);
                };
                // The editor blocks on the terminal: off the async workers.
                let (editor, read) = tokio::task::spawn_blocking(move || {
                    let read = editor.readline("you> ");
                    (editor, read)
                })
                .await
                .context("reading the terminal")?;
                let line = match read {
                    Ok(line) => line,
                    Err(ReadlineError::Eof | ReadlineError::Interrupted) => return Ok(None),
                    Err(e) => return Err(e).context("reading the terminal"),
                };
                let mut editor = editor;
                if !line.trim().is_empty() {
                    // A line the history cannot keep is still sent.
                    let _ = editor.add_history_entry(line.as_str());
                }
                *slot = Some(editor);
                Ok(Some(line))
            }
        }
    }
}

/// Whom the operator chats as, and why.
pub(super) struct Who<'a> {
    pub as_: &'a str,
    pub reason: Option<&'a str>,
}

pub(super) async fn run(
    ctx: &Ctx,
    who: Who<'_>,
    conversation: Option<String>,
    group: bool,
) -> Result<()> {
    let Ctx { services, org } = ctx;
    let as_ = who.as_;
    let stored = if as_ == "admin" || as_.contains(':') {
        as_.to_string()
    } else {
        format!("cli:{as_}")
    };
    // Chatting as a paired person reads what they may read: audited, and
    // shown to them. Someone not paired yet has nothing to read (`/pair`).
    if services.pairing().resolve(org, &stored).await?.is_some() {
        if let Some(reason) = super::acting_as_reason(&stored, who.reason)? {
            super::audit_acting_as(ctx, &stored, "steward chat --as", reason).await?;
        }
    }
    if stored == "admin" && services.pairing().resolve(org, "admin").await?.is_none() {
        services
            .pairing()
            .add_user(
                org,
                "admin",
                "Dashboard admin",
                Role::Admin,
                ACTOR,
                ctx.now_ms(),
            )
            .await?;
    }
    let channel = stored
        .split_once(':')
        .map(|(c, _)| c.to_string())
        .unwrap_or_else(|| "dashboard".into());
    let conversation = conversation.unwrap_or_else(|| format!("chat:{stored}"));
    let interactive = std::io::stdin().is_terminal();
    let mut lines = if interactive {
        println!(
            "Chatting as {stored} in {conversation}. Ctrl-D to leave; arrows recall earlier lines."
        );
        Lines::Editor(Some(Box::new(
            DefaultEditor::new().context("setting up line editing on the terminal")?,
        )))
    } else {
        Lines::Piped(std::io::stdin().lock().lines())
    };
    while let Some(line) = lines.next().await? {
        if line.trim().is_empty() {
            continue;
        }
        if decides_role_memory(&line) {
            println!(
                "steward> Refused: role memory's decisions are not taken in `steward chat`, where the operator speaks as anyone; accept with `steward memory role accept ID --hash HASH --as USER`, and the holder confirms as themselves."
            );
            continue;
        }
        let msg = Inbound {
            org: org.clone(),
            agent: services.config().server.agent.clone(),
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
            at: services.clock().now_utc(),
            mentioned: true,
            answer: None,
            on_behalf_of: None,
        };
        for r in services.turns().handle(&msg).await? {
            println!("steward> {}", r.text.replace('\n', "\n         "));
        }
    }
    Ok(())
}

/// Whether `line` is `/role accept …` or `/role confirm …`: one of the two
/// decisions one operator must not take for both people.
fn decides_role_memory(line: &str) -> bool {
    let mut words = line.split_whitespace();
    words
        .next()
        .is_some_and(|w| w.eq_ignore_ascii_case("/role"))
        && words
            .next()
            .is_some_and(|w| w.eq_ignore_ascii_case("accept") || w.eq_ignore_ascii_case("confirm"))
}
