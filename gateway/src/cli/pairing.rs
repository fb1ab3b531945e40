//! `steward pairing …`: pairing requests and paired users.

use super::{date, now_ms, Ctx, PairingCommand, ACTOR};
use anyhow::Result;

pub(super) async fn run(ctx: &Ctx, cmd: PairingCommand) -> Result<()> {
    let p = ctx.turns.pairing();
    let org = &ctx.org;
    match cmd {
        PairingCommand::List => {
            let pending = p.pending(org, now_ms()).await?;
            println!("pending requests: {}", pending.len());
            for r in pending {
                println!(
                    "  {}  {} ({})  expires {}",
                    r.code,
                    r.stored_id,
                    r.name,
                    date(r.expires_at)
                );
            }
            let users = p.users(org).await?;
            println!("paired users: {}", users.len());
            for u in users {
                println!("  {}  {}  {}  {}", u.user_id, u.role, u.status, u.name);
            }
        }
        PairingCommand::Approve { code, role } => {
            let u = p.approve(org, &code, role, ACTOR, now_ms()).await?;
            println!(
                "approved: {} ({}) is paired as {}",
                u.name, u.user_id, u.role
            );
        }
        PairingCommand::Deny { code } => {
            let r = p.deny(org, &code, ACTOR, now_ms()).await?;
            println!("denied: {} from {}", r.code, r.stored_id);
        }
        PairingCommand::Revoke { user } => {
            let keys = p.revoke(org, &user, ACTOR, now_ms()).await?;
            println!("revoked: {user}");
            if !keys.is_empty() {
                println!("API keys revoked with them: {}", keys.join(", "));
            }
        }
        PairingCommand::SetRole { user, role } => {
            p.set_role(org, &user, role, ACTOR, now_ms()).await?;
            println!("{user} is now {role}");
        }
        PairingCommand::Link { identity, user } => {
            let u = p
                .link_identity(org, &identity, &user, ACTOR, now_ms())
                .await?;
            println!(
                "linked: {identity} now speaks as {} ({}, {})",
                u.name, u.user_id, u.role
            );
        }
    }
    Ok(())
}
