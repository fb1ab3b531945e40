//! One retry policy for every outbound HTTP call: Teams Workflows posts and
//! model-server requests alike.
//!
//! [`run`] calls an async request closure and, when it fails in a way worth
//! another try (the closure says so: 429, 5xx, and whatever else the caller
//! chooses), waits and calls it again, up to [`RetryPolicy::attempts`] tries in
//! all. The wait is what the server asked in `Retry-After` (read by
//! [`retry_after`], the only parser of that header) or else an exponential
//! backoff from [`RetryPolicy::initial_backoff`], doubling; a wait longer than
//! [`RetryPolicy::max_wait`] is capped or ends the retries, as
//! [`RetryPolicy::long_wait`] says. The backoff and the loop are `backon`'s.

use backon::{ExponentialBuilder, Retryable};
use chrono::{DateTime, Utc};
use reqwest::header::HeaderMap;
use reqwest::StatusCode;
use std::fmt::Display;
use std::future::Future;
use std::time::Duration;

/// What a wait longer than [`RetryPolicy::max_wait`] does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LongWait {
    /// Wait `max_wait` instead.
    Cap,
    /// Do not wait: the call fails with [`RetryError::TooLong`].
    GiveUp,
}

/// How often and how long an outbound call is retried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Tries in all, the first included (at least one is always made).
    pub attempts: u32,
    /// Wait before the second try when the server does not say; doubles after each further one.
    pub initial_backoff: Duration,
    /// Longest wait between two tries, whatever `Retry-After` asks.
    pub max_wait: Duration,
    pub long_wait: LongWait,
}

/// How one try failed.
#[derive(Debug)]
pub enum Failure<E> {
    /// Worth another try; `retry_after` is the wait the server asked for, if any.
    Retry {
        error: E,
        retry_after: Option<Duration>,
    },
    /// Final: not tried again.
    Fatal(E),
}

impl<E> Failure<E> {
    /// A retryable failure without a wait asked by the server.
    pub fn retry(error: E) -> Failure<E> {
        Failure::Retry {
            error,
            retry_after: None,
        }
    }

    fn error(&self) -> &E {
        match self {
            Failure::Retry { error, .. } | Failure::Fatal(error) => error,
        }
    }

    fn into_error(self) -> E {
        match self {
            Failure::Retry { error, .. } | Failure::Fatal(error) => error,
        }
    }
}

/// Why a retried call failed.
#[derive(Debug, thiserror::Error)]
pub enum RetryError<E: Display> {
    /// A failure not worth another try.
    #[error("{0}")]
    Fatal(E),
    /// Every try failed; `last` is how the last one did.
    #[error("gave up after {attempts} attempts: {last}")]
    Exhausted { attempts: u32, last: E },
    /// The next wait was longer than the policy's `max_wait` (with [`LongWait::GiveUp`]).
    #[error("{last}, and the next wait ({wait:?}) is too long")]
    TooLong { wait: Duration, last: E },
}

/// 429 and 5xx: the server is busy or broken, not the request.
pub fn retryable_status(status: StatusCode) -> bool {
    status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error()
}

/// The wait a response asks for: `retry-after-ms` (milliseconds), else
/// `Retry-After` as seconds or as an HTTP date (a date past is no wait).
pub fn retry_after(headers: &HeaderMap, now: DateTime<Utc>) -> Option<Duration> {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    let non_negative = |n: f64| n.is_finite() && n >= 0.0;
    if let Some(ms) = header("retry-after-ms").and_then(|v| v.parse::<f64>().ok()) {
        if non_negative(ms) {
            return Some(Duration::from_secs_f64(ms / 1000.0));
        }
    }
    let value = header("retry-after")?;
    if let Ok(secs) = value.parse::<f64>() {
        return non_negative(secs).then(|| Duration::from_secs_f64(secs));
    }
    let when = DateTime::parse_from_rfc2822(value)
        .ok()?
        .with_timezone(&Utc);
    Some((when - now).to_std().unwrap_or(Duration::ZERO))
}

