//! Tool calls a model wrote as text. Small local models (and servers that do
//! not honour `tools`) answer with the call in the message itself —
//! `<tool_call>{"name": …}</tool_call>`, a ```` ```json ```` fence, or a bare
//! object. Such a call is taken out of the text; when it names a tool that
//! was offered, with an object of arguments, it is run like a real call (the
//! tool asks the write policy, as for any call); otherwise it is dropped. The
//! person never sees the JSON either way.

use serde_json::Value;

/// A call found in the text.
#[derive(Debug, Clone, PartialEq)]
pub struct TextCall {
    pub name: String,
    pub arguments: Value,
}

/// What [`parse`] found in an answer.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Parsed {
    /// Calls of offered tools with valid arguments, in order.
    pub calls: Vec<TextCall>,
    /// Call-shaped objects naming no offered tool, or with unusable arguments.
    pub dropped: usize,
    /// The answer's text without them.
    pub rest: String,
}

/// Wrappers small models put around a call, removed with it.
const WRAPPERS: &[&str] = &[
    "<tool_call>",
    "</tool_call>",
    "<|tool_call|>",
    "<function_call>",
    "</function_call>",
    "<tools>",
    "</tools>",
];

/// Fields a model puts an answer in when it answers in JSON anyway.
const TEXT_FIELDS: &[&str] = &["answer", "reply", "response", "content", "text", "message"];

/// The call an object describes: `{"name", "arguments"|"parameters"}`, or
/// OpenAI's `{"type": "function", "function": {…}}`.
fn call_of(v: &Value) -> Option<(&str, Option<&Value>)> {
    let v = v.get("function").filter(|f| f.is_object()).unwrap_or(v);
    let name = v.get("name")?.as_str()?;
    Some((name, v.get("arguments").or_else(|| v.get("parameters"))))
}

/// Arguments as an object: the object itself, or a JSON string holding one.
fn arguments_of(a: Option<&Value>) -> Option<Value> {
    match a? {
        Value::Object(_) => a.cloned(),
        Value::String(s) => serde_json::from_str::<Value>(s)
            .ok()
            .filter(Value::is_object),
        _ => None,
    }
}

/// Take the calls out of `content`; `offered` are the tools the model was given.
pub fn parse(content: &str, offered: &[&str]) -> Parsed {
    let mut out = Parsed::default();
    let mut rest = String::with_capacity(content.len());
    let mut i = 0;
    while i < content.len() {
        let Some(at) = content[i..].find(['{', '[']).map(|p| p + i) else {
            rest.push_str(&content[i..]);
            break;
        };
        rest.push_str(&content[i..at]);
        let mut stream = serde_json::Deserializer::from_str(&content[at..]).into_iter::<Value>();
        match stream.next() {
            Some(Ok(v)) => {
                let end = at + stream.byte_offset();
                let calls: Vec<&Value> = match &v {
                    Value::Array(items)
                        if items.iter().all(|x| call_of(x).is_some()) && !items.is_empty() =>
                    {
                        items.iter().collect()
                    }
                    other if call_of(other).is_some() => vec![other],
                    _ => Vec::new(),
                };
                if calls.is_empty() {
                    // JSON that is no call: kept only as the text it holds.
                    if let Some(text) = TEXT_FIELDS
                        .iter()
                        .find_map(|k| v.get(k).and_then(Value::as_str))
                    {
                        rest.push_str(text);
                    } else if is_small_literal(&v) {
                        rest.push_str(&content[at..end]);
                    } else {
                        out.dropped += 1;
                    }
                } else {
                    for c in calls {
                        let Some((name, args)) = call_of(c) else {
                            continue;
                        };
                        match arguments_of(args) {
                            Some(arguments) if offered.contains(&name) => {
                                out.calls.push(TextCall {
                                    name: name.to_string(),
                                    arguments,
                                })
                            }
                            _ => out.dropped += 1,
                        }
                    }
                }
                i = end;
            }
            // Not JSON here ("{x}" in prose): keep the character and go on.
            _ => {
                let ch = content[at..].chars().next().map_or(1, char::len_utf8);
                rest.push_str(&content[at..at + ch]);
                i = at + ch;
            }
        }
    }
    out.rest = tidy(&rest);
    // What is left shaped like JSON but not valid JSON (a small model's
    // `{"2": "agent_notes": …}`) is no answer either: dropped, never shown.
    if json_shaped(&out.rest) {
        out.dropped += 1;
        out.rest.clear();
    }
    out
}

/// An object or array by its shape: opens and closes with its brackets.
fn json_shaped(text: &str) -> bool {
    let t = text.trim();
    (t.starts_with('{') && t.ends_with('}')) || (t.starts_with('[') && t.ends_with(']'))
}

/// `[1, 2]` or `{}` in prose: not worth dropping.
fn is_small_literal(v: &Value) -> bool {
    match v {
        Value::Array(a) => a.iter().all(|x| !x.is_object() && !x.is_array()),
        Value::Object(_) => false,
        _ => true,
    }
}

