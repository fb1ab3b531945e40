//! An OpenID Connect provider at the wire, as Microsoft Entra ID (or any
//! other) speaks it to a web application: the discovery document
//! (`/.well-known/openid-configuration`), its signing keys as a JWKS (RSA,
//! the Bot Framework fake's test keys, `tests/fixtures/bot_framework/*.pem`),
//! the authorization endpoint (the test chooses who "logs in"; it redirects
//! back with a code and the state, and refuses a request without an S256
//! PKCE challenge), and the token endpoint (the client's secret, the code
//! once, the redirect URI and the PKCE verifier checked; an ID token signed
//! with `iss`, `aud`, `exp`, `iat`, `nonce`, `sub`, `oid` and `name`). A
//! [`Tamper`] makes the next ID token wrong in one way, as a forger or a
//! misconfigured provider would.
//!
//! [`FakeOidc::start_slack`] is Sign in with Slack instead: its issuer is
//! the server's root (as `https://slack.com`'s is), its endpoints are at
//! Slack's paths (`/openid/connect/authorize`, `/api/openid.connect.token`,
//! `/openid/connect/keys`), its ID tokens carry
//! `https://slack.com/team_id` and `https://slack.com/user_id`, and its
//! token endpoint answers as Slack's Web API does: `200` with `"ok": true`,
//! or `200` with `"ok": false` and the error.

use axum::extract::{Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::{Form, Json, Router};
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine;
use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

/// The application registered with the provider in these tests.
pub const CLIENT_ID: &str = "5c1f0e2a-7d4b-4c3e-9a8f-1b2c3d4e5f60";
pub const CLIENT_SECRET: &str = "oidc-test-client-secret-0123456789";
/// The Slack app's client id and secret (Basic Information → App Credentials).
pub const SLACK_CLIENT_ID: &str = "3141592653.5897932384";
pub const SLACK_CLIENT_SECRET: &str = "slack-test-client-secret-26433832";

const KID: &str = "oidc-key-1";

fn key(pem: &str) -> EncodingKey {
    EncodingKey::from_rsa_pem(pem.as_bytes()).expect("a test RSA key")
}

fn signing_key() -> EncodingKey {
    key(include_str!("../fixtures/bot_framework/issuer.pem"))
}

fn forger_key() -> EncodingKey {
    key(include_str!("../fixtures/bot_framework/forger.pem"))
}

/// Who logs in at the authorization endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Person {
    pub sub: String,
    /// Entra ID's object id (the Teams `aadObjectId`); none at Slack.
    pub oid: Option<String>,
    pub name: String,
    /// At Slack: the workspace (team) id; `sub` is the user id.
    pub slack_team: Option<String>,
}

impl Person {
    pub fn new(oid: &str, name: &str) -> Person {
        Person {
            sub: format!("sub-{oid}"),
            oid: Some(oid.into()),
            name: name.into(),
            slack_team: None,
        }
    }

    /// A Slack user `user` of workspace `team`.
    pub fn slack(team: &str, user: &str, name: &str) -> Person {
        Person {
            sub: user.into(),
            oid: None,
            name: name.into(),
            slack_team: Some(team.into()),
        }
    }
}

/// Which provider the fake is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flavour {
    /// Entra ID (or any OpenID Connect provider) under `/tenant`.
    Entra,
    /// Sign in with Slack at the root.
    Slack,
}

/// One way the next ID token is wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tamper {
    /// Signed with a key the provider never published, under its key's id.
    ForgedSignature,
    /// For another application.
    WrongAudience,
    /// From another issuer.
    WrongIssuer,
    /// Expired an hour ago.
    Expired,
    /// Carrying another sign-in's nonce.
    WrongNonce,
}

/// A code the authorization endpoint handed out.
#[derive(Debug, Clone)]
struct Grant {
    person: Person,
    redirect_uri: String,
    challenge: String,
    nonce: Option<String>,
}

