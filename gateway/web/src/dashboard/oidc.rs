//! Signing in as oneself through an identity provider (docs/channels.md,
//! "Signing in as yourself"): the authorization code flow with PKCE (S256)
//! and `state` for every provider, and a `nonce` with OpenID Connect.
//!
//! Each configured provider (`[oidc]` and `[[oidc.providers]]`) is a button.
//! `/dashboard/oidc/start?provider=<id>` sends the browser to it with a
//! fresh state, PKCE challenge and nonce, kept with the provider's id in a
//! short-lived cookie of the browser that started (so a callback from
//! another browser, or a second one, finds nothing to match).
//! `/dashboard/oidc/callback` checks the state, redeems the code at that
//! provider with the verifier and the client secret, and learns who signed
//! in as the provider's kind says ([`Flow`]): from an ID token believed only
//! when its signature (a key the provider publishes), issuer, audience,
//! expiry and nonce hold (OpenID Connect, and Sign in with Slack), or from
//! Discord's `users/@me` asked with the access token. That is the person's
//! platform identity (`teams:<oid>`, `slack:<team>:<user>`,
//! `discord:<id>`), looked up among paired people only: an unpaired identity
//! is refused and told to pair in chat. The session is the dashboard's usual
//! one, of that person.
//!
//! Built on `oauth2` (the flow) and `jsonwebtoken` through the Teams bot's
//! token check (`adapters::teams_bot::auth::TokenValidator`, keys cached and
//! refreshed on rotation), both already in the tree; `openidconnect` would
//! add a second stack of key and claim types beside them.

use super::auth::{self, random_hex, same};
use super::signin::Peer;
use super::{view, DashboardState, Page};
use adapters::teams_bot::auth::{TokenRefusal, TokenRules, TokenValidator};
use axum::extract::{Query, State};
use axum::http::{header, StatusCode};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum_extra::extract::cookie::{Cookie, SameSite};
use axum_extra::extract::CookieJar;
use maud::html;
use memory::admin_text::AdminText;
use oauth2::basic::{
    BasicErrorResponse, BasicRevocationErrorResponse, BasicTokenIntrospectionResponse,
    BasicTokenType,
};
use oauth2::{
    AccessToken, AuthUrl, AuthorizationCode, ClientId, ClientSecret, CsrfToken, EndpointNotSet,
    EndpointSet, ExtraTokenFields, PkceCodeChallenge, PkceCodeVerifier, RedirectUrl, Scope,
    StandardRevocableToken, StandardTokenResponse, TokenResponse, TokenUrl,
};
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use steward_core::config::oidc::{IdentityClaim, OidcConfig, ProviderConfig, ProviderKind};
use tokio::sync::Mutex;

/// The cookie holding a started sign-in's state, verifier, nonce, start
/// time and provider.
const PENDING_COOKIE: &str = "steward_oidc";

/// How long a started sign-in may take at the provider.
const PENDING_MS: i64 = 10 * 60 * 1000;

/// The path every provider sends the browser back to.
pub const CALLBACK_PATH: &str = "/dashboard/oidc/callback";

/// The token endpoint's answer: the standard fields, and the ID token an
/// OpenID Connect provider adds (Discord sends none).
#[derive(Debug, Clone, Serialize, Deserialize)]
struct IdTokenField {
    #[serde(default)]
    id_token: Option<String>,
}

impl ExtraTokenFields for IdTokenField {}

type TokenAnswer = StandardTokenResponse<IdTokenField, BasicTokenType>;

type Client = oauth2::Client<
    BasicErrorResponse,
    TokenAnswer,
    BasicTokenIntrospectionResponse,
    StandardRevocableToken,
    BasicRevocationErrorResponse,
    EndpointSet,
    EndpointNotSet,
    EndpointNotSet,
    EndpointNotSet,
    EndpointSet,
>;

/// The provider's discovery document, in part.
#[derive(Debug, Clone, Deserialize)]
struct Discovery {
    issuer: String,
    authorization_endpoint: String,
    token_endpoint: String,
}

