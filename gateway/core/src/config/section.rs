//! A channel's own section of the configuration (`[<channel>]`), as
//! `Config` reads it. Each section type is a file beside this one
//! (`config/<channel>.rs`), a plain field of `Config`; its channel (in the
//! channels crate) reads it as `<channel>::section`.

/// How a run's `deliver = "<channel>:<conversation>"` names one of a
/// channel's conversations.
pub struct TargetForm {
    /// How the conversation is written after `<channel>:` (`<channel id>`),
    /// for the message that lists every target.
    pub placeholder: &'static str,
    /// The conversation `written` names, or `None` when it names none.
    pub parse: fn(&str) -> Option<String>,
}

/// A channel's section. Its key in the configuration is its channel's name
/// (`Channel::name`): the `<channel>` of a run's delivery target.
pub trait Section {
    /// Its `agent` setting when it has one: `Some(None)` while unset (the
    /// agent is then `server.agent`).
    fn agent(&self) -> Option<Option<&str>> {
        None
    }

    /// The organisations it files conversations under, each with its key.
    fn orgs(&self) -> Vec<(String, &String)> {
        Vec::new()
    }

    /// What the ranges of its fields do not check: `Err("<key>: <why>")`
    /// for the first wrong setting.
    fn check(&self) -> Result<(), String> {
        Ok(())
    }

    /// Its tables (keys below its own) whose every value is a secret, as a
    /// webhook URL signed in its query is.
    fn secret_tables(&self) -> &'static [&'static str] {
        &[]
    }

    /// How runs name its channel's conversations, when its channel takes
    /// runs' answers.
    fn target() -> Option<TargetForm>
    where
        Self: Sized,
    {
        None
    }

    /// Whether this configuration lets its channel deliver into
    /// `conversation`; `target` is the run's target as written, for the message.
    fn check_target(&self, _target: &str, _conversation: &str) -> Result<(), String> {
        Ok(())
    }
}

/// A section's organisations as [`Section::orgs`] lists them: its
/// `default_org` and each entry of its by-platform-id map, under their keys
/// (`slack.default_org`, `slack.team_orgs.T1`).
pub fn org_keys<'a>(
    channel: &str,
    default_org: Option<&'a String>,
    (map, by_id): (&str, &'a std::collections::BTreeMap<String, String>),
) -> Vec<(String, &'a String)> {
    let default = default_org.map(|o| (format!("{channel}.default_org"), o));
    let by_id = by_id
        .iter()
        .map(|(id, o)| (format!("{channel}.{map}.{id}"), o));
    default.into_iter().chain(by_id).collect()
}