struct FakeState {
    flavour: Flavour,
    client: (&'static str, &'static str),
    issuer: String,
    redirect_uri: String,
    now_secs: Box<dyn Fn() -> i64 + Send + Sync>,
    person: Mutex<Option<Person>>,
    tamper: Mutex<Option<Tamper>>,
    codes: Mutex<HashMap<String, Grant>>,
    spent: Mutex<HashSet<String>>,
    /// Every authorization request's query, as sent.
    authorizations: Mutex<Vec<HashMap<String, String>>>,
    /// Every token endpoint refusal: its `error` and description.
    refusals: Mutex<Vec<String>>,
    /// Codes redeemed for an ID token.
    issued: Mutex<Vec<String>>,
}

/// The provider on 127.0.0.1.
pub struct FakeOidc {
    /// `[oidc] issuer`.
    pub issuer: String,
    state: Arc<FakeState>,
    server: tokio::task::JoinHandle<()>,
}

impl Drop for FakeOidc {
    fn drop(&mut self) {
        self.server.abort();
    }
}

impl FakeOidc {
    /// Start it; steward's callback is `redirect_uri`; `now_secs` dates its tokens.
    pub async fn start(
        redirect_uri: &str,
        now_secs: impl Fn() -> i64 + Send + Sync + 'static,
    ) -> FakeOidc {
        FakeOidc::start_as(Flavour::Entra, redirect_uri, Box::new(now_secs)).await
    }

    /// Sign in with Slack, for the app [`SLACK_CLIENT_ID`].
    pub async fn start_slack(
        redirect_uri: &str,
        now_secs: impl Fn() -> i64 + Send + Sync + 'static,
    ) -> FakeOidc {
        FakeOidc::start_as(Flavour::Slack, redirect_uri, Box::new(now_secs)).await
    }

    async fn start_as(
        flavour: Flavour,
        redirect_uri: &str,
        now_secs: Box<dyn Fn() -> i64 + Send + Sync>,
    ) -> FakeOidc {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the fake identity provider");
        let root = format!("http://{}", listener.local_addr().expect("addr"));
        let (issuer, client) = match flavour {
            Flavour::Entra => (format!("{root}/tenant"), (CLIENT_ID, CLIENT_SECRET)),
            Flavour::Slack => (root, (SLACK_CLIENT_ID, SLACK_CLIENT_SECRET)),
        };
        let state = Arc::new(FakeState {
            flavour,
            client,
            issuer: issuer.clone(),
            redirect_uri: redirect_uri.into(),
            now_secs,
            person: Mutex::new(None),
            tamper: Mutex::new(None),
            codes: Mutex::new(HashMap::new()),
            spent: Mutex::new(HashSet::new()),
            authorizations: Mutex::new(Vec::new()),
            refusals: Mutex::new(Vec::new()),
            issued: Mutex::new(Vec::new()),
        });
        let (prefix, [authorize_path, token_path, keys_path]) = paths(flavour);
        let app = Router::new()
            .route(
                &format!("{prefix}/.well-known/openid-configuration"),
                get(discovery),
            )
            .route(&format!("{prefix}{keys_path}"), get(keys))
            .route(&format!("{prefix}{authorize_path}"), get(authorize))
            .route(&format!("{prefix}{token_path}"), post(token))
            .with_state(state.clone());
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        FakeOidc {
            issuer,
            state,
            server,
        }
    }

    /// Who logs in from now on (`None`: nobody, the endpoint answers 401).
    pub fn log_in_as(&self, person: Option<Person>) {
        *self.state.person.lock().unwrap() = person;
    }

    /// Make the next ID token wrong in this way.
    pub fn tamper_next(&self, tamper: Tamper) {
        *self.state.tamper.lock().unwrap() = Some(tamper);
    }

    /// Every authorization request's parameters.
    pub fn authorizations(&self) -> Vec<HashMap<String, String>> {
        self.state.authorizations.lock().unwrap().clone()
    }

    /// Every refusal of the token endpoint (`error: description`).
    pub fn refusals(&self) -> Vec<String> {
        self.state.refusals.lock().unwrap().clone()
    }

    /// How many ID tokens were issued.
    pub fn issued(&self) -> usize {
        self.state.issued.lock().unwrap().len()
    }
}

