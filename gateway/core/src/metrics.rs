//! Prometheus metrics of one turn loop (docs/operations.md, "Metrics"): turn latency by channel,
//! model calls, latency, tokens and failures by role, write-policy decisions
//! by outcome, refusals, duplicates and job runs.
//!
//! Each [`Metrics`] owns its own recorder (no global one is installed), so two
//! loops in one process — tests, replay beside `serve` — never share counters.
//! `/metrics` renders it (`http.rs`; where it is served is `[metrics]`).

use metrics::{Key, KeyName, Label, Metadata, Recorder, SharedString, Unit};
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusRecorder};
use std::sync::Arc;
use std::time::Duration;

const TURN_SECONDS: &str = "steward_turn_duration_seconds";
const MODEL_CALLS: &str = "steward_model_calls_total";
const MODEL_SECONDS: &str = "steward_model_call_duration_seconds";
const MODEL_TOKENS: &str = "steward_model_tokens_total";
const POLICY: &str = "steward_policy_decisions_total";
const REFUSALS: &str = "steward_refusals_total";
const DUPLICATES: &str = "steward_duplicates_total";
const JOB_RUNS: &str = "steward_job_runs_total";
const SKILL_USES: &str = "steward_skill_uses_total";
const RUNS: &str = "steward_runs_total";
const RUN_SECONDS: &str = "steward_run_duration_seconds";
const EXTERNAL_TOOL_CALLS: &str = "steward_external_tool_calls_total";

/// Histogram buckets, in seconds: a deterministic turn takes milliseconds,
/// one with a local model tens of seconds.
const BUCKETS: &[f64] = &[
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0,
];

/// Where metrics are registered: this module.
static METADATA: Metadata<'static> =
    Metadata::new(module_path!(), metrics::Level::INFO, Some(module_path!()));

/// A model role, as the `role` label names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelRole {
    Extractor,
    Responder,
    Judge,
    Consolidator,
    Summarizer,
}

impl ModelRole {
    pub fn as_str(self) -> &'static str {
        match self {
            ModelRole::Extractor => "extractor",
            ModelRole::Responder => "responder",
            ModelRole::Judge => "judge",
            ModelRole::Consolidator => "consolidator",
            ModelRole::Summarizer => "summarizer",
        }
    }
}

/// What the write policy made of an item (the `outcome` label).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PolicyOutcome {
    /// Saved active (explicit, `auto_keep`, a "yes").
    Written,
    /// Asked as "Remember this?".
    Proposed,
    /// Kept unverified, for review.
    Quarantined,
    /// Not kept (a non-admin's operational item, a credential, a task).
    Dropped,
    /// An extracted item the speaker's own words do not support (dropped).
    Unsupported,
    /// Refused with a reason to the speaker (a directive or tool without the
    /// authority, a text over the cap, consent refused at "yes").
    Refused,
}

impl PolicyOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            PolicyOutcome::Written => "written",
            PolicyOutcome::Proposed => "proposed",
            PolicyOutcome::Quarantined => "quarantined",
            PolicyOutcome::Dropped => "dropped",
            PolicyOutcome::Unsupported => "unsupported",
            PolicyOutcome::Refused => "refused",
        }
    }
}

/// Why a message was refused before its turn ran (the `reason` label).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Past `[rate_limit]` (sender or conversation).
    RateLimit,
    /// Longer than `turn.max_message_chars`.
    TooLong,
}

impl Refusal {
    pub fn as_str(self) -> &'static str {
        match self {
            Refusal::RateLimit => "rate_limit",
            Refusal::TooLong => "too_long",
        }
    }
}

/// What a dedupe caught (the `kind` label).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Duplicate {
    /// A platform redelivered a message id already stored.
    Message,
    /// An item already known, asked or declined was not written again.
    Record,
}

impl Duplicate {
    pub fn as_str(self) -> &'static str {
        match self {
            Duplicate::Message => "message",
            Duplicate::Record => "record",
        }
    }
}

/// How a job's slot went (the `outcome` label).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobOutcome {
    /// Ran in every organisation.
    Ran,
    /// Ran, and its report says its model calls failed.
    Degraded,
    /// Failed with an error.
    Failed,
    /// Not run: its slot was already claimed (by this replica, or another).
    NotDue,
}

impl JobOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            JobOutcome::Ran => "ran",
            JobOutcome::Degraded => "degraded",
            JobOutcome::Failed => "failed",
            JobOutcome::NotDue => "not_due",
        }
    }
}

/// Whether a model call answered (the `outcome` label).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallOutcome {
    Ok,
    Failed,
}

impl CallOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            CallOutcome::Ok => "ok",
            CallOutcome::Failed => "failed",
        }
    }
}

