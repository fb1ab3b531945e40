use super::*;

/// Why `toml` is refused.
fn refusal(toml: &str) -> String {
    match Config::from_toml(toml) {
        Ok(_) => panic!("accepted: {toml}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn defaults_need_no_file() {
    let c = Config::from_toml("").expect("defaults");
    assert_eq!(c.database.url, "sqlite:steward.db");
    assert_eq!(c.server.listen, "127.0.0.1:8080");
    assert_eq!(c.llm.provider, "offline");
}

#[test]
fn dashboard_defaults_and_a_weak_token_is_refused() {
    let c = Config::from_toml("").expect("defaults");
    assert!(c.dashboard.enabled);
    assert_eq!(c.dashboard.admin_token, None);
    assert_eq!(c.dashboard.session_hours, 12);
    assert!(!c.dashboard.secure_cookie);
    for weak in ["", "   ", "short-token"] {
        let e = refusal(&format!("[dashboard]\nadmin_token = \"{weak}\""));
        assert!(e.contains("dashboard.admin_token"), "{e}");
    }
    let e = refusal("[dashboard]\nsession_hours = 0");
    assert!(e.contains("dashboard.session_hours"), "{e}");
    let c = Config::from_toml("[dashboard]\nadmin_token = \"0123456789abcdef\"").expect("ok");
    assert_eq!(c.dashboard.admin_token.as_deref(), Some("0123456789abcdef"));
}

/// Whatever is wrong, the refusal names the key.
#[test]
fn a_bad_value_names_its_key() {
    for (toml, key) in [
        (
            "[rate_limit]\nsender_burst = \"lots\"",
            "rate_limit.sender_burst",
        ),
        ("[memory]\nauto_kep = true", "auto_kep"),
        ("[server]\nlisten = \"nowhere\"", "server.listen"),
        (
            "[llm]\nprovider = \"openai\"\nmodel = \"m\"",
            "llm.base_url",
        ),
        (
            "[llm]\nprovider = \"openai\"\nbase_url = \"http://127.0.0.1:11434/v1\"",
            "llm.model",
        ),
        (
            "[llm]\nprovider = \"openai\"\nbase_url = \"localhost\"\nmodel = \"m\"",
            "llm.base_url",
        ),
        ("[llm]\nprovider = \"gpt\"", "llm.provider"),
        ("[llm]\napi_key_env = \"sk-123 secret\"", "llm.api_key_env"),
    ] {
        let e = refusal(toml);
        assert!(e.contains(key), "{toml}: {e}");
    }
}

#[test]
fn a_valid_openai_config_is_accepted() {
    let c = Config::from_toml(
            "[llm]\nprovider = \"openai\"\nbase_url = \"http://127.0.0.1:11434/v1\"\nmodel = \"llama3.1\"",
        )
        .expect("valid openai config");
    assert_eq!(c.llm.model.as_deref(), Some("llama3.1"));
    assert_eq!(c.llm.turn_token_budget, 16_000);
}

/// Each of these was accepted and broke pairing, consent or the limits quietly.
#[test]
fn numbers_out_of_range_are_refused_with_the_key_named() {
    for (toml, key) in [
        (
            "[pairing]\ncode_ttl_minutes = 9223372036854775807",
            "pairing.code_ttl_minutes",
        ),
        (
            "[pairing]\ncode_ttl_minutes = -5",
            "pairing.code_ttl_minutes",
        ),
        (
            "[pairing]\nmax_pending_per_channel = -1",
            "pairing.max_pending_per_channel",
        ),
        (
            "[memory]\nproposal_ttl_hours = 9223372036854775807",
            "memory.proposal_ttl_hours",
        ),
        ("[server]\nmax_body_bytes = 0", "server.max_body_bytes"),
        (
            "[server]\nheader_timeout_ms = 0",
            "server.header_timeout_ms",
        ),
        ("[server]\nbody_timeout_ms = 0", "server.body_timeout_ms"),
        ("[server]\nmax_connections = 0", "server.max_connections"),
        ("[teams]\nmax_body_bytes = 10", "teams.max_body_bytes"),
        ("[rate_limit]\nsender_burst = 0", "rate_limit.sender_burst"),
        ("[llm]\ntimeout_ms = 0", "llm.timeout_ms"),
    ] {
        let e = refusal(toml);
        assert!(
            e.contains(key) && e.contains("must be between"),
            "{toml}: {e}"
        );
    }
    // The edges of a range are accepted.
    let c = Config::from_toml("[pairing]\ncode_ttl_minutes = 1\nmax_pending_per_channel = 1000")
        .expect("edges");
    assert_eq!(c.pairing.code_ttl_minutes, 1);
}

#[test]
fn the_any_agent_marker_is_not_an_agent_id() {
    for (toml, key) in [
        ("[server]\nagent = \"*\"", "server.agent"),
        ("[discord]\nagent = \"a b\"", "discord.agent"),
        ("[teams]\nagent = \"*\"", "teams.agent"),
    ] {
        let e = refusal(toml);
        assert!(e.contains(key), "{toml}: {e}");
    }
    assert!(Config::from_toml("[server]\nagent = \"support-bot_2\"").is_ok());
}

#[test]
fn metrics_are_off_unless_an_address_or_a_token_is_set() {
    let c = Config::from_toml("").expect("defaults");
    assert!(!c.metrics.enabled());
    let c = Config::from_toml("[metrics]\nlisten = \"127.0.0.1:9464\"").expect("listen");
    assert!(c.metrics.enabled());
    for (toml, key) in [
        ("[metrics]\nlisten = \"somewhere\"", "metrics.listen"),
        ("[metrics]\nlisten = \"127.0.0.1:8080\"", "metrics.listen"),
        ("[metrics]\ntoken = \"short\"", "metrics.token"),
    ] {
        let e = refusal(toml);
        assert!(e.contains(key), "{toml}: {e}");
    }
}

#[test]
fn an_agent_may_keep_automatically_and_others_follow_the_global_setting() {
    let c = Config::from_toml("[agents.it]\nauto_keep = true\n[agents.hr]\n").expect("agents");
    assert!(c.auto_keep("it"));
    assert!(!c.auto_keep("hr"), "unset: the global default (off)");
    assert!(!c.auto_keep("default"));
    let c = Config::from_toml("[memory]\nauto_keep = true\n[agents.hr]\nauto_keep = false")
        .expect("agents");
    assert!(c.auto_keep("default") && !c.auto_keep("hr"));
    let e = refusal("[agents.\"a b\"]\nauto_keep = true");
    assert!(e.contains("agents.a b"), "{e}");
    let e = refusal("[agents.it]\nauto_kep = true");
    assert!(e.contains("auto_kep"), "{e}");
}

#[test]
fn the_redacted_configuration_shows_no_secret() {
    let secrets = [
        "discord-bot-token-secret",
        "dashboard-admin-token-secret",
        "metrics-token-secret-123",
        "sig=workflows-signature",
        "db-password",
    ];
    let c = Config::from_toml(&format!(
        "[discord]\ntoken = \"{}\"\n[dashboard]\nadmin_token = \"{}\"\n[metrics]\ntoken = \"{}\"\n\
             [teams.workflows]\n\"19:abc@thread.tacv2\" = \"https://example.com/hook?{}\"\n\
             [database]\nurl = \"postgres://steward:{}@db.example.com/steward\"",
        secrets[0], secrets[1], secrets[2], secrets[3], secrets[4]
    ))
    .expect("config");
    let text = c.redacted().to_string();
    for s in secrets {
        assert!(!text.contains(s), "{s} shown: {text}");
    }
    let v = c.redacted();
    assert_eq!(v["discord"]["token"], REDACTED);
    assert_eq!(v["metrics"]["token"], REDACTED);
    assert_eq!(
        v["teams"]["security_token"],
        serde_json::Value::Null,
        "unset stays unset"
    );
    assert!(
        text.contains("db.example.com"),
        "the rest of the URL is shown"
    );
    assert_eq!(v["llm"]["api_key_env"], serde_json::Value::Null);
    let c = Config::from_toml(
        "[embeddings]\nbase_url = \"http://127.0.0.1:17010/v1\"\napi_key = \"emb-key-secret\"",
    )
    .expect("config");
    assert_eq!(c.redacted()["embeddings"]["api_key"], REDACTED);
    assert!(!c.redacted().to_string().contains("emb-key-secret"));
}

#[test]
fn embeddings_are_off_unless_a_base_url_is_set() {
    let c = Config::from_toml("").expect("defaults");
    assert!(!c.embeddings.enabled());
    let c = Config::from_toml(
            "[embeddings]\nbase_url = \"http://127.0.0.1:17010/v1\"\nquery_prefix = \"query: \"\ndocument_prefix = \"passage: \"",
        )
        .expect("embeddings");
    assert!(c.embeddings.enabled());
    assert_eq!(c.embeddings.document_prefix, "passage: ");
    for (toml, key) in [
        (
            "[embeddings]\nbase_url = \"ftp://x\"",
            "embeddings.base_url",
        ),
        ("[embeddings]\nmodel = \" \"", "embeddings.model"),
        ("[embeddings]\ntimeout_ms = 0", "embeddings.timeout_ms"),
    ] {
        let e = refusal(toml);
        assert!(e.contains(key), "{toml}: {e}");
    }
}

/// Each channel's section reads its own targets and says what they need,
/// in the words the configuration always used.
#[test]
fn delivery_targets_read_print_and_refuse_in_the_channels_words() {
    for (text, shown) in [
        ("none", "none"),
        ("dashboard", "dashboard"),
        ("discord:123", "discord:123"),
        (" teams: 19:abc@thread.tacv2 ", "teams:19:abc@thread.tacv2"),
        (
            "teams_bot:19:abc@thread.tacv2;messageid=1767603600000",
            "teams_bot:19:abc@thread.tacv2;messageid=1767603600000",
        ),
    ] {
        let d: Deliver = text.parse().expect(text);
        assert_eq!(d.to_string(), shown);
        assert_eq!(shown.parse::<Deliver>(), Ok(d));
    }
    for bad in [
        "discord:0",
        "discord:abc",
        "teams:",
        "slack:#general",
        "slack:C1:later",
        "teams_bot:",
        "teams_bot:a:1 two words",
        "pigeon",
        "api:someone",
    ] {
        assert_eq!(
                bad.parse::<Deliver>(),
                Err(format!("`{bad}` is not a delivery target (none, dashboard, discord:<channel id>, slack:<channel id>, teams:<channel>, teams_bot:<conversation id>)"))
            );
    }
    let mut c = Config::default();
    let needs = |c: &Config, target: &str| {
        c.check_deliver(&target.parse().expect(target))
            .err()
            .unwrap_or_default()
    };
    assert_eq!(
        needs(&c, "discord:123"),
        "`discord:123` needs the Discord channel (discord.token)"
    );
    assert_eq!(
        needs(&c, "teams:ops"),
        "`teams:ops` needs the Teams channel (teams.security_token)"
    );
    assert_eq!(
        needs(&c, "slack:C0GENERAL"),
        "`slack:C0GENERAL` needs the Slack channel (slack.signing_secret_env, or slack.app_token_env with slack.mode = \"socket\")"
    );
    assert_eq!(
        needs(&c, "teams_bot:a:1xyz"),
        "`teams_bot:a:1xyz` needs the Teams bot (teams_bot.app_id)"
    );
    c.teams_bot.app_id = Some("00000000-0000-0000-0000-00000000b07".into());
    c.discord.token = Some("token".into());
    c.slack.signing_secret_env = Some("SLACK_SIGNING_SECRET".into());
    c.slack.bot_token_env = Some("SLACK_BOT_TOKEN".into());
    c.teams.security_token = Some("token".into());
    assert_eq!(
        needs(&c, "teams:ops"),
        "`teams:ops` needs a Workflows webhook for `ops` (teams.workflows)"
    );
    c.teams.workflows = [("ops".to_string(), "https://example.com/hook".to_string())].into();
    for fine in [
        "discord:123",
        "slack:C0GENERAL",
        "slack:C0GENERAL:1767603600.000100",
        "teams:ops",
        "teams_bot:a:1xyz",
        "dashboard",
        "none",
    ] {
        assert_eq!(needs(&c, fine), "", "{fine}");
    }
    let e = refusal(
            "[[schedules]]\nname = \"daily\"\ncron = \"0 9 * * *\"\nagent = \"nobody\"\ntext = \"Report\"",
        );
    assert_eq!(
            e,
            "invalid configuration: schedules[0].agent: `nobody` is not an agent of this server (server.agent, discord.agent, slack.agent, teams.agent, teams_bot.agent or [agents.<id>])"
        );
}

#[test]
fn retired_setting_warns() {
    let c = Config::from_toml("[memory]\nquarantine_learned_facts = true").expect("accepted");
    assert!(c.warnings()[0].contains("retired"));
}

#[test]
fn slack_socket_mode_needs_the_app_token_and_the_bot_token_and_no_signing_secret() {
    let socket = |rest: &str| format!("[slack]\nmode = \"socket\"\n{rest}");
    assert!(
        refusal(&socket("bot_token_env = \"SLACK_BOT_TOKEN\""))
            .contains("slack.app_token_env: required"),
        "{}",
        refusal(&socket("bot_token_env = \"SLACK_BOT_TOKEN\""))
    );
    assert!(refusal(&socket("app_token_env = \"SLACK_APP_TOKEN\""))
        .contains("slack.bot_token_env: required with slack.mode = \"socket\""));
    assert!(refusal(&socket(
        "app_token_env = \"SLACK_APP_TOKEN\"\napp_token_file = \"/run/secrets/slack\"\nbot_token_env = \"B\""
    ))
    .contains("not both"));
    assert!(refusal(&socket(
        "app_token_env = \"A\"\nbot_token_env = \"B\"\nsigning_secret_env = \"S\""
    ))
    .contains("slack.signing_secret_env: not used with slack.mode = \"socket\""));
    assert!(refusal(&socket(
        "app_token_env = \"xapp-1-A0-secret\"\nbot_token_env = \"B\""
    ))
    .contains("slack.app_token_env: the NAME of an environment variable"));
    // The app-level token without Socket Mode would be ignored: refused.
    assert!(refusal(
        "[slack]\nsigning_secret_env = \"S\"\nbot_token_env = \"B\"\napp_token_env = \"A\""
    )
    .contains("slack.app_token_env: the app-level token is for Socket Mode"));
    assert!(refusal("[slack]\nmode = \"websocket\"").contains("mode"));
    let on = Config::from_toml(&socket(
        "app_token_file = \"/run/secrets/slack\"\nbot_token_env = \"B\"",
    ))
    .expect("a valid Socket Mode section");
    assert!(on.slack.on());
    assert_eq!(on.slack.mode, crate::config::slack::SlackMode::Socket);
    assert!(!Config::default().slack.on());
}
