//! External tools through MCP (docs/tools.md), against a real MCP server the
//! test starts (`steward_tests::mcp_fixture`, written with rmcp's server
//! side): over stdio as a child process, and over streamable HTTP. The model
//! is the fake OpenAI-compatible server, scripted to call tools.

use memory::external_tool::{ExternalTool, ExternalToolRefusal, ExternalToolStatus};
use memory::store::{Act, ToolGrant};
use memory::{Db, Role};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use steward::config::{McpHeaderConfig, McpServerConfig, McpTransport};
use steward::http::{app, AppState};
use steward::Config;
use steward_tests::fake_llm::{Answer, FakeLlm, TEXT};
use steward_tests::mcp_fixture::Fixture;
use steward_tests::{both_dbs, Harness};

mod admin;
mod approval;
mod rates_and_runs;
mod small_models;

const ORG: &str = "default";
const ADMIN: Act<'static> = Act {
    org: ORG,
    actor: "discord:admin",
    at: 1,
};

fn lookup_ticket() -> Value {
    json!({
        "name": "lookup_ticket",
        "description": "Look up a support ticket by its number.",
        "input_schema": {
            "type": "object",
            "properties": {"id": {"type": "string", "pattern": "^INC-[0-9]{1,8}$"}},
            "required": ["id"],
            "additionalProperties": false
        },
        "reply": {"text": "Ticket {args}: the printer on floor 3 is out of toner."}
    })
}

fn tool(name: &str, description: &str, reply: Value) -> Value {
    json!({
        "name": name,
        "description": description,
        "input_schema": {
            "type": "object",
            "properties": {"topic": {"type": "string", "maxLength": 40}},
            "additionalProperties": false
        },
        "reply": reply
    })
}

/// A stdio server's files: its tools and the log of the calls it received.
struct Server {
    dir: tempfile::TempDir,
}

impl Server {
    fn new(tools: &[Value]) -> Server {
        let s = Server {
            dir: tempfile::tempdir().expect("tempdir"),
        };
        s.set_tools(tools);
        s
    }
    fn tools_file(&self) -> PathBuf {
        self.dir.path().join("tools.json")
    }
    fn log_file(&self) -> PathBuf {
        self.dir.path().join("calls.log")
    }
    fn set_tools(&self, tools: &[Value]) {
        std::fs::write(self.tools_file(), Value::from(tools.to_vec()).to_string()).expect("tools");
    }
    /// The calls that reached the server, one line each: `name {arguments}`.
    fn calls(&self) -> Vec<String> {
        std::fs::read_to_string(self.log_file())
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }
    fn stdio(&self) -> McpServerConfig {
        McpServerConfig {
            name: "helpdesk".into(),
            transport: McpTransport::Stdio,
            command: Some(env!("CARGO_BIN_EXE_mcp_fixture").into()),
            args: vec![path(&self.tools_file()), path(&self.log_file())],
            ..Default::default()
        }
    }
}

fn path(p: &Path) -> String {
    p.display().to_string()
}

async fn harness(fake: &FakeLlm, db: Db, server: McpServerConfig) -> Harness {
    harness_on(fake, db, server, |_| {}, None).await
}

/// A harness with `tweak` applied to its configuration, on `clock` when given.
async fn harness_on(
    fake: &FakeLlm,
    db: Db,
    server: McpServerConfig,
    tweak: impl FnOnce(&mut Config),
    clock: Option<Arc<dyn steward::clock::Clock>>,
) -> Harness {
    let mut cfg: Config = fake.config();
    cfg.mcp.servers = vec![server];
    // Long enough for a 10 MB result on a loaded machine (it must be cut, not
    // timed out); a hang still ends at it.
    cfg.mcp.call_timeout_ms = 5_000;
    cfg.mcp.max_result_chars = 2_000;
    cfg.pairing.group_policy = steward::config::GroupPolicy::Open;
    tweak(&mut cfg);
    let mut services = steward::with_db(db, cfg);
    if let Some(clock) = clock {
        services = services.with_clock(clock);
    }
    let services = services.with_mcp().await;
    let h = Harness::from_services(services);
    h.pair("admin", Role::Admin).await;
    h.pair("ana", Role::User).await;
    h
}

async fn listing(h: &Harness, name: &str) -> ExternalTool {
    let all = h.db().external_tools().list(ORG, None).await.expect("list");
    all.into_iter()
        .find(|t| t.name == name)
        .unwrap_or_else(|| panic!("{name} is listed"))
}

async fn approve(h: &Harness, name: &str, roles: &[&str], confirm: bool) -> ExternalTool {
    let grant = Grant {
        confirm,
        ..Grant::default()
    };
    decide(h, name, roles, grant).await.expect("approved")
}

/// What an approval says beside its roles.
#[derive(Default, Clone, Copy)]
struct Grant {
    confirm: bool,
    runs: bool,
    per_minute: Option<u32>,
    identity: bool,
}

async fn decide(
    h: &Harness,
    name: &str,
    roles: &[&str],
    g: Grant,
) -> Result<ExternalTool, ExternalToolRefusal> {
    let t = listing(h, name).await;
    let roles: Vec<String> = roles.iter().map(|r| r.to_string()).collect();
    let grant = ToolGrant {
        id: t.id,
        hash: &t.hash,
        roles: &roles,
        confirm: g.confirm,
        runs: g.runs,
        calls_per_minute: g.per_minute,
        identity: g.identity,
    };
    h.db()
        .external_tools()
        .approve(ADMIN, &grant)
        .await
        .expect("store")
}

/// A model that answers with the tool results it was given, joined.
fn echo_results(prefix: &'static str, joint: &'static str) -> Answer {
    Answer::From(Arc::new(move |body: &Value| {
        let results: Vec<String> = body["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|m| m["role"] == "tool")
            .filter_map(|m| m["content"].as_str().map(str::to_string))
            .collect();
        Answer::Content(format!("{prefix}{}", results.join(joint)))
    }))
}

/// Stop the harness's MCP servers (a stdio server's process ends with them).
async fn stop(h: &Harness) {
    if let Some(mcp) = h.services.mcp() {
        mcp.stop().await;
    }
}

/// The tools the model was offered in the last reply request.
fn offered(fake: &FakeLlm) -> Vec<String> {
    fake.received_for(TEXT)
        .first()
        .map(|r| r.tools())
        .unwrap_or_default()
}

fn audit_calls(entries: &[memory::AuditEntry]) -> Vec<String> {
    entries
        .iter()
        .filter(|e| e.action == "tool.call")
        .map(|e| e.detail.clone())
        .collect()
}

fn order_status() -> Value {
    tool(
        "order_status",
        "Look up an order's status by its number.",
        json!({"text": "Order {args}: shipped on Monday."}),
    )
}

/// One scripted reply: the model calls `tool` with `topic`, then answers.
async fn ask_with_call(fake: &FakeLlm, h: &Harness, who: &str, tool: &str, topic: &str) -> String {
    fake.clear_received();
    fake.push(TEXT, Answer::tool(tool, json!({ "topic": topic })));
    fake.push(TEXT, Answer::Content("Checked.".into()));
    h.dm(who, &format!("Check {topic}")).await
}

/// The seconds a refusal says to wait ("Try again in N s").
fn wait_said(reply: &str) -> u64 {
    let after = reply.split("Try again in ").nth(1).unwrap_or_default();
    after
        .split(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no wait in {reply}"))
}

/// What a small local model gets (`llm.preset`: `llm.tools = "external"`).
fn small_model(cfg: &mut Config) {
    cfg.llm.tools = steward::config::ToolsMode::External;
}
