//! The Discord channel, through serenity's gateway client.
//!
//! Gateway events become [`Inbound`] messages for the turn loop; its
//! [`Reply`] values become Discord messages (split at Discord's 2,000-character
//! limit) or interaction responses. Nothing outside this module sees a
//! serenity type: identity is the stored id `discord:<user snowflake>`, never a
//! display name.
//!
//! - `MESSAGE_CREATE` (guild channels, threads and DMs) → a turn; the reply goes
//!   to the channel or thread the message came from.
//! - A reply asking "Remember this?" carries Yes/No buttons whose custom ids
//!   name the proposal batch; a press (`INTERACTION_CREATE`) is a turn with
//!   `answer` set, answered as the presser's (ephemeral) interaction response.
//! - `/pair` is registered as a slash command at READY; a use becomes the text
//!   command `/pair …` and is answered as the (ephemeral) interaction response.

use crate::{ConversationKind, Inbound, Reply, TurnHandler};
use chrono::{DateTime, Utc};
use secrecy::{ExposeSecret, SecretString};
use serenity::all::{
    ButtonStyle, ChannelId, Command, CommandDataOption, CommandDataOptionValue, CommandInteraction,
    CommandOptionType, ComponentInteraction, Context, EventHandler, GatewayIntents, GuildId, Http,
    Interaction, InteractionId, Message, MessageType, Ready, User, UserId,
};
use serenity::builder::{
    Builder, CreateActionRow, CreateAllowedMentions, CreateButton, CreateCommand,
    CreateCommandOption, CreateInteractionResponse, CreateInteractionResponseFollowup,
    CreateInteractionResponseMessage, CreateMessage, EditInteractionResponse,
};
use serenity::client::ClientBuilder;
use serenity::http::HttpBuilder;
use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;
use tokio::sync::OnceCell;

/// The turn an interaction starts: a button press and a slash command carry
/// the same fields but share no trait, so this is a macro over both.
macro_rules! interaction_inbound {
    ($handler:ident, $interaction:ident, $text:expr, $answer:expr) => {{
        let i = &$interaction;
        let nick = i.member.as_ref().and_then(|m| m.nick.as_deref());
        Inbound {
            org: $handler.settings.org_for(i.guild_id),
            agent: $handler.settings.agent.clone(),
            channel: CHANNEL.into(),
            conversation: i.channel_id.to_string(),
            kind: kind(i.guild_id.is_none()),
            sender: Some(stored_id(i.user.id)),
            sender_name: display_name(nick, &i.user),
            text: $text,
            platform_id: Some(i.id.to_string()),
            at: said_at(i.id),
            mentioned: true,
            answer: $answer,
            on_behalf_of: None,
        }
    }};
}

/// Discord rejects message content longer than this many characters.
pub const MESSAGE_LIMIT: usize = 2000;

/// The channel name stored with every Discord message.
pub const CHANNEL: &str = "discord";

/// Custom ids of the "Remember this?" buttons: `steward:remember:<batch>:yes|no`.
const ANSWER_PREFIX: &str = "steward:remember:";

const NOTHING_TO_SAY: &str = "I have nothing to add to that.";

/// How the Discord channel connects and where its messages belong.
#[derive(Clone, Debug)]
pub struct DiscordSettings {
    /// The bot token (Developer Portal → Bot → Token); never printed.
    pub token: SecretString,
    /// Base URL of a Discord REST proxy (or a test fake) used instead of
    /// `https://discord.com`; the gateway URL is then whatever it answers to
    /// `GET /api/v10/gateway`. Requests through a proxy are not rate-limited
    /// in-process: the proxy is expected to do it.
    pub api_base: Option<String>,
    /// Organisation of each guild, by guild id.
    pub guild_orgs: HashMap<u64, String>,
    /// Organisation of direct messages and of guilds not in `guild_orgs`.
    pub default_org: String,
    /// The agent answering on Discord.
    pub agent: String,
}

