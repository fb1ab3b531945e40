//! Optional embeddings (`[embeddings]`): an OpenAI-compatible `/v1/embeddings`
//! client, the query vector every search gets through `memory::Db::retrieve`
//! (attached to the database as its [`Embed`]), the background worker that
//! computes records' vectors after writes, off the turn's path, and the
//! `embeddings_backfill` job for active records still missing one.
//!
//! Embeddings never fail a turn: a query whose vector does not come within
//! `embeddings.timeout_ms` (endpoint down, slow, or answering nonsense) is
//! searched by keyword only, with a warning in the log.

use crate::config::EmbeddingsConfig;
use crate::jobs::{Job, Schedule};
use crate::workers::{CancellationToken, Worker, WorkerError};
use memory::store::{Embed, QueryVector, Unembedded};
use memory::Db;
use serde::Deserialize;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{watch, Notify};

/// Why an embeddings request gave no vectors.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error("embeddings request to {url} failed: {reason}")]
    Request { url: String, reason: String },
    #[error("embeddings endpoint {url} answered {status}: {body}")]
    Status {
        url: String,
        status: u16,
        body: String,
    },
    #[error("embeddings endpoint {url} gave no answer within {ms} ms")]
    Timeout { url: String, ms: u64 },
    #[error("embeddings answer from {url} unusable: {why}")]
    Answer { url: String, why: String },
    #[error(transparent)]
    Store(#[from] memory::StoreError),
}

/// What a text is embedded as: e5 models read queries and passages apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EmbedAs {
    Query,
    Document,
}

#[derive(Deserialize)]
struct Answer {
    data: Vec<Item>,
}

#[derive(Deserialize)]
struct Item {
    #[serde(default)]
    index: Option<usize>,
    embedding: Vec<f32>,
}

/// The HTTP client of one `/v1/embeddings` endpoint.
#[derive(Debug, Clone)]
pub struct Client {
    http: reqwest::Client,
    url: String,
    cfg: EmbeddingsConfig,
}

impl Client {
    /// The client `cfg` describes; `None` when embeddings are off.
    pub fn from_config(cfg: &EmbeddingsConfig) -> Option<Client> {
        let base = cfg.base_url.as_deref()?;
        let url = format!("{}/embeddings", base.trim_end_matches('/'));
        Some(Client {
            http: reqwest::Client::new(),
            url,
            cfg: cfg.clone(),
        })
    }

    pub fn model(&self) -> &str {
        &self.cfg.model
    }

    /// The vectors of `texts`, in their order, within `timeout`.
    pub async fn embed(
        &self,
        texts: &[&str],
        kind: EmbedAs,
        timeout: Duration,
    ) -> Result<Vec<Vec<f32>>, EmbedError> {
        let ms = timeout.as_millis() as u64;
        match tokio::time::timeout(timeout, self.request(texts, kind)).await {
            Ok(answer) => answer,
            Err(_) => Err(EmbedError::Timeout {
                url: self.url.clone(),
                ms,
            }),
        }
    }

