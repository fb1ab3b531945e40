//! Signing in as oneself through an OpenID Connect provider
//! (docs/channels.md, "Signing in as yourself"): the authorization code
//! flow with PKCE (S256), `state` and `nonce`.
//!
//! `/dashboard/oidc/start` sends the browser to the provider with a fresh
//! state, PKCE challenge and nonce, kept in a short-lived cookie of the
//! browser that started (so a callback from another browser, or a second
//! one, finds nothing to match). `/dashboard/oidc/callback` checks the state,
//! redeems the code with the verifier and the client secret, and believes the
//! ID token only when its signature (a key the provider publishes), issuer,
//! audience, expiry and nonce hold. The configured claim is the person's
//! platform identity (`<channel>:<value>`), looked up among paired people
//! only: an unpaired identity is refused and told to pair in chat. The
//! session is the dashboard's usual one, of that person.
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
    AuthUrl, AuthorizationCode, ClientId, ClientSecret, CsrfToken, EndpointNotSet, EndpointSet,
    ExtraTokenFields, PkceCodeChallenge, PkceCodeVerifier, RedirectUrl, Scope,
    StandardRevocableToken, StandardTokenResponse, TokenUrl,
};
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use steward_core::config::oidc::{IdentityClaim, OidcConfig};
use tokio::sync::Mutex;

/// The cookie holding a started sign-in's state, verifier and nonce.
const PENDING_COOKIE: &str = "steward_oidc";

/// How long a started sign-in may take at the provider.
const PENDING_MS: i64 = 10 * 60 * 1000;

/// The path the provider sends the browser back to.
pub const CALLBACK_PATH: &str = "/dashboard/oidc/callback";

/// The token endpoint's answer: the standard fields and the ID token.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct IdTokenField {
    id_token: String,
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
}

impl IdClaims {
    fn identity(&self, claim: IdentityClaim) -> Option<&str> {
        let value = match claim {
            IdentityClaim::Oid => self.oid.as_deref(),
            IdentityClaim::Sub => self.sub.as_deref(),
        };
        value.map(str::trim).filter(|v| !v.is_empty())
    }
}

/// The configured provider: its settings, the client secret read at start,
/// the discovery document once fetched, and the ID token check.
pub(super) struct Provider {
    cfg: OidcConfig,
    secret: String,
    http: reqwest::Client,
    discovery: Mutex<Option<Discovery>>,
    validator: TokenValidator,
}

/// Sign-in through the provider as configured: off, on, or configured but
/// unusable (the reason, shown to whoever tries).
pub(super) type Configured = Option<Result<Arc<Provider>, String>>;

/// The provider `cfg` configures, if any.
pub(super) fn configure(
    cfg: &OidcConfig,
    clock: Arc<dyn steward_core::clock::Clock>,
) -> Configured {
    let issuer = cfg
        .issuer
        .as_ref()?
        .trim()
        .trim_end_matches('/')
        .to_string();
    let provider = (|| {
        let secret = cfg.client_secret()?;
        // The provider's answers are read as they are: a redirect is never followed.
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(std::time::Duration::from_secs(10))
            .build()
            .map_err(|e| format!("oidc: no HTTP client: {e}"))?;
        let rules = TokenRules {
            app_id: cfg.client_id.trim().to_string(),
            issuer: issuer.clone(),
            openid_metadata_url: discovery_url(&issuer),
        };
        let now: adapters::teams_bot::NowMs = Arc::new(move || clock.now_ms());
        Ok(Arc::new(Provider {
            cfg: cfg.clone(),
            secret,
            validator: TokenValidator::new(rules, http.clone(), now),
            http,
            discovery: Mutex::new(None),
        }))
    })();
    if let Err(e) = &provider {
        tracing::error!(error = %e, "sign-in through the identity provider is configured but cannot be used");
    }
    Some(provider)
}

fn discovery_url(issuer: &str) -> String {
    format!("{issuer}/.well-known/openid-configuration")
}

