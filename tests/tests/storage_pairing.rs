//! The storage conformance suite, pairing: the same checks on SQLite and
//! PostgreSQL of pairing codes and of API keys, resolved and revoked.
//! PostgreSQL runs when STEWARD_TEST_POSTGRES_URL is set (always, under CI).

use memory::{Backend, Db, Role};
use pairing::{PairOutcome, Pairing, PairingError, PairingSettings};
use sha2::{Digest, Sha256};
use steward_tests::{postgres_db, sqlite_file_db};

steward_tests::on_both_databases!(
    pairing_codes_follow_the_rules,
    api_keys_resolve_to_active_users,
    api_keys_are_revoked_by_id_and_with_their_user_for_good,
);

async fn pairing_codes_follow_the_rules(db: Db) {
    let p = Pairing::new(db.clone(), PairingSettings::default());
    let now = 1_000_000;
    let PairOutcome::Code { code, reused, .. } = p
        .request("o", "discord", "discord:1", "One", now)
        .await
        .unwrap()
    else {
        panic!("expected a code")
    };
    assert!(!reused);
    assert_eq!(code.len(), 8);
    assert!(!code.contains(['0', 'O', '1', 'I', 'L']));
    let PairOutcome::Code {
        code: again,
        reused,
        ..
    } = p
        .request("o", "discord", "discord:1", "One", now + 5)
        .await
        .unwrap()
    else {
        panic!("expected a code")
    };
    assert_eq!(
        (again.as_str(), reused),
        (code.as_str(), true),
        "a pending code is reused"
    );
    p.request("o", "discord", "discord:2", "Two", now)
        .await
        .unwrap();
    p.request("o", "discord", "discord:3", "Three", now)
        .await
        .unwrap();
    assert_eq!(
        p.request("o", "discord", "discord:4", "Four", now)
            .await
            .unwrap(),
        PairOutcome::TooManyPending
    );
    assert!(matches!(
        p.request("o", "teams", "teams:4", "Four", now)
            .await
            .unwrap(),
        PairOutcome::Code { .. }
    ));
    // 60 minutes later the codes have expired: approval fails, new requests fit again.
    let later = now + 60 * 60 * 1000;
    assert!(matches!(
        p.approve("o", &code, Role::User, "admin", later).await,
        Err(PairingError::CodeExpired(_))
    ));
    assert!(matches!(
        p.request("o", "discord", "discord:4", "Four", later)
            .await
            .unwrap(),
        PairOutcome::Code { .. }
    ));
    let PairOutcome::Code { code: fresh, .. } = p
        .request("o", "discord", "discord:1", "One", later)
        .await
        .unwrap()
    else {
        panic!("expected a code")
    };
    assert_ne!(fresh, code);
    assert!(matches!(
        p.approve("o2", &fresh, Role::Admin, "admin", later).await,
        Err(PairingError::UnknownCode(_))
    ));
    let u = p
        .approve("o", &fresh.to_lowercase(), Role::User, "admin", later)
        .await
        .unwrap();
    assert_eq!((u.user_id.as_str(), u.role), ("discord:1", Role::User));
    assert!(matches!(
        p.approve("o", &fresh, Role::Admin, "admin", later).await,
        Err(PairingError::CodeNotPending { .. })
    ));
    assert_eq!(
        p.resolve("o", "discord:1").await.unwrap().map(|u| u.role),
        Some(Role::User)
    );
    assert_eq!(
        p.resolve("o2", "discord:1").await.unwrap(),
        None,
        "pairing is per org"
    );
    p.set_role("o", "discord:1", Role::Admin, "admin", later)
        .await
        .unwrap();
    assert_eq!(
        p.resolve("o", "discord:1").await.unwrap().map(|u| u.role),
        Some(Role::Admin)
    );
    p.revoke("o", "discord:1", "admin", later).await.unwrap();
    assert_eq!(p.resolve("o", "discord:1").await.unwrap(), None);
    // Hints: once a minute per sender.
    assert!(p.should_hint("o", "discord:9", now).await.unwrap());
    assert!(!p.should_hint("o", "discord:9", now + 59_000).await.unwrap());
    assert!(p.should_hint("o", "discord:9", now + 60_000).await.unwrap());
    let actions: Vec<String> = db
        .audit()
        .log("o", 50)
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.action)
        .collect();
    for a in ["pairing.approve", "pairing.set_role", "pairing.revoke"] {
        assert!(
            actions.iter().any(|x| x == a),
            "{a} not audited: {actions:?}"
        );
    }
}

async fn api_keys_resolve_to_active_users(db: Db) {
    let p = Pairing::new(db.clone(), PairingSettings::default());
    p.add_user("o", "discord:1", "One", Role::User, "test", 1)
        .await
        .unwrap();
    let key = p
        .create_api_key("o", "discord:1", "test", 2)
        .await
        .unwrap()
        .key;
    assert_eq!(
        p.api_key_user(&key).await.unwrap().map(|u| u.user_id),
        Some("discord:1".into())
    );
    assert_eq!(p.api_key_user("stw_not_a_key").await.unwrap(), None);
    assert!(
        p.create_api_key("o", "discord:404", "test", 2)
            .await
            .is_err(),
        "keys bind to paired users only"
    );
    p.revoke("o", "discord:1", "test", 3).await.unwrap();
    assert_eq!(
        p.api_key_user(&key).await.unwrap(),
        None,
        "a revoked user's key stops working"
    );
}