/// Run `request` under `policy`; `call` names it in the retry log lines.
pub async fn run<T, E, F, Fut>(
    policy: &RetryPolicy,
    call: &'static str,
    request: F,
) -> Result<T, RetryError<E>>
where
    E: Display,
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, Failure<E>>>,
{
    let attempts = policy.attempts.max(1);
    let backoff = ExponentialBuilder::new()
        .with_min_delay(policy.initial_backoff)
        .with_factor(2.0)
        .with_max_times(attempts as usize - 1);
    let backoff = match policy.long_wait {
        LongWait::Cap => backoff.with_max_delay(policy.max_wait),
        LongWait::GiveUp => backoff.without_max_delay(),
    };
    let mut too_long: Option<Duration> = None;
    let mut retried: u32 = 0;
    let outcome = request
        .retry(backoff)
        .sleep(tokio::time::sleep)
        .when(|f: &Failure<E>| matches!(f, Failure::Retry { .. }))
        .adjust(|f: &Failure<E>, next: Option<Duration>| {
            // `next` is `None` once the tries are used up.
            let backoff = next?;
            let asked = match f {
                Failure::Retry { retry_after, .. } => *retry_after,
                Failure::Fatal(_) => None,
            };
            let wait = asked.unwrap_or(backoff);
            if wait <= policy.max_wait {
                return Some(wait);
            }
            match policy.long_wait {
                LongWait::Cap => Some(policy.max_wait),
                LongWait::GiveUp => {
                    too_long = Some(wait);
                    None
                }
            }
        })
        .notify(|f: &Failure<E>, wait: Duration| {
            retried += 1;
            tracing::warn!(
                call,
                attempt = retried,
                reason = %f.error(),
                wait_ms = wait.as_millis() as u64,
                "outbound call failed; retrying"
            );
        })
        .await;
    match outcome {
        Ok(v) => Ok(v),
        Err(Failure::Fatal(e)) => Err(RetryError::Fatal(e)),
        Err(f) => Err(match too_long {
            Some(wait) => RetryError::TooLong {
                wait,
                last: f.into_error(),
            },
            None => RetryError::Exhausted {
                attempts,
                last: f.into_error(),
            },
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::{HeaderValue, RETRY_AFTER};
    use std::sync::atomic::{AtomicU32, Ordering};

    fn now() -> DateTime<Utc> {
        DateTime::parse_from_rfc3339("2026-01-05T10:00:00Z")
            .map(|d| d.with_timezone(&Utc))
            .expect("date")
    }

    #[test]
    fn retry_after_takes_seconds_or_a_date() {
        let mut h = HeaderMap::new();
        h.insert(RETRY_AFTER, HeaderValue::from_static("3"));
        assert_eq!(retry_after(&h, now()), Some(Duration::from_secs(3)));
        h.insert(
            RETRY_AFTER,
            HeaderValue::from_static("Mon, 05 Jan 2026 10:00:07 GMT"),
        );
        assert_eq!(retry_after(&h, now()), Some(Duration::from_secs(7)));
        h.insert(RETRY_AFTER, HeaderValue::from_static("soon"));
        assert_eq!(retry_after(&h, now()), None);
    }

    #[test]
    fn retry_after_reads_seconds_milliseconds_and_dates() {
        let mut h = HeaderMap::new();
        h.insert("retry-after", "3".parse().expect("header"));
        assert_eq!(retry_after(&h, now()), Some(Duration::from_secs(3)));
        h.insert("retry-after-ms", "250".parse().expect("header"));
        assert_eq!(retry_after(&h, now()), Some(Duration::from_millis(250)));
        let mut d = HeaderMap::new();
        d.insert(
            "retry-after",
            "Wed, 21 Oct 2015 07:28:00 GMT".parse().expect("header"),
        );
        assert_eq!(retry_after(&d, now()), Some(Duration::ZERO));
        let mut bad = HeaderMap::new();
        bad.insert("retry-after", "-1".parse().expect("header"));
        assert_eq!(retry_after(&bad, now()), None);
    }

    fn policy(attempts: u32, long_wait: LongWait) -> RetryPolicy {
        RetryPolicy {
            attempts,
            initial_backoff: Duration::from_millis(1),
            max_wait: Duration::from_millis(50),
            long_wait,
        }
    }

    /// Run under `attempts` tries with every try answering `answer`; how many tries were made.
    async fn tries<T>(
        attempts: u32,
        answer: fn() -> Result<T, Failure<&'static str>>,
    ) -> (u32, Result<T, RetryError<&'static str>>) {
        let tries = AtomicU32::new(0);
        let r = run(&policy(attempts, LongWait::Cap), "test", || async {
            tries.fetch_add(1, Ordering::Relaxed);
            answer()
        })
        .await;
        (tries.load(Ordering::Relaxed), r)
    }

    #[tokio::test]
    async fn retries_are_bounded_and_fatal_failures_are_not_retried() {
        let (n, r) = tries(3, || Err::<(), _>(Failure::retry("busy"))).await;
        assert_eq!(n, 3);
        assert_eq!(
            r.map_err(|e| e.to_string()),
            Err("gave up after 3 attempts: busy".into())
        );

        let (n, r) = tries(3, || Err::<(), _>(Failure::Fatal("refused"))).await;
        assert_eq!(n, 1);
        assert!(matches!(r, Err(RetryError::Fatal("refused"))));

        // Zero attempts still makes one.
        let (n, r) = tries(0, || Ok(7)).await;
        assert_eq!((n, r.ok()), (1, Some(7)));
    }

    #[tokio::test]
    async fn a_long_retry_after_is_capped_or_ends_the_retries() {
        let long = || async {
            Err::<(), _>(Failure::Retry {
                error: "busy",
                retry_after: Some(Duration::from_secs(3600)),
            })
        };
        let r = run(&policy(2, LongWait::GiveUp), "test", long).await;
        assert!(
            matches!(r, Err(RetryError::TooLong { wait, last: "busy" }) if wait == Duration::from_secs(3600)),
            "{r:?}"
        );
        let started = std::time::Instant::now();
        let r = run(&policy(2, LongWait::Cap), "test", long).await;
        assert!(matches!(r, Err(RetryError::Exhausted { attempts: 2, .. })));
        assert!(started.elapsed() < Duration::from_secs(5));
    }
}
