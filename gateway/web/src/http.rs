//! The HTTP server: health, with the REST API's (`crate::api`), the dashboard's
//! and the channels' routes (`channels`, the Teams webhook) merged in,
//! the API and the dashboard each given only its own substate of
//! [`AppState`] (`FromRef`).
//! `app(state)` is the whole router, so tests drive it in-process and over a
//! real socket alike; `serve` runs it on a listener the way `steward serve`
//! does, with `[server]`'s deadlines and connection cap.

use crate::api::ApiState;
use crate::dashboard::DashboardState;
use axum::body::Body;
use axum::extract::{DefaultBodyLimit, FromRef, Request, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use serde_json::json;
use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::time::Duration;
use steward_core::config::{Config, ServerConfig};
use steward_core::metrics::Metrics;
use steward_core::services::Services;
use steward_core::workers::{CancellationToken, Worker, WorkerError};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio::time::Instant;

/// The server's state: the API's and the dashboard's substates, and what
/// health, `/metrics` and the fallback read. Each router and handler takes
/// only its part (`FromRef`).
#[derive(Clone)]
pub struct AppState {
    /// What the channels' routes are built on (not a handler's state).
    services: Arc<Services>,
    api: ApiState,
    dashboard: DashboardState,
}

impl AppState {
    /// The state of a server on `services`, with fresh per-key and sign-in limiters.
    pub fn new(services: Arc<Services>) -> AppState {
        AppState {
            api: ApiState::new(&services),
            dashboard: DashboardState::new(&services),
            services,
        }
    }
}

impl FromRef<AppState> for ApiState {
    fn from_ref(state: &AppState) -> Self {
        state.api.clone()
    }
}

impl FromRef<AppState> for DashboardState {
    fn from_ref(state: &AppState) -> Self {
        state.dashboard.clone()
    }
}

impl FromRef<AppState> for ::memory::Db {
    fn from_ref(state: &AppState) -> Self {
        state.services.db().clone()
    }
}

impl FromRef<AppState> for Metrics {
    fn from_ref(state: &AppState) -> Self {
        state.services.metrics().clone()
    }
}

impl FromRef<AppState> for Arc<Config> {
    fn from_ref(state: &AppState) -> Self {
        state.services.config().clone()
    }
}

pub fn app(state: AppState) -> Router {
    let cfg = state.services.config();
    let limit = cfg.server.max_body_bytes;
    let body_timeout = Duration::from_millis(cfg.server.body_timeout_ms);
    let mut router = Router::new()
        .route("/", get(root))
        .route("/healthz", get(healthz))
        .merge(crate::api::router().with_state(ApiState::from_ref(&state)));
    // On the main listener only behind its token (`[metrics]`).
    if cfg.metrics.token.is_some() {
        router = router.route("/metrics", get(metrics));
    }
    router =
        router.merge(crate::dashboard::router(cfg).with_state(DashboardState::from_ref(&state)));
    // `[[webhooks]]`: each a run on a signed request.
    router = router.merge(channels::runs::webhooks::routes(
        channels::runs::Runner::new(&state.services),
    ));
    // Each channel that is on, with routes of its own (Teams' webhook).
    for channel in channels::all() {
        if channel.enabled(cfg) {
            if let Some(routes) = channel.routes(&state.services) {
                router = router.merge(routes.with_state(()));
            }
        }
    }
    router
        .fallback(not_found)
        .layer(DefaultBodyLimit::max(limit))
        // Every route's body must arrive in full within `server.body_timeout_ms`
        // of its headers, however it is read.
        .layer(axum::middleware::from_fn_with_state(body_timeout, read_by))
        .with_state(state)
}

/// A request's body under its deadline ([`crate::body::ReadBy`]); an answer
/// given before a declared body was read whole (a missing key, a per-key 429,
/// a 404) says `Connection: close`. hyper cannot keep such a connection (the
/// rest of the body is still on its way) and closes it after the answer:
/// without the header a client sends its next request on it and gets no
/// answer (issue 31, item 5).
async fn read_by(
    State(timeout): State<Duration>,
    req: Request,
    next: axum::middleware::Next,
) -> Response {
    let declared = declares_body(req.headers());
    let ended = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let req = req.map(|body| Body::new(crate::body::ReadBy::new(body, timeout, ended.clone())));
    let mut resp = next.run(req).await;
    if declared && !ended.load(std::sync::atomic::Ordering::Relaxed) {
        resp.headers_mut().insert(
            header::CONNECTION,
            header::HeaderValue::from_static("close"),
        );
    }
    resp
}

/// Whether a request says it has a body: chunked, or a `Content-Length` above 0.
fn declares_body(headers: &axum::http::HeaderMap) -> bool {
    if headers.contains_key(header::TRANSFER_ENCODING) {
        return true;
    }
    headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .is_some_and(|n| n > 0)
}

/// Serve `app(state)` on `listener` until `shutdown` completes, as `steward
/// serve` does: HTTP/1.1 with a deadline on each request's headers
/// (`server.header_timeout_ms`, which also closes idle keep-alive connections),
/// one on its body (`server.body_timeout_ms`, in [`app`]), and at most
/// `server.max_connections` connections open — one beyond them is closed at
/// once rather than held, so stalled clients cannot queue up the ones behind
/// them. On shutdown it stops accepting, lets requests in flight finish and
/// closes idle connections.
pub async fn serve<F>(listener: TcpListener, state: AppState, shutdown: F) -> std::io::Result<()>
where
    F: Future<Output = ()> + Send,
{
    let server = state.services.config().server.clone();
    serve_router(listener, app(state), &server, shutdown).await
}

/// The router of `metrics.listen`: `/metrics` alone (behind `metrics.token`
/// when one is set).
pub fn metrics_app(state: AppState) -> Router {
    Router::new()
        .route("/metrics", get(metrics))
        .with_state(state)
}

/// Serve [`metrics_app`] on `listener` (`metrics.listen`) until `shutdown`,
/// with the main server's deadlines and connection cap.
pub async fn serve_metrics<F>(
    listener: TcpListener,
    state: AppState,
    shutdown: F,
) -> std::io::Result<()>
where
    F: Future<Output = ()> + Send,
{
    let server = state.services.config().server.clone();
    serve_router(listener, metrics_app(state), &server, shutdown).await
}

/// [`serve_metrics`] as a worker of `steward serve`, on a listener already bound.
pub struct MetricsListener {
    listener: TcpListener,
    state: AppState,
}

impl MetricsListener {
    pub fn new(listener: TcpListener, state: AppState) -> MetricsListener {
        MetricsListener { listener, state }
    }
}

#[async_trait::async_trait]
impl Worker for MetricsListener {
    fn name(&self) -> &'static str {
        "metrics_listener"
    }

    async fn run(self: Box<Self>, shutdown: CancellationToken) -> Result<(), WorkerError> {
        serve_metrics(self.listener, self.state, shutdown.cancelled_owned())
            .await
            .map_err(|e| WorkerError::Failed {
                worker: "metrics_listener",
                source: Box::new(e),
            })
    }
}