/// Keys have public ids, are listed without secrets, and revoked one by one
/// or with their user; a revoked key stays dead when the user is paired again.
async fn api_keys_are_revoked_by_id_and_with_their_user_for_good(db: Db) {
    let p = Pairing::new(db.clone(), PairingSettings::default());
    p.add_user("o", "discord:1", "One", Role::User, "test", 1)
        .await
        .unwrap();
    let a = p.create_api_key("o", "discord:1", "test", 2).await.unwrap();
    let b = p.create_api_key("o", "discord:1", "test", 3).await.unwrap();
    assert!(a.id.starts_with("key-") && a.id != b.id, "{a:?} {b:?}");
    let listed = p.api_keys("o", Some("discord:1")).await.unwrap();
    let ids: Vec<&str> = listed.iter().map(|k| k.key_id.as_str()).collect();
    assert_eq!(ids, [a.id.as_str(), b.id.as_str()]);
    assert!(listed.iter().all(|k| k.revoked_at.is_none()));
    let shown = serde_json::to_string(&listed).unwrap();
    for secret in [&a.key, &b.key] {
        let hash = hex::encode(Sha256::digest(secret.as_bytes()));
        assert!(
            !shown.contains(secret.as_str()) && !shown.contains(&hash),
            "a listing shows no secret and no hash: {shown}"
        );
    }
    assert!(p.api_keys("o2", None).await.unwrap().is_empty(), "per org");
    assert!(matches!(
        p.revoke_api_key("o2", &a.id, "admin", 4).await,
        Err(PairingError::UnknownApiKey(_))
    ));

    // One key revoked by id (as typed, any case): it stops; the other still works.
    let revoked = p
        .revoke_api_key("o", &a.id.to_lowercase(), "admin", 4)
        .await
        .unwrap();
    assert_eq!(
        (
            revoked.key_id.as_str(),
            revoked.revoked_at,
            revoked.revoked_by.as_deref()
        ),
        (a.id.as_str(), Some(4), Some("admin"))
    );
    assert_eq!(p.api_key_user(&a.key).await.unwrap(), None);
    assert_eq!(
        p.api_key_user(&b.key).await.unwrap().map(|u| u.user_id),
        Some("discord:1".into())
    );
    assert!(matches!(
        p.revoke_api_key("o", &a.id, "admin", 5).await,
        Err(PairingError::ApiKeyRevoked(_))
    ));
    assert!(
        !db.identity()
            .revoke_api_key(
                &a.id,
                memory::store::Act {
                    org: "o",
                    actor: "admin",
                    at: 5
                }
            )
            .await
            .unwrap(),
        "the store refuses a second revocation"
    );
    assert!(matches!(
        p.revoke_api_key("o", "key-NOSUCHID", "admin", 5).await,
        Err(PairingError::UnknownApiKey(_))
    ));

    // The user revoked: their remaining key with them, at that moment.
    let with_user = p.revoke("o", "discord:1", "admin", 6).await.unwrap();
    assert_eq!(with_user, vec![b.id.clone()]);
    let b_row = db.identity().api_key("o", &b.id).await.unwrap().unwrap();
    assert_eq!(b_row.revoked_at, Some(6));
    assert!(matches!(
        p.create_api_key("o", "discord:1", "admin", 7).await,
        Err(PairingError::UserNotActive(_))
    ));

    // Paired again through a new request: no old key comes back; a new one works.
    let PairOutcome::Code { code, .. } = p
        .request("o", "discord", "discord:1", "One", 8)
        .await
        .unwrap()
    else {
        panic!("a code");
    };
    p.approve("o", &code, Role::User, "admin", 9).await.unwrap();
    assert!(p.resolve("o", "discord:1").await.unwrap().is_some());
    for old in [&a.key, &b.key] {
        assert_eq!(p.api_key_user(old).await.unwrap(), None);
    }
    let c = p
        .create_api_key("o", "discord:1", "admin", 10)
        .await
        .unwrap();
    assert_eq!(
        p.api_key_user(&c.key).await.unwrap().map(|u| u.user_id),
        Some("discord:1".into())
    );
    let states: Vec<(String, Option<i64>)> = p
        .api_keys("o", None)
        .await
        .unwrap()
        .into_iter()
        .map(|k| (k.key_id, k.revoked_at))
        .collect();
    assert_eq!(
        states,
        [
            (a.id.clone(), Some(4)),
            (b.id.clone(), Some(6)),
            (c.id, None)
        ]
    );
    let revocations: Vec<String> = db
        .audit()
        .about("o", "api_key.revoke", "discord:1")
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.detail)
        .collect();
    assert_eq!(revocations.len(), 2, "{revocations:?}");
    assert!(revocations[0].contains(&a.id) && revocations[1].contains(&b.id));
}
