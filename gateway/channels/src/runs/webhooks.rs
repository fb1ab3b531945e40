//! `POST /hooks/<name>`: a `[[webhooks]]` entry's signed requests, each a run
//! under `webhook-system`. Signed as the Standard Webhooks specification
//! says (docs/runs.md): `webhook-id` (the delivery's id, taken
//! once), `webhook-timestamp` (Unix seconds, at most five minutes off) and
//! `webhook-signature: v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<raw
//! body>">` — a space-separated list during a secret's rotation, any one
//! valid being enough — with the key the webhook's `whsec_` secret encodes.
//! The MAC covers the id, so a replay under a new id fails it. Each
//! signature is checked in constant time over the raw bytes before anything
//! is parsed or stored; the body reaches the model only as framed data.
//! (The `standardwebhooks` crate 1.0.1 checks the timestamp against the wall
//! clock, not the injected `Clock` every front-end reads, so the scheme's few
//! lines are here, over `hmac`, `sha2` and `base64`, and tested with the
//! specification's published vector.)

use super::{RunError, Runner, Start};
use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use governor::clock::Clock as _;
use governor::middleware::NoOpMiddleware;
use governor::nanos::Nanos;
use governor::state::keyed::DashMapStateStore;
use governor::{Quota, RateLimiter};
use hmac::{Hmac, Mac};
use http_body_util::{BodyExt, Limited};
use memory::run::Trigger;
use sha2::Sha256;
use std::num::NonZeroU32;
use std::sync::Arc;
use steward_core::clock::GovernorClock;
use steward_core::config::{webhook_key, SecretError};

/// The delivery's id: the idempotency key, covered by the MAC.
pub const ID: &str = "webhook-id";
pub const TIMESTAMP: &str = "webhook-timestamp";
pub const SIGNATURE: &str = "webhook-signature";
/// The version tag of an HMAC-SHA256 signature (the specification's `v1`).
const V1: &str = "v1";

/// The largest body a webhook takes.
pub const MAX_BODY_BYTES: usize = 64 * 1024;
/// How far a request's timestamp may be from the clock, in seconds.
pub const TOLERANCE_SECS: i64 = 300;
/// The longest delivery id kept.
pub const MAX_DELIVERY_CHARS: usize = 200;

/// Why a request was refused before it ran; each is one status.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WebhookRefusal {
    #[error("no webhook is named `{0}`")]
    Unknown(String),
    #[error("request body is larger than {MAX_BODY_BYTES} bytes")]
    TooLarge,
    #[error("{0}")]
    Unsigned(&'static str),
    #[error("the request's timestamp is more than {TOLERANCE_SECS} s from the server's clock")]
    Stale,
    #[error("delivery `{0}` was already received")]
    Repeated(String),
    #[error("too many requests for this webhook; retry in {0} s (rate_limit.webhook_per_minute)")]
    TooMany(u64),
    #[error("{0}")]
    Bad(String),
    /// The run cannot start now (the store is away, its skill is not in
    /// force); the same delivery may be sent again.
    #[error("{0}")]
    Unavailable(String),
}

impl WebhookRefusal {
    pub fn status(&self) -> StatusCode {
        match self {
            WebhookRefusal::Unknown(_) => StatusCode::NOT_FOUND,
            WebhookRefusal::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            WebhookRefusal::Unsigned(_) | WebhookRefusal::Stale => StatusCode::UNAUTHORIZED,
            WebhookRefusal::Repeated(_) => StatusCode::CONFLICT,
            WebhookRefusal::TooMany(_) => StatusCode::TOO_MANY_REQUESTS,
            WebhookRefusal::Bad(_) => StatusCode::BAD_REQUEST,
            WebhookRefusal::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
        }
    }
}

impl IntoResponse for WebhookRefusal {
    fn into_response(self) -> Response {
        let mut res = (
            self.status(),
            Json(serde_json::json!({ "error": self.to_string() })),
        )
            .into_response();
        if let WebhookRefusal::TooMany(secs) = self {
            res.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        res
    }
}

/// A request whose signature holds: its delivery id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signed {
    pub delivery: String,
}

