//! `POST /hooks/<name>`: a `[[webhooks]]` entry's signed requests, each a run
//! under `webhook-system`. Signed as GitHub and Stripe sign theirs:
//! `X-Steward-Signature: sha256=<hex HMAC-SHA256 of "<timestamp>.<raw body>">`
//! with the webhook's secret, `X-Steward-Timestamp` (Unix seconds, at most
//! five minutes off) and `X-Steward-Delivery` (taken once). The signature is
//! checked in constant time over the raw bytes before anything is parsed or
//! stored; the body reaches the model only as framed data.

use super::{RunError, Runner, Start};
use crate::clock::GovernorClock;
use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
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

pub const TIMESTAMP: &str = "x-steward-timestamp";
pub const DELIVERY: &str = "x-steward-delivery";
pub const SIGNATURE: &str = "x-steward-signature";

/// The largest body a webhook takes.
pub const MAX_BODY_BYTES: usize = 64 * 1024;
/// How far a request's timestamp may be from the clock, in seconds.
pub const TOLERANCE_SECS: i64 = 300;
/// The longest delivery id kept.
pub const MAX_DELIVERY_CHARS: usize = 200;

/// Why a request was refused before it ran; each is one status.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
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

impl Refusal {
    pub fn status(&self) -> StatusCode {
        match self {
            Refusal::Unknown(_) => StatusCode::NOT_FOUND,
            Refusal::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            Refusal::Unsigned(_) | Refusal::Stale => StatusCode::UNAUTHORIZED,
            Refusal::Repeated(_) => StatusCode::CONFLICT,
            Refusal::TooMany(_) => StatusCode::TOO_MANY_REQUESTS,
            Refusal::Bad(_) => StatusCode::BAD_REQUEST,
            Refusal::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
        }
    }
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        let mut res = (
            self.status(),
            Json(serde_json::json!({ "error": self.to_string() })),
        )
            .into_response();
        if let Refusal::TooMany(secs) = self {
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

/// `sha256=<hex>` of `"<timestamp>.<body>"` with `secret`: what a sender puts
/// in `X-Steward-Signature`.
pub fn sign(
    secret: &[u8],
    timestamp: i64,
    body: &[u8],
) -> Result<String, hmac::digest::InvalidLength> {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret)?;
    mac.update(format!("{timestamp}.").as_bytes());
    mac.update(body);
    Ok(format!(
        "sha256={}",
        hex::encode(mac.finalize().into_bytes())
    ))
}

/// Check a request's headers against `secret` and the clock (`now`, Unix
/// seconds): the signature in constant time, then the timestamp's age.
pub fn verify(
    secret: &[u8],
    headers: &HeaderMap,
    body: &[u8],
    now: i64,
) -> Result<Signed, Refusal> {
    let text = |name: &'static str, missing: &'static str| {
        headers
            .get(name)
            .ok_or(Refusal::Unsigned(missing))?
            .to_str()
            .map(str::trim)
            .map_err(|_| Refusal::Unsigned(missing))
    };
    let signature = text(
        SIGNATURE,
        "missing or unreadable X-Steward-Signature header (sha256=<hex>)",
    )?;
    let timestamp = text(
        TIMESTAMP,
        "missing or unreadable X-Steward-Timestamp header (Unix seconds)",
    )?;
    let delivery = text(DELIVERY, "missing or unreadable X-Steward-Delivery header")?;
    let hex_sig = signature.strip_prefix("sha256=").ok_or(Refusal::Unsigned(
        "X-Steward-Signature must be sha256=<hex>",
    ))?;
    let given =
        hex::decode(hex_sig).map_err(|_| Refusal::Unsigned("X-Steward-Signature is not hex"))?;
    let mut mac = Hmac::<Sha256>::new_from_slice(secret)
        .map_err(|_| Refusal::Unsigned("invalid signature"))?;
    mac.update(timestamp.as_bytes());
    mac.update(b".");
    mac.update(body);
    mac.verify_slice(&given)
        .map_err(|_| Refusal::Unsigned("invalid signature"))?;
    let at: i64 = timestamp
        .parse()
        .map_err(|_| Refusal::Unsigned("X-Steward-Timestamp is not Unix seconds"))?;
    if at.abs_diff(now) > TOLERANCE_SECS.unsigned_abs() {
        return Err(Refusal::Stale);
    }
    if delivery.is_empty()
        || delivery.chars().count() > MAX_DELIVERY_CHARS
        || delivery.chars().any(char::is_control)
    {
        return Err(Refusal::Bad(format!(
            "X-Steward-Delivery must be 1 to {MAX_DELIVERY_CHARS} printable characters"
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
) -> Result<Accepted, Refusal> {
    let services = hooks.runner.services();
    let cfg = services.config();
    let hook = cfg
        .webhook(name)
        .ok_or_else(|| Refusal::Unknown(name.into()))?;
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > MAX_BODY_BYTES as u64) {
        return Err(Refusal::TooLarge);
    }
    let body = read_limited(body).await?;
    let now = services.clock().now_ms().div_euclid(1000);
    let signed = verify(hook.secret.trim().as_bytes(), headers, &body, now)?;
    // Only signed requests count against the limit, so forged ones cannot
    // use up the sender's.
    hooks.limiter.check_key(&hook.name).map_err(|not_until| {
        let wait = not_until.wait_time_from(hooks.clock.now());
        Refusal::TooMany((wait.as_secs() + u64::from(wait.subsec_nanos() > 0)).max(1))
    })?;
    let payload = String::from_utf8(body.to_vec())
        .map_err(|_| Refusal::Bad("the request body is not UTF-8 text".into()))?;
    let target = cfg.webhook_target(hook);
    let store = |e: memory::StoreError| {
        tracing::error!(error = %e, "webhook: store unavailable");
        Refusal::Unavailable("the request could not be stored; send it again".into())
    };
    let prepared = match hooks.runner.prepare(&target, Trigger::Webhook).await {
        Ok(p) => p,
        Err(RunError::Store(e)) => return Err(store(e)),
        Err(e) => return Err(Refusal::Unavailable(e.to_string())),
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
        return Err(Refusal::Repeated(signed.delivery));
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

async fn read_limited(body: Body) -> Result<Bytes, Refusal> {
    match Limited::new(body, MAX_BODY_BYTES).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e)
            if e.downcast_ref::<http_body_util::LengthLimitError>()
                .is_some() =>
        {
            Err(Refusal::TooLarge)
        }
        Err(e) => Err(Refusal::Bad(format!(
            "could not read the request body: {e}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(sig: &str, ts: i64, delivery: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(SIGNATURE, sig.parse().unwrap());
        h.insert(TIMESTAMP, ts.to_string().parse().unwrap());
        h.insert(DELIVERY, delivery.parse().unwrap());
        h
    }

    #[test]
    fn only_a_fresh_request_signed_with_the_secret_over_its_bytes_is_taken() {
        let secret = b"0123456789abcdef0123456789abcdef";
        let (now, body) = (1_800_000_000, br#"{"ok":true}"#.as_slice());
        let good = sign(secret, now, body).unwrap();
        assert_eq!(
            verify(secret, &headers(&good, now, "d1"), body, now),
            Ok(Signed {
                delivery: "d1".into()
            })
        );
        let cases = [
            (
                "another secret",
                sign(b"another secret of enough length!", now, body).unwrap(),
                now,
                body,
                now,
            ),
            (
                "another body",
                good.clone(),
                now,
                br#"{"ok":false}"#.as_slice(),
                now,
            ),
            ("another timestamp", good.clone(), now + 1, body, now),
            (
                "no prefix",
                good.trim_start_matches("sha256=").to_string(),
                now,
                body,
                now,
            ),
            ("not hex", "sha256=zz".to_string(), now, body, now),
        ];
        for (what, sig, ts, body, now) in cases {
            let got = verify(secret, &headers(&sig, ts, "d1"), body, now);
            assert!(matches!(got, Err(Refusal::Unsigned(_))), "{what}: {got:?}");
        }
        // Signed, but too old or too far ahead.
        for ts in [now - TOLERANCE_SECS - 1, now + TOLERANCE_SECS + 1] {
            let sig = sign(secret, ts, body).unwrap();
            assert_eq!(
                verify(secret, &headers(&sig, ts, "d1"), body, now),
                Err(Refusal::Stale)
            );
        }
        assert!(matches!(
            verify(secret, &HeaderMap::new(), body, now),
            Err(Refusal::Unsigned(_))
        ));
    }
}
