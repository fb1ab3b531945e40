//! Discord's OAuth 2.0 at the wire, as it speaks to a web application that
//! signs people in (Discord has no OpenID Connect): the authorization
//! endpoint (`/oauth2/authorize`: the test chooses who "logs in"; it
//! redirects back with a code and the state, and refuses a request without
//! the `identify` scope or an S256 PKCE challenge), the token endpoint
//! (`/api/oauth2/token`: the client's secret, the code once, the redirect
//! URI and the PKCE verifier checked; an access token for `identify`), and
//! `GET /api/users/@me` with that token as a bearer (the user as Discord
//! describes them, string snowflake `id` first; any other token is
//! `401 {"message": "401: Unauthorized", "code": 0}`).

use crate::fake_oidc::{back, client_of, random};
use axum::extract::{Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Form, Json, Router};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

/// The Discord application registered in these tests.
pub const DISCORD_CLIENT_ID: &str = "1234567890123456789";
pub const DISCORD_CLIENT_SECRET: &str = "discord-test-client-secret-27182818";

/// A Discord user who logs in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiscordUser {
    pub id: u64,
    pub username: String,
}

impl DiscordUser {
    pub fn new(id: u64, username: &str) -> DiscordUser {
        DiscordUser {
            id,
            username: username.into(),
        }
    }
}

#[derive(Debug, Clone)]
struct Grant {
    user: DiscordUser,
    redirect_uri: String,
    challenge: String,
}

#[derive(Default)]
struct FakeState {
    redirect_uri: String,
    user: Mutex<Option<DiscordUser>>,
    /// The next access token issued is refused at `users/@me` (revoked).
    revoke_next: Mutex<bool>,
    codes: Mutex<HashMap<String, Grant>>,
    spent: Mutex<HashSet<String>>,
    /// Live access tokens and whose they are.
    tokens: Mutex<HashMap<String, DiscordUser>>,
    authorizations: Mutex<Vec<HashMap<String, String>>>,
    refusals: Mutex<Vec<String>>,
    /// How many codes were redeemed for a token.
    issued: Mutex<usize>,
    /// How many `users/@me` requests were refused.
    unauthorized: Mutex<usize>,
}

/// Discord's OAuth endpoints on 127.0.0.1.
pub struct FakeDiscordOAuth {
    /// The server's root (`https://discord.com` in production).
    pub base: String,
    state: Arc<FakeState>,
    server: tokio::task::JoinHandle<()>,
}

impl Drop for FakeDiscordOAuth {
    fn drop(&mut self) {
        self.server.abort();
    }
}

impl FakeDiscordOAuth {
    /// Start it; steward's callback is `redirect_uri`.
    pub async fn start(redirect_uri: &str) -> FakeDiscordOAuth {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the fake Discord");
        let base = format!("http://{}", listener.local_addr().expect("addr"));
        let state = Arc::new(FakeState {
            redirect_uri: redirect_uri.into(),
            ..Default::default()
        });
        let app = Router::new()
            .route("/oauth2/authorize", get(authorize))
            .route("/api/oauth2/token", post(token))
            .route("/api/users/@me", get(me))
            .with_state(state.clone());
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        FakeDiscordOAuth {
            base,
            state,
            server,
        }
    }

    /// `oidc.providers[].authorization_url`.
    pub fn authorization_url(&self) -> String {
        format!("{}/oauth2/authorize", self.base)
    }

    /// `oidc.providers[].token_url`.
    pub fn token_url(&self) -> String {
        format!("{}/api/oauth2/token", self.base)
    }

    /// `oidc.providers[].user_url`.
    pub fn user_url(&self) -> String {
        format!("{}/api/users/@me", self.base)
    }

    /// Who logs in from now on (`None`: nobody, the endpoint answers 401).
    pub fn log_in_as(&self, user: Option<DiscordUser>) {
        *self.state.user.lock().unwrap() = user;
    }

    /// The next access token is revoked as soon as it is issued.
    pub fn revoke_next_token(&self) {
        *self.state.revoke_next.lock().unwrap() = true;
    }

