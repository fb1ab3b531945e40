//! External tools in a transcript (docs/tools.md): an `mcp` line names a
//! stdio MCP server the replay starts before its first line, and an
//! `approve_tool` line approves the listing of one of its tools as an
//! administrator would (by the hash of the listing shown), so a transcript
//! can score a model calling an approved tool.

use super::{ReplayError, Replayer};
use crate::config::{Config, McpServerConfig, McpTransport};
use memory::external_tool::ExternalToolStatus;
use memory::store::{Act, ToolGrant};
use serde::Deserialize;
use std::path::Path;

/// A stdio MCP server for the transcript: `command` started with two
/// arguments, a file holding `tools` (JSON) and a file it may log its calls
/// to — the protocol of the tests' server `mcp_fixture`. A bare `command` is
/// looked for beside the running `steward` first, then on `PATH`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct McpEvent {
    name: String,
    command: String,
    tools: serde_json::Value,
}

/// Approve the proposed listing of tool `name` for `roles`, as `steward
/// tools approve` does.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ApproveToolEvent {
    name: String,
    roles: Vec<String>,
    #[serde(default)]
    confirm: bool,
    #[serde(default)]
    runs: bool,
    per_minute: Option<u32>,
    #[serde(default)]
    identity: bool,
    org: Option<String>,
}

/// Add the `mcp` lines' servers to `cfg`, their tools written into `dir`.
pub(super) fn configure(
    cfg: &mut Config,
    dir: &Path,
    events: &[(usize, super::Event)],
) -> Result<(), ReplayError> {
    for (line, event) in events {
        let super::Event::Mcp(m) = event else {
            continue;
        };
        let bad = |reason: String| ReplayError::Line {
            line: *line,
            reason,
        };
        let named = !m.name.is_empty()
            && m.name.len() <= 64
            && m.name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !named || !m.tools.is_array() {
            return Err(bad(
                "an mcp line has a name (1 to 64 of a-z, A-Z, 0-9, '-', '_') and a list of tools"
                    .into(),
            ));
        }
        let tools = dir.join(format!("{}.tools.json", m.name));
        std::fs::write(&tools, m.tools.to_string())
            .map_err(|e| bad(format!("cannot write the tools of `{}`: {e}", m.name)))?;
        let log = dir.join(format!("{}.calls.log", m.name));
        cfg.mcp.servers.push(McpServerConfig {
            name: m.name.clone(),
            transport: McpTransport::Stdio,
            command: Some(command_path(&m.command)),
            args: vec![tools.display().to_string(), log.display().to_string()],
            ..Default::default()
        });
    }
    Ok(())
}

/// A bare command name beside the running executable when it is there (the
/// tests' `mcp_fixture` is built into the same target directory).
fn command_path(command: &str) -> String {
    if command.contains('/') {
        return command.into();
    }
    std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|d| d.join(command)))
        .filter(|p| p.exists())
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| command.into())
}

impl Replayer<'_> {
    pub(super) async fn approve_tool(
        &mut self,
        line: usize,
        a: ApproveToolEvent,
    ) -> Result<(), ReplayError> {
        let org = self.org_of(&a.org);
        let at = self.tick(&None).timestamp_millis();
        let store = self.services.db().external_tools();
        let proposed = store.list(&org, Some(ExternalToolStatus::Proposed)).await?;
        let Some(t) = proposed.into_iter().find(|t| t.name == a.name) else {
            return Err(ReplayError::Line {
                line,
                reason: format!(
                    "no proposed listing of tool `{}` (is its server on an mcp line, and did it start?)",
                    a.name
                ),
            });
        };
        let grant = ToolGrant {
            id: t.id,
            hash: &t.hash,
            roles: &a.roles,
            confirm: a.confirm,
            runs: a.runs,
            calls_per_minute: a.per_minute,
            identity: a.identity,
        };
        let who = Act {
            org: &org,
            actor: "replay",
            at,
        };
        if let Err(why) = store.approve(who, &grant).await? {
            return Err(ReplayError::Line {
                line,
                reason: why.to_string(),
            });
        }
        Ok(())
    }
}
