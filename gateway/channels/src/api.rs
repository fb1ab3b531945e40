//! The REST API's `POST /api/v1/messages` as a channel. Its routes are the
//! API's own (`web::api`, mounted by `http::app` with its state).

use super::{Channel, Delivery, DeliveryError, Outbound, SettingRow};
use steward_core::config::Config;
use steward_core::services::Services;

/// Always on: the API is always served.
pub struct Api;

/// The channel name its lines are stored with.
pub const CHANNEL: &str = "api";

#[async_trait::async_trait]
impl Channel for Api {
    fn name(&self) -> &'static str {
        CHANNEL
    }

    fn enabled(&self, _cfg: &Config) -> bool {
        true
    }

    fn settings(&self, cfg: &Config) -> Vec<SettingRow> {
        vec![
            SettingRow::new("endpoint", "POST /api/v1/messages"),
            SettingRow::new("conversations", "api:<user>[/<thread>], the key's user"),
            SettingRow::new(
                "agent",
                format!("{} unless the request names one", cfg.server.agent),
            ),
        ]
    }

    /// Not possible without new storage: a client hears only the answer to
    /// its own request, and no endpoint lists a conversation's lines.
    async fn deliver(&self, _services: &Services, _out: Outbound<'_>) -> Delivery {
        Err(DeliveryError::Unsupported {
            channel: CHANNEL,
            why: "an API client hears only the answers to its own requests, and no endpoint lists a conversation's lines",
        })
    }
}
