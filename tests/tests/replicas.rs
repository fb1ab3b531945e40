//! Several replicas on one database share pairing, proposals,
//! dedupe and memory. Two turn loops (two "replicas") on one store.

use adapters::ConversationKind;
use memory::{Role, Status};
use steward::Config;
use steward_tests::{both_dbs, join, Harness};

#[tokio::test]
async fn two_replicas_share_pairing_proposals_dedupe_and_memory() {
    for (db, store) in both_dbs().await {
        let a = Harness::on(store.clone(), Config::default());
        let b = Harness::on(store, Config::default());
        // Paired through replica A …
        let code = join(
            a.send(a.inbound(Some("555"), "dm:555", ConversationKind::Direct, "/pair"))
                .await,
        );
        let code = code.split("code is ").nth(1).expect("a code")[..8].to_string();
        a.pair("111", Role::Admin).await;
        assert!(
            join(
                b.send(b.inbound(
                    Some("111"),
                    "dm:111",
                    ConversationKind::Direct,
                    &format!("/pair approve {code}")
                ))
                .await
            )
            .contains("paired as user"),
            "{db}: replica B sees A's pairing request"
        );
        // … a question asked on A is answered on B …
        let ask = a.inbound(
            Some("111"),
            "dm:111",
            ConversationKind::Direct,
            "From now on the VPN is at vpn.example.com",
        );
        assert!(join(a.send(ask).await).contains("Remember this?"), "{db}");
        let yes = b.inbound(Some("111"), "dm:111", ConversationKind::Direct, "yes");
        assert!(
            join(b.send(yes).await).contains("Written: agent_notes"),
            "{db}: the proposal is in the database"
        );
        // … a redelivery to the other replica runs once …
        let mut m = a.inbound(
            Some("555"),
            "dm:555",
            ConversationKind::Direct,
            "where is the VPN?",
        );
        m.platform_id = Some("evt-1".into());
        let first = join(a.send(m.clone()).await);
        assert!(first.contains("vpn.example.com"), "{db}: {first}");
        let lines = || async {
            b.db()
                .conversations()
                .history("default", "default", "dm:555")
                .await
                .unwrap()
                .len()
        };
        let before = lines().await;
        assert_eq!(
            join(b.send(m).await),
            first,
            "{db}: replica B answers A's redelivered message with A's stored reply"
        );
        assert_eq!(lines().await, before, "{db}: and runs no second turn");
        let notes = b.records().await;
        assert_eq!(
            notes.iter().filter(|r| r.status == Status::Active).count(),
            1,
            "{db}"
        );
    }
}
