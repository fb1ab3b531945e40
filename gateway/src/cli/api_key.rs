//! `steward api-key …`: keys for `/api/v1` — create, list, revoke.

use super::{date, print_json, ApiKeyCommand, Ctx, ACTOR};
use anyhow::Result;

pub(super) async fn run(ctx: &Ctx, cmd: ApiKeyCommand) -> Result<()> {
    let p = ctx.services.pairing();
    let org = &ctx.org;
    match cmd {
        ApiKeyCommand::Create {
            user,
            on_behalf_of,
            reason,
        } => {
            let reason = super::acting_as_reason(&user, reason.as_deref())?;
            let new = match on_behalf_of.as_deref() {
                Some(principal) => {
                    p.create_delegated_api_key(org, &user, principal, ACTOR, ctx.now_ms())
                        .await?
                }
                None => p.create_api_key(org, &user, ACTOR, ctx.now_ms()).await?,
            };
            if let Some(reason) = reason {
                let surface = format!("steward api-key create ({})", new.id);
                super::audit_acting_as(ctx, &user, &surface, reason).await?;
            }
            // stdout is the key alone, for `KEY=$(steward api-key create …)`.
            println!("{}", new.key);
            eprintln!(
                "API key {} for {user} (the key is shown once; `steward api-key revoke {}` revokes it)",
                new.id, new.id
            );
        }
        ApiKeyCommand::List { user, json } => {
            let keys = p.api_keys(org, user.as_deref()).await?;
            if json {
                return print_json(&keys);
            }
            println!("API keys: {}", keys.len());
            for k in keys {
                let state = match (k.revoked_at, k.revoked_by.as_deref()) {
                    (Some(at), Some(by)) => format!("revoked {} by {by}", date(at)),
                    (Some(at), None) => format!("revoked {}", date(at)),
                    (None, _) => "active".to_string(),
                };
                let acting = k
                    .on_behalf_of
                    .as_deref()
                    .map(|p| format!(" on behalf of {p}"))
                    .unwrap_or_default();
                println!(
                    "  {}  {}{acting}  created {}  {state}",
                    k.key_id,
                    k.user_id,
                    date(k.created_at)
                );
            }
        }
        ApiKeyCommand::Revoke { id } => {
            let k = p.revoke_api_key(org, &id, ACTOR, ctx.now_ms()).await?;
            println!("revoked: API key {} of {}", k.key_id, k.user_id);
        }
    }
    Ok(())
}
