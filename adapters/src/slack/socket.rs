//! Slack through Socket Mode, for a deployment without a public URL (set up
//! as docs/channels.md, "Socket Mode", describes).
//!
//! steward asks the Web API for a websocket (`apps.connections.open`, with
//! the app-level token `xapp-…`), connects, and waits for Slack's `hello`.
//! Slack then sends each event as an envelope (`events_api`: an
//! `envelope_id` and, as `payload`, the event callback the Events API would
//! have POSTed). Its payload goes to the same [`super::take`] as an HTTP
//! event: the same turns, the same answers posted with `chat.postMessage`, a
//! redelivery (`retry_attempt` > 0, the same message) answered once. The
//! envelope is acknowledged (`{"envelope_id": …}` written to the socket) as
//! soon as its message is stored, as the HTTP path answers `200` then, and
//! its answer is posted only after that; the connection keeps reading
//! meanwhile. Envelopes that are no turn are acknowledged at once.
//!
//! Slack closes a connection now and then, saying so first (`disconnect`,
//! reason `refresh_requested`, `warning`, …): steward opens a new one at
//! once. A connection that fails or closes otherwise — or a refused token,
//! or one silent past [`SILENT_LIMIT`] — is opened again after a backoff
//! (`backon`'s exponential one from `reconnect_backoff`, up to
//! [`MAX_RECONNECT_WAIT`], longer when Slack asks with `Retry-After`), logged
//! each time; the channel never stops by itself.
//!
//! slack-morphism supplies the payload (the event callback, the same type
//! the HTTP path reads) and the `apps.connections.open` answer. Its Socket
//! Mode client is not used: it needs its hyper connector, a second HTTP stack
//! beside reqwest. Nor are its envelope types: slack-morphism 2.31 does not
//! export them (`prelude::socket_mode` is an ambiguous glob that names its
//! listener module), so the few envelope fields steward reads are [`Frame`]
//! here. The websocket is tokio-tungstenite's.

use super::{take, ApiAnswer, Ingress, Shared, SlackError, SlackSettings, Taken};
use crate::retry::retry_after;
use crate::TurnHandler;
use backon::{BackoffBuilder, ExponentialBackoff, ExponentialBuilder};
use chrono::Utc;
use futures_util::{SinkExt, StreamExt};
use secrecy::ExposeSecret;
use serde::{Deserialize, Serialize};
use slack_morphism::api::SlackApiAppsConnectionOpenResponse;
use slack_morphism::events::SlackPushEventCallback;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// Longest wait between two connection attempts, whatever the backoff says.
pub const MAX_RECONNECT_WAIT: Duration = Duration::from_secs(60);

/// steward pings Slack this often; Slack's pong (or any frame) shows the
/// connection alive.
const PING_EVERY: Duration = Duration::from_secs(30);

/// A connection from which nothing (not even a pong) came for this long is
/// taken for dead and opened again.
pub const SILENT_LIMIT: Duration = Duration::from_secs(90);

type Socket = WebSocketStream<MaybeTlsStream<tokio::net::TcpStream>>;

/// How one connection ended.
enum Ended {
    /// steward is stopping; the socket was closed.
    Shutdown,
    /// Slack said it will close this connection (`disconnect`): a new one
    /// is opened at once.
    Refresh { reason: String },
    /// The connection could not be opened, failed or closed without warning.
    Lost {
        why: String,
        /// Slack's `hello` came first: the connection worked, and the
        /// backoff starts over.
        greeted: bool,
        /// The wait Slack asked for (a `429` from `apps.connections.open`).
        retry_after: Option<Duration>,
    },
}

impl Ended {
    fn lost(why: impl Into<String>, greeted: bool) -> Ended {
        Ended::Lost {
            why: why.into(),
            greeted,
            retry_after: None,
        }
    }
}

