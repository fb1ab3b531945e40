//! `steward dashboard …`: the web dashboard's admin token.

use super::{Ctx, DashboardCommand};
use anyhow::{bail, Result};

pub(super) async fn run(ctx: &Ctx, cmd: DashboardCommand) -> Result<()> {
    match cmd {
        DashboardCommand::ResetToken => {
            if ctx.services.config().dashboard.admin_token.is_some() {
                bail!("dashboard.admin_token is set in the configuration; change it there instead");
            }
            let token = crate::dashboard::reset_admin_token(&ctx.services).await?;
            println!("{token}");
        }
    }
    Ok(())
}