/// The claims of an ID token read besides those the validator checks.
#[derive(Debug, Deserialize)]
struct IdClaims {
    #[serde(default)]
    nonce: Option<String>,
    #[serde(default)]
    sub: Option<String>,
    #[serde(default)]
    oid: Option<String>,
    /// Sign in with Slack: the workspace.
    #[serde(default, rename = "https://slack.com/team_id")]
    slack_team: Option<String>,
    /// Sign in with Slack: the person in it.
    #[serde(default, rename = "https://slack.com/user_id")]
    slack_user: Option<String>,
}

/// A claim's value, when it has one.
fn present(value: Option<&String>) -> Option<&str> {
    value.map(|v| v.trim()).filter(|v| !v.is_empty())
}

/// A Slack id (`T…`, `U…`, `W…`): letters and digits only, so the stored id
/// `slack:<team>:<user>` cannot be made to read as another.
fn slack_id(value: Option<&String>) -> Option<&str> {
    present(value).filter(|v| v.chars().all(|c| c.is_ascii_alphanumeric()))
}

/// Which of the ID token's claims make the person's stored id.
#[derive(Debug, Clone)]
enum Claimed {
    /// `<channel>:<claim>` (`teams:<oid>` with Entra ID).
    Claim {
        claim: IdentityClaim,
        channel: String,
    },
    /// `slack:<team>:<user>`, as the Slack channel stores them.
    Slack,
}

impl Claimed {
    /// The stored id the claims name, or the claim that is missing.
    fn stored_id(&self, claims: &IdClaims) -> Result<String, Refusal> {
        match self {
            Claimed::Claim { claim, channel } => {
                let value = match claim {
                    IdentityClaim::Oid => present(claims.oid.as_ref()),
                    IdentityClaim::Sub => present(claims.sub.as_ref()),
                };
                let value = value.ok_or(Refusal::NoIdentity(claim.name()))?;
                Ok(format!("{channel}:{value}"))
            }
            Claimed::Slack => {
                let team = slack_id(claims.slack_team.as_ref())
                    .ok_or(Refusal::NoIdentity("https://slack.com/team_id"))?;
                let user = slack_id(claims.slack_user.as_ref())
                    .ok_or(Refusal::NoIdentity("https://slack.com/user_id"))?;
                Ok(adapters::slack::stored_id(team, user))
            }
        }
    }
}

/// An OpenID Connect provider: its issuer, which claims are the person,
/// its discovery document once fetched, and its ID tokens' check.
struct OpenId {
    issuer: String,
    claimed: Claimed,
    discovery: Mutex<Option<Discovery>>,
    validator: TokenValidator,
}

/// How a provider tells steward who signed in.
enum Flow {
    /// OpenID Connect (Entra ID, Sign in with Slack): endpoints from the
    /// discovery document, and an ID token checked by `validator`.
    OpenId(Box<OpenId>),
    /// Discord: OAuth 2.0 at configured endpoints, then `users/@me` with
    /// the access token.
    Discord {
        authorization: String,
        token: String,
        user: String,
    },
}

/// A configured provider: its client, the secret read at start, and its flow.
pub(super) struct Provider {
    id: String,
    client_id: String,
    secret: String,
    redirect_url: String,
    http: reqwest::Client,
    flow: Flow,
}

/// One button of the sign-in page: a provider as configured, or why it
/// cannot be used (shown to whoever tries).
pub(super) struct Configured {
    pub(super) id: String,
    pub(super) name: String,
    provider: Result<Arc<Provider>, String>,
}

impl Configured {
    /// Whether its button is shown.
    pub(super) fn usable(&self) -> bool {
        self.provider.is_ok()
    }

    /// Where its button goes.
    pub(super) fn start_url(&self) -> String {
        format!("/dashboard/oidc/start?provider={}", self.id)
    }

    /// Its button's element id: `oidc` for the `[oidc]` section's own.
    pub(super) fn button_id(&self) -> String {
        if self.id == steward_core::config::oidc::SECTION_PROVIDER_ID {
            self.id.clone()
        } else {
            format!("oidc-{}", self.id)
        }
    }
}

