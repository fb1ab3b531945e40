//! Each person signs in to the dashboard as themselves through an OpenID
//! Connect provider (the wire-level fake in `tests/src/fake_oidc.rs`), over a
//! real socket: the code flow with PKCE, state and nonce checked, every
//! wrong ID token refused, an unpaired identity turned away, and a person
//! who signs in sees their own memory only, while an administrator who signs
//! in acts — and is audited — under their own stored id. Beside it, Sign in
//! with Slack (the same fake as Slack speaks it) and Discord (OAuth 2.0 and
//! `users/@me`, `tests/src/fake_discord_oauth.rs`) land each person as the
//! stored id their channel pairs. The last test runs it in a real headless
//! Chromium.

use fantoccini::{Client as Browser, ClientBuilder, Locator};
use hyper_util::client::legacy::connect::HttpConnector;
use memory::write::RawWrites;
use memory::{Db, Role, Scope, Status};
use reqwest::StatusCode;
use std::collections::HashMap;
use steward::config::oidc::{OidcConfig, ProviderConfig, ProviderKind};
use steward_tests::dashboard::{self, pair_request, rec, Chromedriver};
use steward_tests::fake_discord_oauth::{
    DiscordUser, FakeDiscordOAuth, DISCORD_CLIENT_ID, DISCORD_CLIENT_SECRET,
};
use steward_tests::fake_oidc::{
    FakeOidc, Person, Tamper, CLIENT_ID, CLIENT_SECRET, SLACK_CLIENT_ID, SLACK_CLIENT_SECRET,
};
use steward_tests::{both_dbs, Harness};

/// steward on a real socket with `[oidc]` pointing at a fake provider, and
/// `[[oidc.providers]]` at a fake Slack and a fake Discord.
struct Stage {
    h: Harness,
    fake: FakeOidc,
    slack: FakeOidc,
    discord: FakeDiscordOAuth,
    base: String,
    _secret: tempfile::TempDir,
}

const ANA: &str = "00000000-0000-0000-0000-0000000000a1";
const BO: &str = "00000000-0000-0000-0000-0000000000b2";
const ZED: &str = "00000000-0000-0000-0000-0000000000c3";
/// Slack: the workspace steward's Slack app serves, and another.
const ACME: &str = "T0ACME42";
const OTHER_TEAM: &str = "T0OTHER7";
const CARO_SLACK: &str = "U0CARO1";
/// Discord: a paired user and one nobody paired.
const DEE_DISCORD: u64 = 80_351_110_224_678_912;
const EVE_DISCORD: u64 = 80_351_110_224_678_999;

