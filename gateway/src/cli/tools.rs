//! `steward tools …`: the listings of external tools (MCP) as the operator
//! (an administrator) reviews them: list, show, approve for roles, reject,
//! suspend. Servers list their tools when `steward serve` starts.

use super::{print_json, Ctx, ToolsCommand};
use ::memory::external_tool::ExternalToolStatus;
use ::memory::store::{Act, ToolDecided, ToolGrant};
use anyhow::{bail, Context, Result};

/// Who the operator is in the audit log and on decisions.
const OPERATOR: &str = "operator (cli)";

pub(super) async fn run(ctx: &Ctx, cmd: ToolsCommand) -> Result<()> {
    let store = ctx.services.db().external_tools();
    let now = ctx.now_ms();
    let who = Act {
        org: &ctx.org,
        actor: OPERATOR,
        at: now,
    };
    match cmd {
        ToolsCommand::List { status, json } => {
            let status = status
                .map(|s| {
                    s.parse::<ExternalToolStatus>()
                        .with_context(|| format!("unknown tool status {s}"))
                })
                .transpose()?;
            let all = store.list(&ctx.org, status).await?;
            if json {
                return print_json(&all);
            }
            if all.is_empty() {
                println!("no tool listings (servers list their tools when `steward serve` starts)");
            }
            for t in &all {
                println!("{}", crate::mcp::review_line(t));
            }
            Ok(())
        }
        ToolsCommand::Show { id, json } => {
            let t = store
                .listing(&ctx.org, id)
                .await
                .with_context(|| format!("reading tool listing {id}"))?;
            if json {
                return print_json(&t);
            }
            println!("{}", crate::mcp::review_text(&t));
            Ok(())
        }
        ToolsCommand::Approve {
            id,
            hash,
            roles,
            confirm,
            runs,
            per_minute,
            identity,
        } => {
            let grant = ToolGrant {
                id,
                hash: &hash,
                roles: &roles,
                confirm,
                runs,
                calls_per_minute: per_minute,
                identity,
            };
            done("approved", store.approve(who, &grant).await?)
        }
        ToolsCommand::Reject { id } => done("rejected", store.reject(who, id).await?),
        ToolsCommand::Suspend { id, reason } => {
            done("suspended", store.suspend(who, id, &reason).await?)
        }
    }
}

fn done(what: &str, decided: ToolDecided) -> Result<()> {
    match decided {
        Ok(t) => {
            println!("{what}: {}", crate::mcp::review_line(&t));
            Ok(())
        }
        Err(why) => bail!("refused: {why}"),
    }
}
