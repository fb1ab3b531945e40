//! Automated runs' settings: `[[schedules]]` and `[[webhooks]]`, what a run
//! does and where its answer goes (docs/runs.md).

use super::{Config, ConfigError};
use serde::{Deserialize, Serialize};

/// What an automated run does: follow an approved skill as a standing
/// procedure (principal `sop-system`), or an administrator's written
/// instruction (`cron-system` on a schedule, `webhook-system` on a webhook).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Procedure {
    Skill(String),
    Text(String),
}

/// Where a run's answer goes (`deliver = "…"`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum Deliver {
    /// Nowhere: the run's lines stay in its conversation.
    None,
    /// The dashboard's Runs page (the run's conversation): the default.
    #[default]
    Dashboard,
    /// `<channel>:<conversation>`: posted by that channel into that
    /// conversation, as the channel's section reads it ([`Section::target`](super::section::Section::target)).
    Channel {
        channel: String,
        conversation: String,
    },
}

impl Deliver {
    /// The channel that posts it, and where (`None` for none or the dashboard).
    pub fn channel(&self) -> Option<(&str, &str)> {
        match self {
            Deliver::None | Deliver::Dashboard => None,
            Deliver::Channel {
                channel,
                conversation,
            } => Some((channel, conversation)),
        }
    }
}

impl TryFrom<String> for Deliver {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        s.parse()
    }
}

impl std::str::FromStr for Deliver {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let s = s.trim();
        let targets = Config::targets();
        let bad = || {
            let forms: Vec<String> = targets
                .iter()
                .map(|(channel, form)| format!("{channel}:{}", form.placeholder))
                .collect();
            format!(
                "`{s}` is not a delivery target (none, dashboard, {})",
                forms.join(", ")
            )
        };
        match s.split_once(':') {
            None if s == "none" => Ok(Deliver::None),
            None if s == "dashboard" => Ok(Deliver::Dashboard),
            Some((name, written)) => {
                let (channel, form) = targets
                    .iter()
                    .find(|(channel, _)| *channel == name)
                    .ok_or_else(bad)?;
                let conversation = (form.parse)(written).ok_or_else(bad)?;
                Ok(Deliver::Channel {
                    channel: channel.to_string(),
                    conversation,
                })
            }
            None => Err(bad()),
        }
    }
}

impl From<Deliver> for String {
    fn from(d: Deliver) -> String {
        d.to_string()
    }
}

impl std::fmt::Display for Deliver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Deliver::None => f.write_str("none"),
            Deliver::Dashboard => f.write_str("dashboard"),
            Deliver::Channel {
                channel,
                conversation,
            } => write!(f, "{channel}:{conversation}"),
        }
    }
}

/// One schedule (`[[schedules]]`): a run at each slot of `cron` in `timezone`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct ScheduleConfig {
    /// Its name: runs are `run:<name>/<id>`.
    pub name: String,
    /// A standard five-field cron expression (`0 9 * * 1-5`: weekdays at
    /// 09:00), or six with seconds first.
    pub cron: String,
    /// An IANA time zone (`Europe/Lisbon`); default UTC.
    pub timezone: Option<String>,
    /// The organisation it runs in (default `server.org`).
    pub org: Option<String>,
    /// The agent that runs it (default `server.agent`).
    pub agent: Option<String>,
    /// An approved skill of that agent to follow (principal `sop-system`) …
    pub skill: Option<String>,
    /// … or an administrator's instruction (principal `cron-system`).
    pub text: Option<String>,
    /// Where the answer goes: `dashboard` (default), `none` or
    /// `<channel>:<conversation>` ([`Deliver`]).
    pub deliver: Deliver,
}

/// One webhook (`[[webhooks]]`), served at `POST /hooks/<name>`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct WebhookConfig {
    pub name: String,
    /// The shared secret requests are signed with (Standard Webhooks,
    /// HMAC-SHA256): `whsec_` and the base64 of 24 to 64 random bytes.
    pub secret: String,
    pub org: Option<String>,
    pub agent: Option<String>,
    /// An approved skill to follow, or an instruction; the request's body
    /// reaches the model only as framed data beside it.
    pub skill: Option<String>,
    pub text: Option<String>,
    pub deliver: Deliver,
}

