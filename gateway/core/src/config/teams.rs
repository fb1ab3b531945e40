//! `[teams]`: the Teams outgoing webhook's settings and what a run may
//! deliver to through the channels' Workflows webhooks (`teams:<channel>`).

use crate::config::section::{Section, TargetForm};
use serde::{Deserialize, Serialize};
use smart_default::SmartDefault;
use std::collections::BTreeMap;
use validator::Validate;

/// The Teams outgoing webhook. Off unless a security token is set.
#[derive(Debug, Clone, SmartDefault, Serialize, Deserialize, PartialEq, Validate)]
#[serde(deny_unknown_fields, default)]
pub struct TeamsConfig {
    /// The outgoing webhook's security token (base64), as Teams shows it.
    pub security_token: Option<String>,
    /// Retired: one Workflows webhook for every channel posted each channel's
    /// late replies into one (see `workflows`). Refused at start when set.
    pub workflows_url: Option<String>,
    /// Teams channel id (`channelData.channel.id`, `19:…@thread.tacv2`) → the
    /// Workflows webhook ("Post to a channel when a webhook request is
    /// received") that posts into that channel: where its replies finished
    /// after the deadline go. Other conversations get no late reply.
    pub workflows: BTreeMap<String, String>,
    /// How long a request waits for the turn before acknowledging (Teams waits 5 s).
    #[default = 4000]
    #[validate(range(min = 0, max = 60_000))]
    pub reply_deadline_ms: u64,
    /// Teams tenant id → organisation; other tenants are `server.org`.
    pub tenant_orgs: BTreeMap<String, String>,
    /// Agent of `POST /teams` (no agent in the path); default `server.agent`.
    pub agent: Option<String>,
    /// Largest accepted webhook body; default `server.max_body_bytes`.
    #[validate(range(min = 1024, max = 67_108_864))]
    pub max_body_bytes: Option<usize>,
    /// Workflows posts are tried at most this many times (429, 5xx, network errors).
    #[default = 5]
    #[validate(range(min = 1, max = 20))]
    pub workflows_attempts: u32,
    /// Wait before the second Workflows attempt, doubling after each further one,
    /// unless the endpoint sends `Retry-After`.
    #[default = 500]
    #[validate(range(min = 1, max = 60_000))]
    pub workflows_backoff_ms: u64,
}

impl Section for TeamsConfig {
    fn agent(&self) -> Option<Option<&str>> {
        Some(self.agent.as_deref())
    }

    fn orgs(&self) -> Vec<(String, &String)> {
        self.tenant_orgs
            .iter()
            .map(|(t, o)| (format!("teams.tenant_orgs.{t}"), o))
            .collect()
    }

    fn check(&self) -> Result<(), String> {
        let bad = |key: &str, why: String| Err(format!("{key}: {why}"));
        if let Some(token) = &self.security_token {
            if let Err(e) = adapters::teams::decode_security_token(token) {
                return bad(
                    "teams.security_token",
                    format!(
                        "{e} (paste the token Teams showed when the outgoing webhook was created)"
                    ),
                );
            }
        }
        if self.workflows_url.is_some() {
            return bad(
                "teams.workflows_url",
                "retired: it posted every channel's late replies into one channel. Map each channel to its own webhook under [teams.workflows] (\"<channel id>\" = \"https://…\")".into(),
            );
        }
        for (channel, url) in &self.workflows {
            if !(url.starts_with("https://") || url.starts_with("http://")) {
                return bad(
                    &format!("teams.workflows.{channel}"),
                    "must be an http(s) URL".into(),
                );
            }
        }
        // 0 is in range (always acknowledge first); Teams' own wait is the limit.
        if self.reply_deadline_ms >= 5000 {
            return bad(
                "teams.reply_deadline_ms",
                "must be below 5000: Teams stops waiting after 5 seconds".into(),
            );
        }
        if let Some((tenant, _)) = self
            .tenant_orgs
            .iter()
            .find(|(_, org)| org.trim().is_empty())
        {
            return bad(
                &format!("teams.tenant_orgs.{tenant}"),
                "organisation must not be empty".into(),
            );
        }
        Ok(())
    }

    /// The Workflows webhook URLs: their query carries the signature.
    fn secret_tables(&self) -> &'static [&'static str] {
        &["workflows"]
    }

    /// `teams:<channel>`: posted through that channel's Workflows webhook (`teams.workflows`).
    fn target() -> Option<TargetForm> {
        Some(TargetForm {
            placeholder: "<channel>",
            parse: |channel| {
                let channel = channel.trim();
                (!channel.is_empty()).then(|| channel.into())
            },
        })
    }

    fn check_target(&self, target: &str, channel: &str) -> Result<(), String> {
        if self.security_token.is_none() {
            return Err(format!(
                "`{target}` needs the Teams channel (teams.security_token)"
            ));
        }
        if !self.workflows.contains_key(channel) {
            return Err(format!(
                "`{target}` needs a Workflows webhook for `{channel}` (teams.workflows)"
            ));
        }
        Ok(())
    }
}