/// Every provider `cfg` configures, in the sign-in page's order.
pub(super) fn configure(
    cfg: &OidcConfig,
    clock: &Arc<dyn steward_core::clock::Clock>,
) -> Vec<Configured> {
    cfg.in_use()
        .iter()
        .map(|p| {
            let provider = provider_of(p, clock);
            if let Err(e) = &provider {
                tracing::error!(provider = %p.id(), error = %e, "sign-in through an identity provider is configured but cannot be used");
            }
            Configured {
                id: p.id(),
                name: p.name(),
                provider,
            }
        })
        .collect()
}

fn provider_of(
    p: &ProviderConfig,
    clock: &Arc<dyn steward_core::clock::Clock>,
) -> Result<Arc<Provider>, String> {
    let secret = p.client_secret()?;
    // The provider's answers are read as they are: a redirect is never followed.
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(std::time::Duration::from_secs(10))
        .build()
        .map_err(|e| format!("oidc: no HTTP client: {e}"))?;
    let flow = match (p.kind, p.issuer()) {
        (ProviderKind::Discord, _) => {
            let [authorization, token, user] = p.discord_urls();
            Flow::Discord {
                authorization,
                token,
                user,
            }
        }
        (_, None) => return Err(format!("{}: no issuer", p.id())),
        (kind, Some(issuer)) => {
            let claimed = match kind {
                ProviderKind::Slack => Claimed::Slack,
                _ => Claimed::Claim {
                    claim: p.claim.unwrap_or(IdentityClaim::Sub),
                    channel: p.channel.as_deref().unwrap_or_default().trim().to_string(),
                },
            };
            let rules = TokenRules {
                app_id: p.client_id.trim().to_string(),
                issuer: issuer.clone(),
                openid_metadata_url: discovery_url(&issuer),
            };
            let clock = clock.clone();
            let now: adapters::teams_bot::NowMs = Arc::new(move || clock.now_ms());
            Flow::OpenId(Box::new(OpenId {
                validator: TokenValidator::new(rules, http.clone(), now),
                issuer,
                claimed,
                discovery: Mutex::new(None),
            }))
        }
    };
    Ok(Arc::new(Provider {
        id: p.id(),
        client_id: p.client_id.trim().to_string(),
        secret,
        redirect_url: p.redirect_url.trim().to_string(),
        http,
        flow,
    }))
}

fn discovery_url(issuer: &str) -> String {
    format!("{issuer}/.well-known/openid-configuration")
}

/// Why a sign-in through a provider did not happen. Each is a page with
/// its status; nothing is signed in.
#[derive(Debug, thiserror::Error)]
enum Refusal {
    #[error("Sign-in through an identity provider is not configured here.")]
    Off,
    #[error("Sign-in through the identity provider is configured but cannot be used: {0}")]
    Unusable(String),
    #[error("The identity provider cannot be reached right now: {0}. Please try again shortly.")]
    Unreachable(String),
    #[error("The identity provider did not sign you in: {0}.")]
    Provider(String),
    #[error("This sign-in was not started in this browser, or was already used or timed out (the state does not match). Start again from the sign-in page.")]
    State,
    #[error("The identity provider refused to redeem the sign-in: {0}.")]
    Exchange(String),
    #[error("The identity token was refused: {0}.")]
    Token(TokenRefusal),
    #[error("The identity token was refused: it was not issued for this sign-in (nonce).")]
    Nonce,
    #[error("The identity provider would not say who you are: {0}.")]
    Profile(String),
    #[error("The identity token has no `{0}` claim, which is how steward knows who you are.")]
    NoIdentity(&'static str),
    #[error("You ({0}) are not paired with steward yet. Send /pair to steward in a direct message on your chat platform, have an administrator approve the code, then sign in again.")]
    Unpaired(String),
}

impl Refusal {
    fn status(&self) -> StatusCode {
        match self {
            Refusal::Off => StatusCode::NOT_FOUND,
            Refusal::Unusable(_) | Refusal::Unreachable(_) => StatusCode::SERVICE_UNAVAILABLE,
            Refusal::State => StatusCode::BAD_REQUEST,
            Refusal::Unpaired(_) => StatusCode::FORBIDDEN,
            Refusal::Provider(_)
            | Refusal::Exchange(_)
            | Refusal::Token(_)
            | Refusal::Nonce
            | Refusal::Profile(_)
            | Refusal::NoIdentity(_) => StatusCode::UNAUTHORIZED,
        }
    }