/// Take Slack's events over Socket Mode with `settings` (made by
/// [`SlackSettings::socket_mode`]) until `shutdown` completes, reconnecting
/// whenever a connection ends. Ends with an error only for settings that
/// are not Socket Mode's.
pub async fn run<F>(
    settings: SlackSettings,
    handler: Arc<dyn TurnHandler>,
    shutdown: F,
) -> Result<(), SlackError>
where
    F: Future<Output = ()> + Send,
{
    if !settings.is_socket_mode() {
        return Err(SlackError::NotSocketMode);
    }
    let shared = Arc::new(Shared { settings, handler });
    let mut shutdown = std::pin::pin!(shutdown);
    let mut backoff = backoff_from(&shared.settings);
    loop {
        let wait = match session(&shared, shutdown.as_mut()).await {
            Ended::Shutdown => return Ok(()),
            Ended::Refresh { reason } => {
                tracing::info!(reason = %reason, "Slack asked for a new Socket Mode connection");
                backoff = backoff_from(&shared.settings);
                // Socket Mode was turned off for the app: asking again at
                // once would only be refused.
                if reason == "link_disabled" {
                    tracing::error!("Socket Mode is turned off for this Slack app (Settings → Socket Mode); steward keeps trying");
                    next_wait(&mut backoff, None)
                } else {
                    continue;
                }
            }
            Ended::Lost {
                why,
                greeted,
                retry_after,
            } => {
                if greeted {
                    backoff = backoff_from(&shared.settings);
                }
                let wait = next_wait(&mut backoff, retry_after);
                tracing::warn!(error = %why, wait = ?wait, "Slack Socket Mode connection lost; connecting again");
                wait
            }
        };
        tokio::select! {
            () = tokio::time::sleep(wait) => {}
            () = shutdown.as_mut() => return Ok(()),
        }
    }
}

/// A fresh exponential backoff from `reconnect_backoff`, doubling, with
/// jitter (many stewards restarted at once do not reconnect in step).
fn backoff_from(settings: &SlackSettings) -> ExponentialBackoff {
    ExponentialBuilder::default()
        .with_min_delay(settings.reconnect_backoff)
        .with_max_delay(MAX_RECONNECT_WAIT)
        .with_jitter()
        .without_max_times()
        .build()
}

/// The next wait: the backoff's, or Slack's `Retry-After` when longer.
fn next_wait(backoff: &mut ExponentialBackoff, asked: Option<Duration>) -> Duration {
    let own = backoff.next().unwrap_or(MAX_RECONNECT_WAIT);
    asked.map_or(own, |asked| own.max(asked.min(MAX_RECONNECT_WAIT)))
}

/// One connection, from `apps.connections.open` until it ends.
async fn session<F>(shared: &Arc<Shared>, mut shutdown: Pin<&mut F>) -> Ended
where
    F: Future<Output = ()> + Send,
{
    let opened = tokio::select! {
        opened = open(&shared.settings) => opened,
        () = shutdown.as_mut() => return Ended::Shutdown,
    };
    let mut socket = match opened {
        Ok(socket) => socket,
        Err(ended) => return ended,
    };
    let mut greeted = false;
    let mut ping = tokio::time::interval_at(Instant::now() + PING_EVERY, PING_EVERY);
    let mut heard = Instant::now();
    // Envelopes whose messages are stored, to acknowledge on this connection.
    let (to_ack, mut stored) = mpsc::unbounded_channel::<Ack>();
    loop {
        let frame = tokio::select! {
            frame = socket.next() => frame,
            Some((envelope_id, acked)) = stored.recv() => {
                if let Err(e) = acknowledge(&mut socket, &envelope_id).await {
                    return Ended::lost(format!("cannot acknowledge: {e}"), greeted);
                }
                let _ = acked.send(());
                continue;
            }
            _ = ping.tick() => {
                if let Err(e) = socket.send(Message::Ping(Vec::new().into())).await {
                    return Ended::lost(format!("cannot ping: {e}"), greeted);
                }
                continue;
            }
            () = tokio::time::sleep_until(heard + SILENT_LIMIT) => {
                return Ended::lost(format!("nothing heard for {SILENT_LIMIT:?}"), greeted);
            }
            () = shutdown.as_mut() => {
                tracing::info!("closing the Slack Socket Mode connection");
                let _ = socket.close(None).await;
                return Ended::Shutdown;
            }
        };
        heard = Instant::now();
        let text = match frame {
            Some(Ok(Message::Text(text))) => text,
            Some(Ok(Message::Close(close))) => {
                let why = close.map_or_else(
                    || "closed by Slack".to_string(),
                    |c| format!("closed by Slack: {} {}", c.code, c.reason),
                );
                return Ended::lost(why, greeted);
            }
            // Pings are answered by tungstenite itself; pongs and binary
            // frames carry nothing for steward.
            Some(Ok(_)) => continue,
            Some(Err(e)) => return Ended::lost(e.to_string(), greeted),
            None => return Ended::lost("the connection closed", greeted),
        };
        match frame_in(shared, &mut socket, &to_ack, &text).await {
            Ok(Read::Hello) => greeted = true,
            Ok(Read::Disconnect(reason)) => {
                let _ = socket.close(None).await;
                return Ended::Refresh { reason };
            }
            Ok(Read::Other) => {}
            Err(e) => return Ended::lost(format!("cannot acknowledge: {e}"), greeted),
        }
    }
}