    async fn request(&self, texts: &[&str], kind: EmbedAs) -> Result<Vec<Vec<f32>>, EmbedError> {
        let prefix = match kind {
            EmbedAs::Query => &self.cfg.query_prefix,
            EmbedAs::Document => &self.cfg.document_prefix,
        };
        let input: Vec<String> = texts.iter().map(|t| format!("{prefix}{t}")).collect();
        let mut body = serde_json::json!({ "model": self.cfg.model, "input": input });
        if self.cfg.input_type {
            body["input_type"] = match kind {
                EmbedAs::Query => "query".into(),
                EmbedAs::Document => "passage".into(),
            };
        }
        let mut req = self.http.post(&self.url).json(&body);
        if let Some(key) = &self.cfg.api_key {
            req = req.bearer_auth(key);
        }
        let failed = |e: reqwest::Error| EmbedError::Request {
            url: self.url.clone(),
            reason: e.to_string(),
        };
        let resp = req.send().await.map_err(failed)?;
        let status = resp.status();
        let text = resp.text().await.map_err(failed)?;
        if !status.is_success() {
            return Err(EmbedError::Status {
                url: self.url.clone(),
                status: status.as_u16(),
                body: text.chars().take(300).collect(),
            });
        }
        let unusable = |why: String| EmbedError::Answer {
            url: self.url.clone(),
            why,
        };
        let answer: Answer = serde_json::from_str(&text).map_err(|e| unusable(e.to_string()))?;
        if answer.data.len() != texts.len() {
            return Err(unusable(format!(
                "{} vectors for {} texts",
                answer.data.len(),
                texts.len()
            )));
        }
        let mut items = answer.data;
        if items.iter().all(|i| i.index.is_some()) {
            items.sort_by_key(|i| i.index);
        }
        let dims = items.first().map(|i| i.embedding.len()).unwrap_or_default();
        if dims == 0
            || items
                .iter()
                .any(|i| i.embedding.len() != dims || i.embedding.iter().any(|x| !x.is_finite()))
        {
            return Err(unusable("empty, uneven or non-finite vectors".to_string()));
        }
        Ok(items.into_iter().map(|i| i.embedding).collect())
    }
}

/// What the database asks for a search's query vector, and tells of writes.
#[derive(Debug)]
struct Attached {
    client: Client,
    written: Arc<Notify>,
}

#[async_trait::async_trait]
impl Embed for Attached {
    async fn query(&self, text: &str) -> Option<QueryVector> {
        let timeout = Duration::from_millis(self.client.cfg.timeout_ms);
        match self.client.embed(&[text], EmbedAs::Query, timeout).await {
            Ok(mut v) => v.pop().map(|values| QueryVector {
                model: self.client.cfg.model.clone(),
                values,
                min_similarity: self.client.cfg.min_similarity,
            }),
            Err(e) => {
                tracing::warn!(error = %e, "no query embedding: this search is keyword only");
                None
            }
        }
    }

    fn written(&self) {
        self.written.notify_one();
    }
}

/// The embeddings service: records' vectors, computed by the worker, the
/// backfill job and imports. Inert when embeddings are off.
#[derive(Debug, Clone)]
pub struct Embeddings {
    db: Db,
    client: Option<Client>,
    written: Arc<Notify>,
    /// How many passes the worker has finished (tests wait on it).
    passes: Arc<watch::Sender<u64>>,
}

/// What one backfill run did in one organisation.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct BackfillReport {
    pub embedded: u64,
    /// Why it stopped early (the endpoint failed); the next run goes on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failed: Option<String>,
}

impl Embeddings {
    /// `db` with the query embedder `cfg` describes attached (unchanged when
    /// embeddings are off), and the service computing records' vectors.
    pub fn attach(db: Db, cfg: &EmbeddingsConfig) -> (Db, Embeddings) {
        let written = Arc::new(Notify::new());
        let client = Client::from_config(cfg);
        let db = match &client {
            Some(client) => db.with_embedder(Arc::new(Attached {
                client: client.clone(),
                written: written.clone(),
            })),
            None => db,
        };
        let service = Embeddings {
            db: db.clone(),
            client,
            written,
            passes: Arc::new(watch::Sender::new(0)),
        };
        (db, service)
    }

    pub fn enabled(&self) -> bool {
        self.client.is_some()
    }

