use super::*;

fn settings() -> BotSettings {
    let app = AppRegistration {
        app_id: "app-1".into(),
        app_password: "pw".to_string().into(),
    };
    let mut s = BotSettings::new(app, Arc::new(|| 1_767_603_600_000)).unwrap();
    s.tenant_orgs.insert("tenant-1".into(), "acme".into());
    s
}

fn activity(conversation_type: &str, conversation: &str, text: &str) -> Activity {
    serde_json::from_value(json!({
            "type": "message",
            "id": "1767603600123",
            "timestamp": "2026-01-05T09:00:00.123Z",
            "serviceUrl": "https://smba.trafficmanager.net/emea/",
            "channelId": "msteams",
            "from": {"id": "29:1abc", "name": "Ana", "aadObjectId": "00000000-0000-0000-0000-0000000000a1"},
            "recipient": {"id": "28:app-1", "name": "steward"},
            "conversation": {"id": conversation, "conversationType": conversation_type, "tenantId": "tenant-1"},
            "text": text,
            "entities": [{"type": "mention", "text": "<at>steward</at>",
                "mentioned": {"id": "28:app-1", "name": "steward"}}],
            "channelData": {"tenant": {"id": "tenant-1"}}
        }))
        .unwrap()
}

fn turn(a: Activity) -> Option<Turn> {
    let s = settings();
    let org = s.org_for(a.tenant());
    let address = a.address()?;
    Turn::of(&s, org, address, a)
}

#[test]
fn a_channel_thread_is_the_conversation_and_the_channel_is_the_address() {
    let t = turn(activity(
        "channel",
        "19:general@thread.tacv2;messageid=1767603600000",
        "<at>steward</at> Produce the report",
    ))
    .unwrap();
    assert_eq!(t.address.conversation, "19:general@thread.tacv2");
    assert_eq!(t.address.bot.as_deref(), Some("28:app-1"));
    let m = &t.inbound;
    assert_eq!(
        (m.org.as_str(), m.kind, m.mentioned, m.text.as_str()),
        ("acme", ConversationKind::Group, true, "Produce the report")
    );
    assert_eq!(
        m.sender.as_deref(),
        Some("teams:00000000-0000-0000-0000-0000000000a1")
    );
    assert_eq!(
        m.platform_id.as_deref(),
        Some("19:general@thread.tacv2/1767603600123")
    );
    assert_eq!(t.reply_to.as_deref(), Some("1767603600123"));
}

#[test]
fn a_personal_chat_is_direct_and_a_group_line_without_a_mention_is_read() {
    let t = turn(activity("personal", "a:1xyz", "pair")).unwrap();
    assert_eq!(t.inbound.kind, ConversationKind::Direct);
    assert!(t.inbound.mentioned);
    let mut group = activity("groupChat", "19:chat@thread.v2", "lunch?");
    group.entities.clear();
    let t = turn(group).unwrap();
    assert_eq!(t.inbound.kind, ConversationKind::Group);
    assert!(!t.inbound.mentioned);
    // A mention of someone else is not the bot's.
    let mut other = activity("groupChat", "19:chat@thread.v2", "<at>Bob</at> hi");
    other.entities[0].mentioned.as_mut().unwrap().id = Some("29:bob".into());
    assert!(!turn(other).unwrap().inbound.mentioned);
}

#[test]
fn no_aad_id_or_no_text_is_no_turn() {
    let mut a = activity("personal", "a:1xyz", "hello");
    a.from.as_mut().unwrap().aad_object_id = None;
    assert!(turn(a).is_none());
    assert!(turn(activity("personal", "a:1xyz", "<at>steward</at>")).is_none());
}
