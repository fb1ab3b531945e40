//! Prometheus `/metrics` as an operator scrapes it: off by
//! default, behind `metrics.token` on the main listener, or on its own
//! `metrics.listen`; turn, model, policy, refusal, duplicate and job counts
//! move when the bot does something.

use axum::body::Body;
use axum::http::{header, Request, StatusCode};
use http_body_util::BodyExt;
use memory::Role;
use steward::http::{app, serve_metrics, AppState};
use steward::Config;
use steward_tests::Harness;
use tower::ServiceExt;

const TOKEN: &str = "metrics-token-0123456789";

/// `GET /metrics` on the main app with `token` (or none): status and body.
async fn scrape(h: &Harness, token: Option<&str>) -> (StatusCode, String) {
    let mut req = Request::get("/metrics");
    if let Some(t) = token {
        req = req.header(header::AUTHORIZATION, format!("Bearer {t}"));
    }
    let resp = app(AppState::new(h.services.clone()))
        .oneshot(req.body(Body::empty()).expect("request"))
        .await
        .expect("router");
    let status = resp.status();
    let bytes = resp.into_body().collect().await.expect("body").to_bytes();
    (status, String::from_utf8_lossy(&bytes).into_owned())
}

/// The value of the sample `series` (name and labels exactly as rendered), 0 when absent.
fn sample(text: &str, series: &str) -> f64 {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
        .unwrap_or(0.0)
}

fn with_token() -> Config {
    let mut cfg = Config::default();
    cfg.metrics.token = Some(TOKEN.into());
    cfg
}

#[tokio::test]
async fn metrics_move_when_a_turn_runs() {
    let h = Harness::with_config(with_token()).await;
    h.pair("222", Role::User).await;
    let (status, before) = scrape(&h, Some(TOKEN)).await;
    assert_eq!(status, StatusCode::OK, "{before}");

    assert!(h.dm("222", "I prefer tea").await.contains("Remember this?"));
    // A statement the rules do not know is read by the extractor.
    h.dm("222", "Green tea keeps me going").await;
    h.dm("222", "What is on the wiki?").await;
    let (_, after) = scrape(&h, Some(TOKEN)).await;

    let moved = |series: &str, by: f64| {
        let (b, a) = (sample(&before, series), sample(&after, series));
        assert!(a - b >= by, "{series}: {b} -> {a}\n{after}");
    };
    moved(
        "steward_turn_duration_seconds_count{channel=\"discord\"}",
        2.0,
    );
    moved(
        "steward_model_calls_total{role=\"extractor\",outcome=\"ok\"}",
        1.0,
    );
    moved(
        "steward_model_calls_total{role=\"responder\",outcome=\"ok\"}",
        1.0,
    );
    moved(
        "steward_model_call_duration_seconds_count{role=\"responder\"}",
        1.0,
    );
    moved("steward_policy_decisions_total{outcome=\"proposed\"}", 1.0);
    assert!(
        after.contains("# TYPE steward_turn_duration_seconds histogram"),
        "{after}"
    );
}

#[tokio::test]
async fn refusals_duplicates_and_job_runs_are_counted() {
    let mut cfg = with_token();
    cfg.rate_limit.sender_burst = 1;
    cfg.rate_limit.per_sender_per_minute = 1;
    let h = Harness::with_config(cfg).await;
    h.pair("333", Role::User).await;
    // A redelivery of one platform id runs once; the second is a dedupe hit.
    let mut msg = h.inbound(
        Some("333"),
        "dm:333",
        adapters::ConversationKind::Direct,
        "hello",
    );
    msg.platform_id = Some("m-1".into());
    let at = msg.at;
    let first = h.send(msg.clone()).await;
    assert_eq!(h.send(msg).await, first, "answered with the stored reply");
    // Past the burst, in the same instant: refused.
    let mut fast = h.inbound(
        Some("333"),
        "dm:333",
        adapters::ConversationKind::Direct,
        "again",
    );
    fast.at = at;
    let reply = steward_tests::join(h.send(fast).await);
    assert!(reply.contains("slow down"), "{reply}");
    // One slot of the retention job.
    h.services
        .jobs()
        .run_if_due(h.services.lifecycle().as_ref(), 1, h.now_ms())
        .await
        .expect("memory_expire");

    let (_, text) = scrape(&h, Some(TOKEN)).await;
    assert_eq!(
        sample(&text, "steward_duplicates_total{kind=\"message\"}"),
        1.0,
        "{text}"
    );
    assert_eq!(
        sample(&text, "steward_refusals_total{reason=\"rate_limit\"}"),
        1.0,
        "{text}"
    );
    assert_eq!(
        sample(
            &text,
            "steward_job_runs_total{job=\"memory_expire\",outcome=\"ran\"}"
        ),
        1.0,
        "{text}"
    );
}

