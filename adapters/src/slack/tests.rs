use super::*;
use axum::http::HeaderValue;
use hmac::{Hmac, Mac};
use sha2::Sha256;

fn signed(secret: &str, ts: &str, body: &[u8]) -> HeaderMap {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(format!("v0:{ts}:").as_bytes());
    mac.update(body);
    let sig = format!("v0={}", hex_of(&mac.finalize().into_bytes()));
    let mut h = HeaderMap::new();
    h.insert("x-slack-signature", HeaderValue::from_str(&sig).unwrap());
    h.insert(
        "x-slack-request-timestamp",
        HeaderValue::from_str(ts).unwrap(),
    );
    h
}

fn hex_of(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn signatures_are_checked_over_the_raw_body_and_the_timestamp() {
    let now = Utc::now().timestamp().to_string();
    let body = br#"{"type":"url_verification","challenge":"c"}"#;
    assert!(verify_signature("secret", &signed("secret", &now, body), body).is_ok());
    assert!(verify_signature("other", &signed("secret", &now, body), body).is_err());
    assert!(verify_signature("secret", &signed("secret", &now, body), b"{}").is_err());
    assert!(verify_signature("secret", &HeaderMap::new(), body).is_err());
    let old = (Utc::now().timestamp() - 301).to_string();
    assert_eq!(
        verify_signature("secret", &signed("secret", &old, body), body),
        Err("stale or invalid X-Slack-Request-Timestamp (more than five minutes from now)")
    );
    // Signed for one timestamp, sent with another.
    let mut moved = signed("secret", &now, body);
    let later = (Utc::now().timestamp() + 1).to_string();
    moved.insert(
        "x-slack-request-timestamp",
        HeaderValue::from_str(&later).unwrap(),
    );
    assert!(verify_signature("secret", &moved, body).is_err());
}

#[test]
fn the_bots_mention_links_and_escapes_are_read_as_typed() {
    assert_eq!(
        clean_text(
            "<@UBOT> @notes: The report uses example_orders",
            Some("UBOT")
        ),
        "@notes: The report uses example_orders"
    );
    assert_eq!(
        clean_text(
            "hi <@UBOT|steward> and <@UANA> &lt;b&gt; &amp;amp;",
            Some("UBOT")
        ),
        "hi and <@UANA> <b> &amp;"
    );
    assert_eq!(
        clean_text(
            "see <https://example.com/a|example.com> in <#C1|general>",
            None
        ),
        "see https://example.com/a in #general"
    );
}

#[test]
fn replies_cannot_ping_or_link() {
    assert_eq!(
        escape("<!channel> <@U1> a & b"),
        "&lt;!channel&gt; &lt;@U1&gt; a &amp; b"
    );
}

fn envelope(event: serde_json::Value) -> Option<Turn> {
    let v = json!({
        "token": "t", "team_id": "T1", "api_app_id": "A1", "type": "event_callback",
        "event_id": "Ev1", "event_time": 1_767_603_600,
        "authorizations": [{"team_id": "T1", "user_id": "UBOT", "is_bot": true}],
        "event": event
    });
    let mut settings = SlackSettings::new("s", "xoxb-t", SLACK_API).unwrap();
    settings.team_orgs.insert("T1".into(), "acme".into());
    match serde_json::from_value(v).unwrap() {
        SlackPushEvent::EventCallback(c) => Turn::of(&settings, c),
        other => panic!("{other:?}"),
    }
}

#[test]
fn direct_messages_mentions_and_channel_lines_become_turns() {
    let dm = envelope(
        json!({"type": "message", "user": "U1", "text": "hi &amp; bye",
            "ts": "1767603600.000100", "channel": "D1", "channel_type": "im",
            "user_profile": {"display_name": "Ana", "real_name": "Ana B"}}),
    )
    .unwrap();
    assert_eq!((dm.channel.as_str(), dm.thread_ts.as_deref()), ("D1", None));
    let m = &dm.inbound;
    assert_eq!(
        (m.org.as_str(), m.conversation.as_str(), m.kind, m.mentioned),
        ("acme", "D1", ConversationKind::Direct, true)
    );
    assert_eq!(m.sender.as_deref(), Some("slack:T1:U1"));
    assert_eq!(
        (m.sender_name.as_str(), m.text.as_str()),
        ("Ana", "hi & bye")
    );
    assert_eq!(m.platform_id.as_deref(), Some("D1/1767603600.000100"));

    let mention = envelope(json!({"type": "app_mention", "user": "U1",
            "text": "<@UBOT> @notes: x", "ts": "1767603601.000100", "channel": "C1"}))
    .unwrap();
    assert_eq!(mention.thread_ts.as_deref(), Some("1767603601.000100"));
    assert_eq!(mention.inbound.conversation, "C1:1767603601.000100");
    assert_eq!(mention.inbound.kind, ConversationKind::Group);
    assert_eq!(mention.inbound.text, "@notes: x");

    // The `message` twin of that mention is the same message; a line
    // of a thread that names nobody is read, not addressed.
    let twin = envelope(json!({"type": "message", "user": "U1",
            "text": "<@UBOT> @notes: x", "ts": "1767603601.000100", "channel": "C1",
            "channel_type": "channel"}))
    .unwrap();
    assert_eq!(twin.inbound.platform_id, mention.inbound.platform_id);
    assert!(twin.inbound.mentioned);
    let line = envelope(json!({"type": "message", "user": "U2", "text": "lunch?",
            "ts": "1767603602.000100", "thread_ts": "1767603601.000100", "channel": "C1",
            "channel_type": "channel"}))
    .unwrap();
    assert!(!line.inbound.mentioned);
    assert_eq!(line.inbound.conversation, "C1:1767603601.000100");
}

#[test]
fn bots_edits_and_the_bots_own_lines_are_no_turns() {
    for event in [
        json!({"type": "message", "user": "UBOT", "bot_id": "B1", "text": "answer",
                "ts": "1.1", "channel": "D1", "channel_type": "im"}),
        json!({"type": "message", "user": "UBOT", "text": "answer",
                "ts": "1.1", "channel": "D1", "channel_type": "im"}),
        json!({"type": "message", "subtype": "bot_message", "bot_id": "B2",
                "text": "deploy", "ts": "1.2", "channel": "C1", "channel_type": "channel"}),
        json!({"type": "message", "subtype": "message_changed", "hidden": true,
                "ts": "1.3", "channel": "D1", "channel_type": "im",
                "message": {"user": "U1", "text": "edited", "ts": "1.0"}}),
        json!({"type": "message", "user": "U1", "text": "<@UBOT>",
                "ts": "1.4", "channel": "D1", "channel_type": "im"}),
        json!({"type": "reaction_added", "user": "U1", "reaction": "+1",
                "item": {"type": "message", "channel": "C1", "ts": "1.1"}, "event_ts": "1.5"}),
    ] {
        assert!(envelope(event.clone()).is_none(), "{event}");
    }
}

#[test]
fn timestamps_and_conversations_read_back() {
    let at = said_at("1767603600.000100").unwrap();
    assert_eq!(at.timestamp(), 1_767_603_600);
    assert_eq!(at.timestamp_subsec_micros(), 100);
    assert_eq!(said_at("x"), None);
    assert_eq!(parse_conversation("D123"), Some(("D123", None)));
    assert_eq!(
        parse_conversation("C123:1767603600.000100"),
        Some(("C123", Some("1767603600.000100")))
    );
    assert_eq!(parse_conversation("C1:x"), None);
    assert_eq!(parse_conversation(""), None);
}

/// A turn loop that stops before storing its message until the test lets it.
struct StoresWhenLet {
    reached: std::sync::Mutex<Option<tokio::sync::oneshot::Sender<()>>>,
    gate: tokio::sync::Mutex<Option<tokio::sync::oneshot::Receiver<()>>>,
}

#[async_trait::async_trait]
impl TurnHandler for StoresWhenLet {
    async fn handle(&self, _: Inbound) -> Result<Vec<Reply>, crate::TurnFailed> {
        Ok(Vec::new())
    }

    async fn handle_new_acked(
        &self,
        _: Inbound,
        stored: Stored,
    ) -> Result<Vec<Reply>, crate::TurnFailed> {
        if let Some(reached) = self.reached.lock().unwrap().take() {
            let _ = reached.send(());
        }
        if let Some(gate) = self.gate.lock().await.take() {
            let _ = gate.await;
        }
        stored.done();
        Ok(Vec::new())
    }
}

#[tokio::test]
async fn an_event_is_acknowledged_only_once_its_message_is_stored() {
    use tower::ServiceExt;
    let (reached_tx, reached) = tokio::sync::oneshot::channel();
    let (let_store, gate) = tokio::sync::oneshot::channel();
    let handler = Arc::new(StoresWhenLet {
        reached: std::sync::Mutex::new(Some(reached_tx)),
        gate: tokio::sync::Mutex::new(Some(gate)),
    });
    let settings = SlackSettings::new("secret", "xoxb-t", "http://127.0.0.1:9").unwrap();
    let app: Router = router(settings, handler);
    let body = serde_json::to_vec(&json!({
        "token": "t", "team_id": "T1", "api_app_id": "A1", "type": "event_callback",
        "event_id": "Ev1", "event_time": 1_767_603_600,
        "authorizations": [{"team_id": "T1", "user_id": "UBOT", "is_bot": true}],
        "event": {"type": "message", "user": "U1", "text": "hello", "ts": "1767603600.000100",
            "channel": "D1", "channel_type": "im"}
    }))
    .unwrap();
    let mut request = axum::http::Request::post(EVENTS_PATH)
        .body(Body::from(body.clone()))
        .unwrap();
    *request.headers_mut() = signed("secret", &Utc::now().timestamp().to_string(), &body);
    let mut ack = Box::pin(app.oneshot(request));
    // The turn has begun and not stored its message: no acknowledgement yet
    // (Slack would not send the event again, and a crash now would lose it).
    tokio::select! {
        biased;
        _ = &mut ack => panic!("acknowledged before its message was stored"),
        _ = reached => {}
    }
    let_store.send(()).unwrap();
    assert_eq!(ack.await.unwrap().status(), StatusCode::OK);
}