    fn page(&self, jar: CookieJar) -> Response {
        tracing::warn!(refusal = %self, "dashboard sign-in through an identity provider refused");
        let title = match self {
            Refusal::Unpaired(_) => "Not paired yet",
            _ => "Not signed in",
        };
        (
            self.status(),
            jar,
            view::message_page(title, &self.to_string()),
        )
            .into_response()
    }
}

/// An answer's body, cut short for a refusal's page.
fn gist(body: &str) -> String {
    body.chars().take(200).collect()
}

impl Provider {
    /// The discovery document: fetched once, again after a failure.
    async fn discovery(
        &self,
        issuer: &str,
        kept: &Mutex<Option<Discovery>>,
    ) -> Result<Discovery, Refusal> {
        let mut kept = kept.lock().await;
        if let Some(d) = kept.as_ref() {
            return Ok(d.clone());
        }
        let url = discovery_url(issuer);
        let unreachable = |e: String| Refusal::Unreachable(format!("{url}: {e}"));
        let resp = self
            .http
            .get(&url)
            .send()
            .await
            .map_err(|e| unreachable(e.to_string()))?;
        if !resp.status().is_success() {
            return Err(unreachable(format!("HTTP {}", resp.status())));
        }
        let d: Discovery = resp.json().await.map_err(|e| unreachable(e.to_string()))?;
        // OpenID Connect Discovery 1.0, 4.3: the document names the issuer it was asked of.
        if d.issuer.trim_end_matches('/') != issuer {
            return Err(unreachable(format!(
                "the document names the issuer {}, not {issuer}",
                d.issuer
            )));
        }
        *kept = Some(d.clone());
        Ok(d)
    }

    /// The authorization and token endpoints.
    async fn endpoints(&self) -> Result<(String, String), Refusal> {
        match &self.flow {
            Flow::OpenId(o) => {
                let d = self.discovery(&o.issuer, &o.discovery).await?;
                Ok((d.authorization_endpoint, d.token_endpoint))
            }
            Flow::Discord {
                authorization,
                token,
                ..
            } => Ok((authorization.clone(), token.clone())),
        }
    }

    async fn client(&self) -> Result<Client, Refusal> {
        let (authorization, token) = self.endpoints().await?;
        let bad = |what: &str, e: oauth2::url::ParseError| {
            Refusal::Unusable(format!("the {what} is not a URL: {e}"))
        };
        Ok(oauth2::Client::new(ClientId::new(self.client_id.clone()))
            .set_client_secret(ClientSecret::new(self.secret.clone()))
            .set_auth_uri(
                AuthUrl::new(authorization).map_err(|e| bad("authorization endpoint", e))?,
            )
            .set_token_uri(TokenUrl::new(token).map_err(|e| bad("token endpoint", e))?)
            .set_redirect_uri(
                RedirectUrl::new(self.redirect_url.clone()).map_err(|e| bad("redirect_url", e))?,
            ))
    }

    /// The stored id of the person `answer` (the token endpoint's) names.
    async fn stored_id(&self, answer: &TokenAnswer, nonce: &str) -> Result<String, Refusal> {
        match &self.flow {
            Flow::OpenId(o) => {
                let id_token = answer.extra_fields().id_token.as_deref().ok_or_else(|| {
                    Refusal::Exchange("the answer holds no ID token (id_token)".into())
                })?;
                let (claims, _) = o
                    .validator
                    .decode::<IdClaims>(id_token)
                    .await
                    .map_err(Refusal::Token)?;
                match claims.nonce.as_deref() {
                    Some(n) if same(n, nonce) => {}
                    _ => return Err(Refusal::Nonce),
                }
                o.claimed.stored_id(&claims)
            }
            Flow::Discord { user, .. } => self.discord_user(user, answer.access_token()).await,
        }
    }

