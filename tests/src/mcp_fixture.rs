//! A real MCP server for the tests, written with rmcp's server side: its
//! tools are read from a JSON file at every `tools/list` and call (so a test
//! changes what it lists by rewriting the file), and each call it receives is
//! appended to a log file (so a test sees what reached it: `name {args}`,
//! and ` meta {…}` with the `steward/…` keys of its `_meta` when it carries
//! any). Served over stdio
//! by the `mcp_fixture` binary, or over streamable HTTP in the test's process
//! ([`serve_http`]).
//!
//! A tool in the file: `{"name", "description", "input_schema", "reply"}`,
//! where `reply` is `{"text": "…"}` (`{args}` in it becomes the arguments'
//! JSON), `{"repeat": "…", "times": N}` (a big result) or `{"hang": true}`;
//! `"notify_changed": true` beside the text sends `tools/list_changed` after
//! the call.

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, InitializeResult,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::Value;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

/// The fixture server over one tools file and one log file.
#[derive(Clone)]
pub struct Fixture {
    pub tools: PathBuf,
    pub log: PathBuf,
}

impl Fixture {
    fn read(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.tools)
            .ok()
            .and_then(|t| serde_json::from_str::<Vec<Value>>(&t).ok())
            .unwrap_or_default()
    }
}

impl ServerHandler for Fixture {
    fn get_info(&self) -> InitializeResult {
        InitializeResult::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools = self
            .read()
            .into_iter()
            .map(|t| {
                let schema = t["input_schema"].as_object().cloned().unwrap_or_default();
                Tool::new(
                    t["name"].as_str().unwrap_or_default().to_string(),
                    t["description"].as_str().unwrap_or_default().to_string(),
                    Arc::new(schema),
                )
            })
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = Value::Object(request.arguments.clone().unwrap_or_default());
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
        {
            // Who the call says it is for (`_meta`, when the approval carries it).
            let mut meta = serde_json::Map::new();
            for m in [
                request.meta.as_ref().map(|m| &m.0 .0),
                Some(&context.meta.0 .0),
            ]
            .into_iter()
            .flatten()
            {
                for (k, v) in m.iter().filter(|(k, _)| k.starts_with("steward/")) {
                    meta.insert(k.clone(), v.clone());
                }
            }
            if meta.is_empty() {
                let _ = writeln!(f, "{} {}", request.name, args);
            } else {
                let _ = writeln!(f, "{} {} meta {}", request.name, args, Value::Object(meta));
            }
        }
        let tool = self
            .read()
            .into_iter()
            .find(|t| t["name"] == request.name.as_ref());
        let Some(tool) = tool else {
            return Err(ErrorData::invalid_params("no such tool", None));
        };
        let reply = &tool["reply"];
        if reply["hang"] == true {
            std::future::pending::<()>().await;
        }
        let text = match (reply["text"].as_str(), reply["repeat"].as_str()) {
            (Some(t), _) => t.replace("{args}", &args.to_string()),
            (None, Some(r)) => r.repeat(reply["times"].as_u64().unwrap_or(1) as usize),
            _ => String::new(),
        };
        if reply["notify_changed"] == true {
            // `notifications/tools/list_changed`, as a server does after changing its tools.
            let _ = context.peer.notify_tool_list_changed().await;
        }
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
    }
}

/// Serve `fixture` over streamable HTTP on 127.0.0.1; its URL. Requests
/// without `Authorization: Bearer <token>` are refused with 401.
pub async fn serve_http(fixture: Fixture, token: &'static str) -> String {
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
    let service = StreamableHttpService::new(
        move || Ok(fixture.clone()),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let check = move |req: axum::extract::Request, next: axum::middleware::Next| async move {
        let want = format!("Bearer {token}");
        let ok = req
            .headers()
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            == Some(want.as_str());
        if ok {
            next.run(req).await
        } else {
            axum::http::StatusCode::UNAUTHORIZED.into_response()
        }
    };
    use axum::response::IntoResponse;
    let app = axum::Router::new()
        .nest_service("/mcp", service)
        .layer(axum::middleware::from_fn(check));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    format!("http://{addr}/mcp")
}
