//! Delegation: a person lets another act for them through a key made
//! `--on-behalf-of` them. A delegated turn runs as the delegate — the
//! delegate's role and own memory — never reads or writes the principal's
//! personal or person tier, tags what it writes with `on_behalf_of`, and ends
//! the moment the grant (or either person) is revoked. Over the REST API, on
//! both databases.

use axum::http::StatusCode;
use memory::write::RawWrites;
use memory::{Db, Role, Scope, Status, ANY_AGENT};
use serde_json::{json, Value};
use steward::config::Config;
use steward::http::{app, AppState};
use steward_tests::{both_dbs, record, Harness};

const ANA: &str = "discord:222";
const BOB: &str = "discord:333";

/// An admin (`discord:111`), Ana (the principal) and Bob (her delegate),
/// each with their own key; Ana's memory holds a preference in each of her
/// tiers.
struct Office {
    h: Harness,
    app: axum::Router,
    admin: String,
    ana: String,
    bob: String,
}

impl Office {
    async fn on(db: Db) -> Office {
        let h = Harness::on(db, Config::default());
        h.pair("111", Role::Admin).await;
        h.pair("222", Role::User).await;
        h.pair("333", Role::User).await;
        let p = h.services.pairing().clone();
        let key = |user: &'static str| {
            let p = p.clone();
            async move {
                p.create_api_key("default", user, "test", 1)
                    .await
                    .unwrap()
                    .key
            }
        };
        let (admin, ana, bob) = (key("discord:111").await, key(ANA).await, key(BOB).await);
        let records = h.db().records();
        records
            .insert_record(&record(
                "default",
                Scope::Personal,
                Some(ANA),
                "reply_language",
                "Ana prefers answers in Portuguese",
                1,
            ))
            .await
            .unwrap();
        records
            .insert_record(&memory::NewRecord {
                agent: ANY_AGENT.into(),
                ..record(
                    "default",
                    Scope::Person,
                    Some(ANA),
                    "working_hours",
                    "Ana works from Lisbon, mornings only",
                    1,
                )
            })
            .await
            .unwrap();
        let app = app(AppState::new(h.services.clone()));
        Office {
            h,
            app,
            admin,
            ana,
            bob,
        }
    }

    async fn call(
        &self,
        method: &str,
        path: &str,
        key: &str,
        body: Option<Value>,
    ) -> (StatusCode, Value) {
        steward_tests::call_api(&self.app, method, path, key, body).await
    }

    /// Ana lets Bob act for her, and Bob makes his key acting for her (a
    /// key acts as the person who made it); the key.
    async fn delegate_bob(&self) -> String {
        let (s, grant) = self
            .call(
                "POST",
                "/api/v1/me/delegates",
                &self.ana,
                Some(json!({"delegate": BOB})),
            )
            .await;
        assert_eq!(s, StatusCode::CREATED, "{grant}");
        assert_eq!(
            (grant["principal"].as_str(), grant["delegate"].as_str()),
            (Some(ANA), Some(BOB))
        );
        let (s, key) = self
            .call(
                "POST",
                "/api/v1/me/keys",
                &self.bob,
                Some(json!({"on_behalf_of": ANA})),
            )
            .await;
        assert_eq!(s, StatusCode::CREATED, "{key}");
        key["key"].as_str().unwrap().to_string()
    }

    /// A message with `key`; the joined reply text.
    async fn say(&self, key: &str, text: &str) -> String {
        let (s, body) = self
            .call("POST", "/api/v1/messages", key, Some(json!({"text": text})))
            .await;
        assert_eq!(s, StatusCode::OK, "{text}: {body}");
        body["replies"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["text"].as_str().unwrap_or_default())
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Ana's records as they are now: (id, content, status, on_behalf_of).
    async fn anas(&self) -> Vec<(i64, String, Status, Option<String>)> {
        let mut out: Vec<_> = self
            .h
            .records()
            .await
            .into_iter()
            .filter(|r| r.owner.as_deref() == Some(ANA))
            .map(|r| {
                (
                    r.id,
                    r.written.content,
                    r.written.status,
                    r.written.on_behalf_of,
                )
            })
            .collect();
        out.sort_by_key(|r| r.0);
        out
    }
}

/// Nothing of Ana's two tiers in `text`.
fn holds_nothing_of_ana(text: &str) -> bool {
    !["Portuguese", "Lisbon", "mornings"]
        .iter()
        .any(|w| text.contains(w))
}