async fn stage(db: Db) -> Stage {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    let callback = format!("{base}/dashboard/oidc/callback");
    let fake = FakeOidc::start(&callback, || chrono::Utc::now().timestamp()).await;
    let slack = FakeOidc::start_slack(&callback, || chrono::Utc::now().timestamp()).await;
    let discord = FakeDiscordOAuth::start(&callback).await;
    let secret = tempfile::tempdir().expect("dir");
    let file = |name: &str, value: &str| {
        let path = secret.path().join(name);
        std::fs::write(&path, format!("{value}\n")).expect("secret file");
        Some(path.display().to_string())
    };
    let path = secret.path().join("client_secret");
    std::fs::write(&path, format!("{CLIENT_SECRET}\n")).expect("secret file");
    let mut cfg = dashboard::config();
    // Each test signs in more often than a person would; the limits are
    // dashboard_sign_in.rs's to test (callbacks count against them too).
    cfg.dashboard.sign_in_per_minute = 1_000;
    cfg.dashboard.sign_in_global_per_minute = 1_000;
    cfg.oidc = OidcConfig {
        issuer: Some(fake.issuer.clone()),
        client_id: CLIENT_ID.into(),
        client_secret_file: Some(path.display().to_string()),
        redirect_url: callback.clone(),
        provider_name: "Contoso".into(),
        providers: vec![
            ProviderConfig {
                kind: ProviderKind::Slack,
                issuer: Some(slack.issuer.clone()),
                client_id: SLACK_CLIENT_ID.into(),
                client_secret_file: file("slack_secret", SLACK_CLIENT_SECRET),
                redirect_url: callback.clone(),
                ..Default::default()
            },
            ProviderConfig {
                kind: ProviderKind::Discord,
                client_id: DISCORD_CLIENT_ID.into(),
                client_secret_file: file("discord_secret", DISCORD_CLIENT_SECRET),
                redirect_url: callback.clone(),
                authorization_url: Some(discord.authorization_url()),
                token_url: Some(discord.token_url()),
                user_url: Some(discord.user_url()),
                ..Default::default()
            },
        ],
        ..Default::default()
    };
    cfg.oidc.check().expect("a valid [oidc] section");
    let h = Harness::on(db, cfg);
    dashboard::serve_on(listener, h.services.clone());
    let at = h.now_ms();
    let pairing = h.services.pairing();
    let people = [
        (format!("teams:{ANA}"), "Ana", Role::User),
        (format!("teams:{BO}"), "Bo", Role::Admin),
        (format!("slack:{ACME}:{CARO_SLACK}"), "Caro", Role::User),
        (format!("discord:{DEE_DISCORD}"), "Dee", Role::User),
    ];
    for (id, name, role) in people {
        pairing
            .add_user("default", &id, name, role, "test", at)
            .await
            .expect("pair");
    }
    Stage {
        h,
        fake,
        slack,
        discord,
        base,
        _secret: secret,
    }
}

/// A browser over HTTP that follows nothing by itself and keeps cookies.
struct Http {
    client: reqwest::Client,
    cookies: HashMap<String, String>,
}

struct Answer {
    status: StatusCode,
    location: Option<String>,
    body: String,
}

impl Http {
    fn new() -> Http {
        Http {
            client: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .expect("client"),
            cookies: HashMap::new(),
        }
    }

    async fn send(&mut self, req: reqwest::RequestBuilder) -> Answer {
        let cookie: Vec<String> = self
            .cookies
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let resp = req
            .header("cookie", cookie.join("; "))
            .send()
            .await
            .expect("request");
        for set in resp.headers().get_all("set-cookie") {
            let set = set.to_str().expect("ascii");
            let pair = set.split(';').next().unwrap_or_default();
            let (name, value) = pair.split_once('=').expect("name=value");
            if value.is_empty() {
                self.cookies.remove(name);
            } else {
                self.cookies.insert(name.into(), value.into());
            }
        }
        Answer {
            status: resp.status(),
            location: resp
                .headers()
                .get("location")
                .map(|l| l.to_str().expect("ascii").to_string()),
            body: resp.text().await.expect("body"),
        }
    }

    async fn get(&mut self, url: &str) -> Answer {
        let req = self.client.get(url);
        self.send(req).await
    }

    async fn post(&mut self, url: &str, fields: &[(&str, &str)]) -> Answer {
        let req = self.client.post(url).form(fields);
        self.send(req).await
    }

    /// Start at steward, log in at the provider: the callback URL it sends back to.
    async fn via_the_provider(&mut self, s: &Stage) -> String {
        let start = format!("{}/dashboard/oidc/start", s.base);
        self.via(&start, &s.fake.issuer).await
    }

    /// Start at `start`, log in at the provider at `provider`: the callback URL.
    async fn via(&mut self, start: &str, provider: &str) -> String {
        let start = self.get(start).await;
        assert_eq!(start.status, StatusCode::SEE_OTHER, "{}", start.body);
        let at_provider = start.location.expect("to the provider");
        assert!(at_provider.starts_with(provider), "{at_provider}");
        let back = self.get(&at_provider).await;
        back.location.expect("back to steward")
    }

    /// Through Sign in with Slack: the callback URL.
    async fn via_slack(&mut self, s: &Stage) -> String {
        let start = format!("{}/dashboard/oidc/start?provider=slack", s.base);
        self.via(&start, &s.slack.issuer).await
    }

