//! Request bodies: each must arrive in full by its deadline and within
//! `server.max_body_bytes` (every route's body goes through [`ReadBy`];
//! handlers that read one whole use [`read_body`]).

use crate::error::error_response;
use axum::body::{Body, Bytes, HttpBody};
use axum::http::StatusCode;
use axum::response::Response;
use hyper::body::{Frame, SizeHint};
use std::error::Error as StdError;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use steward_core::config::ServerConfig;
use tokio::time::{Instant, Sleep};

/// A request body that must arrive in full by a deadline, `server.body_timeout_ms`
/// after its headers, or fail with [`BodyTimedOut`]. (A timeout that restarts
/// with every piece received would let a client dripping a byte at a time hold
/// its connection indefinitely.)
pub(crate) struct ReadBy {
    body: Body,
    by: Instant,
    timeout: Duration,
    sleep: Option<Pin<Box<Sleep>>>,
    /// Set once the body was read to its end.
    ended: Arc<AtomicBool>,
}

impl ReadBy {
    /// `body` to be read within `timeout`; `ended` is set when it was read whole.
    pub(crate) fn new(body: Body, timeout: Duration, ended: Arc<AtomicBool>) -> Self {
        if body.is_end_stream() {
            ended.store(true, Ordering::Relaxed);
        }
        ReadBy {
            body,
            by: Instant::now() + timeout,
            timeout,
            sleep: None,
            ended,
        }
    }

    fn timed_out(&self) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Poll::Ready(Some(Err(axum::Error::new(BodyTimedOut(self.timeout)))))
    }
}

impl HttpBody for ReadBy {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        if Instant::now() >= self.by {
            return self.timed_out();
        }
        if let Poll::Ready(frame) = Pin::new(&mut self.body).poll_frame(cx) {
            if frame.is_none() || self.body.is_end_stream() {
                self.ended.store(true, Ordering::Relaxed);
            }
            return Poll::Ready(frame);
        }
        let by = self.by;
        let sleep = self
            .sleep
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(by)));
        match sleep.as_mut().poll(cx) {
            Poll::Ready(()) => self.timed_out(),
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// A body did not arrive within `server.body_timeout_ms`.
#[derive(Debug)]
struct BodyTimedOut(Duration);

impl std::fmt::Display for BodyTimedOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the request body did not arrive within {} ms (server.body_timeout_ms)",
            self.0.as_millis()
        )
    }
}

impl StdError for BodyTimedOut {}

/// The first error of type `E` in `e`'s chain of causes.
fn cause<'e, E: StdError + 'static>(e: &'e (dyn StdError + 'static)) -> Option<&'e E> {
    let mut next = Some(e);
    while let Some(err) = next {
        if let Some(found) = err.downcast_ref::<E>() {
            return Some(found);
        }
        next = err.source();
    }
    None
}

/// A request's body, within `server.max_body_bytes`: a declared length over
/// it is refused before a byte is read, an undeclared one is read only up to
/// it; a body not in by its deadline is 408.
pub(crate) async fn read_body(body: Body, server: &ServerConfig) -> Result<Bytes, Response> {
    let limit = server.max_body_bytes;
    let too_large = || {
        error_response(
            StatusCode::PAYLOAD_TOO_LARGE,
            &format!("request body is larger than {limit} bytes (server.max_body_bytes)"),
        )
    };
    if body.size_hint().lower() > limit as u64 {
        return Err(too_large());
    }
    let e = match axum::body::to_bytes(body, limit).await {
        Ok(bytes) => return Ok(bytes),
        Err(e) => e,
    };
    if cause::<http_body_util::LengthLimitError>(&e).is_some() {
        Err(too_large())
    } else if let Some(late) = cause::<BodyTimedOut>(&e) {
        Err(error_response(
            StatusCode::REQUEST_TIMEOUT,
            &late.to_string(),
        ))
    } else {
        Err(error_response(
            StatusCode::BAD_REQUEST,
            &format!("could not read the request body: {e}"),
        ))
    }
}
