//! Who sends a chat command, and where: what every command module reads of
//! the turn (a leaf, so command modules depend on it and not on each other).

use memory::Principal;

/// Who is asking, where.
pub struct Asker<'a> {
    pub org: &'a str,
    pub principal: &'a Principal,
    /// A group thread: nothing personal is listed here.
    pub shared: bool,
    pub now: i64,
    /// Whose behalf a delegated turn acts on.
    pub on_behalf_of: Option<&'a str>,
    /// A secret to show this once (`/apikey`): the turn puts it into the
    /// sent reply in place of `pairing::KEY_SHOWN_ONCE`, past the credential
    /// screen, and stores the placeholder.
    pub shown_once: &'a std::sync::OnceLock<String>,
}

impl<'a> Asker<'a> {
    /// Who acts, as the one authorization point (`memory::authz`) reads it.
    pub fn actor(&self) -> memory::authz::Actor<'a> {
        memory::authz::Actor {
            principal: self.principal,
            on_behalf_of: self.on_behalf_of,
        }
    }

    /// The sender and the record a `/promote <id>` or `/forget <id>` names,
    /// or the reply that refuses the command.
    pub(crate) fn sender_and_id(
        &self,
        command: &str,
        words: &[&str],
    ) -> std::result::Result<(&'a str, i64), String> {
        let Some(user) = self.principal.user_id() else {
            return Err("I keep no memory for unpaired senders.".into());
        };
        words
            .get(1)
            .and_then(|w| w.trim_start_matches('#').parse::<i64>().ok())
            .map(|id| (user, id))
            .ok_or_else(|| format!("Usage: {command} <id> (see /memory for ids)."))
    }
}