    /// Through Discord: the callback URL.
    async fn via_discord(&mut self, s: &Stage) -> String {
        let start = format!("{}/dashboard/oidc/start?provider=discord", s.base);
        self.via(&start, &s.discord.base).await
    }

    /// The whole flow: what steward's callback answers.
    async fn sign_in(&mut self, s: &Stage) -> Answer {
        let callback = self.via_the_provider(s).await;
        self.get(&callback).await
    }
}

/// No session: every page goes to sign in.
async fn signed_out(s: &Stage, http: &mut Http) {
    assert!(!http.cookies.contains_key("steward_session"));
    let me = http.get(&format!("{}/dashboard/me", s.base)).await;
    assert_eq!(me.location.as_deref(), Some("/dashboard/login"));
}

#[tokio::test]
async fn forged_wrong_expired_and_replayed_sign_ins_are_refused_and_a_paired_person_is_let_in() {
    for (name, db) in both_dbs().await {
        let s = stage(db).await;
        s.fake.log_in_as(Some(Person::new(ANA, "Ana")));

        // The sign-in page offers the provider.
        let mut http = Http::new();
        let login = http.get(&format!("{}/dashboard/login", s.base)).await;
        assert!(login.body.contains("Sign in with Contoso"), "{name}");

        // Each wrong ID token: 401 with why, no session.
        for (tamper, why) in [
            (Tamper::ForgedSignature, "invalid token signature"),
            (Tamper::WrongAudience, "audience"),
            (Tamper::WrongIssuer, "not issued by"),
            (Tamper::Expired, "expired"),
            (Tamper::WrongNonce, "nonce"),
        ] {
            let mut http = Http::new();
            s.fake.tamper_next(tamper);
            let refused = http.sign_in(&s).await;
            assert_eq!(
                refused.status,
                StatusCode::UNAUTHORIZED,
                "{name} {tamper:?}"
            );
            assert!(
                refused.body.contains(why),
                "{name} {tamper:?}: {}",
                refused.body
            );
            signed_out(&s, &mut http).await;
        }
        let issued = s.fake.issued();

        // The authorization request carried state, nonce and an S256 challenge.
        let asked = s.fake.authorizations();
        let last = asked.last().expect("asked");
        assert_eq!(
            last.get("code_challenge_method").map(String::as_str),
            Some("S256")
        );
        for key in ["state", "nonce", "code_challenge"] {
            assert!(
                last.get(key).is_some_and(|v| v.len() >= 16),
                "{name}: {key} in {last:?}"
            );
        }

        // A state that does not match: 400, and the code is never redeemed.
        let mut http = Http::new();
        let callback = http.via_the_provider(&s).await;
        let forged = callback.replace("state=", "state=x");
        let refused = http.get(&forged).await;
        assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{name}");
        assert!(refused.body.contains("state does not match"), "{name}");
        signed_out(&s, &mut http).await;
        // A callback in a browser that never started (a forged login link): 400.
        let mut other = Http::new();
        let callback = Http::new().via_the_provider(&s).await;
        let refused = other.get(&callback).await;
        assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{name}");
        signed_out(&s, &mut other).await;
        assert_eq!(s.fake.issued(), issued, "{name}: no code was redeemed");

        // Without the verifier the challenge was made from, the provider
        // refuses the code (PKCE), and steward signs nobody in.
        let mut http = Http::new();
        let callback = http.via_the_provider(&s).await;
        let pending = http.cookies.get("steward_oidc").expect("pending").clone();
        let mut parts: Vec<&str> = pending.split('.').collect();
        let other_verifier = "A".repeat(43);
        parts[1] = &other_verifier;
        http.cookies.insert("steward_oidc".into(), parts.join("."));
        let refused = http.get(&callback).await;
        assert_eq!(refused.status, StatusCode::UNAUTHORIZED, "{name}");
        assert!(
            refused.body.contains("refused to redeem"),
            "{name}: {}",
            refused.body
        );
        assert!(
            s.fake.refusals().last().expect("refused").contains("PKCE"),
            "{name}"
        );
        signed_out(&s, &mut http).await;

        // A paired person signs in, and lands on their own memory.
        let mut http = Http::new();
        let callback = http.via_the_provider(&s).await;
        let pending = http.cookies.get("steward_oidc").expect("pending").clone();
        let signed = http.get(&callback).await;
        assert_eq!(signed.status, StatusCode::OK, "{name}: {}", signed.body);
        assert!(signed.body.contains("Welcome, Ana"), "{name}");
        assert!(
            !http.cookies.contains_key("steward_oidc"),
            "{name}: one callback per start"
        );
        let home = http.get(&format!("{}/dashboard", s.base)).await;
        assert_eq!(home.location.as_deref(), Some("/dashboard/me"), "{name}");
        let me = http.get(&format!("{}/dashboard/me", s.base)).await;
        assert_eq!(me.status, StatusCode::OK, "{name}");
        assert!(me.body.contains(&format!("teams:{ANA}")), "{name}");

        // The same code again, even with its state: the provider refuses it.
        let mut replay = Http::new();
        replay.cookies.insert("steward_oidc".into(), pending);
        let refused = replay.get(&callback).await;
        assert_eq!(refused.status, StatusCode::UNAUTHORIZED, "{name}");
        assert!(
            s.fake
                .refusals()
                .last()
                .expect("refused")
                .contains("already redeemed"),
            "{name}"
        );
        signed_out(&s, &mut replay).await;

        // An identity nobody paired is turned away, told to pair in chat.
        s.fake.log_in_as(Some(Person::new(ZED, "Zed")));
        let mut http = Http::new();
        let refused = http.sign_in(&s).await;
        assert_eq!(refused.status, StatusCode::FORBIDDEN, "{name}");
        assert!(refused.body.contains("not paired"), "{name}");
        assert!(refused.body.contains("/pair"), "{name}");
        signed_out(&s, &mut http).await;
    }
}

