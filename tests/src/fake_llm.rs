//! A fake OpenAI-compatible server: `POST /v1/chat/completions` on
//! 127.0.0.1, answering in the real wire format. Each test scripts its
//! answers per schema name (`memory_items`, `belief_revision`,
//! `consolidation`, `slice_summary`, or `text` for plain replies) and reads
//! back the requests it received.

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{json, Value};
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use steward::Config;

/// The schema name of a plain-text reply request (no `response_format`).
pub const TEXT: &str = "text";

/// One scripted answer.
#[derive(Clone)]
pub enum Answer {
    /// An answer made from the request itself (a model that reads its input).
    From(Arc<dyn Fn(&Value) -> Answer + Send + Sync>),
    /// A 200 whose message content is this JSON, serialised.
    Json(Value),
    /// A 200 whose message content is exactly this text (invalid JSON, plain replies).
    Content(String),
    /// An error status with an OpenAI error body, and `Retry-After` when given.
    Status {
        code: u16,
        retry_after: Option<String>,
    },
    /// Never answers (the client's timeout ends the request).
    Hang,
    /// A 200 whose message calls these tools (`name`, arguments), with ids
    /// `call_1`, `call_2`, … numbered across the server's life. Only when the
    /// request offers `tools`; otherwise it is answered as if unscripted.
    ToolCalls(Vec<(String, Value)>),
    /// A 400 with this error message.
    BadRequest(String),
}

impl std::fmt::Debug for Answer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Answer::From(_) => f.write_str("From(..)"),
            Answer::Json(v) => f.debug_tuple("Json").field(v).finish(),
            Answer::Content(c) => f.debug_tuple("Content").field(c).finish(),
            Answer::Status { code, .. } => f.debug_tuple("Status").field(code).finish(),
            Answer::Hang => f.write_str("Hang"),
            Answer::ToolCalls(c) => f.debug_tuple("ToolCalls").field(c).finish(),
            Answer::BadRequest(m) => f.debug_tuple("BadRequest").field(m).finish(),
        }
    }
}

/// The text of the last `user` message of a request.
pub fn last_user_text(body: &Value) -> String {
    body["messages"]
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"))
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_string()
}

/// An extraction as a small local model answers one (seen with a 1.5B model
/// on llama.cpp): every line of the input becomes an item, mislabelled
/// (statements as tasks, and the rest flipped between personal and
/// operational), its content elaborated with claims nobody made and
/// repeated up to the schema's cap; and one item invented outright.
pub fn small_model_extraction() -> Answer {
    Answer::From(Arc::new(|body: &Value| {
        let text = last_user_text(body);
        let mut items = Vec::new();
        for (i, line) in text.lines().filter(|l| !l.trim().is_empty()).enumerate() {
            let channel = ["personal", "operational", "task"][i % 3];
            let mut content = format!(
                "{line} The speaker is requesting this as a one-off. This is a one-off request to execute now."
            );
            while content.len() < 450 {
                content.push_str(" The speaker is requesting this as a one-off.");
            }
            items.push(json!({"channel": channel, "kind": "fact", "subject": "request", "content": content}));
            // The line itself, faithfully, but labelled the other way round.
            let flipped = if channel == "personal" {
                "operational"
            } else {
                "personal"
            };
            items.push(json!({"channel": flipped, "kind": "note", "subject": "note", "content": format!("The user said: {line} In Berlin.")}));
        }
        items.push(json!({"channel": "personal", "kind": "fact", "subject": "role", "content": "The user is the head of finance and approves every expense"}));
        Answer::Json(json!({ "items": items }))
    }))
}

impl Answer {
    /// One call of tool `name` with `arguments`.
    pub fn tool(name: &str, arguments: Value) -> Answer {
        Answer::ToolCalls(vec![(name.to_string(), arguments)])
    }

    /// A 400 as Ollama answers a model that cannot call tools.
    pub fn rejecting_tools() -> Answer {
        Answer::BadRequest("registry.ollama.ai/library/gemma:2b does not support tools".into())
    }