impl DiscordSettings {
    fn org_for(&self, guild: Option<GuildId>) -> String {
        guild
            .and_then(|g| self.guild_orgs.get(&g.get()))
            .unwrap_or(&self.default_org)
            .clone()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum DiscordError {
    #[error("invalid Discord setting: {0}")]
    Settings(String),
    #[error("Discord client failed: {0}")]
    Client(#[source] Box<dyn std::error::Error + Send + Sync>),
    #[error("`{0}` is not a Discord channel id")]
    NotAChannel(String),
}

fn client_error(e: serenity::Error) -> DiscordError {
    DiscordError::Client(Box::new(e))
}

/// The gateway intents the channel needs: guild and direct messages, with their content.
pub fn intents() -> GatewayIntents {
    GatewayIntents::GUILD_MESSAGES
        | GatewayIntents::DIRECT_MESSAGES
        | GatewayIntents::MESSAGE_CONTENT
}

/// Connect to Discord and run every message through `handler` until
/// `shutdown` resolves (then the gateway connection is closed cleanly and this
/// returns `Ok`) or the client fails (an invalid token, a gateway that keeps
/// refusing the session).
pub async fn run<F>(
    settings: DiscordSettings,
    handler: Arc<dyn TurnHandler>,
    shutdown: F,
) -> Result<(), DiscordError>
where
    F: Future<Output = ()> + Send,
{
    let http = rest_client(&settings)?;
    let bot = Bot {
        settings,
        handler,
        me: OnceCell::new(),
    };
    let mut client = ClientBuilder::new_with_http(http, intents())
        .event_handler(bot)
        .await
        .map_err(client_error)?;
    let shards = client.shard_manager.clone();
    tokio::select! {
        r = client.start() => r.map_err(client_error),
        () = shutdown => {
            tracing::info!("closing the Discord gateway connection");
            shards.shutdown_all().await;
            Ok(())
        }
    }
}

/// The REST client of `settings`: its token, through `api_base` when set.
fn rest_client(settings: &DiscordSettings) -> Result<Http, DiscordError> {
    let token = settings.token.expose_secret().trim();
    if token.is_empty() {
        return Err(DiscordError::Settings("the bot token is empty".into()));
    }
    let mut http = HttpBuilder::new(token).default_allowed_mentions(no_pings());
    if let Some(base) = &settings.api_base {
        let base = base.trim_end_matches('/');
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            return Err(DiscordError::Settings(format!(
                "api_base `{base}` is not an http(s) URL"
            )));
        }
        // serenity's in-process rate limiter talks to discord.com directly, so a
        // proxy (which rate-limits itself) is used without it.
        http = http.proxy(base).ratelimiter_disabled(true);
    }
    Ok(http.build())
}

/// Post `text` into the channel (or thread, or DM channel) with id `channel`
/// through the REST API, outside any turn and without a gateway connection:
/// split at [`MESSAGE_LIMIT`], pinging nobody. The ids of the messages made.
pub async fn post(
    settings: &DiscordSettings,
    channel: &str,
    text: &str,
) -> Result<Vec<String>, DiscordError> {
    let id = channel
        .trim()
        .parse::<u64>()
        .ok()
        .filter(|id| *id > 0)
        .ok_or_else(|| DiscordError::NotAChannel(channel.into()))?;
    let http = rest_client(settings)?;
    let mut ids = Vec::new();
    for piece in split_message(text, MESSAGE_LIMIT) {
        let out = CreateMessage::new()
            .content(piece)
            .allowed_mentions(no_pings());
        let sent = ChannelId::new(id)
            .send_message(&http, out)
            .await
            .map_err(client_error)?;
        ids.push(sent.id.to_string());
    }
    Ok(ids)
}

/// Replies never ping anyone: text echoed from memory or from a user cannot
/// become an `@everyone`, a role ping or a user ping.
fn no_pings() -> CreateAllowedMentions {
    CreateAllowedMentions::new()
}

struct Bot {
    settings: DiscordSettings,
    handler: Arc<dyn TurnHandler>,
    /// The bot's own user id, from READY (or `GET /users/@me` if a message wins the race).
    me: OnceCell<UserId>,
}

#[serenity::async_trait]
impl EventHandler for Bot {
    async fn ready(&self, ctx: Context, ready: Ready) {
        let _ = self.me.set(ready.user.id);
        tracing::info!(bot = %ready.user.id, name = %ready.user.name, "connected to Discord");
        if let Err(e) = Command::set_global_commands(&ctx.http, vec![pair_command()]).await {
            tracing::warn!(error = %e, "registering the /pair slash command failed; the text form still works");
        }
    }

    async fn message(&self, ctx: Context, msg: Message) {
        let me = match self.me(&ctx.http).await {
            Some(me) => me,
            None => return,
        };
        let Some(inbound) = self.inbound_from_message(&msg, me) else {
            return;
        };
        let addressed = inbound.mentioned;
        // While the model works, the channel shows the bot typing (stopped when dropped).
        let typing = addressed.then(|| msg.channel_id.start_typing(&ctx.http));
        let replies = match self.handler.handle_new(inbound).await {
            Ok(r) => r,
            Err(e) => {
                tracing::error!(error = %e, message = %msg.id, "turn failed for a Discord message");
                if !addressed {
                    return;
                }
                vec![Reply::turn_failed(msg.channel_id.to_string())]
            }
        };
        for chunk in chunks(&replies) {
            let mut out = CreateMessage::new()
                .content(chunk.text)
                .allowed_mentions(no_pings());
            if let Some(batch) = chunk.proposal {
                out = out.components(answer_buttons(batch));
            }
            if let Err(e) = msg.channel_id.send_message(&ctx.http, out).await {
                tracing::error!(error = %e, channel = %msg.channel_id, "sending a reply to Discord failed");
                return;
            }
        }
        drop(typing);
    }

    async fn interaction_create(&self, ctx: Context, interaction: Interaction) {
        match interaction {
            Interaction::Component(press) => self.on_press(&ctx, press).await,
            Interaction::Command(cmd) if cmd.data.name == "pair" => self.on_pair(&ctx, cmd).await,
            other => {
                tracing::debug!(kind = ?other.kind(), "ignoring an interaction that is not ours")
            }
        }
    }
}

impl Bot {
    async fn me(&self, http: &Http) -> Option<UserId> {
        match self
            .me
            .get_or_try_init(|| async { http.get_current_user().await.map(|u| u.id) })
            .await
        {
            Ok(me) => Some(*me),
            Err(e) => {
                tracing::error!(error = %e, "cannot tell which user the bot is; message dropped");
                None
            }
        }
    }

    /// A gateway message as the turn loop sees it, or `None` when it is not for
    /// the loop at all (the bot's own messages, other bots, webhooks, system
    /// messages, nothing but attachments).
    fn inbound_from_message(&self, msg: &Message, me: UserId) -> Option<Inbound> {
        if msg.author.bot || msg.author.id == me || msg.webhook_id.is_some() {
            return None;
        }
        if !matches!(msg.kind, MessageType::Regular | MessageType::InlineReply) {
            return None;
        }
        let text = strip_mentions(&msg.content, me);
        if text.is_empty() {
            return None;
        }
        let direct = msg.guild_id.is_none();
        let nick = msg.member.as_ref().and_then(|m| m.nick.as_deref());
        Some(Inbound {
            org: self.settings.org_for(msg.guild_id),
            agent: self.settings.agent.clone(),
            channel: CHANNEL.into(),
            conversation: msg.channel_id.to_string(),
            kind: kind(direct),
            sender: Some(stored_id(msg.author.id)),
            sender_name: display_name(nick, &msg.author),
            text,
            platform_id: Some(msg.id.to_string()),
            at: *msg.timestamp,
            mentioned: direct || msg.mentions.iter().any(|u| u.id == me),
            answer: None,
            on_behalf_of: None,
        })
    }

    /// A Yes/No press on a "Remember this?" question.
    async fn on_press(&self, ctx: &Context, press: ComponentInteraction) {
        let Some((batch, yes)) = parse_answer_id(&press.data.custom_id) else {
            tracing::debug!(custom_id = %press.data.custom_id, "ignoring a component that is not ours");
            return;
        };
        let text = if yes { "yes" } else { "no" };
        let inbound = interaction_inbound!(self, press, text.into(), Some((batch, yes)));
        self.interaction_turn(ctx, press.id, &press.token, press.channel_id, inbound)
            .await;
    }

    /// The `/pair` slash command, run as the text command it stands for.
    async fn on_pair(&self, ctx: &Context, cmd: CommandInteraction) {
        let inbound = interaction_inbound!(self, cmd, pair_text(&cmd.data.options), None);
        self.interaction_turn(ctx, cmd.id, &cmd.token, cmd.channel_id, inbound)
            .await;
    }

    /// Acknowledge at once (Discord allows 3 seconds; a model may take longer),
    /// run the turn, then show its reply as the ephemeral interaction response.
    async fn interaction_turn(
        &self,
        ctx: &Context,
        id: InteractionId,
        token: &str,
        channel: ChannelId,
        inbound: Inbound,
    ) {
        let defer = CreateInteractionResponse::Defer(
            CreateInteractionResponseMessage::new().ephemeral(true),
        );
        if let Err(e) = defer.execute(&ctx.http, (id, token)).await {
            tracing::error!(error = %e, interaction = %id, "acknowledging a Discord interaction failed");
            return;
        }
        let replies = match self.handler.handle_new(inbound).await {
            Ok(r) => r,
            Err(e) => {
                tracing::error!(error = %e, interaction = %id, "turn failed for a Discord interaction");
                vec![Reply::turn_failed(channel.to_string())]
            }
        };
        let mut parts = chunks(&replies);
        if parts.is_empty() {
            parts.push(Chunk {
                text: NOTHING_TO_SAY.into(),
                proposal: None,
            });
        }
        for (i, chunk) in parts.into_iter().enumerate() {
            let buttons = chunk.proposal.map(answer_buttons);
            let sent = if i == 0 {
                let mut edit = EditInteractionResponse::new()
                    .content(chunk.text)
                    .allowed_mentions(no_pings());
                if let Some(b) = buttons {
                    edit = edit.components(b);
                }
                edit.execute(&ctx.http, token).await.map(|_| ())
            } else {
                let mut more = CreateInteractionResponseFollowup::new()
                    .content(chunk.text)
                    .ephemeral(true)
                    .allowed_mentions(no_pings());
                if let Some(b) = buttons {
                    more = more.components(b);
                }
                more.execute(&ctx.http, (None, token)).await.map(|_| ())
            };
            if let Err(e) = sent {
                tracing::error!(error = %e, interaction = %id, "answering a Discord interaction failed");
                return;
            }
        }
    }
}

fn kind(direct: bool) -> ConversationKind {
    if direct {
        ConversationKind::Direct
    } else {
        ConversationKind::Group
    }
}

/// The stored user id of a Discord user: the snowflake, never a name.
pub fn stored_id(user: UserId) -> String {
    format!("{CHANNEL}:{user}")
}

/// Shown, never trusted: the guild nickname, else the global display name, else the username.
fn display_name(nick: Option<&str>, user: &User) -> String {
    nick.or(user.global_name.as_deref())
        .unwrap_or(&user.name)
        .to_string()
}

/// When an interaction happened: Discord snowflakes carry their creation time.
fn said_at(id: InteractionId) -> DateTime<Utc> {
    *id.created_at()
}

/// The message text without the bot's own mention tags (`<@id>`, `<@!id>`),
/// so `@bot @notes: …` reads as `@notes: …`.
pub fn strip_mentions(content: &str, me: UserId) -> String {
    content
        .replace(&format!("<@{me}>"), "")
        .replace(&format!("<@!{me}>"), "")
        .trim()
        .to_string()
}

/// The custom id of a Yes or No button for proposal batch `batch`.
pub fn answer_id(batch: i64, yes: bool) -> String {
    format!("{ANSWER_PREFIX}{batch}:{}", if yes { "yes" } else { "no" })
}

/// `(batch, yes)` from a button's custom id, or `None` for any other component.
pub fn parse_answer_id(custom_id: &str) -> Option<(i64, bool)> {
    let rest = custom_id.strip_prefix(ANSWER_PREFIX)?;
    let (batch, answer) = rest.split_once(':')?;
    let yes = match answer {
        "yes" => true,
        "no" => false,
        _ => return None,
    };
    Some((batch.parse().ok()?, yes))
}

fn answer_buttons(batch: i64) -> Vec<CreateActionRow> {
    vec![CreateActionRow::Buttons(vec![
        CreateButton::new(answer_id(batch, true))
            .label("Yes")
            .style(ButtonStyle::Success),
        CreateButton::new(answer_id(batch, false))
            .label("No")
            .style(ButtonStyle::Danger),
    ])]
}

/// The `/pair` slash command: `request`, `approve code [admin]`, `deny code`.
fn pair_command() -> CreateCommand {
    let code = || {
        CreateCommandOption::new(CommandOptionType::String, "code", "The pairing code")
            .required(true)
    };
    CreateCommand::new("pair")
        .description("Pair your Discord account, or approve or deny a pairing code")
        .add_option(CreateCommandOption::new(
            CommandOptionType::SubCommand,
            "request",
            "Ask for a pairing code to give an administrator",
        ))
        .add_option(
            CreateCommandOption::new(
                CommandOptionType::SubCommand,
                "approve",
                "Approve a pairing code (administrators)",
            )
            .add_sub_option(code())
            .add_sub_option(CreateCommandOption::new(
                CommandOptionType::Boolean,
                "admin",
                "Pair them as an administrator (default: user)",
            )),
        )
        .add_option(
            CreateCommandOption::new(
                CommandOptionType::SubCommand,
                "deny",
                "Deny a pairing code (administrators)",
            )
            .add_sub_option(code()),
        )
}

/// The text command a `/pair` slash command stands for. The code keeps only
/// letters and digits, so an option value cannot smuggle in extra words such
/// as a role.
fn pair_text(options: &[CommandDataOption]) -> String {
    let Some(sub) = options.first() else {
        return "/pair".into();
    };
    let args: &[CommandDataOption] = match &sub.value {
        CommandDataOptionValue::SubCommand(args) => args,
        _ => &[],
    };
    let arg = |name: &str| args.iter().find(|o| o.name == name).map(|o| &o.value);
    let code: String = arg("code")
        .and_then(CommandDataOptionValue::as_str)
        .unwrap_or_default()
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .collect();
    let admin = arg("admin")
        .and_then(CommandDataOptionValue::as_bool)
        .unwrap_or(false);
    match sub.name.as_str() {
        action @ ("approve" | "deny") if code.is_empty() => format!("/pair {action}"),
        "approve" if admin => format!("/pair approve {code} admin"),
        "approve" => format!("/pair approve {code}"),
        "deny" => format!("/pair deny {code}"),
        _ => "/pair".into(),
    }
}

/// One Discord message to send: a piece of a reply, with the reply's buttons on its last piece.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Chunk {
    text: String,
    proposal: Option<i64>,
}

fn chunks(replies: &[Reply]) -> Vec<Chunk> {
    let mut out = Vec::new();
    for reply in replies {
        let pieces = split_message(&reply.text, MESSAGE_LIMIT);
        let last = pieces.len().saturating_sub(1);
        out.extend(pieces.into_iter().enumerate().map(|(i, text)| Chunk {
            text,
            proposal: if i == last { reply.proposal } else { None },
        }));
    }
    out
}

/// Split `text` into pieces of at most `limit` characters, at line breaks
/// where possible (the break itself is dropped), else at the last space that
/// fits, else mid-word. Blank text gives no pieces.
pub fn split_message(text: &str, limit: usize) -> Vec<String> {
    let limit = limit.max(1);
    if text.trim().is_empty() {
        return Vec::new();
    }
    if text.chars().count() <= limit {
        return vec![text.to_string()];
    }
    let mut pieces = Vec::new();
    let mut current = String::new();
    let mut current_len = 0;
    for line in text.split('\n') {
        let line_len = line.chars().count();
        let needed = if current.is_empty() {
            line_len
        } else {
            current_len + 1 + line_len
        };
        if needed <= limit {
            if !current.is_empty() {
                current.push('\n');
            }
            current.push_str(line);
            current_len = needed;
            continue;
        }
        if !current.is_empty() {
            pieces.push(std::mem::take(&mut current));
        }
        // A line longer than a whole message: cut it at spaces, or mid-word.
        let mut rest = line;
        while rest.chars().count() > limit {
            let hard = rest
                .char_indices()
                .nth(limit)
                .map_or(rest.len(), |(i, _)| i);
            let cut = rest[..hard]
                .rfind(' ')
                .filter(|&i| i > 0)
                .map_or(hard, |i| i + 1);
            pieces.push(rest[..cut].to_string());
            rest = &rest[cut..];
        }
        current.push_str(rest);
        current_len = rest.chars().count();
    }
    if !current.trim().is_empty() {
        pieces.push(current);
    }
    pieces.retain(|p| !p.trim().is_empty());
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_one_piece_and_blank_text_none() {
        assert_eq!(split_message("hello", 2000), vec!["hello".to_string()]);
        assert!(split_message("  \n ", 2000).is_empty());
    }

    #[test]
    fn long_text_splits_on_line_boundaries() {
        let lines: Vec<String> = (0..30)
            .map(|i| format!("{i:02} {}", "x".repeat(95)))
            .collect();
        let text = lines.join("\n");
        assert!(text.chars().count() > 2000);
        let pieces = split_message(&text, 2000);
        assert!(pieces.len() > 1);
        for p in &pieces {
            assert!(p.chars().count() <= 2000, "{}", p.len());
            assert!(
                p.split('\n').all(|l| lines.contains(&l.to_string())),
                "a line was cut"
            );
        }
        assert_eq!(pieces.join("\n"), text);
    }

    #[test]
    fn an_overlong_line_is_cut_at_spaces_then_mid_word() {
        let words = "word ".repeat(1000);
        let pieces = split_message(words.trim(), 2000);
        assert!(pieces.iter().all(|p| p.chars().count() <= 2000));
        assert!(pieces[0].ends_with("word "), "cut at a space");
        assert_eq!(pieces.concat(), words.trim());
        let blob = "é".repeat(4500);
        let pieces = split_message(&blob, 2000);
        assert_eq!(
            pieces.iter().map(|p| p.chars().count()).collect::<Vec<_>>(),
            vec![2000, 2000, 500]
        );
    }

    #[test]
    fn buttons_go_on_the_last_piece_only() {
        let reply = Reply {
            conversation: "c".into(),
            text: format!("{}\nRemember this? x — reply yes or no", "a".repeat(1990)),
            proposal: Some(7),
        };
        let parts = chunks(&[reply]);
        assert_eq!(parts.len(), 2);
        assert_eq!(parts[0].proposal, None);
        assert_eq!(parts[1].proposal, Some(7));
        assert!(parts[1].text.starts_with("Remember this?"));
    }

    #[test]
    fn answer_ids_round_trip_and_reject_others() {
        assert_eq!(parse_answer_id(&answer_id(42, true)), Some((42, true)));
        assert_eq!(parse_answer_id(&answer_id(42, false)), Some((42, false)));
        for other in [
            "steward:remember:42:maybe",
            "steward:remember:x:yes",
            "steward:remember:42",
            "other:42:yes",
            "",
        ] {
            assert_eq!(parse_answer_id(other), None, "{other}");
        }
        assert!(
            answer_id(i64::MAX, false).len() <= 100,
            "Discord's custom id limit"
        );
    }

    #[test]
    fn only_the_bots_own_mention_is_stripped() {
        let me = UserId::new(900);
        assert_eq!(
            strip_mentions("<@900> @notes: uses <@123>", me),
            "@notes: uses <@123>"
        );
        assert_eq!(strip_mentions("hi <@!900>", me), "hi");
        assert_eq!(strip_mentions("<@9000> hi", me), "<@9000> hi");
    }

    fn options(json: serde_json::Value) -> Vec<CommandDataOption> {
        serde_json::from_value(json).expect("options")
    }

    #[test]
    fn slash_pair_becomes_the_text_command() {
        assert_eq!(pair_text(&[]), "/pair");
        assert_eq!(
            pair_text(&options(
                serde_json::json!([{"name": "request", "type": 1, "options": []}])
            )),
            "/pair"
        );
        let approve = |code: &str, admin: Option<bool>| {
            let mut args = vec![serde_json::json!({"name": "code", "type": 3, "value": code})];
            if let Some(a) = admin {
                args.push(serde_json::json!({"name": "admin", "type": 5, "value": a}));
            }
            pair_text(&options(
                serde_json::json!([{"name": "approve", "type": 1, "options": args}]),
            ))
        };
        assert_eq!(approve("7KQ2M9XP", None), "/pair approve 7KQ2M9XP");
        assert_eq!(
            approve("7KQ2M9XP", Some(true)),
            "/pair approve 7KQ2M9XP admin"
        );
        // A code cannot carry a role, and an empty code never lets `admin` stand in for it.
        assert_eq!(
            approve("7KQ2M9XP admin", Some(false)),
            "/pair approve 7KQ2M9XPadmin"
        );
        assert_eq!(approve(" !! ", Some(true)), "/pair approve");
        assert_eq!(
            pair_text(&options(serde_json::json!([{"name": "deny", "type": 1,
                "options": [{"name": "code", "type": 3, "value": "ABCD2345"}]}]))),
            "/pair deny ABCD2345"
        );
    }

    #[test]
    fn guilds_map_to_organisations() {
        let s = DiscordSettings {
            token: SecretString::from("t"),
            api_base: None,
            guild_orgs: HashMap::from([(5, "acme".to_string())]),
            default_org: "default".into(),
            agent: "default".into(),
        };
        assert_eq!(s.org_for(Some(GuildId::new(5))), "acme");
        assert_eq!(s.org_for(Some(GuildId::new(6))), "default");
        assert_eq!(s.org_for(None), "default");
        assert!(!format!("{s:?}").contains("\"t\""), "token is redacted");
    }
}