/// The path under the issuer, and the authorization, token and keys endpoints' paths.
fn paths(flavour: Flavour) -> (&'static str, [&'static str; 3]) {
    match flavour {
        Flavour::Entra => ("/tenant", ["/authorize", "/token", "/keys"]),
        Flavour::Slack => (
            "",
            [
                "/openid/connect/authorize",
                "/api/openid.connect.token",
                "/openid/connect/keys",
            ],
        ),
    }
}

async fn discovery(State(s): State<Arc<FakeState>>) -> Json<Value> {
    let i = &s.issuer;
    let (_, [authorize, token, keys]) = paths(s.flavour);
    Json(json!({
        "issuer": i,
        "authorization_endpoint": format!("{i}{authorize}"),
        "token_endpoint": format!("{i}{token}"),
        "jwks_uri": format!("{i}{keys}"),
        "response_types_supported": ["code"],
        "subject_types_supported": ["pairwise"],
        "id_token_signing_alg_values_supported": ["RS256"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
        "scopes_supported": ["openid", "profile", "email"],
    }))
}

async fn keys() -> Json<Value> {
    let jwk = Jwk::from_encoding_key(&signing_key(), Algorithm::RS256).expect("a JWK");
    let mut v = serde_json::to_value(jwk).expect("JWK as JSON");
    v["kid"] = json!(KID);
    v["use"] = json!("sig");
    Json(json!({ "keys": [v] }))
}

pub(crate) fn random() -> String {
    use rand::RngCore;
    let mut b = [0u8; 24];
    rand::thread_rng().fill_bytes(&mut b);
    URL_SAFE_NO_PAD.encode(b)
}

/// Back to `redirect` with `params`.
pub(crate) fn back(redirect: &str, params: &[(&str, &str)]) -> Response {
    let query = serde_urlencoded::to_string(params).expect("query");
    Redirect::to(&format!("{redirect}?{query}")).into_response()
}

async fn authorize(
    State(s): State<Arc<FakeState>>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    s.authorizations.lock().unwrap().push(q.clone());
    let get = |k: &str| q.get(k).map(String::as_str).unwrap_or_default();
    // A wrong client or redirect URI is never redirected to (RFC 6749, 4.1.2.1).
    if get("client_id") != s.client.0 || get("redirect_uri") != s.redirect_uri {
        return (StatusCode::BAD_REQUEST, "unknown client or redirect_uri").into_response();
    }
    let state = get("state");
    let refuse = |why: &str| {
        back(
            &s.redirect_uri,
            &[
                ("error", "invalid_request"),
                ("error_description", why),
                ("state", state),
            ],
        )
    };
    if get("response_type") != "code" || !get("scope").split(' ').any(|x| x == "openid") {
        return refuse("response_type=code and the openid scope are required");
    }
    if get("code_challenge_method") != "S256" || get("code_challenge").is_empty() {
        return refuse("PKCE with S256 is required");
    }
    let Some(person) = s.person.lock().unwrap().clone() else {
        return (StatusCode::UNAUTHORIZED, "nobody is logging in").into_response();
    };
    let code = random();
    s.codes.lock().unwrap().insert(
        code.clone(),
        Grant {
            person,
            redirect_uri: get("redirect_uri").into(),
            challenge: get("code_challenge").into(),
            nonce: q.get("nonce").cloned(),
        },
    );
    back(&s.redirect_uri, &[("code", &code), ("state", state)])
}

fn token_error(s: &FakeState, error: &str, why: &str) -> Response {
    s.refusals.lock().unwrap().push(format!("{error}: {why}"));
    if s.flavour == Flavour::Slack {
        // Slack's Web API: every answer `200`, a refusal `"ok": false`.
        return Json(json!({ "ok": false, "error": error })).into_response();
    }
    (
        StatusCode::BAD_REQUEST,
        Json(json!({ "error": error, "error_description": why })),
    )
        .into_response()
}

/// `client_secret_basic` (each part form-urlencoded, RFC 6749 2.3.1) or `client_secret_post`.
pub(crate) fn client_of(
    headers: &HeaderMap,
    form: &HashMap<String, String>,
) -> Option<(String, String)> {
    if let Some(basic) = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Basic "))
    {
        let decoded = String::from_utf8(STANDARD.decode(basic).ok()?).ok()?;
        let (id, secret) = decoded.split_once(':')?;
        let unescape = |x: &str| -> Option<String> {
            let pairs: Vec<(String, String)> =
                serde_urlencoded::from_str(&format!("v={x}")).ok()?;
            pairs.into_iter().next().map(|(_, v)| v)
        };
        return Some((unescape(id)?, unescape(secret)?));
    }
    Some((
        form.get("client_id")?.clone(),
        form.get("client_secret")?.clone(),
    ))
}

async fn token(
    State(s): State<Arc<FakeState>>,
    headers: HeaderMap,
    Form(form): Form<HashMap<String, String>>,
) -> Response {
    match client_of(&headers, &form) {
        Some((id, secret)) if id == s.client.0 && secret == s.client.1 => {}
        _ => return token_error(&s, "invalid_client", "client authentication failed"),
    }
    if form.get("grant_type").map(String::as_str) != Some("authorization_code") {
        return token_error(&s, "unsupported_grant_type", "only authorization_code");
    }
    let code = form.get("code").cloned().unwrap_or_default();
    // A code is good once: a second use is refused.
    if !s.spent.lock().unwrap().insert(code.clone()) {
        return token_error(&s, "invalid_grant", "the code was already redeemed");
    }
    let Some(grant) = s.codes.lock().unwrap().remove(&code) else {
        return token_error(&s, "invalid_grant", "unknown code");
    };
    if form.get("redirect_uri") != Some(&grant.redirect_uri) {
        return token_error(&s, "invalid_grant", "redirect_uri does not match");
    }
    let Some(verifier) = form.get("code_verifier") else {
        return token_error(&s, "invalid_grant", "code_verifier is missing (PKCE)");
    };
    if URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes())) != grant.challenge {
        return token_error(
            &s,
            "invalid_grant",
            "code_verifier does not match the challenge (PKCE)",
        );
    }
    let id_token = id_token(&s, &grant);
    s.issued.lock().unwrap().push(code);
    if s.flavour == Flavour::Slack {
        return Json(json!({
            "ok": true,
            "access_token": format!("xoxp-{}", random()),
            "token_type": "Bearer",
            "id_token": id_token,
        }))
        .into_response();
    }
    Json(json!({
        "access_token": random(),
        "token_type": "Bearer",
        "expires_in": 3600,
        "scope": "openid profile",
        "id_token": id_token,
    }))
    .into_response()
}