/// What a signed-in browser's own page says of who they are, and the audit
/// entry their sign-in wrote.
async fn signed_in_as(s: &Stage, http: &mut Http, stored: &str, name: &str) {
    let me = http.get(&format!("{}/dashboard/me", s.base)).await;
    assert_eq!(me.status, StatusCode::OK, "{name}: {}", me.body);
    assert!(me.body.contains(stored), "{name}: {}", me.body);
    let log = s.h.db().audit().log("default", 50).await.expect("audit");
    assert!(
        log.iter()
            .any(|e| e.action == "dashboard.sign_in" && e.actor == stored),
        "{name}: the sign-in audited under {stored}: {log:?}"
    );
}

#[tokio::test]
async fn slack_and_discord_sign_in_land_as_the_paired_person_and_refuse_the_rest() {
    for (name, db) in both_dbs().await {
        let s = stage(db).await;
        // One button per provider.
        let mut http = Http::new();
        let login = http.get(&format!("{}/dashboard/login", s.base)).await;
        for button in [
            "id=\"oidc\"",
            "Sign in with Contoso",
            "id=\"oidc-slack\"",
            "Sign in with Slack",
            "id=\"oidc-discord\"",
            "Sign in with Discord",
        ] {
            assert!(login.body.contains(button), "{name}: {button}");
        }

        // Sign in with Slack: the workspace and user claims are the Slack
        // channel's stored id.
        s.slack
            .log_in_as(Some(Person::slack(ACME, CARO_SLACK, "Caro")));
        let callback = http.via_slack(&s).await;
        let signed = http.get(&callback).await;
        assert_eq!(signed.status, StatusCode::OK, "{name}: {}", signed.body);
        assert!(signed.body.contains("Welcome, Caro"), "{name}");
        signed_in_as(&s, &mut http, &format!("slack:{ACME}:{CARO_SLACK}"), name).await;
        let asked = s.slack.authorizations();
        let last = asked.last().expect("asked");
        assert_eq!(
            last.get("code_challenge_method").map(String::as_str),
            Some("S256")
        );
        assert!(last.get("nonce").is_some_and(|n| n.len() >= 16), "{name}");

        // The same user id in another workspace is another person, not paired.
        s.slack
            .log_in_as(Some(Person::slack(OTHER_TEAM, CARO_SLACK, "Caro")));
        let mut http = Http::new();
        let callback = http.via_slack(&s).await;
        let refused = http.get(&callback).await;
        assert_eq!(
            refused.status,
            StatusCode::FORBIDDEN,
            "{name}: {}",
            refused.body
        );
        assert!(
            refused
                .body
                .contains(&format!("slack:{OTHER_TEAM}:{CARO_SLACK}"))
                && refused.body.contains("not paired"),
            "{name}: {}",
            refused.body
        );
        signed_out(&s, &mut http).await;

        // A forged state at Slack: 400, and the code is never redeemed.
        s.slack
            .log_in_as(Some(Person::slack(ACME, CARO_SLACK, "Caro")));
        let issued = s.slack.issued();
        let mut http = Http::new();
        let callback = http.via_slack(&s).await;
        let refused = http.get(&callback.replace("state=", "state=x")).await;
        assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{name}");
        assert_eq!(s.slack.issued(), issued, "{name}");
        signed_out(&s, &mut http).await;

        // A code Slack refuses (`200 {"ok": false}`, here a replayed one):
        // 401, nobody signed in.
        let mut http = Http::new();
        let callback = http.via_slack(&s).await;
        let pending = http.cookies.get("steward_oidc").expect("pending").clone();
        assert_eq!(http.get(&callback).await.status, StatusCode::OK, "{name}");
        let mut replay = Http::new();
        replay.cookies.insert("steward_oidc".into(), pending);
        let refused = replay.get(&callback).await;
        assert_eq!(
            refused.status,
            StatusCode::UNAUTHORIZED,
            "{name}: {}",
            refused.body
        );
        assert!(
            refused.body.contains("refused to redeem"),
            "{name}: {}",
            refused.body
        );
        assert!(
            s.slack
                .refusals()
                .last()
                .expect("refused")
                .contains("already redeemed"),
            "{name}"
        );
        signed_out(&s, &mut replay).await;

        // Discord: OAuth 2.0 with PKCE and state for `identify`, then who
        // the access token is of.
        s.discord
            .log_in_as(Some(DiscordUser::new(DEE_DISCORD, "dee")));
        let mut http = Http::new();
        let callback = http.via_discord(&s).await;
        let signed = http.get(&callback).await;
        assert_eq!(signed.status, StatusCode::OK, "{name}: {}", signed.body);
        assert!(signed.body.contains("Welcome, Dee"), "{name}");
        signed_in_as(&s, &mut http, &format!("discord:{DEE_DISCORD}"), name).await;
        let asked = s.discord.authorizations();
        let last = asked.last().expect("asked");
        assert_eq!(
            last.get("scope").map(String::as_str),
            Some("identify"),
            "{name}"
        );
        assert_eq!(
            last.get("code_challenge_method").map(String::as_str),
            Some("S256")
        );
        assert!(last.get("state").is_some_and(|v| v.len() >= 16), "{name}");

        // A forged state: 400, the code never redeemed.
        let issued = s.discord.issued();
        let mut http = Http::new();
        let callback = http.via_discord(&s).await;
        let refused = http.get(&callback.replace("state=", "state=x")).await;
        assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{name}");
        assert!(refused.body.contains("state does not match"), "{name}");
        assert_eq!(s.discord.issued(), issued, "{name}");
        signed_out(&s, &mut http).await;

        // An access token Discord refuses at users/@me: 401, nobody signed in.
        s.discord.revoke_next_token();
        let mut http = Http::new();
        let callback = http.via_discord(&s).await;
        let refused = http.get(&callback).await;
        assert_eq!(
            refused.status,
            StatusCode::UNAUTHORIZED,
            "{name}: {}",
            refused.body
        );
        assert!(
            refused.body.contains("would not say who you are") && refused.body.contains("401"),
            "{name}: {}",
            refused.body
        );
        assert_eq!(s.discord.unauthorized(), 1, "{name}");
        signed_out(&s, &mut http).await;

        // A Discord user nobody paired: 403, told to pair.
        s.discord
            .log_in_as(Some(DiscordUser::new(EVE_DISCORD, "eve")));
        let mut http = Http::new();
        let callback = http.via_discord(&s).await;
        let refused = http.get(&callback).await;
        assert_eq!(refused.status, StatusCode::FORBIDDEN, "{name}");
        assert!(
            refused.body.contains(&format!("discord:{EVE_DISCORD}"))
                && refused.body.contains("/pair"),
            "{name}: {}",
            refused.body
        );
        signed_out(&s, &mut http).await;

        // A sign-in started at Discord cannot be finished with Slack's
        // state: the pending cookie names the provider it started at.
        let mut http = Http::new();
        let at_discord = http.via_discord(&s).await;
        let pending = http.cookies.get("steward_oidc").expect("pending").clone();
        let mut slack = Http::new();
        let at_slack = slack.via_slack(&s).await;
        let slack_state = at_slack.split("state=").nth(1).expect("state");
        let discord_state = at_discord.split("state=").nth(1).expect("state");
        let mixed = at_slack.replace(slack_state, discord_state);
        http.cookies.insert("steward_oidc".into(), pending);
        let refused = http.get(&mixed).await;
        assert_eq!(
            refused.status,
            StatusCode::UNAUTHORIZED,
            "{name}: {}",
            refused.body
        );
        signed_out(&s, &mut http).await;
    }
}