/// The text left: wrappers and fences emptied by the removal taken out.
fn tidy(text: &str) -> String {
    let mut s = text.to_string();
    for w in WRAPPERS {
        s = s.replace(w, "");
    }
    let lines: Vec<&str> = s.lines().collect();
    let mut out: Vec<&str> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let t = lines[i].trim();
        let opens = t.starts_with("```") && t[3..].chars().all(char::is_alphanumeric);
        // "```json ```" on one line, its call taken out.
        let closed_inline = t.len() > 6
            && t.starts_with("```")
            && t.ends_with("```")
            && t[3..t.len() - 3].trim().chars().all(char::is_alphanumeric);
        if closed_inline {
            i += 1;
            continue;
        }
        if opens {
            let label = t[3..].to_ascii_lowercase();
            let close = lines[i + 1..]
                .iter()
                .position(|l| l.trim() == "```")
                .map(|p| i + 1 + p);
            if let Some(j) = close {
                let inner = &lines[i + 1..j];
                // Emptied by the removal, or left with stray braces: gone.
                let nothing = inner.iter().all(|l| {
                    l.trim()
                        .chars()
                        .all(|c| c.is_whitespace() || "{}[],:\"".contains(c))
                });
                if nothing {
                    i = j + 1;
                    continue;
                }
                // A "json" fence around JSON-shaped text that is no valid
                // JSON: dropped like JSON; around what is no JSON at all (a
                // host name, a sentence): the text without its fence.
                if label == "json" && json_shaped(&inner.join("\n")) {
                    i = j + 1;
                    continue;
                }
                if label == "json" {
                    out.extend_from_slice(inner);
                    i = j + 1;
                    continue;
                }
            }
        }
        out.push(lines[i]);
        i += 1;
    }
    out.join("\n").trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const OFFERED: &[&str] = &["memory_search", "memory_write"];

    #[test]
    fn a_fenced_call_is_taken_out_and_run() {
        let p = parse(
            "```json\n{\"name\": \"memory_write\", \"arguments\": {\"scope\": \"personal\", \"content\": \"Prefers tea\"}}\n```",
            OFFERED,
        );
        assert_eq!(
            p.calls,
            vec![TextCall {
                name: "memory_write".into(),
                arguments: json!({"scope": "personal", "content": "Prefers tea"})
            }]
        );
        assert_eq!(p.rest, "");
    }

    #[test]
    fn qwen_tool_call_tags_and_string_arguments() {
        let p = parse(
            "Sure.\n<tool_call>\n{\"name\": \"memory_search\", \"arguments\": \"{\\\"query\\\": \\\"vpn\\\"}\"}\n</tool_call>",
            OFFERED,
        );
        assert_eq!(p.calls.len(), 1);
        assert_eq!(p.calls[0].arguments, json!({"query": "vpn"}));
        assert_eq!(p.rest, "Sure.");
    }

    #[test]
    fn a_call_inside_tools_tags_leaves_no_tags_behind() {
        // As Qwen2.5-Coder-1.5B wrote a skill_propose call on replay.
        let p = parse(
            "<tools>\n{\"name\": \"memory_search\", \"arguments\": {\"query\": \"weekly digest\"}}\n</tools>",
            OFFERED,
        );
        assert_eq!(p.calls.len(), 1);
        assert_eq!(
            p.rest, "",
            "nothing a person may see: the turn answers by the rules"
        );
    }

    #[test]
    fn unknown_tools_and_bad_arguments_are_dropped_never_shown() {
        let p = parse(
            "{\"name\": \"grant_admin\", \"arguments\": {\"user\": \"me\"}} and {\"name\": \"memory_write\", \"arguments\": 3}",
            OFFERED,
        );
        assert!(p.calls.is_empty());
        assert_eq!(p.dropped, 2);
        assert_eq!(p.rest, "and");
    }

    #[test]
    fn json_answers_keep_only_their_text() {
        assert_eq!(
            parse("{\"answer\": \"It is sales_2025.\"}", OFFERED).rest,
            "It is sales_2025."
        );
        let p = parse("{\"table\": \"sales\", \"rows\": 3}", OFFERED);
        assert_eq!((p.rest.as_str(), p.dropped), ("", 1));
    }

    #[test]
    fn fences_left_with_stray_braces_or_plain_text_are_undone() {
        assert_eq!(parse("```json\n}\n```", OFFERED).rest, "");
        // Malformed JSON, as Qwen2.5-Coder-1.5B wrote it to an injection.
        for text in [
            "```json\n{\n  \"2\": \"agent_notes\": \"Deploys need a reviewer.\"\n}\n```",
            "{\n  \"2\": \"agent_notes\": \"Deploys need a reviewer.\"\n}",
            "[{\"id\": 2, \"agent_notes\"}]",
        ] {
            assert_eq!(parse(text, OFFERED).rest, "", "{text}");
        }
        assert_eq!(
            parse("```json\npg-staging-04.internal\n```", OFFERED).rest,
            "pg-staging-04.internal"
        );
    }

    #[test]
    fn prose_with_braces_is_left_alone() {
        for text in [
            "Use {name} as the placeholder.",
            "The list is [1, 2, 3].",
            "Run `select 1` then ```sql\nselect 1;\n``` to check.",
        ] {
            let p = parse(text, OFFERED);
            assert_eq!(p.rest, text.trim(), "{text}");
            assert!(p.calls.is_empty());
        }
    }
}
