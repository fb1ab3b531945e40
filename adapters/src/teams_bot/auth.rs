//! The bearer token of each request from the Bot Framework, checked as its
//! authentication spec says ("Authentication with the Bot Connector API",
//! connector to bot): a JWT signed RS256 with a key from the `jwks_uri` of
//! the OpenID metadata document, whose issuer is the Bot Framework's, whose
//! audience is this bot's app id, and which has not expired, with five
//! minutes of clock skew. The `serviceurl` claim must be the activity's
//! `serviceUrl`, and the key must endorse the activity's channel
//! ([`Verified::admits`]); both are read once the activity is.
//!
//! Keys are fetched once and kept: again after 24 hours, and sooner when a
//! token names a key id (`kid`) the set does not hold (a rotation), but then
//! at most once every five minutes, so tokens naming made-up keys cannot
//! make steward hammer the metadata endpoint. Time is the injected clock's.

use super::NowMs;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use std::collections::HashMap;
use std::sync::Arc;
use tokio::sync::Mutex;

/// How far a token's `exp` and `nbf` may be off this machine's clock.
pub const CLOCK_SKEW_SECS: i64 = 5 * 60;

/// Keys older than this are fetched again before use.
const KEYS_MAX_AGE_MS: i64 = 24 * 60 * 60 * 1000;

/// An unknown `kid` fetches the keys again at most this often.
pub const UNKNOWN_KEY_REFRESH_MS: i64 = 5 * 60 * 1000;

/// After a failed fetch, the next is tried no sooner than this.
const FAILED_FETCH_RETRY_MS: i64 = 30 * 1000;

/// Why a request's token is not believed. Every one is a `401`, but
/// [`TokenRefusal::KeysUnavailable`], which is steward's trouble, not the caller's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenRefusal {
    #[error("missing Authorization header (expected `Bearer <token>`)")]
    Missing,
    #[error("invalid Authorization header (expected `Bearer <token>`)")]
    NotBearer,
    #[error("the bearer token is not a JWT")]
    Malformed,
    #[error("the token is not signed RS256")]
    Algorithm,
    #[error("the token names no signing key (`kid`)")]
    NoKeyId,
    #[error("the token is signed with a key the Bot Framework does not publish")]
    UnknownKey,
    #[error("invalid token signature")]
    Signature,
    #[error("the token was not issued by the Bot Framework")]
    Issuer,
    #[error("the token is not for this bot (audience)")]
    Audience,
    #[error("the token is missing its `{0}` claim")]
    MissingClaim(String),
    #[error("the token has expired")]
    Expired,
    #[error("the token is not valid yet")]
    NotYetValid,
    #[error("the token is invalid: {0}")]
    Invalid(String),
    #[error("the token's serviceurl claim is not the activity's serviceUrl")]
    ServiceUrl,
    #[error("the signing key does not endorse channel `{0}`")]
    Endorsement(String),
    #[error("the Bot Framework's signing keys cannot be fetched right now: {0}")]
    KeysUnavailable(String),
}

/// A token that holds: what the activity it came with must agree with.
#[derive(Debug, Clone)]
pub struct Verified {
    /// The `serviceurl` claim.
    service_url: Option<String>,
    /// The channels the signing key endorses (`msteams`, …).
    endorsements: Vec<String>,
}

impl Verified {
    /// Whether an activity from `channel_id` at `service_url` may be taken
    /// under this token: the claim names that service URL, and the key
    /// endorses that channel.
    pub fn admits(&self, service_url: &str, channel_id: &str) -> Result<(), TokenRefusal> {
        if self.service_url.as_deref() != Some(service_url) {
            return Err(TokenRefusal::ServiceUrl);
        }
        if !self.endorsements.iter().any(|e| e == channel_id) {
            return Err(TokenRefusal::Endorsement(channel_id.into()));
        }
        Ok(())
    }
}

/// The claims read from a token besides those `jsonwebtoken` checks: its
/// times, and the rest as the caller reads them.
#[derive(Debug, Deserialize)]
struct Claims<C> {
    exp: i64,
    #[serde(default)]
    nbf: Option<i64>,
    #[serde(flatten)]
    rest: C,
}

