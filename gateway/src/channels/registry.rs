//! The one list of channels. `channels/mod.rs` makes it the channels'
//! modules and `CHANNELS`; `config.rs` makes it `Config`'s channel sections.
//! It imports nothing and its only paths are the section types' (files that
//! import no configuration), so `config.rs` reads it without reaching the
//! channels, which import the configuration.

/// Hands `$then!` the input given, then every channel as
/// `<module>::<type>`, with `[<key>: <section type>]` when the channel has a
/// section in the configuration. Adding a channel is its module and a line
/// here; the order is the order `serve` announces them in.
macro_rules! each_channel {
    ($then:ident { $($input:tt)* }) => {
        $then! {
            { $($input)* }
            teams::Teams [teams: $crate::channels::teams::section::TeamsConfig],
            discord::Discord [discord: $crate::channels::discord::section::DiscordConfig],
            dashboard_chat::DashboardChat,
            api::Api,
        }
    };
}

pub(crate) use each_channel;
