//! `steward delegate …`: who may act for whom — add, remove, list.

use super::{date, print_json, Ctx, DelegateCommand, ACTOR};
use anyhow::Result;
use pairing::{Act, DelegationChange};

pub(super) async fn run(ctx: &Ctx, cmd: DelegateCommand) -> Result<()> {
    let p = ctx.services.pairing();
    let org = &ctx.org;
    match cmd {
        DelegateCommand::Add {
            principal,
            delegate,
        } => {
            let new = p
                .grant_delegate(&grant_of(ctx, &principal, &delegate))
                .await?;
            let already = if new { "" } else { " (already)" };
            println!("delegated{already}: {delegate} acts for {principal}");
            eprintln!(
                "a key for it: `steward api-key create --user {delegate} --on-behalf-of {principal}`"
            );
        }
        DelegateCommand::Remove {
            principal,
            delegate,
        } => {
            p.revoke_delegate(&grant_of(ctx, &principal, &delegate))
                .await?;
            println!("ended: {delegate} no longer acts for {principal}");
        }
        DelegateCommand::List { who, json } => {
            let grants = p.delegations(org, who.as_deref()).await?;
            if json {
                return print_json(&grants);
            }
            println!("Delegations: {}", grants.len());
            for g in grants {
                println!(
                    "  {} acts for {}  granted {} by {}",
                    g.delegate,
                    g.principal,
                    date(g.granted_at),
                    g.granted_by
                );
            }
        }
    }
    Ok(())
}

/// The grant `delegate` acting for `principal`, made or ended from the command line now.
fn grant_of<'a>(ctx: &'a Ctx, principal: &'a str, delegate: &'a str) -> DelegationChange<'a> {
    let by = Act {
        org: &ctx.org,
        actor: ACTOR,
        at: ctx.now_ms(),
    };
    DelegationChange {
        principal,
        delegate,
        by,
    }
}