    /// `discord:<id>` of the user Discord's `users/@me` says `token` is of.
    async fn discord_user(&self, url: &str, token: &AccessToken) -> Result<String, Refusal> {
        #[derive(Deserialize)]
        struct Me {
            id: String,
        }
        let resp = self
            .http
            .get(url)
            .bearer_auth(token.secret())
            .send()
            .await
            .map_err(|e| Refusal::Unreachable(format!("{url}: {e}")))?;
        let status = resp.status();
        let body = resp
            .text()
            .await
            .map_err(|e| Refusal::Unreachable(format!("{url}: {e}")))?;
        if !status.is_success() {
            return Err(Refusal::Profile(format!("HTTP {status}: {}", gist(&body))));
        }
        let me: Me = serde_json::from_str(&body)
            .map_err(|e| Refusal::Profile(format!("the answer is not a user: {e}")))?;
        // A snowflake: digits, as the Discord channel stores them.
        let id = me.id.trim();
        if id.is_empty() || !id.bytes().all(|b| b.is_ascii_digit()) {
            return Err(Refusal::NoIdentity("id"));
        }
        Ok(format!("{}:{id}", adapters::discord::CHANNEL))
    }
}

/// The provider `id`, or the first one configured.
fn provider(state: &DashboardState, id: Option<&str>) -> Result<Arc<Provider>, Refusal> {
    let found = match id {
        Some(id) => state.oidc.iter().find(|c| c.id == id),
        None => state.oidc.first(),
    };
    match found.map(|c| &c.provider) {
        None => Err(Refusal::Off),
        Some(Err(e)) => Err(Refusal::Unusable(e.clone())),
        Some(Ok(p)) => Ok(p.clone()),
    }
}

/// The pending-sign-in cookie: sent back on the provider's redirect to the
/// callback (a top-level navigation from another site, so `Lax`), to no
/// other path.
fn pending_cookie(value: String, secure: bool) -> Cookie<'static> {
    Cookie::build((PENDING_COOKIE, value))
        .http_only(true)
        .same_site(SameSite::Lax)
        .path("/dashboard/oidc")
        .secure(secure)
        .build()
}

/// Which provider a sign-in starts with.
#[derive(Debug, Deserialize)]
pub(super) struct Start {
    provider: Option<String>,
}

/// `GET /dashboard/oidc/start?provider=<id>`: off to the provider (the
/// first one configured when none is named).
pub(super) async fn start(
    State(state): State<DashboardState>,
    jar: CookieJar,
    Query(start): Query<Start>,
) -> Response {
    match begin(&state, start.provider.as_deref()).await {
        Ok((url, pending)) => {
            let cookie = pending_cookie(pending, state.cfg.dashboard.secure_cookie);
            (jar.add(cookie), Redirect::to(&url)).into_response()
        }
        Err(refusal) => refusal.page(jar),
    }
}

/// The provider's authorization URL, and the pending cookie's value.
async fn begin(state: &DashboardState, id: Option<&str>) -> Result<(String, String), Refusal> {
    let p = provider(state, id)?;
    let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
    let nonce = random_hex(16);
    let client = p.client().await?;
    let ask = client
        .authorize_url(CsrfToken::new_random)
        .set_pkce_challenge(challenge);
    let ask = match p.flow {
        Flow::OpenId(_) => ask
            .add_scope(Scope::new("openid".into()))
            .add_scope(Scope::new("profile".into()))
            .add_extra_param("nonce", &nonce),
        // OAuth 2.0 only: who the token is of is asked of `users/@me`.
        Flow::Discord { .. } => ask.add_scope(Scope::new("identify".into())),
    };
    let (url, csrf) = ask.url();
    // URL-safe values (base64url, hex, digits, a provider id): none holds a dot.
    let pending = format!(
        "{}.{}.{nonce}.{}.{}",
        csrf.secret(),
        verifier.secret(),
        state.now_ms(),
        p.id
    );
    Ok((url.to_string(), pending))
}

/// What the provider sends back.
#[derive(Debug, Deserialize)]
pub(super) struct Callback {
    code: Option<String>,
    state: Option<String>,
    error: Option<String>,
    error_description: Option<String>,
}

