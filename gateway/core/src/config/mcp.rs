//! `[mcp]` and `[[mcp.servers]]`: external tools an administrator approves (docs/tools.md).

use serde::{Deserialize, Serialize};
use smart_default::SmartDefault;
use validator::Validate;

/// External tools through MCP servers (`[mcp]`): each tool a server lists
/// waits for an administrator's approval (docs/tools.md).
#[derive(Debug, Clone, SmartDefault, Serialize, Deserialize, PartialEq, Validate)]
#[serde(deny_unknown_fields, default)]
pub struct McpConfig {
    /// The servers steward connects to at `serve` (`[[mcp.servers]]`).
    pub servers: Vec<McpServerConfig>,
    /// Longest wait for one call's answer, in milliseconds.
    #[default = 10_000]
    #[validate(range(min = 100, max = 300_000))]
    pub call_timeout_ms: u64,
    /// Longest result shown to a model or a person, in characters (the rest is cut).
    #[default = 4_000]
    #[validate(range(min = 100, max = 100_000))]
    pub max_result_chars: usize,
    /// External tool calls one person may make a minute, whatever the tool.
    #[default = 10]
    #[validate(range(min = 1, max = 10_000))]
    pub calls_per_minute: u32,
    /// Calls of one tool a minute, all speakers together, unless its
    /// approval names its own rate.
    #[default = 60]
    #[validate(range(min = 1, max = 100_000))]
    pub tool_calls_per_minute: u32,
    /// How long a "Run … ? yes/no" waits for its answer, in minutes.
    #[default = 10]
    #[validate(range(min = 1, max = 1_440))]
    pub confirm_ttl_minutes: i64,
}

impl McpConfig {
    /// Each server named once, with what its transport needs; each header
    /// read from exactly one place.
    pub(super) fn check(&self) -> Result<(), (String, String)> {
        let mut names = std::collections::BTreeSet::new();
        for (i, s) in self.servers.iter().enumerate() {
            let key = |k: &str| format!("mcp.servers[{i}].{k}");
            let named = !s.name.is_empty()
                && s.name.len() <= 64
                && s.name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
            if !named {
                return Err((key("name"), "1 to 64 of a-z, A-Z, 0-9, '-' and '_'".into()));
            }
            if !names.insert(s.name.as_str()) {
                return Err((key("name"), format!("`{}` names two servers", s.name)));
            }
            match s.transport {
                McpTransport::Stdio if s.command.as_deref().is_none_or(str::is_empty) => {
                    return Err((
                        key("command"),
                        "a stdio server needs the command that starts it".into(),
                    ))
                }
                McpTransport::Http if s.url.as_deref().is_none_or(str::is_empty) => {
                    return Err((key("url"), "an http server needs its url".into()))
                }
                _ => {}
            }
            for (j, h) in s.headers.iter().enumerate() {
                if h.env.is_some() == h.file.is_some() || h.name.is_empty() {
                    return Err((
                        format!("mcp.servers[{i}].headers[{j}]"),
                        "a header has a name and exactly one of `env` or `file` (its value is never written in the configuration)".into(),
                    ));
                }
            }
        }
        Ok(())
    }
}

/// How steward reaches an MCP server.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum McpTransport {
    /// A command steward starts, speaking on its standard input and output.
    #[default]
    Stdio,
    /// Streamable HTTP at `url`.
    Http,
}

/// One MCP server (`[[mcp.servers]]`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct McpServerConfig {
    /// Its name: tools are listed and audited as `tool:<name>/<tool>`.
    pub name: String,
    pub transport: McpTransport,
    /// `stdio`: the program to start.
    pub command: Option<String>,
    /// `stdio`: its arguments.
    pub args: Vec<String>,
    /// `http`: the server's endpoint.
    pub url: Option<String>,
    /// `http`: headers sent with every request, each read from an environment
    /// variable or a file at start — never written here.
    pub headers: Vec<McpHeaderConfig>,
    /// The organisation its tools serve (default `server.org`).
    pub org: Option<String>,
    /// The agent its tools serve (default `server.agent`).
    pub agent: Option<String>,
}

/// A header of an HTTP MCP server: its name, and where its value is read.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct McpHeaderConfig {
    pub name: String,
    /// The environment variable holding the value …
    pub env: Option<String>,
    /// … or the file holding it (one line; trailing white space dropped).
    pub file: Option<std::path::PathBuf>,
}
