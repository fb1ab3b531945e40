//! Rates per tool and per person, automated runs, replay, and tool calls written as text.

use super::*;

/// A tool's own rate (its approval's) and a person's rate (`[mcp]
/// calls_per_minute`) each stop a call before it reaches the server, with
/// steward's own line in the reply saying which and how long to wait; the
/// refusal is audited and counted as `rate_limited`; another person, another
/// tool, and the same call a minute later go through.
#[tokio::test]
async fn per_tool_and_per_person_rates_stop_a_call_with_a_clear_reply_until_the_minute_passes() {
    for (name, db) in both_dbs().await {
        let fake = FakeLlm::start().await;
        let server = Server::new(&[lookup_ticket(), order_status()]);
        let clock = steward::clock::ManualClock::at(1_767_603_600_000);
        let h = harness_on(
            &fake,
            db,
            server.stdio(),
            |cfg| cfg.mcp.calls_per_minute = 3,
            Some(Arc::new(clock.clone())),
        )
        .await;
        h.pair("bob", Role::User).await;
        let rated = Grant {
            per_minute: Some(2),
            ..Grant::default()
        };
        let refused = decide(
            &h,
            "order_status",
            &["user"],
            Grant {
                per_minute: Some(0),
                ..rated
            },
        )
        .await;
        assert_eq!(refused.err(), Some(ExternalToolRefusal::BadRate), "{name}");
        decide(&h, "order_status", &["user"], rated)
            .await
            .expect("approved");
        approve(&h, "lookup_ticket", &["user"], false).await;
        let ticket = |n: u32| {
            let id = format!("INC-{n}");
            move |fake: &FakeLlm| {
                fake.clear_received();
                fake.push(TEXT, Answer::tool("lookup_ticket", json!({ "id": id })));
                fake.push(TEXT, Answer::Content("Checked.".into()));
            }
        };

        // The tool's rate: two calls a minute, whoever makes them.
        ask_with_call(&fake, &h, "ana", "order_status", "A-1").await;
        ask_with_call(&fake, &h, "bob", "order_status", "A-2").await;
        let reply = ask_with_call(&fake, &h, "ana", "order_status", "A-3").await;
        assert!(
            reply.contains(
                "`order_status` was not run: it was called too often this minute. Try again in"
            ),
            "{name}: {reply}"
        );
        let wait = wait_said(&reply);
        assert!((1..=60).contains(&wait), "{name}: {wait}");
        let result = &fake.received_for(TEXT)[1].tool_results()[0].1;
        assert!(result.starts_with("Refused"), "{name}: {result}");
        assert_eq!(server.calls().len(), 2, "{name}: {:?}", server.calls());

        // The person's rate: ana's third call this minute, whatever the tool
        // (the refused one spent none of it), and her fourth is refused.
        for n in [1, 2] {
            ticket(n)(&fake);
            let reply = h.dm("ana", "Look it up").await;
            assert!(!reply.contains("was not run"), "{name}: {reply}");
        }
        ticket(3)(&fake);
        let reply = h.dm("ana", "Look it up").await;
        assert!(
            reply.contains("`lookup_ticket` was not run: you made too many tool calls this minute. Try again in"),
            "{name}: {reply}"
        );
        assert!(
            !server.calls().iter().any(|c| c.contains("INC-3")),
            "{name}: {:?}",
            server.calls()
        );
        // Bob's own calls are his.
        ticket(4)(&fake);
        let reply = h.dm("bob", "Look it up").await;
        assert!(!reply.contains("was not run"), "{name}: {reply}");

        let audit = h.db().audit().log(ORG, 100).await.unwrap();
        let limited = audit_calls(&audit)
            .into_iter()
            .filter(|d| d.contains("rate_limited"))
            .count();
        assert_eq!(limited, 2, "{name}");
        let metrics = h.services.metrics().render();
        for tool in ["order_status", "lookup_ticket"] {
            let line = format!(
                "steward_external_tool_calls_total{{tool=\"helpdesk/{tool}\",outcome=\"rate_limited\"}} 1"
            );
            assert!(metrics.contains(&line), "{name}: {metrics}");
        }

        // A minute later both rates let the same calls through.
        clock.set(1_767_603_600_000 + 61_000);
        let reply = ask_with_call(&fake, &h, "ana", "order_status", "A-3").await;
        assert!(!reply.contains("was not run"), "{name}: {reply}");
        ticket(3)(&fake);
        let reply = h.dm("ana", "Look it up").await;
        assert!(!reply.contains("was not run"), "{name}: {reply}");
        assert!(
            server.calls().iter().any(|c| c.contains("INC-3")),
            "{name}: {:?}",
            server.calls()
        );
        stop(&h).await;
    }
}