#[tokio::test]
async fn a_regular_user_gets_403_on_every_admin_page_manages_their_own_keys_and_is_signed_out_when_revoked(
) {
    for (name, db) in both_dbs().await {
        let s = stage(db).await;
        s.fake.log_in_as(Some(Person::new(ANA, "Ana")));
        let mut http = Http::new();
        assert_eq!(http.sign_in(&s).await.status, StatusCode::OK, "{name}");
        for (path, access) in steward::dashboard::route_access() {
            let steward::dashboard::RouteAccess::SignedIn(action) = access else {
                continue;
            };
            if action.needs() != memory::authz::Capability::Administer || path.contains('{') {
                continue;
            }
            let answer = http.get(&format!("{}{path}", s.base)).await;
            // A POST-only route answers a GET 405; every page is 403.
            assert!(
                answer.status == StatusCode::FORBIDDEN
                    || answer.status == StatusCode::METHOD_NOT_ALLOWED,
                "{name}: {path} answered {}",
                answer.status
            );
        }
        let pairing = http.get(&format!("{}/dashboard/pairing", s.base)).await;
        assert_eq!(pairing.status, StatusCode::FORBIDDEN, "{name}");
        assert!(pairing.body.contains("only administrators"), "{name}");
        // Nor does the form reach it.
        let me = http.get(&format!("{}/dashboard/me", s.base)).await;
        let csrf = dashboard::field_value(&me.body, "csrf").expect("csrf");
        let code = pair_request(&s.h.turns, "777").await;
        let post = http
            .post(
                &format!("{}/dashboard/pairing/approve", s.base),
                &[("csrf", &csrf), ("code", &code), ("role", "admin")],
            )
            .await;
        assert_eq!(post.status, StatusCode::FORBIDDEN, "{name}");
        let pairing = s.h.services.pairing();
        assert!(pairing
            .resolve("default", "discord:777")
            .await
            .unwrap()
            .is_none());
        // Her own keys and delegations are hers to manage.
        let keys_url = format!("{}/dashboard/me/keys", s.base);
        assert_eq!(http.get(&keys_url).await.status, StatusCode::OK, "{name}");
        let made = http
            .post(&format!("{keys_url}/create"), &[("csrf", &csrf)])
            .await;
        assert!(made.body.contains("stw_"), "{name}: the secret, shown once");
        let ana = format!("teams:{ANA}");
        let keys = pairing.api_keys("default", Some(&ana)).await.unwrap();
        assert_eq!(keys.len(), 1, "{name}");
        let id = keys[0].key_id.clone();
        assert!(
            !http.get(&keys_url).await.body.contains("stw_"),
            "{name}: never again"
        );
        http.post(
            &format!("{keys_url}/revoke"),
            &[("csrf", &csrf), ("id", &id)],
        )
        .await;
        let keys = pairing.api_keys("default", Some(&ana)).await.unwrap();
        assert!(keys[0].revoked_at.is_some(), "{name}");
        let bo = format!("teams:{BO}");
        let add = format!("{}/dashboard/me/delegates/add", s.base);
        http.post(&add, &[("csrf", &csrf), ("delegate", &bo)]).await;
        let grants = pairing.delegations("default", Some(&ana)).await.unwrap();
        assert_eq!(
            (grants[0].principal.as_str(), grants[0].delegate.as_str()),
            (ana.as_str(), bo.as_str())
        );
        let remove = format!("{}/dashboard/me/delegates/remove", s.base);
        http.post(&remove, &[("csrf", &csrf), ("delegate", &bo)])
            .await;
        assert!(
            pairing
                .delegations("default", Some(&ana))
                .await
                .unwrap()
                .is_empty(),
            "{name}"
        );
        // Revoked: the session opens nothing any more.
        let at = s.h.now_ms();
        pairing
            .revoke("default", &format!("teams:{ANA}"), "test", at)
            .await
            .expect("revoke");
        let after = http.get(&format!("{}/dashboard/me", s.base)).await;
        assert_eq!(
            after.location.as_deref(),
            Some("/dashboard/login"),
            "{name}"
        );
    }
}

