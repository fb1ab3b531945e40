//! `steward pairing roles|grant|ungrant` and `steward memory role …`: work
//! roles, their grants, and the two-party curation of a role's memory. The
//! operator acts for a named person with `--as`: the decision is that
//! person's, and an `person.act_as` entry says the operator made it. One
//! operator must not be both parties, so the command line takes only the
//! manager's decision (`accept`, bound to the hash `list` printed); the
//! holder confirms as themselves, in chat or with their own API key
//! (docs/memory.md, "Roles and role memory").

use super::{date, print_json, Ctx, RoleCommand, ACTOR};
use anyhow::{anyhow, Result};
use memory::role_memory::{
    shown_hash, CurationStep, NewRoleProposal, Permission, RoleChange, RoleEntry, RoleError,
    RoleKind,
};

pub(super) async fn roles(ctx: &Ctx, user: &str, add: &[String], remove: &[String]) -> Result<()> {
    let r = ctx.services.db().role_memory();
    let org = &ctx.org;
    for role in add {
        let new = r.change(org, user, RoleChange::Add(role), ACTOR, ctx.now_ms());
        let new = new.await?;
        println!(
            "added{}: {user} holds {role}",
            if new { "" } else { " (already)" }
        );
    }
    for role in remove {
        let gone = r.change(org, user, RoleChange::Remove(role), ACTOR, ctx.now_ms());
        let gone = gone.await?;
        let note = if gone { "" } else { " (did not hold it)" };
        println!("removed{note}: {user} no longer holds {role}");
    }
    let held = r.roles_of(org, user).await?;
    println!("roles of {user}: {}", list_or_none(&held));
    let grants = r.grants(org, Some(user)).await?;
    for g in grants {
        println!(
            "  {} for {} (granted {} by {})",
            g.permission,
            g.role,
            date(g.granted_at),
            g.granted_by
        );
    }
    Ok(())
}

pub(super) async fn grant(
    ctx: &Ctx,
    user: &str,
    permission: &str,
    role: &str,
    on: bool,
) -> Result<()> {
    let permission: Permission = permission
        .parse()
        .map_err(|_| anyhow!("unknown permission `{permission}`"))?;
    let r = ctx.services.db().role_memory();
    let p = permission.as_str();
    if on {
        let granted = RoleChange::Grant(permission, role);
        let new = r.change(&ctx.org, user, granted, ACTOR, ctx.now_ms());
        let new = new.await?;
        println!(
            "granted{}: {user} holds {p} for {role}",
            if new { "" } else { " (already)" }
        );
    } else {
        let withdrawn = RoleChange::Ungrant(permission, role);
        let gone = r.change(&ctx.org, user, withdrawn, ACTOR, ctx.now_ms());
        let gone = gone.await?;
        let note = if gone { "" } else { " (was not held)" };
        println!("ungranted{note}: {user} no longer holds {p} for {role}");
    }
    Ok(())
}

fn list_or_none(items: &[String]) -> String {
    if items.is_empty() {
        "none".into()
    } else {
        items.join(", ")
    }
}

/// The audit entry of the operator deciding for `person` (`person.act_as`):
/// shown to them with their memory, as every act-as of the operator is.
async fn acting_as(ctx: &Ctx, person: &str, what: &str) -> Result<()> {
    super::audit_acting_as(ctx, person, what, "role curation from the command line").await
}

/// One line of `memory role list`.
pub(super) fn entry_line(e: &RoleEntry) -> String {
    let state = match (e.status.as_str(), e.record_status) {
        ("confirmed", Some(memory::Status::Active)) => "active".to_string(),
        ("confirmed", _) => "retired".to_string(),
        (s, _) => s.to_string(),
    };
    let mut who = format!("proposed by {}", e.proposed_by);
    if let Some(p) = &e.on_behalf_of {
        who.push_str(&format!(" on behalf of {p}"));
    }
    if let Some(a) = &e.accepted_by {
        who.push_str(&format!("; accepted by {a}"));
    }
    if let Some(c) = &e.confirmed_by {
        who.push_str(&format!("; confirmed by {c}"));
    }
    format!(
        "  [{}] {state} {}: {}  ({who}; hash {})",
        e.id,
        e.kind.as_str(),
        e.content,
        shown_hash(&e.content_hash)
    )
}

/// Accept proposal `id` for `person` (`steward memory role accept`), bound
/// to the hash the operator was shown; audited as the operator acting as them.
async fn accept_as(ctx: &Ctx, id: i64, hash: &str, person: &str) -> Result<RoleEntry> {
    let r = ctx.services.db().role_memory();
    let step = CurationStep::Accept;
    let e = match r.decide(step, &ctx.org, id, person, Some(hash), ctx.now_ms()).await {
        Err(RoleError::StaleHash { .. }) => {
            return Err(anyhow!(
                "proposal {id} changed since it was shown (or {hash} is not the hash `memory role list` printed): nothing was accepted; list it again and decide on what you read"
            ))
        }
        decided => decided?,
    };
    let what = format!("steward memory role {step} {id}");
    acting_as(ctx, person, &what).await?;
    Ok(e)
}

pub(super) async fn memory(ctx: &Ctx, cmd: RoleCommand) -> Result<()> {
    let r = ctx.services.db().role_memory();
    let org = &ctx.org;
    let now = ctx.now_ms();
    match cmd {
        RoleCommand::List { role, json } => {
            let entries = r.list(org, &role, now).await?;
            if json {
                return print_json(&entries);
            }
            println!(
                "role {role} ({}): {} entries",
                memory::role_memory::role_address(org, &role),
                entries.len()
            );
            for e in &entries {
                println!("{}", entry_line(e));
            }
        }
        RoleCommand::Propose {
            role,
            kind,
            text,
            as_,
        } => {
            let kind: RoleKind = kind.parse().map_err(|_| anyhow!("unknown kind `{kind}`"))?;
            let e = r
                .propose(&NewRoleProposal {
                    org,
                    role: &role,
                    kind,
                    content: &text,
                    proposed_by: &as_,
                    on_behalf_of: None,
                    source_record: None,
                    now,
                })
                .await?;
            acting_as(
                ctx,
                &as_,
                &format!("steward memory role propose {role}: proposal {}", e.id),
            )
            .await?;
            println!(
                "proposed: {} (waits for a manager of {role} to accept it)",
                e.id
            );
        }
        RoleCommand::Accept { id, hash, as_ } => {
            let e = accept_as(ctx, id, &hash, &as_).await?;
            println!(
                "accepted: {id} by {as_} (waits for another holder of {} to confirm it as themselves: /role confirm {id} {})",
                e.role,
                shown_hash(&e.content_hash)
            );
        }
        RoleCommand::Retire { id } => {
            let revision = r.retire(org, id, ACTOR, now).await?;
            println!("retired: {id} (undo with `steward memory revisions undo {revision}`)");
        }
    }
    Ok(())
}