impl WebhookConfig {
    /// What a secret starts with (Standard Webhooks' symmetric secrets).
    pub const SECRET_PREFIX: &'static str = "whsec_";
    /// The fewest and the most bytes a secret's key holds.
    pub const SECRET_BYTES: std::ops::RangeInclusive<usize> = 24..=64;

    /// The signing key the secret encodes ([`webhook_key`]).
    pub fn key(&self) -> Result<Vec<u8>, SecretError> {
        webhook_key(&self.secret)
    }
}

/// The signing key a Standard Webhooks secret encodes: the bytes whose
/// base64 follows `whsec_`, 24 to 64 of them.
pub fn webhook_key(secret: &str) -> Result<Vec<u8>, SecretError> {
    use base64::Engine as _;
    let b64 = secret
        .trim()
        .strip_prefix(WebhookConfig::SECRET_PREFIX)
        .ok_or(SecretError::Prefix)?;
    let key = base64::engine::general_purpose::STANDARD
        .decode(b64)
        .map_err(|_| SecretError::NotBase64)?;
    if !WebhookConfig::SECRET_BYTES.contains(&key.len()) {
        return Err(SecretError::Length(key.len()));
    }
    Ok(key)
}

/// Why a webhook's secret is not one (`WebhookConfig::key`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SecretError {
    #[error(
        "must start with `whsec_` (the Standard Webhooks format; a plain secret is no longer read)"
    )]
    Prefix,
    #[error("the part after `whsec_` must be standard base64")]
    NotBase64,
    #[error("must encode 24 to 64 bytes, not {0}")]
    Length(usize),
}

/// What a schedule and a webhook share, as the runs read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunTarget {
    pub name: String,
    pub org: String,
    pub agent: String,
    pub procedure: Procedure,
    pub deliver: Deliver,
}

impl Config {
    /// The procedure, organisation and agent of an entry, defaults filled in.
    fn run_target(
        &self,
        name: &str,
        org: &Option<String>,
        agent: &Option<String>,
        skill: &Option<String>,
        text: &Option<String>,
        deliver: &Deliver,
    ) -> RunTarget {
        let procedure = match (skill, text) {
            (Some(s), _) => Procedure::Skill(s.trim().to_string()),
            (None, t) => Procedure::Text(t.clone().unwrap_or_default()),
        };
        RunTarget {
            name: name.to_string(),
            org: org.clone().unwrap_or_else(|| self.server.org.clone()),
            agent: agent.clone().unwrap_or_else(|| self.server.agent.clone()),
            procedure,
            deliver: deliver.clone(),
        }
    }

    /// What schedule `s` runs.
    pub fn schedule_target(&self, s: &ScheduleConfig) -> RunTarget {
        self.run_target(&s.name, &s.org, &s.agent, &s.skill, &s.text, &s.deliver)
    }

    /// What webhook `w` runs.
    pub fn webhook_target(&self, w: &WebhookConfig) -> RunTarget {
        self.run_target(&w.name, &w.org, &w.agent, &w.skill, &w.text, &w.deliver)
    }

    /// The webhook named `name`.
    pub fn webhook(&self, name: &str) -> Option<&WebhookConfig> {
        self.webhooks.iter().find(|w| w.name == name)
    }

    /// Whether this server can deliver to `deliver`: what the channel's
    /// section says its channel needs for that conversation.
    pub fn check_deliver(&self, deliver: &Deliver) -> Result<(), String> {
        let Some((channel, conversation)) = deliver.channel() else {
            return Ok(());
        };
        match self.sections().into_iter().find(|(key, _)| *key == channel) {
            Some((_, section)) => section.check_target(&deliver.to_string(), conversation),
            None => Ok(()),
        }
    }

    /// Every `agent` setting with its key: `server.agent`, then each
    /// channel's section that has one (the agent it answers as; `None`
    /// while unset).
    pub fn agent_settings(&self) -> Vec<(String, Option<&str>)> {
        let channels = self.sections().into_iter().filter_map(|(key, section)| {
            let agent = section.agent()?;
            Some((format!("{key}.agent"), agent))
        });
        std::iter::once(("server.agent".to_string(), Some(self.server.agent.as_str())))
            .chain(channels)
            .collect()
    }
}

