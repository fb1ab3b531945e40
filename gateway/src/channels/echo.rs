//! A channel that exists only in the gateway's own tests, registered by one
//! `#[cfg(test)]` line in `channels!`. No other file names it, yet its
//! section is read from the file and the environment and checked, the
//! settings page shows it, runs deliver through it and the help texts name
//! its target: what a new channel needs is this module and that line.

use super::{Channel, Delivered, Delivery, DeliveryError, Outbound, SettingRow};
use crate::config::{Config, ConfigError};
use crate::services::Services;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use validator::Validate;

/// `[echo]`: on when `echo.room` is set.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, Validate)]
#[serde(deny_unknown_fields, default)]
pub struct EchoConfig {
    /// The room it listens in.
    pub room: Option<String>,
    /// How many times a delivered message is repeated.
    #[validate(range(min = 1, max = 10))]
    pub times: Option<u32>,
    /// Room → its hook (secret): the rooms it can deliver into.
    pub hooks: BTreeMap<String, String>,
    pub agent: Option<String>,
}

pub type Section = EchoConfig;

impl super::Section for EchoConfig {
    const HIDDEN_MAPS: &'static [&'static str] = &["hooks"];
}

pub struct Echo;

#[async_trait::async_trait]
impl Channel for Echo {
    fn name(&self) -> &'static str {
        "echo"
    }

    fn enabled(&self, cfg: &Config) -> bool {
        cfg.channels.echo.room.is_some()
    }

    fn agent<'c>(&self, cfg: &'c Config) -> Option<&'c str> {
        cfg.channels.echo.agent.as_deref()
    }

    fn agent_key(&self) -> Option<&'static str> {
        Some("echo.agent")
    }

    fn check(&self, cfg: &Config) -> Result<(), ConfigError> {
        if cfg.channels.echo.room.as_deref().is_some_and(|r| r.trim().is_empty()) {
            return Err(ConfigError::Invalid("echo.room: must not be empty".into()));
        }
        Ok(())
    }

    fn target_form(&self) -> Option<&'static str> {
        Some("<room>")
    }

    fn parse_target(&self, target: &str) -> Option<String> {
        (!target.is_empty()).then(|| target.into())
    }

    fn check_target(&self, cfg: &Config, target: &str) -> Result<(), String> {
        match cfg.channels.echo.hooks.contains_key(target) {
            true => Ok(()),
            false => Err(format!("needs a hook for `{target}` (echo.hooks)")),
        }
    }

    fn settings(&self, cfg: &Config) -> Vec<SettingRow> {
        let e = &cfg.channels.echo;
        vec![SettingRow::new(
            "room",
            e.room.clone().unwrap_or_default(),
        )]
    }

    async fn deliver(&self, services: &Services, out: Outbound<'_>) -> Delivery {
        let times = services.config().channels.echo.times.unwrap_or(1);
        if out.to.conversation.is_empty() {
            return Err(DeliveryError::no_route("echo", out.to, "no room"));
        }
        let ids = (0..times).map(|i| format!("{}#{i}", out.to.conversation));
        Ok(Delivered::Posted { ids: ids.collect() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::channels::{self, delivery_targets, named, ConversationRef};
    use crate::config::{Deliver, REDACTED};

    const ECHO: &str = "[echo]\nroom = \"lobby\"\ntimes = 2\n[echo.hooks]\nlobby = \"https://example.invalid/hook?sig=s3cret\"\n";

    #[test]
    fn its_section_is_read_checked_and_shown_with_its_secrets_hidden() {
        let cfg = Config::from_toml(ECHO).unwrap();
        assert_eq!(cfg.channels.echo.room.as_deref(), Some("lobby"));
        assert_eq!(cfg.channels.echo.times, Some(2));
        let v = cfg.redacted();
        assert_eq!(v["echo"]["room"], "lobby");
        assert_eq!(v["echo"]["hooks"]["lobby"], REDACTED);
        assert!(!v.to_string().contains("s3cret"));
        // Off, its section is its defaults.
        assert_eq!(Config::from_toml("").unwrap().channels.echo, EchoConfig::default());
        for (toml, key) in [
            ("[echo]\nroom = \" \"", "echo.room"),
            ("[echo]\ntimes = 11", "echo.times"),
            ("[echo]\ntimes = \"loud\"", "echo.times"),
            ("[echo]\nrom = \"x\"", "rom"),
        ] {
            let e = Config::from_toml(toml).unwrap_err().to_string();
            assert!(e.contains(key), "{toml}: {e}");
        }
        // Its agent is one a run may name, and the refusal lists its key.
        let run = "[[schedules]]\nname = \"x\"\ncron = \"0 9 * * *\"\ntext = \"t\"\nagent = ";
        let with_agent = format!("[echo]\nagent = \"it\"\n{run}\"it\"");
        assert!(Config::from_toml(&with_agent).is_ok());
        let e = Config::from_toml(&format!("{run}\"zz\"")).unwrap_err();
        assert!(e.to_string().contains("echo.agent"), "{e}");
    }

    #[test]
    fn the_environment_sets_its_section() {
        // Only this test sets STEWARD_ECHO__…; no other reads [echo].
        std::env::set_var("STEWARD_ECHO__ROOM", "hall");
        let cfg = Config::load(None);
        std::env::remove_var("STEWARD_ECHO__ROOM");
        let cfg = cfg.unwrap();
        assert_eq!(cfg.channels.echo.room.as_deref(), Some("hall"));
        assert!(named("echo").unwrap().enabled(&cfg));
    }

    #[test]
    fn the_settings_page_rows_and_the_help_texts_name_it() {
        let cfg = Config::from_toml(ECHO).unwrap();
        let echo = named("echo").unwrap();
        assert!(echo.enabled(&cfg));
        let rows = echo.settings(&cfg);
        assert_eq!(rows, [SettingRow::new("room", "lobby")]);
        assert!(delivery_targets().contains("echo:<room>"));
        assert!(channels::channel_targets().contains("`echo:<room>`"));
    }

    #[tokio::test]
    async fn a_run_delivers_through_it_when_its_target_is_configured() {
        let deliver: Deliver = "echo:lobby".parse().unwrap();
        assert_eq!(deliver.channel(), Some(("echo", "lobby")));
        assert_eq!(deliver.to_string(), "echo:lobby");
        let cfg = Config::from_toml(ECHO).unwrap();
        assert_eq!(cfg.check_deliver(&deliver), Ok(()));
        let hall: Deliver = "echo:hall".parse().unwrap();
        assert_eq!(
            cfg.check_deliver(&hall).unwrap_err(),
            "`echo:hall` needs a hook for `hall` (echo.hooks)"
        );
        let schedule = "[[schedules]]\nname = \"x\"\ncron = \"0 9 * * *\"\ntext = \"t\"\ndeliver = \"echo:hall\"";
        let e = Config::from_toml(&format!("{ECHO}{schedule}")).unwrap_err();
        assert!(e.to_string().contains("schedules[0].deliver"), "{e}");

        let db = memory::Db::in_memory().await.unwrap();
        let services = crate::with_db(db, cfg);
        let to = ConversationRef {
            org: "default".into(),
            agent: "default".into(),
            conversation: "lobby".into(),
        };
        let delivered = channels::deliver(&services, "echo", &to, "hello").await;
        assert_eq!(
            delivered.unwrap(),
            Delivered::Posted {
                ids: vec!["lobby#0".into(), "lobby#1".into()]
            }
        );
    }
}
