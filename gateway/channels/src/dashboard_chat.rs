//! The dashboard's chat as a channel: the built-in admin's conversation
//! (`dashboard:admin`) on the chat page. Its routes are the dashboard's own
//! (`web::dashboard`, mounted by `http::app` with its state); a delivered
//! message is stored as the agent's line, which the chat page shows.

use super::{Channel, Delivered, Delivery, DeliveryError, Outbound, SettingRow};
use memory::store::NewMessage;
use memory::MessageAuthor;
use steward_core::config::Config;
use steward_core::services::Services;

/// The chat page: on with the dashboard (`dashboard.enabled`).
pub struct DashboardChat;

/// The channel name its lines are stored with.
pub const CHANNEL: &str = "dashboard";

/// The dashboard chat's conversation id.
pub const CHAT_CONVERSATION: &str = "dashboard:admin";

#[async_trait::async_trait]
impl Channel for DashboardChat {
    fn name(&self) -> &'static str {
        CHANNEL
    }

    fn enabled(&self, cfg: &Config) -> bool {
        cfg.dashboard.enabled
    }

    fn settings(&self, cfg: &Config) -> Vec<SettingRow> {
        vec![
            SettingRow::new("page", "/dashboard/chat"),
            SettingRow::new(
                "conversation",
                format!("{CHAT_CONVERSATION} (the built-in admin)"),
            ),
            SettingRow::new("agent", cfg.server.agent.as_str()),
        ]
    }

    /// Stores `text` as the agent's line of the chat, shown on the next load
    /// of the page; the chat page shows only `server.org`'s and
    /// `server.agent`'s `dashboard:admin`.
    async fn deliver(&self, services: &Services, out: Outbound<'_>) -> Delivery {
        let Outbound { to, text } = out;
        let server = &services.config().server;
        if to.conversation != CHAT_CONVERSATION || to.org != server.org || to.agent != server.agent
        {
            return Err(DeliveryError::no_route(
                CHANNEL,
                to,
                format!(
                    "the chat page shows only {CHAT_CONVERSATION} of server.org and server.agent"
                ),
            ));
        }
        let line = services
            .db()
            .conversations()
            .insert_message(&NewMessage {
                org: &to.org,
                agent: &to.agent,
                channel: CHANNEL,
                conversation: &to.conversation,
                conversation_kind: adapters::ConversationKind::Direct.as_str(),
                author: MessageAuthor::Agent.as_str(),
                sender: None,
                sender_role: None,
                text,
                said_at: services.clock().now_ms(),
            })
            .await?;
        Ok(Delivered::Stored { line })
    }
}
