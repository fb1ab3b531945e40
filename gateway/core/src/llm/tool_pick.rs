//! Which approved external tool a message asks for, by its words: the rules
//! (`offline`) call one without a model, and the turn does not read such a
//! request for memory (`crate::mcp::Mcp::requested`, docs/tools.md).

use super::{ReplyContext, ToolSpec};
pub use memory::terms::terms;
use serde_json::{Map, Value};

/// Whether `text` says it stands, in any language of the lexicon ("Always
/// open a ticket when …", "Ab sofort …": `prompts/texts/lexicon.toml`'s
/// standing class, "whenever" and "never"): a rule about a tool, read
/// for memory, not a request to run it now.
pub fn standing(text: &str) -> bool {
    use prompts::lexicon::{phrases, Class};
    let lower = text.to_lowercase();
    // Words joined by single spaces and bounded by them: phrases match whole.
    let spaced = format!(
        " {} ",
        lower
            .split(|c: char| !(c.is_alphanumeric() || c == '\''))
            .filter(|w| !w.is_empty())
            .collect::<Vec<_>>()
            .join(" ")
    );
    spaced.contains(" never ")
        || spaced.contains(" whenever ")
        || phrases(Class::Standing).any(|(p, is_spaced)| {
            if is_spaced {
                spaced.contains(&format!(" {p} "))
            } else {
                lower.contains(p)
            }
        })
}

/// Whether a message's terms (`said`: `memory::terms::terms`, no
/// stopwords) ask for the tool `name`
/// described by `description`: two words or more shared with them, one of
/// them from its name ("Open a support ticket about the printer" and
/// `create_ticket`, "Open a support ticket about a problem").
pub fn asks_for(said: &[String], name: &str, description: &str) -> bool {
    let named = terms(&name.replace(['_', '-'], " "));
    let described = terms(description);
    if !named.iter().any(|w| said.contains(w)) {
        return false;
    }
    let words: std::collections::BTreeSet<&String> = named.iter().chain(&described).collect();
    words.into_iter().filter(|w| said.contains(w)).count() >= 2
}

/// The external tool among `specs` that `text` asks for, with its one
/// required argument taken from the message: the word matching a pattern
/// (an order number), or the text after "about" (a ticket's topic).
/// `None` when the message stands, asks for none, or the arguments are not
/// in it: the schema checks the call again, as any call's.
pub fn pick(text: &str, specs: &[ToolSpec]) -> Option<(String, Value)> {
    if standing(text) {
        return None;
    }
    let said = terms(text);
    specs
        .iter()
        .filter(|s| super::Tool::from_name(&s.name).is_none())
        .filter(|s| asks_for(&said, &s.name, &s.description))
        .find_map(|s| Some((s.name.to_string(), arguments(text, &s.parameters)?)))
}

/// The arguments of a schema with one required string property, from `text`.
fn arguments(text: &str, schema: &Value) -> Option<Value> {
    let required = schema.get("required")?.as_array()?;
    let [key] = required.as_slice() else {
        return None;
    };
    let key = key.as_str()?;
    let property = schema.get("properties")?.get(key)?;
    if property.get("type").and_then(Value::as_str) != Some("string") {
        return None;
    }
    let checker = jsonschema::validator_for(property).ok()?;
    let value = if property.get("pattern").is_some() {
        text.split_whitespace()
            .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()))
            .map(|w| Value::from(w.to_string()))
            .find(|v| checker.is_valid(v))?
    } else {
        let lower = text.to_lowercase();
        let topic = match lower.find(" about ") {
            Some(at) => &text[at + " about ".len()..],
            None => text,
        };
        let most = property
            .get("maxLength")
            .and_then(Value::as_u64)
            .unwrap_or(80) as usize;
        let topic: String = topic
            .trim()
            .trim_end_matches(['.', '!', '?'])
            .chars()
            .take(most)
            .collect();
        Some(Value::from(topic)).filter(|v| checker.is_valid(v))?
    };
    let mut arguments = Map::new();
    arguments.insert(key.to_string(), value);
    Some(Value::Object(arguments))
}

/// The rules' answer when the message asks for an approved external tool
/// they can call: what the tool answered, or that it waits for a yes (the
/// turn asks the question). `None`: the rules answer from memory.
pub async fn answer(ctx: &ReplyContext<'_>) -> Option<String> {
    let tools = ctx.tools?;
    // No external tool offered (most turns): nothing to read the message for.
    let external = tools.external_specs();
    if external.is_empty() {
        return None;
    }
    let (name, arguments) = pick(ctx.text, &external)?;
    let result = tools.call(&name, &arguments).await;
    if result.starts_with(crate::mcp::NOT_RUN_YET) {
        return Some(format!("`{name}` runs only after your yes."));
    }
    // A refusal (a rate, the schema) is said by steward under the reply, or
    // is no answer: the rules answer from memory.
    (!result.starts_with("Refused")).then_some(result)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec(name: &'static str, description: &'static str, parameters: Value) -> ToolSpec {
        ToolSpec {
            name: name.into(),
            description: description.into(),
            parameters,
        }
    }

    #[test]
    fn a_request_names_its_tool_and_its_argument() {
        let order = json!({"type": "object", "required": ["order"], "properties": {"order": {"type": "string", "pattern": "^[0-9]{1,8}$"}}});
        let topic = json!({"type": "object", "required": ["topic"], "properties": {"topic": {"type": "string", "maxLength": 80}}});
        let specs = [
            spec(
                "order_status",
                "Look up the delivery status of a customer order by its number.",
                order.clone(),
            ),
            spec(
                "refund_order",
                "Refund a customer order in full by its number.",
                order,
            ),
            spec(
                "create_ticket",
                "Open a support ticket about a problem, with a short topic.",
                topic,
            ),
            spec(
                "memory_search",
                "Search memory for a status order.",
                json!({}),
            ),
        ];
        assert_eq!(
            pick("What is the status of my order 4711?", &specs),
            Some(("order_status".into(), json!({"order": "4711"})))
        );
        assert_eq!(
            pick("Refund order 4711, please.", &specs),
            Some(("refund_order".into(), json!({"order": "4711"})))
        );
        assert_eq!(
            pick("Open a ticket about the VPN dropping.", &specs),
            Some(("create_ticket".into(), json!({"topic": "the VPN dropping"})))
        );
        // No argument in the message, a standing rule, an unrelated message.
        assert_eq!(pick("What is the status of my order?", &specs), None);
        assert_eq!(
            pick("Always open a support ticket about printers.", &specs),
            None
        );
        assert_eq!(pick("Where is the staging database?", &specs), None);
        // One word of a tool's ("status") is not a request for it.
        assert_eq!(pick("What is the status of the deploy 42?", &specs), None);
    }
}