/// One model call, measured.
#[derive(Debug, Clone, Copy)]
pub struct ModelCall {
    pub role: ModelRole,
    pub outcome: CallOutcome,
    pub took: Duration,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

/// The metrics of one turn loop; clones share them.
#[derive(Clone)]
pub struct Metrics {
    recorder: Arc<PrometheusRecorder>,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

impl Metrics {
    pub fn new() -> Metrics {
        // The buckets are a constant, non-empty list, which is all this can
        // refuse; a refusal would leave summaries instead of histograms.
        let builder = PrometheusBuilder::new()
            .set_buckets(BUCKETS)
            .unwrap_or_else(|_| PrometheusBuilder::new());
        let recorder = builder.build_recorder();
        let described = [
            (TURN_SECONDS, Unit::Seconds, "Time one turn took, by channel."),
            (MODEL_CALLS, Unit::Count, "Model calls by role and outcome."),
            (MODEL_SECONDS, Unit::Seconds, "Time one model call took, by role."),
            (MODEL_TOKENS, Unit::Count, "Tokens model calls used, by role and kind (prompt, completion)."),
            (POLICY, Unit::Count, "Write-policy decisions by outcome (written, proposed, quarantined, dropped, refused)."),
            (REFUSALS, Unit::Count, "Messages refused before their turn, by reason (rate_limit, too_long)."),
            (DUPLICATES, Unit::Count, "Dedupe hits: redelivered messages and items already known."),
            (JOB_RUNS, Unit::Count, "Background job slots by job and outcome."),
            (SKILL_USES, Unit::Count, "Replies that followed an approved skill, by skill."),
            (RUNS, Unit::Count, "Automated runs by trigger (schedule, webhook, on_demand) and outcome."),
            (RUN_SECONDS, Unit::Seconds, "Time one automated run took, delivery included, by trigger."),
        ];
        for (name, unit, help) in described {
            let key = KeyName::from_const_str(name);
            let help = SharedString::const_str(help);
            if unit == Unit::Seconds {
                recorder.describe_histogram(key, Some(unit), help);
            } else {
                recorder.describe_counter(key, Some(unit), help);
            }
        }
        Metrics {
            recorder: Arc::new(recorder),
        }
    }

    fn count(&self, name: &'static str, labels: Vec<Label>, by: u64) {
        let key = Key::from_parts(name, labels);
        self.recorder
            .register_counter(&key, &METADATA)
            .increment(by);
    }

    fn observe(&self, name: &'static str, labels: Vec<Label>, took: Duration) {
        let key = Key::from_parts(name, labels);
        self.recorder
            .register_histogram(&key, &METADATA)
            .record(took.as_secs_f64());
    }

    /// A turn on `channel` took `took`.
    pub fn turn(&self, channel: &str, took: Duration) {
        self.observe(
            TURN_SECONDS,
            vec![Label::new("channel", channel.to_string())],
            took,
        );
    }

    pub fn model_call(&self, call: ModelCall) {
        let role = call.role.as_str();
        self.count(
            MODEL_CALLS,
            vec![
                Label::from_static_parts("role", role),
                Label::from_static_parts("outcome", call.outcome.as_str()),
            ],
            1,
        );
        self.observe(
            MODEL_SECONDS,
            vec![Label::from_static_parts("role", role)],
            call.took,
        );
        for (kind, tokens) in [
            ("prompt", call.prompt_tokens),
            ("completion", call.completion_tokens),
        ] {
            self.count(
                MODEL_TOKENS,
                vec![
                    Label::from_static_parts("role", role),
                    Label::from_static_parts("kind", kind),
                ],
                tokens,
            );
        }
    }

    pub fn policy(&self, outcome: PolicyOutcome) {
        self.count(
            POLICY,
            vec![Label::from_static_parts("outcome", outcome.as_str())],
            1,
        );
    }

    pub fn refused(&self, reason: Refusal) {
        self.count(
            REFUSALS,
            vec![Label::from_static_parts("reason", reason.as_str())],
            1,
        );
    }

    /// A model's call of an external tool (`server/name`) ended with `outcome`.
    pub fn external_tool_call(&self, tool: &str, outcome: &'static str) {
        self.count(
            EXTERNAL_TOOL_CALLS,
            vec![
                Label::new("tool", tool.to_string()),
                Label::from_static_parts("outcome", outcome),
            ],
            1,
        );
    }

    /// A reply followed the approved skill `slug`.
    pub fn skill_used(&self, slug: &str) {
        self.count(SKILL_USES, vec![Label::new("skill", slug.to_string())], 1);
    }

    /// An automated run ended with `outcome` after `took`.
    pub fn run(&self, trigger: &'static str, outcome: &'static str, took: Duration) {
        self.count(
            RUNS,
            vec![
                Label::from_static_parts("trigger", trigger),
                Label::from_static_parts("outcome", outcome),
            ],
            1,
        );
        self.observe(
            RUN_SECONDS,
            vec![Label::from_static_parts("trigger", trigger)],
            took,
        );
    }

    pub fn duplicate(&self, kind: Duplicate) {
        self.count(
            DUPLICATES,
            vec![Label::from_static_parts("kind", kind.as_str())],
            1,
        );
    }

    pub fn job(&self, job: &'static str, outcome: JobOutcome) {
        self.count(
            JOB_RUNS,
            vec![
                Label::from_static_parts("job", job),
                Label::from_static_parts("outcome", outcome.as_str()),
            ],
            1,
        );
    }

    /// Everything, in Prometheus' text exposition format.
    pub fn render(&self) -> String {
        self.recorder.handle().render()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_loops_count_apart() {
        let (a, b) = (Metrics::new(), Metrics::new());
        a.policy(PolicyOutcome::Proposed);
        a.turn("discord", Duration::from_millis(3));
        let text = a.render();
        assert!(
            text.contains("steward_policy_decisions_total{outcome=\"proposed\"} 1"),
            "{text}"
        );
        assert!(
            text.contains(
                "steward_turn_duration_seconds_bucket{channel=\"discord\",le=\"0.005\"} 1"
            ),
            "{text}"
        );
        assert!(!b.render().contains("proposed"), "{}", b.render());
    }
}