/// An envelope to acknowledge, and the turn waiting to post its answer until it is.
type Ack = (String, oneshot::Sender<()>);

/// What a text frame was, for the connection.
enum Read {
    Hello,
    Disconnect(String),
    Other,
}

/// A Socket Mode frame from Slack, as much of it as steward reads (Slack's
/// "Using Socket Mode": `hello`, `disconnect`, and envelopes).
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Frame {
    Hello {
        #[serde(default)]
        num_connections: Option<u32>,
    },
    Disconnect {
        reason: String,
    },
    EventsApi(Box<EventsEnvelope>),
    /// `interactive`, `slash_commands` and kinds to come: acknowledged, unused.
    #[serde(other)]
    Other,
}

/// An `events_api` envelope: its payload is the event callback the Events
/// API would have POSTed.
#[derive(Debug, Deserialize)]
struct EventsEnvelope {
    envelope_id: String,
    payload: SlackPushEventCallback,
    #[serde(default)]
    retry_attempt: u32,
    #[serde(default)]
    retry_reason: Option<String>,
}

/// Any envelope's id, to acknowledge one steward does not otherwise read.
#[derive(Debug, Deserialize)]
struct EnvelopeId {
    envelope_id: String,
}

/// The acknowledgement of an envelope.
#[derive(Debug, Serialize)]
struct Acknowledgement<'a> {
    envelope_id: &'a str,
}

/// Handle one text frame: an envelope's turn is started, and the envelope
/// acknowledged once its message is stored (through `to_ack`); any other
/// envelope is acknowledged at once.
async fn frame_in(
    shared: &Arc<Shared>,
    socket: &mut Socket,
    to_ack: &mpsc::UnboundedSender<Ack>,
    text: &str,
) -> Result<Read, tokio_tungstenite::tungstenite::Error> {
    let frame = match serde_json::from_str::<Frame>(text) {
        Ok(Frame::Hello { num_connections }) => {
            tracing::info!(connections = ?num_connections, "Slack Socket Mode connected");
            return Ok(Read::Hello);
        }
        Ok(Frame::Disconnect { reason }) => return Ok(Read::Disconnect(reason)),
        Ok(Frame::EventsApi(envelope)) => envelope,
        Ok(Frame::Other) => {
            if let Ok(other) = serde_json::from_str::<EnvelopeId>(text) {
                tracing::debug!("a Slack Socket Mode envelope steward does not use; acknowledged");
                acknowledge(socket, &other.envelope_id).await?;
            }
            return Ok(Read::Other);
        }
        Err(e) => {
            // An envelope of a shape steward does not read is still
            // acknowledged, so Slack does not send it again.
            match serde_json::from_str::<EnvelopeId>(text) {
                Ok(other) => {
                    tracing::warn!(error = %e, "a Slack Socket Mode envelope steward does not read; acknowledged and ignored");
                    acknowledge(socket, &other.envelope_id).await?;
                }
                Err(_) => {
                    tracing::warn!(error = %e, "a Slack Socket Mode frame that is no envelope; ignored")
                }
            }
            return Ok(Read::Other);
        }
    };
    let EventsEnvelope {
        envelope_id,
        payload,
        retry_attempt,
        retry_reason,
    } = *frame;
    let retry = (retry_attempt > 0).then(|| {
        format!(
            "{retry_attempt} ({})",
            retry_reason.as_deref().unwrap_or("no reason given")
        )
    });
    match take(shared, payload, retry.as_deref()) {
        Some(Taken { stored, acked }) => {
            let to_ack = to_ack.clone();
            tokio::spawn(async move {
                stored.wait().await;
                // A connection gone by now takes no acknowledgement: Slack
                // sends the envelope again, and it is answered once.
                let _ = to_ack.send((envelope_id, acked));
            });
        }
        None => acknowledge(socket, &envelope_id).await?,
    }
    Ok(Read::Other)
}

/// Tell Slack the envelope arrived: `{"envelope_id": …}`, flushed.
async fn acknowledge(
    socket: &mut Socket,
    envelope_id: &str,
) -> Result<(), tokio_tungstenite::tungstenite::Error> {
    // A struct of one string field always serializes.
    let text = serde_json::to_string(&Acknowledgement { envelope_id }).unwrap_or_default();
    socket.send(Message::Text(text.into())).await
}

