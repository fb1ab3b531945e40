//! The settings page: the effective configuration (embedded defaults, the
//! file, the environment) with every secret hidden (`Config::redacted`),
//! each agent's own settings beside the global ones, each channel (on or
//! off, and what it shows of itself: `channels`), and where the
//! things configured elsewhere are managed.

use super::auth::Screen;
use super::view::{self, SETTINGS};
use super::Page;
use channels::Channel;
use maud::{html, Markup};
use serde_json::Value;
use std::collections::BTreeSet;
use steward_core::config::Config;

pub(super) async fn page(screen: Screen) -> Page {
    let content = template(&screen.state.cfg);
    screen.show(SETTINGS, content)
}

/// One setting as shown: its dotted key and its value.
struct Row {
    key: String,
    value: Option<String>,
}

/// `v`'s leaves below `path`, as dotted keys (maps such as `discord.guild_orgs` flattened).
fn rows(v: &Value, path: &str, out: &mut Vec<Row>) {
    match v {
        Value::Object(map) if !map.is_empty() => {
            for (key, value) in map {
                rows(value, &format!("{path}.{key}"), out);
            }
        }
        Value::Object(_) => {}
        Value::Null => out.push(Row {
            key: path.into(),
            value: None,
        }),
        Value::String(s) => out.push(Row {
            key: path.into(),
            value: Some(s.clone()),
        }),
        other => out.push(Row {
            key: path.into(),
            value: Some(other.to_string()),
        }),
    }
}

/// Every agent a channel answers as or the configuration names.
fn agents(cfg: &Config) -> BTreeSet<&str> {
    let mut ids: BTreeSet<&str> = cfg.agents.keys().map(String::as_str).collect();
    ids.extend(
        cfg.agent_settings()
            .into_iter()
            .filter_map(|(_, agent)| agent),
    );
    ids
}

fn template(cfg: &Config) -> Markup {
    let redacted = cfg.redacted();
    let sections: Vec<(&String, Vec<Row>)> = match &redacted {
        Value::Object(map) => map
            .iter()
            .filter(|(k, _)| *k != "agents")
            .map(|(name, value)| {
                let mut list = Vec::new();
                rows(value, name, &mut list);
                (name, list)
            })
            .collect(),
        _ => Vec::new(),
    };
    let agents: Vec<&str> = agents(cfg).into_iter().collect();
    let per_agent = view::Table {
        class: "agents",
        head: &["Agent", "auto_keep", "From"],
        none: "No agents.",
    }
    .card(
        html! {
            h2 { "Agents" }
            p.muted { "Each agent's own settings ([agents.<id>] in steward.toml); what an agent does not set is the global setting." }
        },
        &agents,
        |id| {
            let own = cfg.agents.get(*id).and_then(|a| a.auto_keep);
            html! {
                tr id={ "agent-" (id) } {
                    td { code { (id) } }
                    td.value { (if cfg.auto_keep(id) { "on" } else { "off" }) }
                    td.muted {
                        @if own.is_some() { "agents." (id) ".auto_keep" } @else { "memory.auto_keep" }
                    }
                }
            }
        },
    );
    html! {
        section.card {
            p {
                "The configuration this server runs with: embedded defaults, then steward.toml, then STEWARD_<SECTION>__<KEY> variables. Secrets are never shown; a set one reads "
                code { (steward_core::config::REDACTED) } ". Changing a setting takes a restart."
            }
            p {
                "Managed elsewhere: "
                a href="/dashboard/memory?scope=org_policy" { "org policy" }
                " (here, and " code { "steward memory policy" } "), API keys ("
                code { "steward api-key list|create|revoke" } "), session archives ("
                code { "steward memory archives" } ")."
            }
        }
        (channels(cfg))
        (per_agent)
        @for (name, list) in &sections {
            (view::Table {
                class: "settings",
                head: &["Setting", "Value"],
                none: "Nothing set.",
            }
            .card(html! { h2 { "[" (name) "]" } }, list, |r| html! {
                tr id={ "setting-" (r.key) } {
                    td { code { (r.key) } }
                    td.value {
                        @match &r.value {
                            Some(v) => (v),
                            None => span.muted { "unset" },
                        }
                    }
                }
            }))
        }
    }
}

/// Each channel, on or off, with its settings when on.
fn channels(cfg: &Config) -> Markup {
    view::Table {
        class: "channels",
        head: &["Channel", "On", "Details"],
        none: "No channels.",
    }
    .card(
        html! {
            h2 { "Channels" }
            p.muted { "Where people reach the agent; each channel's own section is below." }
        },
        channels::all(),
        |c: &&dyn Channel| {
            let on = c.enabled(cfg);
            html! {
                tr id={ "channel-" (c.name()) } {
                    td { code { (c.name()) } }
                    td.value { (if on { "on" } else { "off" }) }
                    td {
                        @if on {
                            @for row in c.settings(cfg) {
                                div { span.muted { (row.key) ": " } (row.value) }
                            }
                        } @else {
                            span.muted { "off in this configuration" }
                        }
                    }
                }
            }
        },
    )
}