/// The MAC of one delivery: `"<id>.<timestamp>.<body>"` under `key`.
fn mac(
    key: &[u8],
    id: &str,
    timestamp: &str,
    body: &[u8],
) -> Result<Hmac<Sha256>, hmac::digest::InvalidLength> {
    let mut mac = Hmac::<Sha256>::new_from_slice(key)?;
    mac.update(id.as_bytes());
    mac.update(b".");
    mac.update(timestamp.as_bytes());
    mac.update(b".");
    mac.update(body);
    Ok(mac)
}

/// `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">` with the key of
/// `secret` (`whsec_<base64>`): what a sender puts in `webhook-signature`.
pub fn sign(secret: &str, id: &str, timestamp: i64, body: &[u8]) -> Result<String, SecretError> {
    let key = webhook_key(secret)?;
    let tag = mac(&key, id, &timestamp.to_string(), body)
        .map_err(|_| SecretError::Length(key.len()))?
        .finalize();
    Ok(format!("{V1},{}", BASE64.encode(tag.into_bytes())))
}

/// Check a request's headers against the webhook's signing `key` and the
/// clock (`now`, Unix seconds): each `v1` signature of the list in constant
/// time over `"<id>.<timestamp>.<body>"` (one valid is enough), then the
/// timestamp's age, then the id's form.
pub fn verify(
    key: &[u8],
    headers: &HeaderMap,
    body: &[u8],
    now: i64,
) -> Result<Signed, WebhookRefusal> {
    let text = |name: &'static str, missing: &'static str| {
        headers
            .get(name)
            .ok_or(WebhookRefusal::Unsigned(missing))?
            .to_str()
            .map(str::trim)
            .map_err(|_| WebhookRefusal::Unsigned(missing))
    };
    let signatures = text(
        SIGNATURE,
        "missing or unreadable webhook-signature header (v1,<base64>, space-separated)",
    )?;
    let timestamp = text(
        TIMESTAMP,
        "missing or unreadable webhook-timestamp header (Unix seconds)",
    )?;
    let delivery = text(ID, "missing or unreadable webhook-id header")?;
    let expected = mac(key, delivery, timestamp, body)
        .map_err(|_| WebhookRefusal::Unsigned("invalid signature"))?;
    let holds = signatures
        .split(' ')
        .filter_map(|s| s.split_once(','))
        .filter(|(version, _)| *version == V1)
        .filter_map(|(_, b64)| BASE64.decode(b64).ok())
        .any(|given| expected.clone().verify_slice(&given).is_ok());
    if !holds {
        return Err(WebhookRefusal::Unsigned("invalid signature"));
    }
    let at: i64 = timestamp
        .parse()
        .map_err(|_| WebhookRefusal::Unsigned("webhook-timestamp is not Unix seconds"))?;
    if at.abs_diff(now) > TOLERANCE_SECS.unsigned_abs() {
        return Err(WebhookRefusal::Stale);
    }
    if delivery.is_empty()
        || delivery.chars().count() > MAX_DELIVERY_CHARS
        || delivery.chars().any(char::is_control)
    {
        return Err(WebhookRefusal::Bad(format!(
            "webhook-id must be 1 to {MAX_DELIVERY_CHARS} printable characters"
        )));
    }
    Ok(Signed {
        delivery: delivery.to_string(),
    })
}

type HookLimiter =
    RateLimiter<String, DashMapStateStore<String>, GovernorClock, NoOpMiddleware<Nanos>>;

struct Hooks {
    runner: Runner,
    limiter: HookLimiter,
    clock: GovernorClock,
}

/// What a run accepted answers (202).
#[derive(Debug, serde::Serialize)]
struct Accepted {
    run: i64,
    conversation: String,
}

/// The webhook routes of the configuration (none when it has no webhook).
pub fn routes<S>(runner: Runner) -> Router<S>
where
    S: Clone + Send + Sync + 'static,
{
    let services = runner.services();
    let cfg = services.config();
    if cfg.webhooks.is_empty() {
        return Router::new();
    }
    let per = NonZeroU32::new(cfg.rate_limit.webhook_per_minute).unwrap_or(NonZeroU32::MIN);
    let clock = GovernorClock(services.clock().clone());
    let hooks = Arc::new(Hooks {
        limiter: RateLimiter::dashmap_with_clock(Quota::per_minute(per), clock.clone()),
        clock,
        runner,
    });
    Router::new()
        .route("/hooks/{name}", post(receive))
        .with_state(hooks)
}