    /// Compute and store the vectors missing for active records (of `org`
    /// when given; among the newest when `recent`), batch by batch, until none
    /// is missing. Returns how many were stored.
    pub async fn catch_up(&self, org: Option<&str>, recent: bool) -> Result<u64, EmbedError> {
        let Some(client) = &self.client else {
            return Ok(0);
        };
        let timeout = Duration::from_millis(client.cfg.batch_timeout_ms);
        let batch = client.cfg.batch_size as i64;
        let mut stored = 0;
        loop {
            let due: Vec<Unembedded> = self
                .db
                .records()
                .unembedded(org, client.model(), recent, batch)
                .await?;
            if due.is_empty() {
                return Ok(stored);
            }
            let texts: Vec<&str> = due.iter().map(|r| r.content.as_str()).collect();
            let vectors = client.embed(&texts, EmbedAs::Document, timeout).await?;
            let pairs: Vec<(Unembedded, Vec<f32>)> = due.into_iter().zip(vectors).collect();
            let now = self
                .db
                .records()
                .store_vectors(client.model(), &pairs)
                .await?;
            if now == 0 {
                // Each changed meanwhile (forgotten, rewritten): the next pass sees them as they are.
                return Ok(stored);
            }
            stored += now;
        }
    }

    /// The background worker of `serve` (see [`EmbeddingsWorker`]).
    pub fn worker(&self) -> EmbeddingsWorker {
        EmbeddingsWorker(self.clone())
    }

    /// At start, vectors for every record missing one; then after writes (and
    /// every minute) for the newest records. A failure is logged and tried
    /// again later. Never returns.
    async fn keep_up(&self) {
        let mut wait = Duration::from_secs(1);
        // The first pass, at start, looks at every record.
        let mut first = true;
        loop {
            if !first {
                tokio::select! {
                    _ = self.written.notified() => {}
                    _ = tokio::time::sleep(Duration::from_secs(60)) => {}
                }
            }
            let recent = !std::mem::take(&mut first);
            let done = self.catch_up(None, recent).await;
            self.passes.send_modify(|n| *n += 1);
            match done {
                Ok(_) => wait = Duration::from_secs(1),
                Err(e) => {
                    tracing::warn!(error = %e, "record embeddings not computed; tried again later");
                    tokio::time::sleep(wait).await;
                    wait = (wait * 2).min(Duration::from_secs(300));
                }
            }
        }
    }
}

/// Records' vectors computed off the turn's path, after writes; idle when
/// embeddings are off.
pub struct EmbeddingsWorker(Embeddings);

#[async_trait::async_trait]
impl Worker for EmbeddingsWorker {
    fn name(&self) -> &'static str {
        "embeddings"
    }

    async fn run(self: Box<Self>, shutdown: CancellationToken) -> Result<(), WorkerError> {
        if self.0.enabled() {
            tokio::select! {
                () = shutdown.cancelled() => {}
                () = self.0.keep_up() => {}
            }
        } else {
            shutdown.cancelled().await;
        }
        Ok(())
    }
}

impl Embeddings {
    /// The worker's finished passes, counted (tests wait for the pass after a write).
    pub fn passes(&self) -> watch::Receiver<u64> {
        self.passes.subscribe()
    }
}

/// One backfill slot every 15 minutes.
pub const BACKFILL_SLOT_MS: i64 = 15 * 60_000;

#[async_trait::async_trait]
impl Job for Embeddings {
    type Report = BackfillReport;
    const NAME: &'static str = "embeddings_backfill";
    const AUDIT_ACTION: &'static str = "memory.embeddings_backfill";
    const SLOT_MS: i64 = BACKFILL_SLOT_MS;
    const SCHEDULE: Schedule = Schedule::Backoff {
        first: Duration::from_secs(15 * 60),
        max: Duration::from_secs(6 * 3600),
    };
    async fn run_org(&self, org: &str, _now: i64) -> crate::error::Result<BackfillReport> {
        match self.catch_up(Some(org), false).await {
            Ok(embedded) => Ok(BackfillReport {
                embedded,
                failed: None,
            }),
            Err(EmbedError::Store(e)) => Err(e.into()),
            Err(e) => {
                tracing::warn!(error = %e, org, "embeddings backfill stopped");
                Ok(BackfillReport {
                    embedded: 0,
                    failed: Some(e.to_string()),
                })
            }
        }
    }
    fn failed(report: &BackfillReport) -> bool {
        report.failed.is_some()
    }
}