    /// Every authorization request's parameters.
    pub fn authorizations(&self) -> Vec<HashMap<String, String>> {
        self.state.authorizations.lock().unwrap().clone()
    }

    /// Every refusal of the token endpoint (`error: description`).
    pub fn refusals(&self) -> Vec<String> {
        self.state.refusals.lock().unwrap().clone()
    }

    /// How many codes were redeemed.
    pub fn issued(&self) -> usize {
        *self.state.issued.lock().unwrap()
    }

    /// How many `users/@me` requests were refused.
    pub fn unauthorized(&self) -> usize {
        *self.state.unauthorized.lock().unwrap()
    }
}

async fn authorize(
    State(s): State<Arc<FakeState>>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    s.authorizations.lock().unwrap().push(q.clone());
    let get = |k: &str| q.get(k).map(String::as_str).unwrap_or_default();
    if get("client_id") != DISCORD_CLIENT_ID || get("redirect_uri") != s.redirect_uri {
        return (StatusCode::BAD_REQUEST, "Invalid OAuth2 redirect_uri").into_response();
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
    if get("response_type") != "code" || !get("scope").split(' ').any(|x| x == "identify") {
        return refuse("response_type=code and the identify scope are required");
    }
    if get("code_challenge_method") != "S256" || get("code_challenge").is_empty() {
        return refuse("PKCE with S256 is required");
    }
    let Some(user) = s.user.lock().unwrap().clone() else {
        return (StatusCode::UNAUTHORIZED, "nobody is logging in").into_response();
    };
    let code = random();
    s.codes.lock().unwrap().insert(
        code.clone(),
        Grant {
            user,
            redirect_uri: get("redirect_uri").into(),
            challenge: get("code_challenge").into(),
        },
    );
    back(&s.redirect_uri, &[("code", &code), ("state", state)])
}

fn token_error(s: &FakeState, error: &str, why: &str) -> Response {
    s.refusals.lock().unwrap().push(format!("{error}: {why}"));
    (
        StatusCode::BAD_REQUEST,
        Json(json!({ "error": error, "error_description": why })),
    )
        .into_response()
}

async fn token(
    State(s): State<Arc<FakeState>>,
    headers: HeaderMap,
    Form(form): Form<HashMap<String, String>>,
) -> Response {
    match client_of(&headers, &form) {
        Some((id, secret)) if id == DISCORD_CLIENT_ID && secret == DISCORD_CLIENT_SECRET => {}
        _ => return token_error(&s, "invalid_client", "client authentication failed"),
    }
    if form.get("grant_type").map(String::as_str) != Some("authorization_code") {
        return token_error(&s, "unsupported_grant_type", "only authorization_code");
    }
    let code = form.get("code").cloned().unwrap_or_default();
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
    let access = random();
    let revoked = std::mem::take(&mut *s.revoke_next.lock().unwrap());
    if !revoked {
        s.tokens.lock().unwrap().insert(access.clone(), grant.user);
    }
    *s.issued.lock().unwrap() += 1;
    Json(json!({
        "access_token": access,
        "token_type": "Bearer",
        "expires_in": 604_800,
        "refresh_token": random(),
        "scope": "identify",
    }))
    .into_response()
}

async fn me(State(s): State<Arc<FakeState>>, headers: HeaderMap) -> Response {
    let token = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or_default();
    let Some(user) = s.tokens.lock().unwrap().get(token).cloned() else {
        *s.unauthorized.lock().unwrap() += 1;
        return (
            StatusCode::UNAUTHORIZED,
            Json(json!({ "message": "401: Unauthorized", "code": 0 })),
        )
            .into_response();
    };
    let body: Value = json!({
        "id": user.id.to_string(),
        "username": user.username,
        "discriminator": "0",
        "global_name": user.username,
        "avatar": null,
        "mfa_enabled": false,
        "locale": "en-GB",
        "flags": 0,
        "premium_type": 0,
        "public_flags": 0,
    });
    Json(body).into_response()
}