#[tokio::test]
async fn the_main_listener_serves_metrics_only_behind_the_token() {
    // No [metrics]: not served at all.
    let h = Harness::new().await;
    let (status, _) = scrape(&h, None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    // With a token: refused without it or with a wrong one.
    let h = Harness::with_config(with_token()).await;
    for token in [None, Some("not-the-metrics-token")] {
        let (status, body) = scrape(&h, token).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{token:?}: {body}");
        assert!(!body.contains("steward_"), "{body}");
    }
}

#[tokio::test]
async fn metrics_listen_serves_them_on_their_own_address() {
    let mut cfg = Config::default();
    cfg.metrics.listen = Some("127.0.0.1:0".into());
    let h = Harness::with_config(cfg).await;
    h.pair("444", Role::User).await;
    h.dm("444", "I prefer green tea").await;
    // The main listener has no /metrics without a token.
    assert_eq!(scrape(&h, None).await.0, StatusCode::NOT_FOUND);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(serve_metrics(
        listener,
        AppState::new(h.services.clone()),
        async {
            let _ = stopped.await;
        },
    ));
    let resp = reqwest::get(format!("http://{addr}/metrics"))
        .await
        .expect("scrape");
    assert_eq!(resp.status(), 200);
    let text = resp.text().await.expect("body");
    assert!(
        sample(
            &text,
            "steward_policy_decisions_total{outcome=\"proposed\"}"
        ) >= 1.0,
        "{text}"
    );
    // Only /metrics is there: not the API or the dashboard.
    let other = reqwest::get(format!("http://{addr}/dashboard"))
        .await
        .expect("request");
    assert_eq!(other.status(), 404);
    let _ = stop.send(());
    server.await.expect("join").expect("served");
}

/// Through a real OpenAI-compatible wire (the fake server): each role's
/// tokens are counted under its name, and a call that fails is counted failed.
#[tokio::test]
async fn model_tokens_and_failures_are_counted_by_role() {
    use steward_tests::fake_llm::{Answer, FakeLlm, TEXT};
    let fake = FakeLlm::start().await;
    let mut cfg = fake.config();
    cfg.metrics.token = Some(TOKEN.into());
    cfg.llm.timeout_ms = 300;
    let h = Harness::with_config(cfg).await;
    h.pair("555", Role::User).await;
    assert_eq!(
        // A statement of the speaker's the rules do not key, beside the
        // question: the extractor reads it, the responder answers.
        h.dm(
            "555",
            "My desk is by the annex window. Where is the runbook?"
        )
        .await,
        "Fake model reply."
    );
    let (_, text) = scrape(&h, Some(TOKEN)).await;
    for role in ["extractor", "responder"] {
        for kind in ["prompt", "completion"] {
            let series = format!("steward_model_tokens_total{{role=\"{role}\",kind=\"{kind}\"}}");
            assert!(sample(&text, &series) > 0.0, "{series}\n{text}");
        }
    }
    // The two roles' tokens are the provider's total, none counted twice.
    let usage = h.services.token_usage();
    let counted: f64 = ["extractor", "responder"]
        .iter()
        .map(|role| {
            sample(
                &text,
                &format!("steward_model_tokens_total{{role=\"{role}\",kind=\"prompt\"}}"),
            )
        })
        .sum();
    assert_eq!(counted, usage.prompt_tokens as f64, "{text}");

    fake.push(TEXT, Answer::Hang);
    h.dm("555", "And the VPN?").await;
    let (_, text) = scrape(&h, Some(TOKEN)).await;
    assert_eq!(
        sample(
            &text,
            "steward_model_calls_total{role=\"responder\",outcome=\"failed\"}"
        ),
        1.0,
        "{text}"
    );
}