#[tokio::test]
async fn a_delegated_turn_reads_and_writes_only_the_delegates_own_memory() {
    for (name, db) in both_dbs().await {
        let o = Office::on(db).await;
        let before = o.anas().await;
        let key = o.delegate_bob().await;
        // Asking about her, in every way, reaches nothing of hers.
        for q in [
            "What does Ana prefer?",
            "What language do I prefer?",
            "Where does Ana work from, and when?",
            "/memory",
        ] {
            let reply = o.say(&key, q).await;
            assert!(holds_nothing_of_ana(&reply), "{name}: {q} -> {reply}");
        }
        for path in [
            "/api/v1/me/memory",
            "/api/v1/me/search?q=Portuguese",
            "/api/v1/me/search?q=Lisbon%20mornings",
        ] {
            let (s, body) = o.call("GET", path, &key, None).await;
            assert_eq!(s, StatusCode::OK, "{name}: {path}: {body}");
            assert!(
                holds_nothing_of_ana(&body.to_string()),
                "{name}: {path}: {body}"
            );
        }
        // What Bob keeps while acting for her is his own, tagged with her.
        let asked = o.say(&key, "I prefer bullet points in summaries").await;
        assert!(asked.contains("Remember this?"), "{name}: {asked}");
        let kept = o.say(&key, "yes").await;
        assert!(kept.contains("Written: personal memory"), "{name}: {kept}");
        let his: Vec<_> =
            o.h.records()
                .await
                .into_iter()
                .filter(|r| r.content.contains("bullet points"))
                .collect();
        assert_eq!(his.len(), 1, "{name}: {his:?}");
        assert_eq!(his[0].owner.as_deref(), Some(BOB), "{name}");
        assert_eq!(his[0].status, Status::Active, "{name}");
        assert_eq!(his[0].on_behalf_of.as_deref(), Some(ANA), "{name}");
        // He sees the tag in his /memory and over the API.
        let mine = o.say(&key, "/memory").await;
        assert!(
            mine.contains("bullet points") && mine.contains(&format!("on behalf of {ANA}")),
            "{name}: {mine}"
        );
        let (_, listed) = o.call("GET", "/api/v1/me/memory", &key, None).await;
        assert!(
            listed
                .to_string()
                .contains(&format!("\"on_behalf_of\":\"{ANA}\"")),
            "{name}: {listed}"
        );
        // Ana's memory is exactly as it was: nothing read into it, nothing written.
        assert_eq!(o.anas().await, before, "{name}");
        // Each delegated message is audited: who acted, for whom.
        let acts =
            o.h.db()
                .audit()
                .about("default", "delegate.message", ANA)
                .await
                .unwrap();
        assert!(
            acts.len() >= 6 && acts.iter().all(|e| e.actor == BOB),
            "{name}: {acts:?}"
        );
        // Ana sees who may act for her; Bob for whom he acts.
        let hers = o.say(&o.ana, "/memory").await;
        assert!(
            hers.contains(&format!("{BOB} may act for you")),
            "{name}: {hers}"
        );
    }
}

#[tokio::test]
async fn ending_the_grant_or_revoking_either_person_ends_the_delegated_key_at_once() {
    for (name, db) in both_dbs().await {
        // The grant ended by the principal.
        let o = Office::on(db).await;
        let key = o.delegate_bob().await;
        assert_eq!(
            o.call("GET", "/api/v1/me", &key, None).await.0,
            StatusCode::OK,
            "{name}"
        );
        let (s, _) = o
            .call(
                "DELETE",
                &format!("/api/v1/me/delegates/{BOB}"),
                &o.ana,
                None,
            )
            .await;
        assert_eq!(s, StatusCode::NO_CONTENT, "{name}");
        let (s, body) = o
            .call(
                "POST",
                "/api/v1/messages",
                &key,
                Some(json!({"text": "hi"})),
            )
            .await;
        assert_eq!(s, StatusCode::UNAUTHORIZED, "{name}: {body}");
        // Granting again brings the old key back: no.
        let (s, _) = o
            .call(
                "POST",
                "/api/v1/me/delegates",
                &o.ana,
                Some(json!({"delegate": BOB})),
            )
            .await;
        assert_eq!(s, StatusCode::CREATED, "{name}");
        assert_eq!(
            o.call("GET", "/api/v1/me", &key, None).await.0,
            StatusCode::UNAUTHORIZED,
            "{name}"
        );
        // Bob's own key never depended on it.
        assert_eq!(
            o.call("GET", "/api/v1/me", &o.bob, None).await.0,
            StatusCode::OK,
            "{name}"
        );
        // Ending it again: there is nothing to end.
        let key = o.delegate_bob_again().await;
        let p = o.h.services.pairing();
        // The principal revoked: the key acting for her stops, and stays stopped when she is paired again.
        p.revoke("default", ANA, "test", o.h.now_ms())
            .await
            .unwrap();
        assert_eq!(
            o.call("GET", "/api/v1/me", &key, None).await.0,
            StatusCode::UNAUTHORIZED,
            "{name}"
        );
        o.h.pair("222", Role::User).await;
        assert_eq!(
            o.call("GET", "/api/v1/me", &key, None).await.0,
            StatusCode::UNAUTHORIZED,
            "{name}"
        );
        assert!(
            p.delegations("default", Some(ANA))
                .await
                .unwrap()
                .is_empty(),
            "{name}"
        );
    }
}

