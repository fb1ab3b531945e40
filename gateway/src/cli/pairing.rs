//! `steward pairing …`: pairing requests and paired users.

use super::{date, Ctx, PairingCommand, ACTOR};
use anyhow::Result;
use memory::Role;
use pairing::{PairingRequest, User};
use serde_json::{json, Value};

pub(super) async fn run(ctx: &Ctx, cmd: PairingCommand) -> Result<()> {
    let p = ctx.services.pairing();
    let org = &ctx.org;
    match cmd {
        PairingCommand::List { json } => {
            let pending = p.pending(org, ctx.now_ms()).await?;
            let users = p.users(org).await?;
            if json {
                let out = json!({
                    "pending": pending.iter().map(request_json).collect::<Vec<_>>(),
                    "users": users.iter().map(user_json).collect::<Vec<_>>(),
                });
                println!("{}", serde_json::to_string_pretty(&out)?);
                return Ok(());
            }
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
            println!("paired users: {}", users.len());
            for u in users {
                println!("  {}  {}  {}  {}", u.user_id, u.role, u.status, u.name);
            }
        }
        PairingCommand::Approve { code, role } => {
            let u = p
                .approve(org, &code, Role::from(role), ACTOR, ctx.now_ms())
                .await?;
            println!(
                "approved: {} ({}) is paired as {}",
                u.name, u.user_id, u.role
            );
        }
        PairingCommand::Deny { code } => {
            let r = p.deny(org, &code, ACTOR, ctx.now_ms()).await?;
            println!("denied: {} from {}", r.code, r.stored_id);
        }
        PairingCommand::Add {
            identity,
            role,
            name,
        } => {
            let u = p
                .pair_directly(
                    org,
                    &identity,
                    name.as_deref(),
                    Role::from(role),
                    ACTOR,
                    ctx.now_ms(),
                )
                .await?;
            println!("paired: {} ({}) as {}", u.name, u.user_id, u.role);
        }
        PairingCommand::Revoke { user } => {
            let keys = p.revoke(org, &user, ACTOR, ctx.now_ms()).await?;
            println!("revoked: {user}");
            if !keys.is_empty() {
                println!("API keys revoked with them: {}", keys.join(", "));
            }
        }
        PairingCommand::SetRole { user, role } => {
            let role = Role::from(role);
            p.set_role(org, &user, role, ACTOR, ctx.now_ms()).await?;
            println!("{user} is now {role}");
        }
        PairingCommand::Link { identity, user } => {
            let u = p
                .link_identity(org, &identity, &user, ACTOR, ctx.now_ms())
                .await?;
            println!(
                "linked: {identity} now speaks as {} ({}, {})",
                u.name, u.user_id, u.role
            );
        }
        PairingCommand::Roles { user, add, remove } => {
            super::roles::roles(ctx, &user, &add, &remove).await?
        }
        PairingCommand::Grant {
            user,
            permission,
            role,
        } => super::roles::grant(ctx, &user, &permission, &role, true).await?,
        PairingCommand::Ungrant {
            user,
            permission,
            role,
        } => super::roles::grant(ctx, &user, &permission, &role, false).await?,
    }
    Ok(())
}

fn request_json(r: &PairingRequest) -> Value {
    json!({
        "code": r.code,
        "identity": r.stored_id,
        "name": r.name,
        "channel": r.channel,
        "created_at": date(r.created_at),
        "expires_at": date(r.expires_at),
    })
}

fn user_json(u: &User) -> Value {
    json!({
        "user_id": u.user_id,
        "name": u.name,
        "role": u.role.as_str(),
        "status": u.status,
        "updated_at": date(u.updated_at),
    })
}