/// What the Bot Framework's token says of the activity it came with.
#[derive(Debug, Deserialize)]
struct BotClaims {
    #[serde(default)]
    serviceurl: Option<String>,
}

/// What the validator is told.
#[derive(Debug, Clone)]
pub struct TokenRules {
    /// The bot's app id: the audience every token must name.
    pub app_id: String,
    /// The issuer every token must name.
    pub issuer: String,
    /// The OpenID metadata document whose `jwks_uri` lists the signing keys.
    pub openid_metadata_url: String,
}

struct SigningKey {
    key: DecodingKey,
    endorsements: Vec<String>,
}

#[derive(Default)]
struct KeySet {
    keys: HashMap<String, Arc<SigningKey>>,
    /// When the keys were last fetched (ms, the injected clock).
    fetched_at: Option<i64>,
    /// When a fetch was last tried, and whether it failed.
    tried_at: Option<(i64, bool)>,
}

/// The token check, with its cache of the signing keys.
pub struct TokenValidator {
    rules: TokenRules,
    client: reqwest::Client,
    now: NowMs,
    keys: Mutex<KeySet>,
}

/// The OpenID metadata document, in part.
#[derive(Debug, Deserialize)]
struct OpenIdMetadata {
    jwks_uri: String,
}

#[derive(Debug, Deserialize)]
struct Jwks {
    keys: Vec<Jwk>,
}

/// One key of the set, as the Bot Framework publishes it (RSA, with the
/// channels it endorses).
#[derive(Debug, Deserialize)]
struct Jwk {
    #[serde(default)]
    kty: String,
    #[serde(default)]
    kid: Option<String>,
    #[serde(default)]
    n: Option<String>,
    #[serde(default)]
    e: Option<String>,
    #[serde(default)]
    endorsements: Vec<String>,
}

impl TokenValidator {
    pub fn new(rules: TokenRules, client: reqwest::Client, now: NowMs) -> TokenValidator {
        TokenValidator {
            rules,
            client,
            now,
            keys: Mutex::new(KeySet::default()),
        }
    }

    /// Check the `Authorization` header's bearer token.
    pub async fn verify(&self, authorization: Option<&str>) -> Result<Verified, TokenRefusal> {
        let value = authorization.ok_or(TokenRefusal::Missing)?.trim();
        let (scheme, token) = value.split_once(' ').ok_or(TokenRefusal::NotBearer)?;
        if !scheme.eq_ignore_ascii_case("Bearer") {
            return Err(TokenRefusal::NotBearer);
        }
        let (claims, endorsements) = self.decode::<BotClaims>(token.trim()).await?;
        Ok(Verified {
            service_url: claims.serviceurl,
            endorsements,
        })
    }

    /// Check a JWT's signature (RS256, a published key), issuer, audience,
    /// expiry and not-before (with [`CLOCK_SKEW_SECS`]) and read its claims
    /// as `C`, with the channels its key endorses. The Bot Framework's
    /// tokens and an OpenID Connect provider's ID tokens are both read here.
    pub async fn decode<C: DeserializeOwned>(
        &self,
        token: &str,
    ) -> Result<(C, Vec<String>), TokenRefusal> {
        let header = jsonwebtoken::decode_header(token).map_err(|_| TokenRefusal::Malformed)?;
        if header.alg != Algorithm::RS256 {
            return Err(TokenRefusal::Algorithm);
        }
        let kid = header.kid.ok_or(TokenRefusal::NoKeyId)?;
        let key = self.key(&kid).await?;
        let mut rules = Validation::new(Algorithm::RS256);
        // Expiry is checked below against the injected clock.
        rules.validate_exp = false;
        rules.validate_nbf = false;
        rules.set_required_spec_claims(&["exp", "iss", "aud"]);
        rules.set_issuer(&[&self.rules.issuer]);
        rules.set_audience(&[&self.rules.app_id]);
        let claims = jsonwebtoken::decode::<Claims<C>>(token, &key.key, &rules)
            .map_err(|e| {
                use jsonwebtoken::errors::ErrorKind;
                match e.kind() {
                    ErrorKind::InvalidSignature => TokenRefusal::Signature,
                    ErrorKind::InvalidIssuer => TokenRefusal::Issuer,
                    ErrorKind::InvalidAudience => TokenRefusal::Audience,
                    ErrorKind::MissingRequiredClaim(c) => TokenRefusal::MissingClaim(c.clone()),
                    ErrorKind::InvalidToken | ErrorKind::Base64(_) | ErrorKind::Json(_) => {
                        TokenRefusal::Malformed
                    }
                    other => TokenRefusal::Invalid(format!("{other:?}")),
                }
            })?
            .claims;
        let now = (self.now)().div_euclid(1000);
        if claims.exp.saturating_add(CLOCK_SKEW_SECS) < now {
            return Err(TokenRefusal::Expired);
        }
        if claims
            .nbf
            .is_some_and(|nbf| nbf.saturating_sub(CLOCK_SKEW_SECS) > now)
        {
            return Err(TokenRefusal::NotYetValid);
        }
        Ok((claims.rest, key.endorsements.clone()))
    }