impl Office {
    /// After the first grant ended and was given again: a new key of Bob's
    /// acting for Ana.
    async fn delegate_bob_again(&self) -> String {
        let (s, key) = self
            .call(
                "POST",
                "/api/v1/me/keys",
                &self.bob,
                Some(json!({"on_behalf_of": ANA})),
            )
            .await;
        assert_eq!(s, StatusCode::CREATED, "{key}");
        let key = key["key"].as_str().unwrap().to_string();
        assert_eq!(
            self.call("GET", "/api/v1/me", &key, None).await.0,
            StatusCode::OK
        );
        key
    }
}

#[tokio::test]
async fn delegation_lends_no_authority_and_is_never_passed_on() {
    for (name, db) in both_dbs().await {
        let o = Office::on(db).await;
        // No key acts for someone without their grant, and nobody delegates to themselves.
        let (s, body) = o
            .call(
                "POST",
                "/api/v1/me/keys",
                &o.bob,
                Some(json!({"on_behalf_of": ANA})),
            )
            .await;
        assert_eq!(s, StatusCode::NOT_FOUND, "{name}: {body}");
        let (s, body) = o
            .call(
                "POST",
                "/api/v1/me/delegates",
                &o.bob,
                Some(json!({"delegate": BOB})),
            )
            .await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{name}: {body}");
        // Bob cannot grant himself Ana: his key grants only for himself.
        let (s, _) = o
            .call(
                "POST",
                "/api/v1/me/delegates",
                &o.bob,
                Some(json!({"delegate": ANA})),
            )
            .await;
        assert_eq!(s, StatusCode::CREATED, "{name}");
        let (s, body) = o
            .call(
                "POST",
                "/api/v1/me/keys",
                &o.bob,
                Some(json!({"on_behalf_of": ANA})),
            )
            .await;
        assert_eq!(
            s,
            StatusCode::NOT_FOUND,
            "{name}: Ana acting for Bob is not Bob acting for Ana: {body}"
        );
        // The admin acting for Ana: her delegate, with a key acting for her.
        let admin = "discord:111";
        let (s, _) = o
            .call(
                "POST",
                "/api/v1/me/delegates",
                &o.ana,
                Some(json!({"delegate": admin})),
            )
            .await;
        assert_eq!(s, StatusCode::CREATED, "{name}");
        let (s, key) = o
            .call(
                "POST",
                "/api/v1/keys",
                &o.admin,
                Some(json!({"user_id": admin, "on_behalf_of": ANA})),
            )
            .await;
        assert_eq!(s, StatusCode::CREATED, "{name}: {key}");
        let key = key["key"].as_str().unwrap().to_string();
        // That key administers nothing, and passes nothing on.
        for (method, path, body) in [
            ("GET", "/api/v1/memory", None),
            ("GET", "/api/v1/audit", None),
            ("POST", "/api/v1/keys", Some(json!({"user_id": admin}))),
            ("POST", "/api/v1/me/keys", Some(json!({}))),
            (
                "POST",
                "/api/v1/me/delegates",
                Some(json!({"delegate": BOB})),
            ),
            ("DELETE", "/api/v1/me/delegates/discord:111", None),
        ] {
            let (s, e) = o.call(method, path, &key, body).await;
            assert_eq!(s, StatusCode::FORBIDDEN, "{name}: {method} {path}: {e}");
            assert!(e["error"].is_string(), "{name}: {e}");
        }
        // Org policy is written in one's own name: refused while acting for her.
        let reply = o.say(&key, "@policy: Nobody deploys on Fridays.").await;
        assert!(reply.contains("not on someone's behalf"), "{name}: {reply}");
        assert!(o.h.records_containing("Fridays").await.is_empty(), "{name}");
        // So are operational notes: a delegation lends no administration.
        let reply = o
            .say(&key, "@notes: The VPN endpoint is vpn2.example.com")
            .await;
        assert!(reply.contains("not on someone's behalf"), "{name}: {reply}");
        assert!(
            o.h.records_containing("vpn2.example.com").await.is_empty(),
            "{name}"
        );
        // The same admin's own key still administers.
        assert_eq!(
            o.call("GET", "/api/v1/audit", &o.admin, None).await.0,
            StatusCode::OK,
            "{name}"
        );
    }
}