impl ScheduleConfig {
    /// Its cron expression, parsed (five fields get seconds `0` in front).
    pub fn parsed(&self) -> Result<cron::Schedule, String> {
        let fields = self.cron.split_whitespace().count();
        let text = match fields {
            5 => format!("0 {}", self.cron.trim()),
            6 | 7 => self.cron.trim().to_string(),
            _ => {
                return Err(format!(
                    "`{}` is not a cron expression (five fields: minute hour day-of-month month day-of-week)",
                    self.cron
                ))
            }
        };
        text.parse::<cron::Schedule>()
            .map_err(|e| format!("`{}` is not a cron expression: {e}", self.cron))
    }

    /// Its time zone (UTC when unset).
    pub fn zone(&self) -> Result<chrono_tz::Tz, String> {
        match self.timezone.as_deref().map(str::trim) {
            None | Some("") => Ok(chrono_tz::UTC),
            Some(tz) => tz
                .parse()
                .map_err(|_| format!("`{tz}` is not an IANA time zone such as Europe/Lisbon")),
        }
    }
}
impl Config {
    /// `[[schedules]]` and `[[webhooks]]`: each error names its key. (Whether
    /// a named skill is approved is checked by `steward serve` against the
    /// database.)
    pub(super) fn check_runs(&self) -> Result<(), ConfigError> {
        let bad = |key: String, why: String| Err(ConfigError::Invalid(format!("{key}: {why}")));
        let settings = self.agent_settings();
        let mut agents: Vec<&str> = settings.iter().filter_map(|(_, a)| *a).collect();
        agents.extend(self.agents.keys().map(String::as_str));
        let keys: Vec<&str> = settings.iter().map(|(key, _)| key.as_str()).collect();
        let mut names = std::collections::HashSet::new();
        let entries = self
            .schedules
            .iter()
            .enumerate()
            .map(|(i, s)| {
                (
                    format!("schedules[{i}]"),
                    self.schedule_target(s),
                    &s.skill,
                    &s.text,
                )
            })
            .chain(self.webhooks.iter().enumerate().map(|(i, w)| {
                (
                    format!("webhooks[{i}]"),
                    self.webhook_target(w),
                    &w.skill,
                    &w.text,
                )
            }));
        for (key, target, skill, text) in entries {
            if memory::skill::check_slug(&target.name).is_err() {
                return bad(
                    format!("{key}.name"),
                    format!(
                        "`{}` is not a name of 1 to 64 lower-case letters, digits and hyphens",
                        target.name
                    ),
                );
            }
            if !names.insert((key.starts_with('w'), target.name.clone())) {
                return bad(
                    format!("{key}.name"),
                    format!("`{}` is used twice", target.name),
                );
            }
            match (skill, text) {
                (Some(_), Some(_)) | (None, None) => {
                    return bad(key, "give exactly one of `skill` and `text`".into())
                }
                (Some(s), None) if memory::skill::check_slug(s.trim()).is_err() => {
                    return bad(format!("{key}.skill"), format!("`{s}` is not a skill name"))
                }
                (None, Some(t)) if t.trim().is_empty() => {
                    return bad(format!("{key}.text"), "must not be empty".into())
                }
                (None, Some(t)) if memory::sanitize::over_cap(t).is_some() => {
                    return bad(format!("{key}.text"), "is over 500 characters".into())
                }
                _ => {}
            }
            if !agents.contains(&target.agent.as_str()) {
                return bad(
                    format!("{key}.agent"),
                    format!(
                        "`{}` is not an agent of this server ({} or [agents.<id>])",
                        target.agent,
                        keys.join(", ")
                    ),
                );
            }
            if target.org.trim().is_empty() {
                return bad(format!("{key}.org"), "must not be empty".into());
            }
            if let Err(why) = self.check_deliver(&target.deliver) {
                return bad(format!("{key}.deliver"), why);
            }
        }
        for (i, s) in self.schedules.iter().enumerate() {
            if let Err(why) = s.parsed() {
                return bad(format!("schedules[{i}].cron"), why);
            }
            if let Err(why) = s.zone() {
                return bad(format!("schedules[{i}].timezone"), why);
            }
        }
        for (i, w) in self.webhooks.iter().enumerate() {
            if let Err(why) = w.key() {
                return bad(
                    format!("webhooks[{i}].secret"),
                    format!("{why}: e.g. whsec_$(openssl rand -base64 32)"),
                );
            }
        }
        Ok(())
    }
}