/// An automated run is offered only the tools approved for runs: its call of
/// one is answered and audited with the run as the caller; a tool approved
/// for people only is not offered to it, and a forged call of it from the
/// run's model output is refused and never reaches the server. A tool whose
/// calls wait for a yes is not approved for runs at all.
#[tokio::test]
async fn an_automated_run_gets_only_tools_approved_for_runs() {
    use memory::run::Trigger;
    use steward::config::{Deliver, Procedure, RunTarget};
    for (name, db) in both_dbs().await {
        let fake = FakeLlm::start().await;
        let create = tool(
            "create_ticket",
            "Open a ticket.",
            json!({"text": "Opened."}),
        );
        let server = Server::new(&[lookup_ticket(), order_status(), create]);
        let h = harness(&fake, db, server.stdio()).await;
        let for_runs = Grant {
            runs: true,
            ..Grant::default()
        };
        decide(&h, "order_status", &["user"], for_runs)
            .await
            .expect("approved");
        approve(&h, "lookup_ticket", &["user"], false).await;
        let confirmed = decide(
            &h,
            "create_ticket",
            &["user"],
            Grant {
                confirm: true,
                ..for_runs
            },
        )
        .await;
        assert_eq!(
            confirmed.err(),
            Some(ExternalToolRefusal::ConfirmedForRuns),
            "{name}"
        );
        let shown = steward::mcp::review_line(&listing(&h, "order_status").await);
        assert!(shown.contains("runs"), "{name}: {shown}");

        let echo = echo_results("Report: ", " | ");
        fake.push(
            TEXT,
            Answer::ToolCalls(vec![
                ("order_status".into(), json!({"topic": "42"})),
                ("lookup_ticket".into(), json!({"id": "INC-9"})),
            ]),
        );
        fake.push(TEXT, echo);
        let runner = steward::runs::Runner::new(&h.services);
        let target = RunTarget {
            name: "orders".into(),
            org: ORG.into(),
            agent: "default".into(),
            procedure: Procedure::Text("Report the status of order 42".into()),
            deliver: Deliver::Dashboard,
        };
        let prepared = runner
            .prepare(&target, Trigger::OnDemand)
            .await
            .expect("prepared");
        let start = steward::runs::Start {
            by: "admin".into(),
            payload: None,
        };
        let run = runner.run_now(&prepared, &start).await.expect("run");

        let offered_run = offered(&fake);
        assert!(
            offered_run.contains(&"order_status".into()),
            "{name}: {offered_run:?}"
        );
        assert!(
            !offered_run.contains(&"lookup_ticket".into()),
            "{name}: {offered_run:?}"
        );
        assert!(
            !offered_run.contains(&"create_ticket".into()),
            "{name}: {offered_run:?}"
        );
        assert_eq!(server.calls(), [r#"order_status {"topic":"42"}"#], "{name}");
        let lines = runner.lines(&run).await.expect("lines");
        let answer = &lines.last().expect("an answer").text;
        assert!(answer.contains("shipped on Monday"), "{name}: {answer}");
        assert!(answer.contains("Refused"), "{name}: {answer}");

        let audit = h.db().audit().log(ORG, 100).await.unwrap();
        let calls: Vec<(&str, &str)> = audit
            .iter()
            .filter(|e| e.action == "tool.call")
            .map(|e| (e.actor.as_str(), e.detail.as_str()))
            .collect();
        assert_eq!(calls.len(), 2, "{name}: {calls:?}");
        assert!(
            calls.iter().all(|(actor, _)| *actor == run.conversation),
            "{name}: the run is the caller: {calls:?}"
        );
        assert!(
            calls
                .iter()
                .any(|(_, d)| d.contains("order_status") && d.contains("answered")),
            "{name}: {calls:?}"
        );
        assert!(
            calls
                .iter()
                .any(|(_, d)| d.contains("refused") && d.contains("lookup_ticket")),
            "{name}: {calls:?}"
        );
        assert!(
            h.records().await.is_empty(),
            "{name}: a run's tool result is never memory"
        );
        stop(&h).await;
    }
}

/// `steward replay` starts the MCP server of an `mcp` line and approves its
/// listings on `approve_tool` lines, so a scored transcript
/// (`gateway/eval/transcripts/tools.jsonl`) can have a model call an
/// approved tool: its answer reaches the person, a tool approved for admins
/// only is not offered to a user, and a line approving a tool no server
/// lists fails naming it.
#[tokio::test]
async fn replay_starts_a_transcripts_mcp_server_and_approves_its_tools() {
    let fake = FakeLlm::start().await;
    let refund = tool(
        "refund_order",
        "Refund an order.",
        json!({"text": "Refunded."}),
    );
    let mcp = json!({"mcp": {
        "name": "shop",
        "command": env!("CARGO_BIN_EXE_mcp_fixture"),
        "tools": [order_status(), refund],
    }});
    let lines = [
        mcp.to_string(),
        r#"{"pair":{"channel":"discord","user":"222","role":"user","name":"Ben"}}"#.into(),
        r#"{"approve_tool":{"name":"order_status","roles":["user"]}}"#.into(),
        r#"{"approve_tool":{"name":"refund_order","roles":["admin"]}}"#.into(),
        r#"{"msg":{"channel":"discord","conversation":"d2","sender":"222","text":"Where is order 4711?"}}"#.into(),
    ];
    fake.push(TEXT, Answer::tool("order_status", json!({"topic": "4711"})));
    fake.push(TEXT, echo_results("Status: ", " "));
    let out = steward::replay::replay(&lines.join("\n"), fake.config())
        .await
        .expect("replayed");
    let reply = &out.replies.last().expect("a reply").text;
    assert!(reply.contains("shipped on Monday"), "{reply}");
    let offered_ben = offered(&fake);
    assert!(
        offered_ben.contains(&"order_status".into()),
        "{offered_ben:?}"
    );
    assert!(
        !offered_ben.contains(&"refund_order".into()),
        "{offered_ben:?}"
    );

    let unknown = [
        mcp.to_string(),
        r#"{"approve_tool":{"name":"delete_everything","roles":["user"]}}"#.into(),
    ];
    let err = steward::replay::replay(&unknown.join("\n"), fake.config())
        .await
        .expect_err("no such listing");
    assert!(
        err.to_string().starts_with("line 2:") && err.to_string().contains("delete_everything"),
        "{err}"
    );
}

/// A small model's tool call written as text is governed as a structured
/// one: an approved tool's call reaches the server with its arguments; a
/// call of a tool not offered to the speaker never does, and the person
/// never sees the JSON.
#[tokio::test]
async fn a_tool_call_written_as_text_is_governed_as_a_structured_one() {
    for (name, db) in both_dbs().await {
        let fake = FakeLlm::start().await;
        let refund = tool(
            "refund_order",
            "Refund an order.",
            json!({"text": "Refunded."}),
        );
        let server = Server::new(&[order_status(), refund]);
        let h = harness(&fake, db, server.stdio()).await;
        approve(&h, "order_status", &["user"], false).await;
        approve(&h, "refund_order", &["admin"], false).await;
        let written = |tool: &str| {
            format!(
                "<tool_call>{{\"name\": \"{tool}\", \"arguments\": {{\"topic\": \"4711\"}}}}</tool_call>"
            )
        };
        for tool in ["order_status", "refund_order"] {
            fake.push(TEXT, Answer::Content(written(tool)));
            fake.push(TEXT, Answer::Content("Done looking.".into()));
            let reply = h.dm("ana", "Order 4711, please").await;
            assert!(!reply.contains("tool_call"), "{name}: {reply}");
        }
        assert_eq!(
            server.calls(),
            [r#"order_status {"topic":"4711"}"#],
            "{name}: the refund is not offered to a user"
        );
        stop(&h).await;
    }
}
