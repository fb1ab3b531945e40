//! The channels people reach steward through, each one module behind one
//! [`Channel`] trait: its section of the configuration (its module's
//! `Section`, read and checked by it: [`Channel::check`]), whether that
//! turns it on, its HTTP routes or its connection (a [`Worker`]), what the
//! settings page shows of it, and how a message reaches one of its
//! conversations outside a turn ([`Channel::deliver`], for automated runs,
//! whose `deliver = "<channel>:<target>"` it parses:
//! [`Channel::parse_target`]). [`CHANNELS`] is the one list `http::app`,
//! `steward serve`, the configuration and the settings page read: a new
//! channel is a module here and a line in `channels!`.

use crate::config::{out_of_range, render, Config, ConfigError};
use crate::services::Services;
use crate::workers::Worker;
use axum::Router;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::net::SocketAddr;
use validator::{Validate, ValidationErrors};

/// Declares each channel's module (`pub mod <module>;`), [`CHANNELS`], and
/// [`ChannelSections`], whose field `<module>` is the `[<module>]` section
/// of the file, of the module's type `Section` ([`NoSection`] when it has none).
macro_rules! channels {
    ($( $(#[$attr:meta])* $module:ident :: $channel:ident ),* $(,)?) => {
        $( $(#[$attr])* pub mod $module; )*

        /// Every channel, in the order `serve` announces them.
        pub static CHANNELS: &[&dyn Channel] = &[ $( $(#[$attr])* &$module::$channel, )* ];

        /// Every channel's section of the configuration, as its module reads it.
        #[derive(Debug, Clone, Default, PartialEq)]
        pub struct ChannelSections {
            $( $(#[$attr])* pub $module: $module::Section, )*
        }

        impl ChannelSections {
            /// Take each channel's section out of the configuration's
            /// `dict`, parsed; an absent one is its defaults.
            pub(crate) fn take(dict: &mut figment::value::Dict) -> Result<Self, ConfigError> {
                Ok(ChannelSections {
                    $( $(#[$attr])* $module: take_section(dict, stringify!($module))?, )*
                })
            }

            /// Each section's ranges (`#[validate(range)]`); the error names the key.
            pub(crate) fn validate(&self) -> Result<(), ConfigError> {
                $( $(#[$attr])* in_range(&self.$module, stringify!($module))?; )*
                Ok(())
            }

            /// The sections of the file, as the effective configuration shows them.
            pub(crate) fn to_json(&self) -> Vec<(String, serde_json::Value)> {
                let mut out = Vec::new();
                $( $(#[$attr])* section_json(&self.$module, stringify!($module), &mut out); )*
                out
            }

            /// The dotted paths of the maps whose values are all secret.
            pub(crate) fn hidden_maps(&self) -> Vec<String> {
                let mut out = Vec::new();
                $(
                    $(#[$attr])*
                    out.extend(<$module::Section as Section>::HIDDEN_MAPS.iter().map(|m| {
                        format!("{}.{m}", stringify!($module))
                    }));
                )*
                out
            }
        }
    };
}

channels! {
    teams::Teams,
    discord::Discord,
    dashboard_chat::DashboardChat,
    api::Api,
    #[cfg(test)]
    echo::Echo,
}

/// A channel's section of the configuration: `[<module>]` in the file,
/// `STEWARD_<MODULE>__<KEY>` in the environment.
pub trait Section:
    Default + Clone + PartialEq + std::fmt::Debug + Serialize + DeserializeOwned + Validate
{
    /// Whether the file has it (a channel with no settings of its own has not).
    const IN_FILE: bool = true;
    /// Its maps whose values are all secret (a URL carrying a signature).
    const HIDDEN_MAPS: &'static [&'static str] = &[];
}

/// The section of a channel with no settings of its own.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NoSection;

impl Validate for NoSection {
    fn validate(&self) -> Result<(), ValidationErrors> {
        Ok(())
    }
}

impl Section for NoSection {
    const IN_FILE: bool = false;
}

fn take_section<S: Section>(dict: &mut figment::value::Dict, key: &str) -> Result<S, ConfigError> {
    let Some(value) = dict.remove(key).filter(|_| S::IN_FILE) else {
        return Ok(S::default());
    };
    value.deserialize::<S>().map_err(|mut e| {
        e.path.insert(0, key.to_string());
        ConfigError::Invalid(render(e))
    })
}

fn in_range<S: Section>(section: &S, key: &str) -> Result<(), ConfigError> {
    match section.validate() {
        Ok(()) => Ok(()),
        Err(errors) => {
            let (field, why) = out_of_range(&errors);
            Err(ConfigError::Invalid(format!("{key}.{field}: {why}")))
        }
    }
}

fn section_json<S: Section>(section: &S, key: &str, out: &mut Vec<(String, serde_json::Value)>) {
    if S::IN_FILE {
        let value = serde_json::to_value(section).unwrap_or(serde_json::Value::Null);
        out.push((key.to_string(), value));
    }
}

/// Each channel's delivery target (`discord:<channel id>`), by name.
fn target_forms() -> Vec<String> {
    let mut forms: Vec<String> = CHANNELS
        .iter()
        .filter_map(|c| Some(format!("{}:{}", c.name(), c.target_form()?)))
        .collect();
    forms.sort();
    forms
}

/// The delivery targets runs may name (`deliver = "…"`), for a refusal:
/// `none, dashboard, discord:<channel id>, …`.
pub fn delivery_targets() -> String {
    let mut all = vec!["none".to_string(), "dashboard".to_string()];
    all.extend(target_forms());
    all.join(", ")
}

/// The channels' delivery targets for a help text: `` `discord:<channel id>`
/// or `teams:<channel>` ``.
pub fn channel_targets() -> String {
    let forms: Vec<String> = target_forms().iter().map(|f| format!("`{f}`")).collect();
    match forms.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => "no channel".into(),
    }
}

/// The channel stored as `name` on its messages.
pub fn named(name: &str) -> Option<&'static dyn Channel> {
    CHANNELS.iter().copied().find(|c| c.name() == name)
}

/// A conversation of a channel, as its lines are stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConversationRef {
    pub org: String,
    pub agent: String,
    /// The channel's own id of it: a Discord channel id, a Teams
    /// conversation id, `dashboard:admin`, `api:<user>[/<thread>]`.
    pub conversation: String,
}

/// Where a delivered message went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Delivered {
    /// Posted on the platform: the ids of the messages it made, in order
    /// (none when it gives none, as a Teams Workflows webhook).
    Posted { ids: Vec<String> },
    /// Stored as the agent's line of the conversation, which shows it.
    Stored { line: i64 },
}

/// Why a message was not delivered.
#[derive(Debug, thiserror::Error)]
pub enum DeliveryError {
    #[error("there is nothing to deliver: the text is blank")]
    Blank,
    #[error("the {0} channel is off")]
    Off(&'static str),
    #[error("the {channel} channel cannot post into {conversation}: {why}")]
    NoRoute {
        channel: &'static str,
        conversation: String,
        why: String,
    },
    #[error("the {channel} channel cannot deliver messages: {why}")]
    Unsupported {
        channel: &'static str,
        why: &'static str,
    },
    #[error("the {channel} channel did not take the message: {reason}")]
    Failed {
        channel: &'static str,
        reason: String,
    },
    #[error(transparent)]
    Store(#[from] memory::StoreError),
}

/// One line the settings page shows of a channel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingRow {
    pub key: &'static str,
    pub value: String,
}

impl SettingRow {
    pub fn new(key: &'static str, value: impl Into<String>) -> SettingRow {
        SettingRow {
            key,
            value: value.into(),
        }
    }
}

#[async_trait::async_trait]
pub trait Channel: Send + Sync {
    /// The name stored with its messages (`Inbound::channel`).
    fn name(&self) -> &'static str;

    /// Whether `cfg` turns it on.
    fn enabled(&self, cfg: &Config) -> bool;

    /// The agent it answers as when its section names one (else `server.agent`).
    fn agent<'c>(&self, _cfg: &'c Config) -> Option<&'c str> {
        None
    }

    /// The key that names that agent (`discord.agent`), when it has one.
    fn agent_key(&self) -> Option<&'static str> {
        None
    }

    /// Whether its section of `cfg` holds together (each error names its
    /// key): checked at load, with the rest of the configuration.
    fn check(&self, _cfg: &Config) -> Result<(), ConfigError> {
        Ok(())
    }

    /// What follows `<name>:` in a run's `deliver` for it (`<channel id>`),
    /// for the help texts; `None` when runs do not deliver through it.
    fn target_form(&self) -> Option<&'static str> {
        None
    }

    /// `target` (what follows `<name>:` in `deliver`) as it is stored, when it is one of its.
    fn parse_target(&self, _target: &str) -> Option<String> {
        None
    }

    /// Whether `cfg` lets it deliver to `target`, and what is missing if not
    /// ("needs …", said after the target).
    fn check_target(&self, _cfg: &Config, _target: &str) -> Result<(), String> {
        Ok(())
    }

    /// Its own HTTP routes, with their state already applied (so a channel
    /// knows nothing of `http`'s), merged by `http::app` when it is on.
    fn routes(&self, _services: &Services) -> Option<Router> {
        None
    }

    /// Its connection, run by `steward serve` when it is on.
    fn worker(&self, _services: &Services) -> Result<Option<Box<dyn Worker>>, ConfigError> {
        Ok(None)
    }

    /// What `steward serve` prints of it at start, when it is on.
    fn announce(&self, _cfg: &Config, _addr: SocketAddr) -> Option<String> {
        None
    }

    /// What the settings page shows of it (beside whether it is on).
    fn settings(&self, cfg: &Config) -> Vec<SettingRow>;

    /// Send a message to one of its conversations outside any turn
    /// (automated runs); its text is not blank.
    async fn deliver(&self, services: &Services, out: Outbound<'_>) -> Delivery;
}

/// What a channel's [`Channel::deliver`] returns.
pub type Delivery = Result<Delivered, DeliveryError>;

/// A message to deliver: `text` (not blank) to the conversation `to`.
#[derive(Debug, Clone, Copy)]
pub struct Outbound<'a> {
    pub to: &'a ConversationRef,
    pub text: &'a str,
}

/// Deliver `text` to `to` on the channel stored as `channel`, if it is on.
pub async fn deliver(
    services: &Services,
    channel: &str,
    to: &ConversationRef,
    text: &str,
) -> Result<Delivered, DeliveryError> {
    let Some(found) = named(channel) else {
        let why = format!("there is no channel `{channel}`");
        return Err(DeliveryError::no_route("unknown", to, why));
    };
    if !found.enabled(services.config()) {
        return Err(DeliveryError::Off(found.name()));
    }
    if text.trim().is_empty() {
        return Err(DeliveryError::Blank);
    }
    found.deliver(services, Outbound { to, text }).await
}

impl DeliveryError {
    /// `channel` cannot post into `to`, and why.
    fn no_route(channel: &'static str, to: &ConversationRef, why: impl Into<String>) -> Self {
        DeliveryError::NoRoute {
            channel,
            conversation: to.conversation.clone(),
            why: why.into(),
        }
    }
}
