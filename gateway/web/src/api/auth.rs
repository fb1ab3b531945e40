//! Who is calling: the API key's paired user (`Pairing::api_key_user`), with
//! the role the pairing store gives them — never one the request names — and
//! the per-key rate limit. [`Caller`] is any active key, [`Admin`] an admin's
//! key (403 otherwise); both are checked before the body is read.

use super::ApiState;
use crate::error::ApiError;
use axum::extract::FromRequestParts;
use axum::http::header;
use axum::http::request::Parts;
use governor::clock::Clock as _;
use governor::middleware::NoOpMiddleware;
use governor::nanos::Nanos;
use governor::state::keyed::DashMapStateStore;
use governor::{Quota, RateLimiter};
use memory::authz::{self, Action, Denial};
use memory::Principal;
use pairing::{KeyHolder, User};
use std::num::NonZeroU32;
use steward_core::clock::GovernorClock;
use steward_core::config::RateLimitConfig;

/// A request by an API key: the paired user behind it, the time it is made at
/// and the services it reaches (through `Deref`, so a handler takes the
/// caller and what the request carries, nothing else).
#[derive(Clone, derive_more::Deref)]
pub struct Caller {
    pub user: User,
    /// The person the key acts for, when it was made `--on-behalf-of` them
    /// (checked against the grant on every request).
    pub on_behalf_of: Option<String>,
    /// Now on the loop's clock, ms since the epoch: what the request's writes
    /// and audit entries are stamped with.
    pub now: i64,
    #[deref]
    state: ApiState,
}

impl Caller {
    /// Whether the caller may take `action` (the one authorization point,
    /// as the key's person and whom the key acts for); 403 with the reason
    /// when not.
    pub fn may(&self, action: Action) -> Result<(), ApiError> {
        let principal = Principal::Human {
            user_id: self.user.user_id.clone(),
            name: self.user.name.clone(),
            role: self.user.role,
        };
        let actor = authz::Actor {
            principal: &principal,
            on_behalf_of: self.on_behalf_of.as_deref(),
        };
        authz::authorize(actor, action).map_err(|denial| match denial {
            Denial::Delegated => ApiError::forbidden(DELEGATED_NOT_ADMIN),
            Denial::NotAdmin => ApiError::forbidden(ADMIN_ONLY),
            other => ApiError::forbidden(other.to_string()),
        })
    }

    /// The organisation the key belongs to: every operation stays in it.
    pub fn org(&self) -> &str {
        &self.user.org
    }

    /// The caller's stored user id: the actor in the audit log.
    pub fn id(&self) -> &str {
        &self.user.user_id
    }
}

/// A caller whose key's user is an admin.
#[derive(Clone, derive_more::Deref)]
pub struct Admin(pub Caller);

/// What a user key is told on an admin operation.
pub const ADMIN_ONLY: &str =
    "this operation needs an admin's API key; a user's key reaches its own memory under /api/v1/me";

/// What a key made `--on-behalf-of` someone is told on an admin operation.
pub const DELEGATED_NOT_ADMIN: &str =
    "this key acts on someone's behalf and administers nothing, nor decides or makes keys in anyone's name; use your own key";

type KeyLimiter =
    RateLimiter<String, DashMapStateStore<String>, GovernorClock, NoOpMiddleware<Nanos>>;

/// Requests per key's user (`rate_limit.api_per_key_per_minute`,
/// `rate_limit.api_key_burst`), on the loop's clock. In-process: each replica
/// limits its own traffic.
pub struct KeyLimits {
    limiter: KeyLimiter,
    clock: GovernorClock,
}

impl KeyLimits {
    pub fn new(cfg: &RateLimitConfig, clock: GovernorClock) -> Self {
        let per = NonZeroU32::new(cfg.api_per_key_per_minute).unwrap_or(NonZeroU32::MIN);
        let burst = NonZeroU32::new(cfg.api_key_burst).unwrap_or(NonZeroU32::MIN);
        KeyLimits {
            limiter: RateLimiter::dashmap_with_clock(
                Quota::per_minute(per).allow_burst(burst),
                clock.clone(),
            ),
            clock,
        }
    }

    /// One request of `user`: allowed, or the whole seconds to wait.
    fn check(&self, user: &str) -> Result<(), u64> {
        self.limiter
            .check_key(&user.to_string())
            .map_err(|not_until| {
                let wait = not_until.wait_time_from(self.clock.now());
                (wait.as_secs() + u64::from(wait.subsec_nanos() > 0)).max(1)
            })
    }
}

/// The bearer token of a request, if it carries one.
fn bearer(parts: &Parts) -> Option<&str> {
    parts
        .headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim)
        .filter(|k| !k.is_empty())
}

impl FromRequestParts<ApiState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &ApiState) -> Result<Self, ApiError> {
        let Some(key) = bearer(parts) else {
            return Err(ApiError::unauthorized(
                "missing API key (Authorization: Bearer <key>)",
            ));
        };
        let Some(KeyHolder {
            mut user,
            on_behalf_of,
        }) = state.pairing.api_key_holder(key).await?
        else {
            return Err(ApiError::unauthorized("unknown API key"));
        };
        // A key acting for someone is a `user`'s, whatever the delegate's own
        // role (`memory::authz::Actor::principal`): no role check of a route
        // can find an administrator in it.
        if on_behalf_of.is_some() {
            user.role = memory::Role::User;
        }
        state
            .limits
            .check(&user.user_id)
            .map_err(ApiError::too_many)?;
        Ok(Caller {
            user,
            on_behalf_of,
            now: state.clock.now_ms(),
            state: state.clone(),
        })
    }
}

impl FromRequestParts<ApiState> for Admin {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &ApiState) -> Result<Self, ApiError> {
        let caller = Caller::from_request_parts(parts, state).await?;
        // The one authorization point: a key acting for someone carries the
        // delegate's own turns, never administration (delegation lends no authority).
        caller.may(Action::Administer)?;
        Ok(Admin(caller))
    }
}
