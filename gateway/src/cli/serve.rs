//! `steward serve`: the HTTP server (API, dashboard, Teams), the Discord
//! channel beside it, and the background jobs, until ctrl-c.

use crate::dashboard::AdminToken;
use crate::http::{serve, serve_metrics, AppState};
use crate::services::Services;
use anyhow::{Context, Result};
use std::io::Write;
use std::net::SocketAddr;
use std::sync::Arc;

pub(super) async fn run(services: Arc<Services>) -> Result<()> {
    let cfg = services.config();
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
    let metrics = match &cfg.metrics.listen {
        Some(at) => {
            let listener = tokio::net::TcpListener::bind(at)
                .await
                .with_context(|| format!("binding metrics.listen {at}"))?;
            println!("metrics: http://{}/metrics", listener.local_addr()?);
            let state = AppState::new(services.clone());
            Some(tokio::spawn(serve_metrics(listener, state, async {
                let _ = tokio::signal::ctrl_c().await;
            })))
        }
        None => None,
    };
    if cfg.metrics.token.is_some() {
        println!("metrics: http://{addr}/metrics (Authorization: Bearer <metrics.token>)");
    }
    if cfg.teams.security_token.is_some() {
        println!("Teams outgoing webhook: POST http://{addr}/teams/<agent>");
    }
    let discord = crate::discord::start(&services).context("starting the Discord channel")?;
    if discord.is_some() {
        println!("discord channel connecting to the gateway");
    }
    let expire = services
        .jobs()
        .spawn(services.lifecycle().clone(), services.clock().clone());
    let consolidation = cfg.llm.auto_consolidate.then(|| {
        services
            .jobs()
            .spawn(services.consolidation().clone(), services.clock().clone())
    });
    // Records' vectors: after writes, and the backfill of what is missing.
    let embeddings = services.embeddings();
    let embed_worker = embeddings.spawn_worker();
    let backfill = embeddings.enabled().then(|| {
        services
            .jobs()
            .spawn(Arc::new(embeddings.clone()), services.clock().clone())
    });
    if let Some(url) = &cfg.embeddings.base_url {
        println!("embeddings: {url} (model {})", cfg.embeddings.model);
    }
    let server = serve(listener, AppState::new(services.clone()), async {
        let _ = tokio::signal::ctrl_c().await;
    });
    match discord {
        Some(discord) => discord.beside(server).await?,
        None => server.await?,
    }
    if let Some(metrics) = metrics {
        metrics.abort();
    }
    expire.abort();
    for task in [embed_worker, backfill].into_iter().flatten() {
        task.abort();
    }
    if let Some(job) = consolidation {
        job.abort();
    }
    services.db().close().await;
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