async fn receive(
    State(hooks): State<Arc<Hooks>>,
    Path(name): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    match accept(&hooks, &name, &headers, body).await {
        Ok(accepted) => (StatusCode::ACCEPTED, Json(accepted)).into_response(),
        Err(refusal) => {
            tracing::warn!(webhook = %name, %refusal, "webhook request refused");
            refusal.into_response()
        }
    }
}

async fn accept(
    hooks: &Hooks,
    name: &str,
    headers: &HeaderMap,
    body: Body,
) -> Result<Accepted, WebhookRefusal> {
    let services = hooks.runner.services();
    let cfg = services.config();
    let hook = cfg
        .webhook(name)
        .ok_or_else(|| WebhookRefusal::Unknown(name.into()))?;
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > MAX_BODY_BYTES as u64) {
        return Err(WebhookRefusal::TooLarge);
    }
    let body = read_limited(body).await?;
    let now = services.clock().now_ms().div_euclid(1000);
    let key = hook.key().map_err(|e| {
        tracing::error!(webhook = %hook.name, error = %e, "webhook: unreadable secret");
        WebhookRefusal::Unsigned("invalid signature")
    })?;
    let signed = verify(&key, headers, &body, now)?;
    // Only signed requests count against the limit, so forged ones cannot
    // use up the sender's.
    hooks.limiter.check_key(&hook.name).map_err(|not_until| {
        let wait = not_until.wait_time_from(hooks.clock.now());
        WebhookRefusal::TooMany((wait.as_secs() + u64::from(wait.subsec_nanos() > 0)).max(1))
    })?;
    let payload = String::from_utf8(body.to_vec())
        .map_err(|_| WebhookRefusal::Bad("the request body is not UTF-8 text".into()))?;
    let target = cfg.webhook_target(hook);
    let store = |e: memory::StoreError| {
        tracing::error!(error = %e, "webhook: store unavailable");
        WebhookRefusal::Unavailable("the request could not be stored; send it again".into())
    };
    let prepared = match hooks.runner.prepare(&target, Trigger::Webhook).await {
        Ok(p) => p,
        Err(RunError::Store(e)) => return Err(store(e)),
        Err(e) => return Err(WebhookRefusal::Unavailable(e.to_string())),
    };
    // Spent only by a request that runs: a refused one may be sent again.
    if !services
        .db()
        .runs()
        .take_delivery(
            &target.org,
            &target.name,
            &signed.delivery,
            services.clock().now_ms(),
        )
        .await
        .map_err(store)?
    {
        return Err(WebhookRefusal::Repeated(signed.delivery));
    }
    let start = Start {
        by: signed.delivery,
        payload: Some(payload),
    };
    let run = hooks.runner.spawn(prepared, start).await.map_err(store)?;
    Ok(Accepted {
        run: run.id,
        conversation: run.start.conversation,
    })
}

