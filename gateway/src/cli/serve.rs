//! `steward serve`: the HTTP server (API, dashboard, the channels' routes),
//! and beside it the workers (the channels' connections, the jobs,
//! embeddings, the metrics listener), until ctrl-c.

use crate::channels;
use crate::dashboard::AdminToken;
use crate::http::{serve, AppState, MetricsListener};
use crate::runs::schedules::Schedules;
use crate::runs::RunError;
use crate::services::Services;
use crate::workers::{self, CancellationToken};
use anyhow::{Context, Result};
use memory::run::Trigger;
use std::io::Write;
use std::net::SocketAddr;
use std::sync::Arc;

pub(super) async fn run(services: Arc<Services>) -> Result<()> {
    let cfg = services.config();
    // A credential kept before the screen knew its format is never read again.
    let forgotten = services.forget_credentials().await?;
    if forgotten > 0 {
        println!("forgot {forgotten} memory record(s) holding a credential (audited as memory.credential_forgotten)");
    }
    let listen = &cfg.server.listen;
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .with_context(|| format!("binding {listen}"))?;
    let addr = listener.local_addr()?;
    println!(
        "steward listening on http://{addr} (database {}, model {})",
        ::memory::store::without_password(&cfg.database.url),
        cfg.llm.provider
    );
    if cfg.dashboard.enabled {
        announce_dashboard(&services, addr).await?;
    }
    let mut workers = services.workers();
    if let Some(at) = &cfg.metrics.listen {
        let listener = tokio::net::TcpListener::bind(at)
            .await
            .with_context(|| format!("binding metrics.listen {at}"))?;
        println!("metrics: http://{}/metrics", listener.local_addr()?);
        let state = AppState::new(services.clone());
        workers.push(Box::new(MetricsListener::new(listener, state)));
    }
    if cfg.metrics.token.is_some() {
        println!("metrics: http://{addr}/metrics (Authorization: Bearer <metrics.token>)");
    }
    // Each channel that is on: its connection, if it has one, is a worker.
    for channel in channels::all().iter().filter(|c| c.enabled(cfg)) {
        let worker = channel
            .worker(&services)
            .with_context(|| format!("starting the {} channel", channel.name()))?;
        workers.extend(worker);
        if let Some(line) = channel.announce(cfg, addr) {
            println!("{line}");
        }
    }
    // `[[schedules]]` and `[[webhooks]]`: each skill they follow must be in force.
    let runner = crate::runs::Runner::new(&services);
    check_run_skills(&runner).await?;
    if !cfg.schedules.is_empty() {
        let schedules = Schedules::new(runner.clone(), services.clock().now_ms());
        for e in schedules.entries() {
            println!("schedule {}: {}", e.target.name, e.describe());
        }
        workers.push(Box::new(schedules.worker(services.clock().clone())));
    }
    for w in &cfg.webhooks {
        println!("webhook {}: POST http://{addr}/hooks/{}", w.name, w.name);
    }
    if let Some(url) = &cfg.embeddings.base_url {
        println!("embeddings: {url} (model {})", cfg.embeddings.model);
    }
    let running = workers::start(workers, &CancellationToken::new());
    tracing::info!(workers = ?running.names(), "background workers started");
    // ctrl-c stops the server; once it has, `beside` stops every worker.
    let server = serve(listener, AppState::new(services.clone()), async {
        let _ = tokio::signal::ctrl_c().await;
    });
    running.beside(server).await??;
    services.db().close().await;
    Ok(())
}

/// Every skill a schedule or a webhook follows has a revision in force:
/// a start-up error names the entry's key otherwise.
async fn check_run_skills(runner: &crate::runs::Runner) -> Result<()> {
    let cfg = runner.services().config();
    let entries = cfg
        .schedules
        .iter()
        .enumerate()
        .map(|(i, s)| (format!("schedules[{i}].skill"), cfg.schedule_target(s)))
        .chain(
            cfg.webhooks
                .iter()
                .enumerate()
                .map(|(i, w)| (format!("webhooks[{i}].skill"), cfg.webhook_target(w))),
        );
    for (key, target) in entries {
        match runner.prepare(&target, Trigger::Schedule).await {
            Ok(_) => {}
            Err(RunError::Store(e)) => return Err(e).context("reading the skills in force"),
            Err(e) => anyhow::bail!(
                "invalid configuration: {key}: {e} (approve it first: steward skills list)"
            ),
        }
    }
    Ok(())
}

/// The built-in admin and the admin token exist; say where and how to sign in.
async fn announce_dashboard(services: &Services, addr: SocketAddr) -> Result<()> {
    crate::dashboard::ensure_admin_user(services).await?;
    let token = crate::dashboard::ensure_admin_token(services)
        .await
        .context("setting up the dashboard admin token")?;
    let how = match token {
        AdminToken::Generated(t) => format!(
            "dashboard admin token (shown once; `steward dashboard reset-token` makes a new one): {t}"
        ),
        AdminToken::Stored => "dashboard: sign in with the admin token printed when it was generated (`steward dashboard reset-token` makes a new one)".into(),
        AdminToken::Configured => "dashboard: sign in with dashboard.admin_token".into(),
    };
    // Whoever reads stdout may have stopped; the server keeps running.
    let mut out = std::io::stdout().lock();
    if writeln!(out, "dashboard: http://{addr}/dashboard\n{how}")
        .and_then(|()| out.flush())
        .is_err()
    {
        eprintln!("warning: could not print the dashboard sign-in line to stdout; `steward dashboard reset-token` makes a new token");
    }
    Ok(())
}
