//! The docs against the code: every key the configuration accepts is in
//! `docs/configuration.md`, and every key documented there is one it accepts.

use serde_json::Value;
use std::collections::BTreeSet;
use steward::config::{AgentConfig, Config};

/// Every key `Config` reads, as `section.key`: an agent's as
/// `agents.<id>.key`, a list table's as `list[].key`. Read from a
/// configuration that has an agent, a schedule and a webhook and sets the
/// keys left out while unset, so every key is serialized.
fn config_keys() -> BTreeSet<String> {
    let mut cfg = Config::default();
    let agent = AgentConfig {
        auto_keep: Some(true),
    };
    cfg.agents.insert("it".into(), agent);
    cfg.schedules.push(Default::default());
    let mut server = steward::config::McpServerConfig::default();
    server.headers.push(Default::default());
    cfg.mcp.servers.push(server);
    cfg.webhooks.push(Default::default());
    cfg.oidc.providers.push(Default::default());
    cfg.llm.temperature = Some(0.0);
    cfg.memory.quarantine_learned_facts = Some(false);
    let value = serde_json::to_value(&cfg).unwrap();
    let mut keys = BTreeSet::new();
    let fields = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    for (section, inner) in value.as_object().unwrap() {
        match inner {
            Value::Object(agents) if section == "agents" => {
                for agent in agents.values() {
                    keys.extend(fields(agent).iter().map(|k| format!("agents.<id>.{k}")));
                }
            }
            Value::Array(items) => {
                for item in items {
                    keys.extend(fields(item).iter().map(|k| format!("{section}[].{k}")));
                }
            }
            Value::Object(table) => {
                for (k, v) in table {
                    keys.insert(format!("{section}.{k}"));
                    // A list of tables inside a section (`[[mcp.servers]]`),
                    // and one inside those (`headers`): `section.list[].key`.
                    for item in v.as_array().into_iter().flatten() {
                        for (field, inner) in item.as_object().into_iter().flatten() {
                            keys.insert(format!("{section}.{k}[].{field}"));
                            for deeper in inner.as_array().into_iter().flatten() {
                                keys.extend(
                                    fields(deeper)
                                        .iter()
                                        .map(|d| format!("{section}.{k}[].{field}[].{d}")),
                                );
                            }
                        }
                    }
                }
            }
            _ => panic!("`{section}` is not a section"),
        }
    }
    keys
}

/// The keys `docs/configuration.md` documents: each code span in the first
/// cell of a table row that reads as a key.
fn documented_keys(doc: &str) -> BTreeSet<String> {
    doc.lines()
        .filter_map(|line| line.strip_prefix("| ")?.split(" | ").next())
        .flat_map(|cell| cell.split('`').skip(1).step_by(2))
        .filter(|span| span.contains('.') && !span.contains(' '))
        .map(String::from)
        .collect()
}

#[test]
fn the_configuration_reference_documents_every_key_and_only_those() {
    let keys = config_keys();
    assert!(keys.len() > 80, "{keys:?}");
    let documented = documented_keys(include_str!("../../docs/configuration.md"));
    let missing: Vec<_> = keys.difference(&documented).collect();
    let unknown: Vec<_> = documented.difference(&keys).collect();
    assert!(
        missing.is_empty() && unknown.is_empty(),
        "keys missing from docs/configuration.md: {missing:?}\n\
         keys documented there that no configuration type reads: {unknown:?}"
    );
}

#[test]
fn the_reference_check_reads_keys_from_table_rows_only() {
    let doc = "| key | default |\n|---|---|\n| `server.listen`, `a.b` | `server.org` |\n\
               `not.a.row` and | `x` | one word |\n";
    let found: Vec<_> = documented_keys(doc).into_iter().collect();
    assert_eq!(found, ["a.b", "server.listen"]);
}