/// `router` on `listener` as [`serve`] describes.
async fn serve_router<F>(
    listener: TcpListener,
    router: Router,
    server: &ServerConfig,
    shutdown: F,
) -> std::io::Result<()>
where
    F: Future<Output = ()> + Send,
{
    let max_connections = connection_cap(server.max_connections);
    let slots = Arc::new(Semaphore::new(max_connections));
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(Duration::from_millis(server.header_timeout_ms));
    let connections = GracefulShutdown::new();
    let mut shutdown = pin!(shutdown);
    // Connections closed at the cap since the last warning, and when that was
    // (at most one a minute, however long the cap is held).
    let (mut closed_at_cap, mut warned) = (0u64, None::<Instant>);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    accept_failed(e).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            closed_at_cap += 1;
            if !matches!(warned, Some(at) if at.elapsed() < Duration::from_secs(60)) {
                tracing::warn!(
                    max_connections,
                    closed = closed_at_cap,
                    "at server.max_connections: new connections are closed until one ends"
                );
                (closed_at_cap, warned) = (0, Some(Instant::now()));
            }
            drop(stream);
            continue;
        };
        // Handlers that limit per client (dashboard sign-in) read its address.
        let service = tower::ServiceExt::map_request(
            router.clone(),
            move |mut req: axum::http::Request<hyper::body::Incoming>| {
                req.extensions_mut()
                    .insert(axum::extract::ConnectInfo(peer));
                req
            },
        );
        let conn = connections
            .watch(http.serve_connection(TokioIo::new(stream), TowerToHyperService::new(service)));
        tokio::spawn(async move {
            if let Err(e) = conn.await {
                tracing::debug!(%peer, error = %e, "connection closed");
            }
            drop(slot);
        });
    }
    drop(listener);
    connections.shutdown().await;
    Ok(())
}

/// File descriptors kept free of connections: the database, the Discord
/// gateway, model and Workflows requests, logs.
const FD_RESERVE: u64 = 64;

/// The connections `serve` may hold: `server.max_connections`, within what the
/// open-file limit leaves. A process out of file descriptors accepts nothing,
/// `/healthz` included, and cannot open its database or reach a model; so the
/// soft limit is raised toward the hard one as far as the cap and
/// [`FD_RESERVE`] need (as Go's runtime does), and where the hard limit is
/// lower the cap is lowered, with a warning.
fn connection_cap(configured: usize) -> usize {
    let want = u64::try_from(configured)
        .unwrap_or(u64::MAX)
        .saturating_add(FD_RESERVE);
    let limit = raise_open_files(want);
    let cap = room(configured, limit);
    if cap < configured {
        tracing::warn!(
            configured,
            open_files = limit,
            cap,
            "server.max_connections is more than the open-file limit leaves room for; \
             raise it (ulimit -n, LimitNOFILE=) to allow more"
        );
    }
    cap
}