/// `GET /dashboard/oidc/callback`: the person, signed in — or the refusal.
pub(super) async fn callback(
    State(state): State<DashboardState>,
    peer: Peer,
    jar: CookieJar,
    Query(back): Query<Callback>,
) -> Page {
    // One callback per start, whatever it brings.
    let pending = jar.get(PENDING_COOKIE).map(|c| c.value().to_string());
    let jar = jar.remove(pending_cookie(String::new(), false));
    if let Err(wait) = state.sign_in.check(peer) {
        return Ok((
            StatusCode::TOO_MANY_REQUESTS,
            [(header::RETRY_AFTER, wait.to_string())],
            jar,
            view::message_page("Not signed in", super::TOO_MANY_ATTEMPTS),
        )
            .into_response());
    }
    let user = match person(&state, pending.as_deref(), back).await {
        Ok(user) => user,
        Err(refusal) => return Ok(refusal.page(jar)),
    };
    let cookie = auth::open_session(&state, &user.user_id, "").await?;
    state
        .db()
        .audit()
        .append(
            state.org(),
            &user.user_id,
            "dashboard.sign_in",
            "dashboard",
            &AdminText::empty(),
            state.now_ms(),
        )
        .await?;
    Ok((jar.add(cookie), signed_in_page(&user.name)).into_response())
}

/// A started sign-in, as its cookie keeps it.
struct Pending<'a> {
    state: &'a str,
    verifier: &'a str,
    nonce: &'a str,
    started: i64,
    provider: &'a str,
}

impl Pending<'_> {
    fn read(value: &str) -> Option<Pending<'_>> {
        let mut parts = value.split('.');
        let (Some(state), Some(verifier), Some(nonce), Some(started), Some(provider), None) = (
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
        ) else {
            return None;
        };
        Some(Pending {
            state,
            verifier,
            nonce,
            started: started.parse().ok()?,
            provider,
        })
    }
}

/// The paired person the callback `back` signs in, checked step by step.
async fn person(
    state: &DashboardState,
    pending: Option<&str>,
    back: Callback,
) -> Result<pairing::User, Refusal> {
    if state.oidc.is_empty() {
        return Err(Refusal::Off);
    }
    if let Some(error) = back.error {
        let why = back
            .error_description
            .map_or(error.clone(), |d| format!("{error}: {d}"));
        return Err(Refusal::Provider(why));
    }
    let pending = Pending::read(pending.unwrap_or_default()).ok_or(Refusal::State)?;
    if state.now_ms().saturating_sub(pending.started) > PENDING_MS {
        return Err(Refusal::State);
    }
    let (Some(code), Some(given)) = (back.code, back.state) else {
        return Err(Refusal::State);
    };
    if pending.state.is_empty() || !same(&given, pending.state) {
        return Err(Refusal::State);
    }
    let p = provider(state, Some(pending.provider))?;
    let answer = p
        .client()
        .await?
        .exchange_code(AuthorizationCode::new(code))
        .set_pkce_verifier(PkceCodeVerifier::new(pending.verifier.into()))
        .request_async(&p.http)
        .await
        .map_err(|e| match e {
            oauth2::RequestTokenError::ServerResponse(r) => Refusal::Exchange(r.to_string()),
            // Sign in with Slack answers a refusal `200 {"ok": false, "error": …}`.
            oauth2::RequestTokenError::Parse(_, body) => Refusal::Exchange(format!(
                "the answer is not a token: {}",
                gist(&String::from_utf8_lossy(&body))
            )),
            other => Refusal::Exchange(other.to_string()),
        })?;
    let stored = p.stored_id(&answer, pending.nonce).await?;
    match state.pairing().resolve(state.org(), &stored).await {
        Ok(Some(user)) => Ok(user),
        Ok(None) => Err(Refusal::Unpaired(stored)),
        Err(e) => Err(Refusal::Unreachable(format!("the pairing store: {e}"))),
    }
}

/// Signed in: on to the dashboard. The session cookie is `SameSite=Strict`,
/// which a browser withholds on a redirect chain that began at the
/// provider's site, so the next page is reached from this one, same-site.
pub(super) fn signed_in_page(name: &str) -> Html<String> {
    Html(
        view::bare(
            "Signed in",
            html! {
                meta http-equiv="refresh" content="0; url=/dashboard";
                div.card {
                    h1 { "Signed in" }
                    p { "Welcome, " (name) "." }
                    p { a id="continue" href="/dashboard" { "Continue to the dashboard" } }
                }
            },
        )
        .into_string(),
    )
}
