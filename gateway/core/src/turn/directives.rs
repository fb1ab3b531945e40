//! Step 7: `@policy:` and `@notes:`, from administrators in their own name only.

use super::{strip_ci, ReplyParts, Result, Turn, TurnLoop};
use crate::learning::receipt;
use crate::metrics::PolicyOutcome;
use adapters::Reply;
use memory::policy::{self, Directive, Origin};

/// Told to a delegate who writes `@notes:` or `@policy:` while acting for someone.
pub const OPERATIONAL_NOT_ON_BEHALF: &str =
    "Operational notes and org policy are written in your own name, not on someone's behalf: nothing was saved.";

impl TurnLoop {
    /// Step 7: `@policy:` sets org-wide policy memory, `@notes:` teaches the
    /// agent; administrators only, in their own name. The turn's reply when
    /// the message is one.
    pub(super) async fn directive(&self, t: &Turn<'_>, text: &str) -> Result<Option<Reply>> {
        for (prefix, directive) in [
            ("@policy:", Directive::Policy),
            ("@notes:", Directive::Notes),
        ] {
            let Some(body) = strip_ci(text, prefix) else {
                continue;
            };
            // A delegation lends no administration (the one authorization point).
            if t.msg.on_behalf_of.is_some() {
                self.parts.metrics.policy(PolicyOutcome::Refused);
                return Ok(Some(t.reply(OPERATIONAL_NOT_ON_BEHALF)));
            }
            if let Err(refusal) = policy::decide_directive(&t.principal, directive) {
                self.parts.metrics.policy(PolicyOutcome::Refused);
                return Ok(Some(t.reply(refusal.to_string())));
            }
            if body.trim().is_empty() {
                return Ok(Some(t.reply(format!(
                    "An {prefix} directive needs some text after it."
                ))));
            }
            // What memory never keeps (a credential, an instruction for the
            // model, a text over the cap) the write path refuses, whoever asks.
            let content = body.trim();
            let actor = t.principal.author_id().unwrap_or_default();
            return Ok(Some(match directive {
                Directive::Policy => {
                    let written = self
                        .parts
                        .learning
                        .write_policy(t.org(), content, &actor, t.now)
                        .await;
                    match crate::error::refused(written)? {
                        Ok(id) => {
                            self.parts.metrics.policy(PolicyOutcome::Written);
                            t.reply(receipt(memory::Scope::OrgPolicy, id))
                        }
                        Err(refusal) => {
                            self.parts.metrics.policy(PolicyOutcome::Refused);
                            t.reply(refusal.to_string())
                        }
                    }
                }
                Directive::Notes => {
                    let mut parts = ReplyParts::default();
                    let item = self.parts.learning.operational_item(content);
                    self.route(t, &[item], Origin::Explicit, &mut parts).await?;
                    self.render(t, parts)
                }
            }));
        }
        Ok(None)
    }
}