/// `configured`, lowered to leave [`FD_RESERVE`] descriptors (or half, when
/// the limit is that small) of an open-file limit free; `None` is no limit.
fn room(configured: usize, open_files: Option<u64>) -> usize {
    let Some(limit) = open_files else {
        return configured;
    };
    let room = limit.saturating_sub(FD_RESERVE).max(limit / 2);
    configured
        .min(usize::try_from(room).unwrap_or(usize::MAX))
        .max(1)
}

/// The soft open-file limit, raised to `want` if the hard limit allows
/// (at most to the hard limit otherwise); `None` when unlimited.
#[cfg(unix)]
fn raise_open_files(want: u64) -> Option<u64> {
    use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};
    let now = getrlimit(Resource::Nofile);
    let current = now.current?;
    if current >= want {
        return Some(current);
    }
    let target = now.maximum.map_or(want, |max| want.min(max));
    let raised = Rlimit {
        current: Some(target),
        maximum: now.maximum,
    };
    if target > current && setrlimit(Resource::Nofile, raised).is_ok() {
        Some(target)
    } else {
        Some(current)
    }
}

#[cfg(not(unix))]
fn raise_open_files(_want: u64) -> Option<u64> {
    None
}

/// An error accepting a connection. One about that connection is skipped; any
/// other (out of file descriptors) is logged and waited out briefly, as
/// connections ending free what accepting needs.
async fn accept_failed(e: std::io::Error) {
    use std::io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
    if matches!(
        e.kind(),
        ConnectionAborted | ConnectionRefused | ConnectionReset
    ) {
        return;
    }
    tracing::error!(error = %e, "accepting a connection failed");
    tokio::time::sleep(Duration::from_millis(100)).await;
}

async fn healthz(State(db): State<::memory::Db>) -> Response {
    match db.ping().await {
        Ok(_) => Json(json!({"status": "ok"})).into_response(),
        Err(e) => error(
            StatusCode::SERVICE_UNAVAILABLE,
            &format!("database unavailable: {e}"),
        ),
    }
}

/// `GET /metrics`: the loop's metrics in Prometheus' text format, to a
/// request with `Authorization: Bearer <metrics.token>` when a token is set.
async fn metrics(
    State(cfg): State<Arc<Config>>,
    State(metrics): State<Metrics>,
    headers: axum::http::HeaderMap,
) -> Response {
    if let Some(token) = &cfg.metrics.token {
        let given = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::trim)
            .unwrap_or("");
        let same: bool = subtle::ConstantTimeEq::ct_eq(given.as_bytes(), token.as_bytes()).into();
        if !same {
            return (
                StatusCode::UNAUTHORIZED,
                [(header::WWW_AUTHENTICATE, "Bearer")],
                Json(json!({"error": "missing or wrong metrics token (Authorization: Bearer <metrics.token>)"})),
            )
                .into_response();
        }
    }
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        metrics.render(),
    )
        .into_response()
}

/// `GET /`: the dashboard, when it is served.
async fn root(State(cfg): State<Arc<Config>>) -> Response {
    if cfg.dashboard.enabled {
        axum::response::Redirect::to("/dashboard").into_response()
    } else {
        error(
            StatusCode::NOT_FOUND,
            "nothing is served at / (the dashboard is off: dashboard.enabled = false)",
        )
    }
}

/// A path nothing serves: JSON `{"error": …}` under `/api` and for clients
/// that do not ask for HTML; the dashboard's 404 page for a browser.
async fn not_found(State(cfg): State<Arc<Config>>, request: Request) -> Response {
    let path = request.uri().path();
    if path == "/api" || path.starts_with("/api/") {
        return error(
            StatusCode::NOT_FOUND,
            &format!("no such endpoint: {path}; GET /api/v1/openapi.json lists them"),
        );
    }
    let browser = request
        .headers()
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|a| a.contains("text/html"));
    let html = cfg.dashboard.enabled && (browser || path.starts_with("/dashboard"));
    if html {
        crate::dashboard::not_found(path)
    } else {
        error(StatusCode::NOT_FOUND, &format!("no such endpoint: {path}"))
    }
}

fn error(status: StatusCode, reason: &str) -> Response {
    crate::error::error_response(status, reason)
}

#[cfg(test)]
mod tests {
    use super::room;

    #[test]
    fn the_connection_cap_leaves_descriptors_free() {
        assert_eq!(room(1024, None), 1024, "no limit");
        assert_eq!(room(100, Some(1_048_576)), 100, "room enough");
        assert_eq!(room(1024, Some(1024)), 960, "64 kept free");
        assert_eq!(room(1024, Some(100)), 50, "a small limit: half kept free");
        assert_eq!(room(1024, Some(0)), 1, "never no connection at all");
    }
}