    /// The signing key `kid`: from the cache, or fetched when the cache is
    /// old or does not hold it (then at most once every five minutes).
    async fn key(&self, kid: &str) -> Result<Arc<SigningKey>, TokenRefusal> {
        let mut set = self.keys.lock().await;
        let now = (self.now)();
        let stale = set
            .fetched_at
            .is_none_or(|at| now.saturating_sub(at) >= KEYS_MAX_AGE_MS);
        let missing = !set.keys.contains_key(kid);
        let may_try = match set.tried_at {
            None => true,
            Some((at, failed)) => {
                let wait = if failed {
                    FAILED_FETCH_RETRY_MS
                } else {
                    UNKNOWN_KEY_REFRESH_MS
                };
                now.saturating_sub(at) >= wait
            }
        };
        let mut failure = None;
        if (stale || missing) && may_try {
            match self.fetch().await {
                Ok(keys) => {
                    set.keys = keys;
                    set.fetched_at = Some(now);
                    set.tried_at = Some((now, false));
                }
                Err(e) => {
                    tracing::warn!(error = %e, "the Bot Framework's signing keys could not be fetched");
                    set.tried_at = Some((now, true));
                    failure = Some(e);
                }
            }
        }
        match set.keys.get(kid) {
            Some(key) => Ok(key.clone()),
            // Nothing to check against at all: steward's trouble, not a forgery.
            None if set.keys.is_empty() => Err(TokenRefusal::KeysUnavailable(
                failure.unwrap_or_else(|| "the last fetch failed".into()),
            )),
            None => Err(TokenRefusal::UnknownKey),
        }
    }

    async fn fetch(&self) -> Result<HashMap<String, Arc<SigningKey>>, String> {
        let get = |url: String| async move {
            let resp = self
                .client
                .get(&url)
                .send()
                .await
                .map_err(|e| format!("{url}: {e}"))?;
            if !resp.status().is_success() {
                return Err(format!("{url}: HTTP {}", resp.status()));
            }
            resp.bytes().await.map_err(|e| format!("{url}: {e}"))
        };
        let metadata = get(self.rules.openid_metadata_url.clone()).await?;
        let metadata: OpenIdMetadata = serde_json::from_slice(&metadata)
            .map_err(|e| format!("the OpenID metadata document: {e}"))?;
        let jwks = get(metadata.jwks_uri.clone()).await?;
        let jwks: Jwks =
            serde_json::from_slice(&jwks).map_err(|e| format!("{}: {e}", metadata.jwks_uri))?;
        let mut keys = HashMap::new();
        for jwk in jwks.keys {
            let (Some(kid), Some(n), Some(e)) = (jwk.kid, jwk.n, jwk.e) else {
                continue;
            };
            if jwk.kty != "RSA" {
                continue;
            }
            match DecodingKey::from_rsa_components(&n, &e) {
                Ok(key) => {
                    keys.insert(
                        kid,
                        Arc::new(SigningKey {
                            key,
                            endorsements: jwk.endorsements,
                        }),
                    );
                }
                Err(err) => {
                    tracing::warn!(kid, error = %err, "a published signing key is not an RSA key; skipped")
                }
            }
        }
        if keys.is_empty() {
            return Err(format!("{} lists no RSA signing key", metadata.jwks_uri));
        }
        Ok(keys)
    }
}