/// `apps.connections.open` with the app-level token, then the websocket it
/// names. A refusal says why (`invalid_auth`: not this app's token).
async fn open(settings: &SlackSettings) -> Result<Socket, Ended> {
    let Ingress::Socket { app_token } = &settings.ingress else {
        return Err(Ended::lost("not Socket Mode settings", false));
    };
    let url = format!("{}/apps.connections.open", settings.api_base);
    let resp = settings
        .client
        .post(&url)
        .bearer_auth(app_token.expose_secret())
        .header("content-type", "application/x-www-form-urlencoded")
        .send()
        .await
        .map_err(|e| Ended::lost(format!("apps.connections.open: {e}"), false))?;
    let status = resp.status();
    let asked = retry_after(resp.headers(), Utc::now());
    if !status.is_success() {
        return Err(Ended::Lost {
            why: format!("apps.connections.open: HTTP {status}"),
            greeted: false,
            retry_after: asked,
        });
    }
    let body = resp
        .bytes()
        .await
        .map_err(|e| Ended::lost(format!("apps.connections.open: {e}"), false))?;
    let answer: ApiAnswer = serde_json::from_slice(&body).map_err(|e| {
        Ended::lost(
            format!("apps.connections.open: not Slack's answer: {e}"),
            false,
        )
    })?;
    if !answer.ok {
        let error = answer.error.unwrap_or_else(|| "unknown_error".into());
        if matches!(
            error.as_str(),
            "invalid_auth" | "not_authed" | "token_revoked" | "not_allowed_token_type"
        ) {
            tracing::error!(error = %error, "Slack refused the app-level token (slack.app_token_env / slack.app_token_file): it must be this app's xapp-… token with the connections:write scope");
        }
        return Err(Ended::Lost {
            why: format!("apps.connections.open: {error}"),
            greeted: false,
            retry_after: asked,
        });
    }
    let opened: SlackApiAppsConnectionOpenResponse = serde_json::from_slice(&body)
        .map_err(|e| Ended::lost(format!("apps.connections.open: no URL: {e}"), false))?;
    let (socket, _) = tokio_tungstenite::connect_async(opened.url.0.as_str())
        .await
        .map_err(|e| Ended::lost(format!("cannot connect the websocket: {e}"), false))?;
    Ok(socket)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Slack's URLs are `wss://`: the TLS client (rustls, webpki roots, the
    /// one crypto provider in the tree) builds, and a server that is no TLS
    /// server is a connection error, which the loop retries — not a panic
    /// that would end the channel.
    #[tokio::test]
    async fn a_wss_url_is_dialled_over_tls_and_a_failed_handshake_is_an_error() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = tokio::spawn(async move {
            // Accept, read the ClientHello, answer with what no TLS server says.
            let (mut conn, _) = listener.accept().await.unwrap();
            let mut hello = [0u8; 5];
            let _ = tokio::io::AsyncReadExt::read(&mut conn, &mut hello).await;
            let _ =
                tokio::io::AsyncWriteExt::write_all(&mut conn, b"HTTP/1.1 400 Bad\r\n\r\n").await;
            hello
        });
        let dialled =
            tokio_tungstenite::connect_async(format!("wss://127.0.0.1:{}/link", addr.port())).await;
        assert!(dialled.is_err(), "no TLS server, no connection");
        // A TLS record (handshake, 0x16) reached the server: TLS was spoken.
        assert_eq!(server.await.unwrap()[0], 0x16);
    }

    /// A `Retry-After` from Slack is waited out when longer than the
    /// backoff's wait, within the cap.
    #[test]
    fn slacks_retry_after_wins_over_a_shorter_backoff_within_a_minute() {
        let settings =
            SlackSettings::socket_mode("xapp-1-A0-1-x", "xoxb-t", super::super::SLACK_API).unwrap();
        let mut backoff = backoff_from(&settings);
        assert_eq!(
            next_wait(&mut backoff, Some(Duration::from_secs(30))),
            Duration::from_secs(30)
        );
        assert_eq!(
            next_wait(&mut backoff, Some(Duration::from_secs(3600))),
            MAX_RECONNECT_WAIT
        );
        let own = next_wait(&mut backoff, None);
        assert!(own >= settings.reconnect_backoff && own <= MAX_RECONNECT_WAIT);
    }
}