fn id_token(s: &FakeState, grant: &Grant) -> String {
    let now = (s.now_secs)();
    let tamper = s.tamper.lock().unwrap().take();
    let mut claims = json!({
        "iss": s.issuer,
        "aud": s.client.0,
        "iat": now,
        "nbf": now,
        "exp": now + 3600,
        "sub": grant.person.sub,
        "name": grant.person.name,
        "nonce": grant.nonce,
    });
    if let Some(oid) = &grant.person.oid {
        claims["oid"] = json!(oid);
    }
    if let Some(team) = &grant.person.slack_team {
        claims["auth_time"] = json!(now);
        claims["https://slack.com/user_id"] = json!(grant.person.sub);
        claims["https://slack.com/team_id"] = json!(team);
        claims["https://slack.com/team_name"] = json!(format!("Workspace {team}"));
    }
    let mut signing = signing_key();
    match tamper {
        None => {}
        Some(Tamper::ForgedSignature) => signing = forger_key(),
        Some(Tamper::WrongAudience) => claims["aud"] = json!("another-application"),
        Some(Tamper::WrongIssuer) => claims["iss"] = json!("https://login.example.com/other/v2.0"),
        Some(Tamper::Expired) => {
            claims["iat"] = json!(now - 7200);
            claims["nbf"] = json!(now - 7200);
            claims["exp"] = json!(now - 3600);
        }
        Some(Tamper::WrongNonce) => claims["nonce"] = json!("another-sign-ins-nonce"),
    }
    let mut header = Header::new(Algorithm::RS256);
    header.kid = Some(KID.into());
    jsonwebtoken::encode(&header, &claims, &signing).expect("sign the ID token")
}
