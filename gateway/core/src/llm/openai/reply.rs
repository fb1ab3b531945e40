//! The reply to a person: the tools it offers, the rounds of calls (and
//! calls written as text), then the text.

use super::*;
use crate::llm::ToolSpec;

impl OpenAi {
    /// The tools this reply offers: none when tools are off (or the server
    /// refused them); with `llm.tools = "external"` only the approved external
    /// tools, never steward's own.
    fn offered_specs(&self, tools: &dyn Tools) -> Vec<ToolSpec> {
        let off = match self.tools {
            ToolsMode::Off => true,
            ToolsMode::On => false,
            ToolsMode::Auto | ToolsMode::External => self.tools_unsupported.load(Ordering::Relaxed),
        };
        if off || self.max_tool_rounds == 0 {
            return Vec::new();
        }
        let mut specs = tools.specs();
        if self.tools == ToolsMode::External {
            specs.retain(|s| external(&s.name));
        }
        specs
    }

    /// The tools a call written as text may name: those the reply may use,
    /// offered or not (a server that does not honour `tools`), none when
    /// tools are off altogether.
    fn text_call_names(&self, tools: &dyn Tools) -> Vec<String> {
        let names = tools.specs().into_iter().map(|s| s.name.into_owned());
        match self.tools {
            ToolsMode::Off => Vec::new(),
            ToolsMode::External => names.filter(|n| external(n)).collect(),
            ToolsMode::Auto | ToolsMode::On => names.collect(),
        }
    }

    /// The reply: up to `llm.max_tool_rounds` rounds of tool calls, each
    /// answered with `role: tool` messages, then the model's text. The last
    /// request offers no tools, so the model must answer. Calls written as
    /// text ([`text_calls`]) are run like real ones when they name a tool the
    /// reply may use; the person never sees them.
    async fn reply_with_tools(
        &self,
        mut messages: Vec<Value>,
        tools: Option<&dyn Tools>,
    ) -> Result<String, LlmError> {
        let Some(tools) = tools else {
            let text = self
                .call("reply", self.max_output_tokens, &messages, None)
                .await?;
            return answered(text_calls::parse(&text, &[]));
        };
        let specs = self.offered_specs(tools);
        if specs.is_empty() {
            // Nothing offered: one call. A call the model writes anyway (a
            // server that does not honour tools) is still governed like one.
            let text = self
                .call("reply", self.max_output_tokens, &messages, None)
                .await?;
            let names = self.text_call_names(tools);
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            let parsed = text_calls::parse(&text, &names);
            return self.after_text_calls(messages, &text, parsed, tools).await;
        }
        let spec = specs_json(&specs);
        let names: Vec<&str> = specs.iter().map(|s| s.name.as_ref()).collect();
        for round in 0..self.max_tool_rounds {
            let reply = match self
                .exchange(
                    "reply",
                    self.max_output_tokens,
                    &messages,
                    None,
                    Some(&spec),
                )
                .await
            {
                Ok(reply) => reply,
                Err(LlmError::Rejected(why))
                    if round == 0
                        && matches!(self.tools, ToolsMode::Auto | ToolsMode::External)
                        && why.to_lowercase().contains("tool") =>
                {
                    tracing::warn!(error = %why, "the model server does not take tools; replying without them from now on");
                    self.tools_unsupported.store(true, Ordering::Relaxed);
                    let text = self
                        .call("reply", self.max_output_tokens, &messages, None)
                        .await?;
                    return answered(text_calls::parse(&text, &[]));
                }
                Err(e) => return Err(e),
            };
            if reply.tool_calls.is_empty() {
                // Calls written as text are run (a proposal is asked); the
                // answer is the text beside them, or, after an external
                // tool, the model's answer with its result.
                let text = text_of(reply)?;
                let parsed = text_calls::parse(&text, &names);
                if !parsed.calls.is_empty() && self.tools == ToolsMode::Auto {
                    // Offered tools, the model wrote a call in its text: the
                    // server does not honour them, and the offer only invites
                    // calls (answer tokens) instead of answers. Approved
                    // external tools (`external`) stay offered: only they do
                    // what the person asks.
                    tracing::warn!(
                        "the model writes tool calls as text; replying without tools from now on"
                    );
                    self.tools_unsupported.store(true, Ordering::Relaxed);
                }
                return self.after_text_calls(messages, &text, parsed, tools).await;
            }
            tracing::info!(
                round = round + 1,
                calls = reply.tool_calls.len(),
                "model called tools"
            );
            answer_calls(&mut messages, &reply, tools, &names).await;
        }
        // The rounds are spent: the answer now, without tools. A call still
        // written as text is governed like the others, and never shown.
        let text = self
            .call("reply", self.max_output_tokens, &messages, None)
            .await?;
        let parsed = text_calls::parse(&text, &names);
        run_text_calls(tools, &parsed).await;
        answered(parsed)
    }