async fn wait_for(c: &Browser, css: &str) -> fantoccini::elements::Element {
    c.wait()
        .for_element(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("no {css}: {e}"))
}

async fn click(c: &Browser, css: &str) {
    wait_for(c, css)
        .await
        .click()
        .await
        .unwrap_or_else(|e| panic!("clicking {css}: {e}"));
}

async fn page_text(c: &Browser) -> String {
    wait_for(c, "body").await.text().await.expect("text")
}

async fn shot(c: &Browser, name: &str) {
    let png = c.screenshot().await.expect("screenshot");
    std::fs::write(dashboard::artifacts().join(format!("{name}.png")), png).expect("save");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_a_real_browser_a_user_sees_only_their_own_memory_and_a_second_admin_is_audited_as_themselves(
) {
    for (name, db) in both_dbs().await {
        let s = stage(db).await;
        let (ana, bo) = (format!("teams:{ANA}"), format!("teams:{BO}"));
        let records = s.h.db().records();
        for (owner, content) in [
            (ana.as_str(), "Ana prefers answers in French"),
            ("discord:999", "Dee is planning project Falcon"),
        ] {
            let r = rec(
                Scope::Personal,
                Some(owner),
                "preference",
                content,
                Status::Active,
            );
            records.insert_record(&r).await.expect("insert");
        }
        // The built-in admin looks at Ana's memory, with a reason she is shown.
        let mut admin = dashboard::Client::new(s.h.services.clone());
        admin.sign_in(dashboard::TOKEN).await;
        let csrf = admin.csrf().await;
        let look = [
            ("csrf", csrf.as_str()),
            ("user", ana.as_str()),
            ("reason", "audit ticket 42"),
        ];
        admin.post("/dashboard/memory/person", &look).await;
        let code = pair_request(&s.h.turns, "555").await;

        let driver = Chromedriver::start();
        let c = ClientBuilder::new(HttpConnector::new())
            .capabilities(driver.capabilities())
            .connect(&driver.url)
            .await
            .expect("a Chromium session");
        let walked = tokio::spawn(walk(c.clone(), s, name, code)).await;
        let _ = c.close().await;
        if let Err(e) = walked {
            std::panic::resume_unwind(e.into_panic());
        }
        let _ = bo;
    }
}

async fn walk(c: Browser, s: Stage, name: &'static str, code: String) {
    let base = s.base.clone();
    // Ana, a regular user, signs in through the provider.
    s.fake.log_in_as(Some(Person::new(ANA, "Ana")));
    c.goto(&format!("{base}/dashboard/login"))
        .await
        .expect("open");
    click(&c, "a#oidc").await;
    wait_for(&c, "section.promises").await;
    assert_eq!(
        c.current_url().await.expect("url").path(),
        "/dashboard/me",
        "{name}"
    );
    let text = page_text(&c).await;
    shot(&c, &format!("oidc-01-user-memory-{name}")).await;
    for promise in steward::oversight::PROMISES {
        assert!(
            text.contains(promise),
            "{name}: the promise {promise:?} in {text}"
        );
    }
    assert!(text.contains("Ana prefers answers in French"), "{name}");
    assert!(
        text.contains("audit ticket 42"),
        "{name}: viewed_by and its reason"
    );
    assert!(!text.contains("Falcon"), "{name}: another person's record");
    // Her navigation has no admin page, and an admin page is refused.
    let nav = wait_for(&c, "nav").await.text().await.expect("nav");
    assert!(
        !nav.contains("Pairing") && !nav.contains("Audit"),
        "{name}: {nav}"
    );
    c.goto(&format!("{base}/dashboard/memory?scope=people"))
        .await
        .expect("open");
    let text = page_text(&c).await;
    assert!(
        text.contains("Forbidden") && !text.contains("Falcon"),
        "{name}: {text}"
    );
    c.goto(&format!("{base}/dashboard/pairing"))
        .await
        .expect("open");
    assert!(
        page_text(&c).await.contains("only administrators"),
        "{name}"
    );
    shot(&c, &format!("oidc-02-user-forbidden-{name}")).await;
    // She forgets her own record from her page.
    c.goto(&format!("{base}/dashboard/me")).await.expect("open");
    click(&c, "table.mine button.danger").await;
    assert!(wait_for(&c, "#flash.ok")
        .await
        .text()
        .await
        .unwrap()
        .contains("Forgotten"));
    assert!(
        !page_text(&c)
            .await
            .contains("Ana prefers answers in French"),
        "{name}"
    );
    click(&c, "form[action='/dashboard/logout'] button").await;
    wait_for(&c, "a#oidc").await;

    // Bo, a second administrator, signs in and approves a pairing request.
    s.fake.log_in_as(Some(Person::new(BO, "Bo")));
    click(&c, "a#oidc").await;
    wait_for(&c, "form.compose").await;
    c.goto(&format!("{base}/dashboard/pairing"))
        .await
        .expect("open");
    click(&c, &format!("tr#request-{code} button.primary")).await;
    assert!(wait_for(&c, "#flash.ok")
        .await
        .text()
        .await
        .unwrap()
        .contains("discord:555"));
    shot(&c, &format!("oidc-03-second-admin-{name}")).await;
    let log = s.h.db().audit().log("default", 50).await.expect("audit");
    let approved = log
        .iter()
        .find(|e| e.action.starts_with("pairing.") && e.target.contains("555"))
        .unwrap_or_else(|| panic!("{name}: no pairing entry in {log:?}"));
    assert_eq!(
        approved.actor,
        format!("teams:{BO}"),
        "{name}: audited under Bo's id"
    );
    assert!(
        log.iter()
            .any(|e| e.action == "dashboard.sign_in" && e.actor == format!("teams:{BO}")),
        "{name}"
    );
}