    pub fn status(code: u16) -> Answer {
        Answer::Status {
            code,
            retry_after: None,
        }
    }

    pub fn retry_after(code: u16, seconds: &str) -> Answer {
        Answer::Status {
            code,
            retry_after: Some(seconds.to_string()),
        }
    }
}

/// A received request.
#[derive(Debug, Clone)]
pub struct Received {
    pub schema: String,
    pub body: Value,
    pub authorization: Option<String>,
}

impl Received {
    /// The text of every message, joined (for framing assertions).
    pub fn text(&self) -> String {
        self.body["messages"]
            .as_array()
            .map(|m| {
                m.iter()
                    .filter_map(|m| m["content"].as_str())
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .unwrap_or_default()
    }

    /// The names of the tools the request offers.
    pub fn tools(&self) -> Vec<String> {
        self.body["tools"]
            .as_array()
            .map(|t| {
                t.iter()
                    .filter_map(|t| t.pointer("/function/name").and_then(Value::as_str))
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The `role: tool` messages, as (`tool_call_id`, content).
    pub fn tool_results(&self) -> Vec<(String, String)> {
        self.body["messages"]
            .as_array()
            .map(|m| {
                m.iter()
                    .filter(|m| m["role"] == "tool")
                    .map(|m| {
                        (
                            m["tool_call_id"].as_str().unwrap_or_default().to_string(),
                            m["content"].as_str().unwrap_or_default().to_string(),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The ids of the `<<<memory:ID …>>>` records in the last user message.
    pub fn memory_ids(&self) -> Vec<i64> {
        let last_user = self.body["messages"]
            .as_array()
            .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"))
            .and_then(|m| m["content"].as_str())
            .unwrap_or_default()
            .to_string();
        last_user
            .split("<<<memory:")
            .skip(1)
            .filter_map(|s| {
                s.split(|c: char| !c.is_ascii_digit())
                    .next()
                    .and_then(|n| n.parse().ok())
            })
            .collect()
    }
}

#[derive(Default)]
struct Script {
    queued: HashMap<String, VecDeque<Answer>>,
    always: HashMap<String, Answer>,
    received: Vec<Received>,
    calls: u64,
    /// `meta.n_params` that `GET /v1/models` reports, as llama.cpp does; none: a
    /// hosted API's list (ids only).
    params: Option<u64>,
}

/// A running fake server; it stops with the test's runtime.
#[derive(Clone)]
pub struct FakeLlm {
    base_url: String,
    script: Arc<Mutex<Script>>,
}

fn default_answer(schema: &str) -> Answer {
    match schema {
        "memory_items" => Answer::Json(json!({"items": []})),
        "belief_revision" => Answer::Json(json!({"retire": []})),
        "consolidation" => Answer::Json(json!({"groups": []})),
        "slice_summary" => Answer::Json(json!({"summary": "A conversation."})),
        _ => Answer::Content("Fake model reply.".into()),
    }
}

fn schema_of(body: &Value) -> String {
    body.pointer("/response_format/json_schema/name")
        .and_then(Value::as_str)
        .unwrap_or(TEXT)
        .to_string()
}

/// A message as OpenAI takes it: a role and text content; an assistant turn
/// that called tools may have null content; a tool result names its call.
fn well_formed_message(m: &Value) -> bool {
    let calls = m["tool_calls"].as_array().is_some_and(|c| {
        !c.is_empty()
            && c.iter().all(|c| {
                c["id"].is_string()
                    && c["type"] == "function"
                    && c.pointer("/function/name").is_some_and(Value::is_string)
                    && c.pointer("/function/arguments")
                        .is_some_and(Value::is_string)
            })
    });
    match m["role"].as_str() {
        Some("assistant") if calls => m["content"].is_string() || m["content"].is_null(),
        Some("tool") => m["content"].is_string() && m["tool_call_id"].is_string(),
        Some(_) => m["content"].is_string(),
        None => false,
    }
}

/// The model list: OpenAI's shape, with llama.cpp's `meta` when a size is set.
async fn models(State(script): State<Arc<Mutex<Script>>>) -> Json<Value> {
    let params = script.lock().expect("fake LLM script").params;
    let mut model =
        json!({"id": "fake-model", "object": "model", "created": 0, "owned_by": "fake"});
    if let Some(n) = params {
        model["meta"] = json!({"vocab_type": 2, "n_vocab": 151_936, "n_ctx_train": 32_768, "n_embd": 1_536, "n_params": n, "size": n / 2});
    }
    Json(json!({"object": "list", "data": [model]}))
}

async fn completions(
    State(script): State<Arc<Mutex<Script>>>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    // The request must be a chat completion: a model and messages with roles and content.
    let well_formed = body["model"].as_str().is_some_and(|m| !m.is_empty())
        && body["messages"]
            .as_array()
            .is_some_and(|m| !m.is_empty() && m.iter().all(well_formed_message));
    if !well_formed {
        return (
            StatusCode::BAD_REQUEST,
            Json(json!({"error": {"message": "model and messages are required", "type": "invalid_request_error"}})),
        )
            .into_response();
    }
    let schema = schema_of(&body);
    let answer = {
        let mut s = script.lock().expect("script");
        s.received.push(Received {
            schema: schema.clone(),
            body: body.clone(),
            authorization: headers
                .get("authorization")
                .and_then(|v| v.to_str().ok())
                .map(str::to_string),
        });
        let offers_tools = body["tools"].as_array().is_some_and(|t| !t.is_empty());
        let answer = s
            .queued
            .get_mut(&schema)
            .and_then(VecDeque::pop_front)
            .or_else(|| s.always.get(&schema).cloned())
            .unwrap_or_else(|| default_answer(&schema));
        let answer = match answer {
            Answer::From(make) => make(&body),
            other => other,
        };
        match answer {
            Answer::ToolCalls(_) if !offers_tools => default_answer(&schema),
            Answer::ToolCalls(calls) => {
                let calls: Vec<Value> = calls
                    .into_iter()
                    .map(|(name, arguments)| {
                        s.calls += 1;
                        json!({
                            "id": format!("call_{}", s.calls),
                            "type": "function",
                            "function": {"name": name, "arguments": arguments.to_string()}
                        })
                    })
                    .collect();
                return tool_calls_answer(&body, calls);
            }
            other => other,
        }
    };
    // Text past the request's token cap is cut there, as a real server does
    // (about four characters a token), and the answer says `length`.
    let cap_chars = ["max_tokens", "max_completion_tokens"]
        .iter()
        .find_map(|f| body[*f].as_u64())
        .map(|t| t as usize * 4);
    let mut finish = "stop";
    // Text from a `stop` sequence on is never sent, as a real server does.
    let stops: Vec<String> = body["stop"]
        .as_array()
        .map(|s| {
            s.iter()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let stopped = |c: String| match stops.iter().filter_map(|s| c.find(s.as_str())).min() {
        Some(at) => c[..at].to_string(),
        None => c,
    };
    let content = match answer {
        Answer::Json(v) => v.to_string(),
        Answer::Content(c) => {
            let c = stopped(c);
            match cap_chars {
                Some(cap) if c.chars().count() > cap => {
                    finish = "length";
                    c.chars().take(cap).collect()
                }
                _ => c,
            }
        }
        Answer::Status { code, retry_after } => {
            let status = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            let mut resp = (
                status,
                Json(json!({"error": {"message": format!("scripted {code}"), "type": "server_error"}})),
            )
                .into_response();
            if let Some(v) = retry_after.and_then(|v| v.parse().ok()) {
                resp.headers_mut().insert("retry-after", v);
            }
            return resp;
        }
        Answer::Hang => {
            std::future::pending::<()>().await;
            unreachable!("pending never completes")
        }
        Answer::ToolCalls(_) | Answer::From(_) => unreachable!("answered above"),
        Answer::BadRequest(message) => {
            return (
                StatusCode::BAD_REQUEST,
                Json(json!({"error": {"message": message, "type": "invalid_request_error"}})),
            )
                .into_response()
        }
    };
    let prompt_chars: usize = body["messages"]
        .as_array()
        .map(|m| {
            m.iter()
                .filter_map(|m| m["content"].as_str())
                .map(str::len)
                .sum()
        })
        .unwrap_or(0);
    let tokens = (prompt_chars / 4 + 1, content.len() / 4 + 1);
    let message = json!({"role": "assistant", "content": content, "refusal": null});
    completion(&body, message, finish, tokens)
}

/// A 200 `chat.completion` carrying `message`, as OpenAI shapes it.
fn completion(
    body: &Value,
    message: Value,
    finish: &str,
    (prompt, answer): (usize, usize),
) -> Response {
    Json(json!({
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 1_767_600_000,
        "model": body["model"],
        "choices": [{"index": 0, "message": message, "logprobs": null, "finish_reason": finish}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": answer, "total_tokens": prompt + answer}
    }))
    .into_response()
}

/// A 200 whose assistant message calls tools (`finish_reason: tool_calls`).
fn tool_calls_answer(body: &Value, calls: Vec<Value>) -> Response {
    let message =
        json!({"role": "assistant", "content": null, "refusal": null, "tool_calls": calls});
    completion(body, message, "tool_calls", (10, 10))
}

impl FakeLlm {
    /// Start on 127.0.0.1 with an OS-chosen port.
    pub async fn start() -> FakeLlm {
        let script = Arc::new(Mutex::new(Script::default()));
        let app = Router::new()
            .route("/v1/chat/completions", post(completions))
            .route("/v1/models", get(models))
            .with_state(script.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind fake LLM");
        let addr = listener.local_addr().expect("fake LLM address");
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        FakeLlm {
            base_url: format!("http://{addr}/v1"),
            script,
        }
    }

    /// `llm.base_url` for this server.
    pub fn base_url(&self) -> String {
        self.base_url.clone()
    }

    /// A configuration with `provider = "openai"` pointed here (model `fake-model`,
    /// a 2 s timeout, no retry backoff, no turn budget).
    pub fn config(&self) -> Config {
        let mut cfg = Config::default();
        cfg.llm.provider = "openai".into();
        cfg.llm.base_url = Some(self.base_url());
        cfg.llm.model = Some("fake-model".into());
        cfg.llm.timeout_ms = 2_000;
        cfg.llm.retry_base_ms = 0;
        cfg.llm.turn_token_budget = 0;
        cfg
    }

    /// Report a model of `n` parameters at `GET /v1/models`, as llama.cpp does.
    pub fn reports_params(&self, n: u64) {
        self.script.lock().expect("fake LLM script").params = Some(n);
    }

    /// Answer the next request for `schema` with `a` (queued in order).
    pub fn push(&self, schema: &str, a: Answer) {
        self.script
            .lock()
            .expect("script")
            .queued
            .entry(schema.to_string())
            .or_default()
            .push_back(a);
    }

    /// Answer every request for `schema` with `a` once the queue is empty.
    pub fn always(&self, schema: &str, a: Answer) {
        self.script
            .lock()
            .expect("script")
            .always
            .insert(schema.to_string(), a);
    }

    /// Every request received, in order.
    pub fn received(&self) -> Vec<Received> {
        self.script.lock().expect("script").received.clone()
    }

    /// The requests received for `schema`, in order.
    pub fn received_for(&self, schema: &str) -> Vec<Received> {
        self.received()
            .into_iter()
            .filter(|r| r.schema == schema)
            .collect()
    }

    /// Forget the requests received so far.
    pub fn clear_received(&self) {
        self.script.lock().expect("script").received.clear();
    }
}