    /// The answer once the calls written as text in `text` ran. A call of an
    /// external tool is what the person asked for, and its result is the
    /// answer's source: the model is asked once more, without tools, with the
    /// results as data (a second call only then; a memory tool's call is
    /// answered by the text beside it, as before).
    async fn after_text_calls(
        &self,
        mut messages: Vec<Value>,
        text: &str,
        parsed: text_calls::Parsed,
        tools: &dyn Tools,
    ) -> Result<String, LlmError> {
        let results = run_text_calls(tools, &parsed).await;
        if !parsed.calls.iter().any(|c| external(&c.name)) {
            return answered(parsed);
        }
        messages.push(json!({"role": "assistant", "content": text}));
        messages.push(json!({
            "role": "user",
            "content": format!(
                "{results}\nAnswer the message above from these results, in plain words. Do not write a tool call."
            )
        }));
        let again = self
            .call("reply", self.max_output_tokens, &messages, None)
            .await?;
        answered(text_calls::parse(&again, &[]))
    }
}

/// The tools offered, as the request's `tools`.
fn specs_json(specs: &[ToolSpec]) -> Value {
    Value::Array(
        specs
            .iter()
            .map(|s| {
                json!({
                    "type": "function",
                    "function": {"name": s.name, "description": s.description, "parameters": s.parameters}
                })
            })
            .collect(),
    )
}

/// Run one round of the structured calls of `reply` (at most
/// [`MAX_CALLS_PER_ROUND`]) and add it and their results to `messages`. A call of a tool not offered
/// (`names`) is refused: an external one by the turn's tools, which audit
/// it; one of steward's own (a memory tool under `external`) here, never run.
async fn answer_calls(messages: &mut Vec<Value>, reply: &Reply, tools: &dyn Tools, names: &[&str]) {
    let echoed: Vec<Value> = reply.tool_calls.iter().map(ToolCallBody::echo).collect();
    messages.push(json!({
        "role": "assistant",
        "content": reply.content,
        "tool_calls": echoed
    }));
    for (i, call) in reply.tool_calls.iter().enumerate() {
        let name = call.function.name.as_str();
        let result = if i >= MAX_CALLS_PER_ROUND {
            format!("Refused: at most {MAX_CALLS_PER_ROUND} tool calls per answer.")
        } else if names.contains(&name) || external(name) {
            tools.call(name, &call.arguments()).await
        } else {
            format!(
                "Refused: there is no tool `{}` you may call.",
                chars(&sanitize(name), 64)
            )
        };
        messages.push(json!({
            "role": "tool",
            "tool_call_id": call.id,
            "content": chars(&result, MAX_TOOL_RESULT_CHARS)
        }));
    }
}

/// Whether a tool is an external one (MCP, `crate::mcp`), not steward's own.
fn external(name: &str) -> bool {
    crate::tools::Tool::from_name(name).is_none()
}

/// Run the calls a model wrote as text (at most [`MAX_CALLS_PER_ROUND`]);
/// their results, one a line, for the model.
async fn run_text_calls(tools: &dyn Tools, parsed: &text_calls::Parsed) -> String {
    if parsed.dropped > 0 {
        tracing::warn!(
            dropped = parsed.dropped,
            "tool calls written as text naming no offered tool, or with unusable arguments; dropped"
        );
    }
    let mut results = String::new();
    for (i, call) in parsed.calls.iter().enumerate() {
        let result = if i < MAX_CALLS_PER_ROUND {
            tracing::info!(tool = %call.name, "model wrote a tool call as text; run as a call");
            tools.call(&call.name, &call.arguments).await
        } else {
            format!("Refused: at most {MAX_CALLS_PER_ROUND} tool calls per answer.")
        };
        results.push_str(&format!(
            "{}: {}\n",
            call.name,
            chars(&result, MAX_TOOL_RESULT_CHARS)
        ));
    }
    results
}

/// The answer's text once calls written as text are taken out; none left
/// (the model answered with a call only) is an invalid answer.
fn answered(parsed: text_calls::Parsed) -> Result<String, LlmError> {
    if parsed.rest.trim().is_empty() {
        return Err(LlmError::Invalid(
            "the model answered with a tool call or JSON only".into(),
        ));
    }
    Ok(parsed.rest)
}

#[async_trait::async_trait]
impl Responder for OpenAi {
    async fn respond(&self, ctx: &ReplyContext<'_>) -> Result<String, LlmError> {
        // The fixed policy first (a server's prompt cache keeps it and the
        // tools its template puts after it), the history, then the message
        // with the turn's context framed before it as data. A small model
        // answers a system message placed late by repeating it.
        let mut context = ctx.prompt.context().to_string();
        if ctx.shared {
            context.push_str(
                "\nThis is a group conversation: do not cite or reveal anyone's personal memory.",
            );
        }
        let mut messages = vec![json!({"role": "system", "content": ctx.prompt.fixed()})];
        messages.extend(ctx.history.iter().map(history_message));
        messages.push(json!({
            "role": "user",
            "content": format!(
                "{CONTEXT_OPENS}\n{context}\n{CONTEXT_CLOSES}\n{}",
                credentials::masked(ctx.text)
            )
        }));
        let answer = self.reply_with_tools(messages, ctx.tools).await?;
        Ok(answer.trim().to_string())
    }
}