/// Why a sign-in through the provider did not happen. Each is a page with
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
            | Refusal::NoIdentity(_) => StatusCode::UNAUTHORIZED,
        }
    }

    fn page(&self, jar: CookieJar) -> Response {
        tracing::warn!(refusal = %self, "dashboard sign-in through the identity provider refused");
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

impl Provider {
    /// The discovery document: fetched once, again after a failure.
    async fn discovery(&self) -> Result<Discovery, Refusal> {
        let mut kept = self.discovery.lock().await;
        if let Some(d) = kept.as_ref() {
            return Ok(d.clone());
        }
        let issuer = self.validator_issuer();
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

    fn validator_issuer(&self) -> &str {
        self.cfg
            .issuer
            .as_deref()
            .unwrap_or_default()
            .trim()
            .trim_end_matches('/')
    }

    fn client(&self, d: &Discovery) -> Result<Client, Refusal> {
        let bad = |what: &str, e: oauth2::url::ParseError| {
            Refusal::Unusable(format!("the {what} is not a URL: {e}"))
        };
        Ok(
            oauth2::Client::new(ClientId::new(self.cfg.client_id.trim().into()))
                .set_client_secret(ClientSecret::new(self.secret.clone()))
                .set_auth_uri(
                    AuthUrl::new(d.authorization_endpoint.clone())
                        .map_err(|e| bad("authorization endpoint", e))?,
                )
                .set_token_uri(
                    TokenUrl::new(d.token_endpoint.clone())
                        .map_err(|e| bad("token endpoint", e))?,
                )
                .set_redirect_uri(
                    RedirectUrl::new(self.cfg.redirect_url.trim().into())
                        .map_err(|e| bad("oidc.redirect_url", e))?,
                ),
        )
    }
}

fn provider(state: &DashboardState) -> Result<Arc<Provider>, Refusal> {
    match &state.oidc {
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

/// `GET /dashboard/oidc/start`: off to the provider.
pub(super) async fn start(State(state): State<DashboardState>, jar: CookieJar) -> Response {
    match begin(&state).await {
        Ok((url, pending)) => {
            let cookie = pending_cookie(pending, state.cfg.dashboard.secure_cookie);
            (jar.add(cookie), Redirect::to(&url)).into_response()
        }
        Err(refusal) => refusal.page(jar),
    }
}

/// The provider's authorization URL, and the pending cookie's value.
async fn begin(state: &DashboardState) -> Result<(String, String), Refusal> {
    let p = provider(state)?;
    let d = p.discovery().await?;
    let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
    let nonce = random_hex(16);
    let (url, csrf) = p
        .client(&d)?
        .authorize_url(CsrfToken::new_random)
        .add_scope(Scope::new("openid".into()))
        .add_scope(Scope::new("profile".into()))
        .add_extra_param("nonce", &nonce)
        .set_pkce_challenge(challenge)
        .url();
    // URL-safe values (base64url, hex, digits): none holds a dot.
    let pending = format!(
        "{}.{}.{nonce}.{}",
        csrf.secret(),
        verifier.secret(),
        state.now_ms()
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

/// The paired person the callback `back` signs in, checked step by step.
async fn person(
    state: &DashboardState,
    pending: Option<&str>,
    back: Callback,
) -> Result<pairing::User, Refusal> {
    let p = provider(state)?;
    if let Some(error) = back.error {
        let why = back
            .error_description
            .map_or(error.clone(), |d| format!("{error}: {d}"));
        return Err(Refusal::Provider(why));
    }
    let mut parts = pending.unwrap_or_default().split('.');
    let (Some(expected), Some(verifier), Some(nonce), Some(started), None) = (
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
    ) else {
        return Err(Refusal::State);
    };
    let started: i64 = started.parse().map_err(|_| Refusal::State)?;
    if state.now_ms().saturating_sub(started) > PENDING_MS {
        return Err(Refusal::State);
    }
    let (Some(code), Some(given)) = (back.code, back.state) else {
        return Err(Refusal::State);
    };
    if expected.is_empty() || !same(&given, expected) {
        return Err(Refusal::State);
    }
    let d = p.discovery().await?;
    let answer = p
        .client(&d)?
        .exchange_code(AuthorizationCode::new(code))
        .set_pkce_verifier(PkceCodeVerifier::new(verifier.into()))
        .request_async(&p.http)
        .await
        .map_err(|e| match e {
            oauth2::RequestTokenError::ServerResponse(r) => Refusal::Exchange(r.to_string()),
            other => Refusal::Exchange(other.to_string()),
        })?;
    let (claims, _) = p
        .validator
        .decode::<IdClaims>(&answer.extra_fields().id_token)
        .await
        .map_err(Refusal::Token)?;
    match claims.nonce.as_deref() {
        Some(n) if same(n, nonce) => {}
        _ => return Err(Refusal::Nonce),
    }
    let claim = p.cfg.claim;
    let value = claims
        .identity(claim)
        .ok_or(Refusal::NoIdentity(claim.name()))?;
    let stored = format!("{}:{value}", p.cfg.channel.trim());
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
