//! The reply to a person: the tools it offers, the rounds of calls (and
//! calls written as text), then the text.

use super::*;

impl OpenAi {
    /// Whether this reply offers tools, and which.
    fn offered(&self, tools: Option<&dyn Tools>) -> Option<Value> {
        let tools = tools?;
        let off = match self.tools {
            ToolsMode::Off => true,
            ToolsMode::On => false,
            ToolsMode::Auto => self.tools_unsupported.load(Ordering::Relaxed),
        };
        if off || self.max_tool_rounds == 0 {
            return None;
        }
        let specs: Vec<Value> = tools
            .specs()
            .into_iter()
            .map(|s| {
                json!({
                    "type": "function",
                    "function": {"name": s.name, "description": s.description, "parameters": s.parameters}
                })
            })
            .collect();
        (!specs.is_empty()).then_some(Value::Array(specs))
    }

    /// The reply: up to `llm.max_tool_rounds` rounds of tool calls, each
    /// answered with `role: tool` messages, then the model's text. The last
    /// request offers no tools, so the model must answer. Calls written as
    /// text ([`text_calls`]) are run like real ones when they name an offered
    /// tool; the person never sees them.
    async fn reply_with_tools(
        &self,
        mut messages: Vec<Value>,
        tools: Option<&dyn Tools>,
    ) -> Result<String, LlmError> {
        let offered = self.offered(tools);
        let (Some(spec), Some(tools)) = (offered, tools) else {
            let text = self
                .call("reply", self.max_output_tokens, &messages, None)
                .await?;
            // Not offered (a server that does not honour them): a call the
            // model writes anyway is still governed like one, unless tools
            // are off altogether.
            let turn_tools = tools.filter(|_| self.tools != ToolsMode::Off);
            let names: Vec<String> = turn_tools
                .map(|t| t.specs().into_iter().map(|s| s.name.into_owned()).collect())
                .unwrap_or_default();
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            let parsed = text_calls::parse(&text, &names);
            if let Some(t) = turn_tools {
                run_text_calls(t, &parsed).await;
            }
            return answered(parsed);
        };
        let specs = tools.specs();
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
                        && self.tools == ToolsMode::Auto
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
                // answer is the text beside them. A model that wrote only
                // calls is not asked again (a second call for one message):
                // the turn answers from the same memory by the rules.
                let text = text_of(reply)?;
                let parsed = text_calls::parse(&text, &names);
                if !parsed.calls.is_empty() && self.tools == ToolsMode::Auto {
                    // Offered tools, the model wrote a call in its text: the
                    // server does not honour them, and the offer only invites
                    // calls (answer tokens) instead of answers.
                    tracing::warn!(
                        "the model writes tool calls as text; replying without tools from now on"
                    );
                    self.tools_unsupported.store(true, Ordering::Relaxed);
                }
                run_text_calls(tools, &parsed).await;
                return answered(parsed);
            }
            tracing::info!(
                round = round + 1,
                calls = reply.tool_calls.len(),
                "model called tools"
            );
            let echoed: Vec<Value> = reply.tool_calls.iter().map(ToolCallBody::echo).collect();
            messages.push(json!({
                "role": "assistant",
                "content": reply.content,
                "tool_calls": echoed
            }));
            for (i, call) in reply.tool_calls.iter().enumerate() {
                let result = if i < MAX_CALLS_PER_ROUND {
                    tools.call(&call.function.name, &call.arguments()).await
                } else {
                    format!("Refused: at most {MAX_CALLS_PER_ROUND} tool calls per answer.")
                };
                messages.push(json!({
                    "role": "tool",
                    "tool_call_id": call.id,
                    "content": chars(&result, MAX_TOOL_RESULT_CHARS)
                }));
            }
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
