//! Every role, measured: each call's latency, outcome and tokens go to the
//! loop's [`Metrics`] under the role's name, whichever provider answers it.

use super::usage::measured;
use super::{
    Consolidator, Extractor, Judge, JudgedRetirement, LlmError, MergeGroup, Models, Provenance,
    ReplyContext, Responder, Roles, Summarizer,
};
use crate::metrics::{CallOutcome, Metrics, ModelCall, ModelRole};
use memory::{Candidate, MemoryRecord, StoredMessage};
use std::future::Future;
use std::sync::Arc;
use std::time::Instant;

/// A role's model and where its calls are counted.
struct Metered<T: ?Sized> {
    inner: Arc<T>,
    role: ModelRole,
    metrics: Metrics,
}

impl<T: ?Sized> Metered<T> {
    fn wrap(inner: Arc<T>, role: ModelRole, metrics: &Metrics) -> Arc<Self> {
        Arc::new(Metered {
            inner,
            role,
            metrics: metrics.clone(),
        })
    }

    async fn call<R, F>(&self, f: F) -> Result<R, LlmError>
    where
        F: Future<Output = Result<R, LlmError>>,
    {
        let started = Instant::now();
        let (out, (prompt_tokens, completion_tokens)) = measured(f).await;
        self.metrics.model_call(ModelCall {
            role: self.role,
            outcome: if out.is_ok() {
                CallOutcome::Ok
            } else {
                CallOutcome::Failed
            },
            took: started.elapsed(),
            prompt_tokens,
            completion_tokens,
        });
        out
    }
}

#[async_trait::async_trait]
impl Extractor for Metered<dyn Extractor> {
    async fn extract(&self, text: &str) -> Result<Vec<Candidate>, LlmError> {
        self.call(self.inner.extract(text)).await
    }

    async fn extract_labelled(&self, text: &str) -> Result<super::Extraction, LlmError> {
        self.call(self.inner.extract_labelled(text)).await
    }
}

#[async_trait::async_trait]
impl Responder for Metered<dyn Responder> {
    async fn respond(&self, ctx: &ReplyContext<'_>) -> Result<String, LlmError> {
        self.call(self.inner.respond(ctx)).await
    }
    fn reads_prompt(&self) -> bool {
        self.inner.reads_prompt()
    }
}

#[async_trait::async_trait]
impl Judge for Metered<dyn Judge> {
    fn provenance(&self) -> Provenance<'_> {
        self.inner.provenance()
    }
    async fn judge(
        &self,
        new: &MemoryRecord,
        candidates: &[MemoryRecord],
    ) -> Result<Vec<JudgedRetirement>, LlmError> {
        self.call(self.inner.judge(new, candidates)).await
    }
}

#[async_trait::async_trait]
impl Consolidator for Metered<dyn Consolidator> {
    fn provenance(&self) -> Provenance<'_> {
        self.inner.provenance()
    }
    async fn consolidate(&self, records: &[MemoryRecord]) -> Result<Vec<MergeGroup>, LlmError> {
        self.call(self.inner.consolidate(records)).await
    }
}

#[async_trait::async_trait]
impl Summarizer for Metered<dyn Summarizer> {
    async fn summarize(&self, slice: &[StoredMessage]) -> Result<String, LlmError> {
        self.call(self.inner.summarize(slice)).await
    }
}

impl Roles {
    /// These roles with every call counted in `metrics`.
    pub fn metered(self, metrics: &Metrics) -> Roles {
        Roles {
            judge: self
                .judge
                .map(|j| -> Arc<dyn Judge> { Metered::wrap(j, ModelRole::Judge, metrics) }),
            consolidator: Metered::wrap(self.consolidator, ModelRole::Consolidator, metrics),
            summarizer: self.summarizer.map(|s| -> Arc<dyn Summarizer> {
                Metered::wrap(s, ModelRole::Summarizer, metrics)
            }),
            usage: self.usage,
        }
    }
}

impl Models {
    /// These models with every call counted in `metrics`.
    pub fn metered(self, metrics: &Metrics) -> Models {
        Models {
            extractor: Metered::wrap(self.extractor, ModelRole::Extractor, metrics),
            responder: Metered::wrap(self.responder, ModelRole::Responder, metrics),
            roles: self.roles.metered(metrics),
        }
    }
}