async fn read_limited(body: Body) -> Result<Bytes, WebhookRefusal> {
    match Limited::new(body, MAX_BODY_BYTES).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e)
            if e.downcast_ref::<http_body_util::LengthLimitError>()
                .is_some() =>
        {
            Err(WebhookRefusal::TooLarge)
        }
        Err(e) => Err(WebhookRefusal::Bad(format!(
            "could not read the request body: {e}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The specification's published test vector (standard-webhooks,
    // libraries/rust/src/lib.rs `test_sign`, the same in each library).
    const SPEC_SECRET: &str = "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD";
    const SPEC_ID: &str = "msg_27UH4WbU6Z5A5EzD8u03UvzRbpk";
    const SPEC_TS: i64 = 1_649_367_553;
    const SPEC_BODY: &[u8] = br#"{"email":"test@example.com","username":"test_user"}"#;
    const SPEC_SIGNATURE: &str = "v1,tZ1I4/hDygAJgO5TYxiSd6Sd0kDW6hPenDe+bTa3Kkw=";

    fn key(secret: &str) -> Vec<u8> {
        let cfg = steward_core::config::WebhookConfig {
            secret: secret.into(),
            ..Default::default()
        };
        cfg.key().unwrap()
    }

    fn headers(sig: &str, ts: i64, id: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(SIGNATURE, sig.parse().unwrap());
        h.insert(TIMESTAMP, ts.to_string().parse().unwrap());
        h.insert(ID, id.parse().unwrap());
        h
    }

    #[test]
    fn the_specifications_test_vector_signs_and_verifies() {
        assert_eq!(
            sign(SPEC_SECRET, SPEC_ID, SPEC_TS, SPEC_BODY).unwrap(),
            SPEC_SIGNATURE
        );
        let k = key(SPEC_SECRET);
        assert_eq!(k.len(), 24);
        assert_eq!(
            verify(
                &k,
                &headers(SPEC_SIGNATURE, SPEC_TS, SPEC_ID),
                SPEC_BODY,
                SPEC_TS
            ),
            Ok(Signed {
                delivery: SPEC_ID.into()
            })
        );
        // A rotation: several signatures, one of them valid, in any place.
        let rotated =
            format!("v1,Mm7xgUVICxZfQ3bgf0h0Dof65L/IFx+PnZvnDWPCX6Q= {SPEC_SIGNATURE} v1a,AAAA");
        assert!(verify(&k, &headers(&rotated, SPEC_TS, SPEC_ID), SPEC_BODY, SPEC_TS).is_ok());
    }

    #[test]
    fn only_a_fresh_request_signed_over_its_id_time_and_bytes_is_taken() {
        let k = key(SPEC_SECRET);
        let (now, body) = (SPEC_TS, SPEC_BODY);
        let other = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
        let cases = [
            (
                "another secret",
                sign(other, SPEC_ID, now, body).unwrap(),
                now,
                SPEC_ID,
                body,
            ),
            (
                "another body",
                SPEC_SIGNATURE.into(),
                now,
                SPEC_ID,
                br#"{"email":"x"}"#.as_slice(),
            ),
            (
                "another timestamp",
                SPEC_SIGNATURE.into(),
                now + 1,
                SPEC_ID,
                body,
            ),
            (
                "another id (a replay)",
                SPEC_SIGNATURE.into(),
                now,
                "msg_other",
                body,
            ),
            (
                "no version",
                SPEC_SIGNATURE.trim_start_matches("v1,").into(),
                now,
                SPEC_ID,
                body,
            ),
            ("only v1,", "v1,".into(), now, SPEC_ID, body),
            (
                "all invalid",
                "v1,Mm7xgUVICxZfQ3bgf0h0Dof65L/IFx+PnZvnDWPCX6Q=".into(),
                now,
                SPEC_ID,
                body,
            ),
        ];
        for (what, sig, ts, id, body) in cases {
            let got = verify(&k, &headers(&sig, ts, id), body, now);
            assert!(
                matches!(got, Err(WebhookRefusal::Unsigned(_))),
                "{what}: {got:?}"
            );
        }
        // Signed, but too old or too far ahead.
        for ts in [now - TOLERANCE_SECS - 1, now + TOLERANCE_SECS + 1] {
            let sig = sign(SPEC_SECRET, SPEC_ID, ts, body).unwrap();
            assert_eq!(
                verify(&k, &headers(&sig, ts, SPEC_ID), body, now),
                Err(WebhookRefusal::Stale)
            );
        }
        assert!(matches!(
            verify(&k, &HeaderMap::new(), body, now),
            Err(WebhookRefusal::Unsigned(_))
        ));
    }

    #[test]
    fn a_secret_is_whsec_and_the_base64_of_24_to_64_bytes() {
        let secret = |s: &str| steward_core::config::WebhookConfig {
            secret: s.into(),
            ..Default::default()
        };
        use steward_core::config::SecretError;
        assert_eq!(secret(SPEC_SECRET).key().map(|k| k.len()), Ok(24));
        assert_eq!(
            secret("0123456789abcdef0123456789abcdef").key(),
            Err(SecretError::Prefix)
        );
        assert_eq!(
            secret("whsec_not base64!").key(),
            Err(SecretError::NotBase64)
        );
        assert_eq!(secret("whsec_AAAA").key(), Err(SecretError::Length(3)));
    }
}
