//! `steward api-key …`: keys for `/api/v1`.

use super::{now_ms, ApiKeyCommand, Ctx, ACTOR};
use anyhow::Result;

pub(super) async fn run(ctx: &Ctx, cmd: ApiKeyCommand) -> Result<()> {
    match cmd {
        ApiKeyCommand::Create { user } => {
            let key = ctx
                .turns
                .pairing()
                .create_api_key(&ctx.org, &user, ACTOR, now_ms())
                .await?;
            println!("{key}");
        }
    }
    Ok(())
}
