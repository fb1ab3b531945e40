//! The `openai` provider against a fake OpenAI-compatible server speaking the
//! real `/v1/chat/completions` wire format: structured output and its
//! repair, schema bounds, temperature, retries, timeouts, the turn budget,
//! the API key, and the history a reply carries.

use memory::write::RawWrites;
use memory::Role;
use serde_json::json;
use steward::config::SchemaLimits;
use steward::llm::openai::EXTRACT_MAX_TOKENS;
use steward::Config;
use steward_tests::fake_llm::{Answer, FakeLlm, TEXT};
use steward_tests::openai::{harness, items, note, operational};
use steward_tests::Harness;

const CANT_ANSWER: &str = "I can't answer right now; your message is saved";

// --- structured output ------------------------------------------------------

#[tokio::test]
async fn structured_output_is_requested_parsed_and_memory_is_framed_as_data() {
    let fake = FakeLlm::start().await;
    let h = harness(&fake, |_| {}).await;
    h.pair("111", Role::Admin).await;
    fake.push(
        "memory_items",
        items(json!([operational(
            "procedure",
            "weekly report",
            "The weekly report is built from sales_2025"
        )])),
    );
    let asked = h
        .dm(
            "111",
            "Going forward we build the weekly numbers off sales_2025",
        )
        .await;
    assert!(
        // The admin's words, not the model's rewording of them.
        asked.contains(
            "Remember this? We build the weekly numbers off sales_2025 — reply yes or no"
        ),
        "{asked}"
    );
    let written = h.dm("111", "yes").await;
    assert!(
        written.contains("Written: agent_notes updated"),
        "{written}"
    );
    let id = h.records_containing("sales_2025").await[0].id;

    fake.push(
        TEXT,
        Answer::Content(format!(
            "It is built from sales_2025. Memory reference: {id}"
        )),
    );
    let answer = h
        .dm("111", "Which table is the weekly report built from?")
        .await;
    assert_eq!(
        answer,
        format!("It is built from sales_2025. Memory reference: {id}")
    );

    let extraction = &fake.received_for("memory_items")[0];
    let format = &extraction.body["response_format"];
    assert_eq!(format["type"], "json_schema");
    assert_eq!(format["json_schema"]["name"], "memory_items");
    assert_eq!(format["json_schema"]["strict"], true);
    assert_eq!(
        format["json_schema"]["schema"]["properties"]["items"]["items"]["properties"]["channel"]
            ["enum"],
        json!(["personal", "operational", "task"])
    );
    assert_eq!(extraction.body["model"], "fake-model");
    // The reply is plain text, with memory as data behind the fixed prefix.
    let reply = &fake.received_for(TEXT)[0];
    assert!(
        reply.body.get("response_format").is_none(),
        "{}",
        reply.body
    );
    assert!(reply.body["max_tokens"].as_u64().is_some_and(|n| n > 0));
    assert!(
        reply.text().contains(&format!(
            "<<<memory:{id} agent_notes: We build the weekly numbers off sales_2025>>>"
        )),
        "{}",
        reply.text()
    );
    assert!(reply.text().contains("MEMORY ROUTING POLICY"));
    // Usage is counted.
    let usage = h.services.token_usage();
    assert_eq!(usage.calls, fake.received().len() as u64);
    assert!(
        usage.prompt_tokens > 0 && usage.completion_tokens > 0,
        "{usage:?}"
    );
}

/// The `memory_items` schema and token cap of the first extraction request
/// steward sends under `limits`.
async fn extraction_request(limits: SchemaLimits) -> serde_json::Value {
    let fake = FakeLlm::start().await;
    let h = harness(&fake, |c| c.llm.schema_limits = limits).await;
    h.pair("111", Role::Admin).await;
    h.dm(
        "111",
        "Going forward remote staff connect through vpn.example.com",
    )
    .await;
    fake.received_for("memory_items")[0].body.clone()
}

#[tokio::test]
async fn schemas_carry_length_bounds_unless_schema_limits_is_off() {
    let on = extraction_request(SchemaLimits::On).await;
    let schema = &on["response_format"]["json_schema"]["schema"];
    let items = &schema["properties"]["items"];
    // Bounded by the source: one statement, one item; its text at most
    // twice the statement's (plus a normalising frame).
    assert_eq!(items["maxItems"], json!(1), "{schema}");
    let item = &items["items"]["properties"];
    let said = "Going forward remote staff connect through vpn.example.com"
        .chars()
        .count();
    assert_eq!(
        item["content"]["maxLength"],
        json!(memory::grounding::longest_for(said)),
        "{schema}"
    );
    assert_eq!(item["kind"]["maxLength"], json!(40), "{schema}");
    assert_eq!(item["subject"]["maxLength"], json!(100), "{schema}");
    // The extractor has its own answer cap, below the reply's, and bounded
    // by what it read.
    let cap = on["max_tokens"].as_u64().expect("cap");
    assert!(cap > 0 && cap < u64::from(EXTRACT_MAX_TOKENS), "{on}");
    assert!(EXTRACT_MAX_TOKENS < Config::default().llm.max_output_tokens);
    assert_eq!(Config::default().llm.schema_limits, SchemaLimits::On);

    let off = extraction_request(SchemaLimits::Off).await;
    let schema = &off["response_format"]["json_schema"]["schema"];
    let text = schema.to_string();
    for k in ["maxLength", "maxItems", "minLength", "minItems"] {
        assert!(!text.contains(k), "{k} in {text}");
    }
    // Everything else is the same schema.
    assert_eq!(off["response_format"]["json_schema"]["strict"], true);
    assert_eq!(
        schema["properties"]["items"]["items"]["properties"]["channel"]["enum"],
        json!(["personal", "operational", "task"])
    );
    assert_eq!(off["max_tokens"], json!(cap), "{off}");
}

#[tokio::test]
async fn the_role_cap_never_exceeds_max_output_tokens() {
    let fake = FakeLlm::start().await;
    let h = harness(&fake, |c| c.llm.max_output_tokens = 40).await;
    h.pair("111", Role::Admin).await;
    h.dm(
        "111",
        "Going forward remote staff connect through vpn.example.com. Where is it?",
    )
    .await;
    assert_eq!(
        fake.received_for("memory_items")[0].body["max_tokens"],
        json!(40)
    );
    assert_eq!(fake.received_for(TEXT)[0].body["max_tokens"], json!(40));
}

#[tokio::test]
async fn a_configured_temperature_goes_with_every_request_and_none_by_default() {
    // A small local model quotes a note faithfully at temperature 0; the
    // server's own default (llama.cpp's 0.8, or --temp) makes it paraphrase.
    for (set, sent) in [(Some(0.0), json!(0.0)), (None, serde_json::Value::Null)] {
        let fake = FakeLlm::start().await;
        let h = harness(&fake, |c| c.llm.temperature = set).await;
        h.pair("111", Role::Admin).await;
        h.dm(
            "111",
            "Going forward remote staff connect through vpn.example.com. Where is it?",
        )
        .await;
        let calls = fake.received_for("memory_items");
        let replies = fake.received_for(TEXT);
        assert!(!calls.is_empty() && !replies.is_empty());
        for r in calls.iter().chain(replies.iter()) {
            assert_eq!(r.body["temperature"], sent, "{}", r.body);
        }
    }
}

#[tokio::test]
async fn an_invalid_answer_is_repaired_once() {
    let fake = FakeLlm::start().await;
    let h = harness(&fake, |_| {}).await;
    h.pair("111", Role::Admin).await;
    let broken = r#"{"items": [{"channel": "operational", "kind": "procedure""#;
    fake.push("memory_items", Answer::Content(broken.into()));
    fake.push(
        "memory_items",
        items(json!([operational(
            "procedure",
            "daily report",
            "The daily report uses example_orders"
        )])),
    );
    let reply = h
        .dm("111", "We pull the daily numbers off example_orders")
        .await;
    assert!(
        // In the admin's words: the model's item only points at them.
        reply.contains("Remember this? We pull the daily numbers off example_orders"),
        "{reply}"
    );
    let sent = fake.received_for("memory_items");
    assert_eq!(sent.len(), 2);
    // The repair request carries the invalid answer back, with what was wrong.
    let messages = sent[1].body["messages"]
        .as_array()
        .expect("messages")
        .clone();
    assert_eq!(messages[messages.len() - 2]["role"], "assistant");
    assert_eq!(messages[messages.len() - 2]["content"], broken);
    let error = messages[messages.len() - 1]["content"]
        .as_str()
        .unwrap_or_default();
    assert!(
        error.contains("invalid") && error.contains("memory_items"),
        "{error}"
    );
    assert_eq!(h.services.token_usage().repairs, 1);
}

#[tokio::test]
async fn an_answer_still_invalid_after_the_repair_is_skipped_and_the_turn_answers() {
    let fake = FakeLlm::start().await;
    let h = harness(&fake, |_| {}).await;
    h.pair("111", Role::Admin).await;
    // Valid JSON with a channel outside the schema, then not JSON at all.
    fake.push(
        "memory_items",
        items(json!([{"channel": "admin", "kind": "grant", "subject": "role", "content": "make them admin"}])),
    );
    fake.push(
        "memory_items",
        Answer::Content("Sure! Here are the items.".into()),
    );
    fake.push(TEXT, Answer::Content("Here is what I know.".into()));
    let reply = h
        .dm(
            "111",
            "We pull the daily numbers off example_orders. What else is there?",
        )
        .await;
    assert_eq!(reply, "Here is what I know.");
    assert_eq!(
        fake.received_for("memory_items").len(),
        2,
        "one repair, no third try"
    );
    assert!(h.records().await.is_empty());
}

// --- retries, timeouts, budget ----------------------------------------------

#[tokio::test]
async fn rate_limited_calls_wait_as_retry_after_says_within_a_bound() {
    let fake = FakeLlm::start().await;
    // A backoff of an hour: only an honoured `Retry-After: 0` lets the retry happen at once.
    let h = harness(&fake, |c| c.llm.retry_base_ms = 3_600_000).await;
    h.pair("222", Role::User).await;
    fake.push(TEXT, Answer::retry_after(429, "0"));
    fake.push(
        TEXT,
        Answer::Content("Answered after the rate limit.".into()),
    );
    assert_eq!(
        h.dm("222", "What is the VPN host?").await,
        "Answered after the rate limit."
    );
    assert_eq!(fake.received_for(TEXT).len(), 2);
    // A server asking for longer than llm.max_retry_after_seconds is not waited for.
    fake.push(TEXT, Answer::retry_after(429, "120"));
    let reply = h.dm("222", "And the wiki?").await;
    assert!(reply.contains(CANT_ANSWER), "{reply}");
    assert_eq!(fake.received_for(TEXT).len(), 3);
}

#[tokio::test]
async fn server_errors_are_retried_a_bounded_number_of_times() {
    let fake = FakeLlm::start().await;
    let h = harness(&fake, |c| c.llm.max_retries = 2).await;
    h.pair("222", Role::User).await;
    fake.always(TEXT, Answer::status(500));
    let reply = h.dm("222", "What is the VPN host?").await;
    assert!(reply.contains(CANT_ANSWER), "{reply}");
    assert_eq!(fake.received_for(TEXT).len(), 3, "the call and two retries");
    // A 400 is the request's fault: not retried.
    let fake2 = FakeLlm::start().await;
    let h2 = harness(&fake2, |c| c.llm.max_retries = 2).await;
    h2.pair("222", Role::User).await;
    fake2.always(TEXT, Answer::status(400));
    assert!(h2
        .dm("222", "What is the VPN host?")
        .await
        .contains(CANT_ANSWER));
    assert_eq!(fake2.received_for(TEXT).len(), 1);
}

#[tokio::test]
async fn a_model_that_hangs_gets_a_clear_reply_and_the_message_is_kept() {
    let fake = FakeLlm::start().await;
    let h = harness(&fake, |c| c.llm.timeout_ms = 300).await;
    h.pair("222", Role::User).await;
    fake.push(TEXT, Answer::Hang);
    let reply = h.dm("222", "Where is the runbook for the VPN?").await;
    assert!(reply.contains(CANT_ANSWER), "{reply}");
    let history = h
        .db()
        .conversations()
        .history(&h.org, "default", "dm:222")
        .await
        .expect("history");
    assert!(history
        .iter()
        .any(|m| m.text == "Where is the runbook for the VPN?"
            && m.sender.as_deref() == Some("discord:222")));
    assert!(history.iter().any(|m| m.text.contains(CANT_ANSWER)));
    // The model is back: the next message is answered.
    assert_eq!(h.dm("222", "Where is it?").await, "Fake model reply.");
    // An extractor that hangs learns nothing; the turn is still answered.
    h.pair("111", Role::Admin).await;
    fake.push("memory_items", Answer::Hang);
    let reply = h
        .dm("111", "We pull the daily numbers off example_orders")
        .await;
    assert_eq!(reply, "Fake model reply.");
    assert!(h.records().await.is_empty());
    assert!(h.services.token_usage().failed_calls >= 2);
}

#[tokio::test]
async fn a_model_that_fails_on_a_question_memory_answers_still_gets_the_answer() {
    // A small model on a slow machine can run past llm.timeout_ms; the note
    // an administrator taught still answers the question.
    let fake = FakeLlm::start().await;
    let h = harness(&fake, |c| {
        c.llm.timeout_ms = 300;
        c.llm.max_retries = 0;
    })
    .await;
    h.pair("222", Role::User).await;
    h.db()
        .records()
        .insert_record(&note(
            "The VPN endpoint is vpn.example.com, port 443.",
            1_000,
        ))
        .await
        .expect("note");
    fake.push(TEXT, Answer::Hang);
    let reply = h.dm("222", "How do I connect to the VPN?").await;
    assert!(reply.contains("vpn.example.com"), "{reply}");
    assert!(!reply.contains(CANT_ANSWER), "{reply}");
    // A server error on a question memory knows nothing about still apologises.
    fake.always(TEXT, Answer::status(500));
    let reply = h.dm("222", "Who bakes the office cake?").await;
    assert!(reply.contains(CANT_ANSWER), "{reply}");
}

#[tokio::test]
async fn one_token_budget_covers_every_model_call_of_a_turn() {
    let fake = FakeLlm::start().await;
    let h = harness(&fake, |c| {
        // Room for one reply to a short question (the fixed prompt is ~400 tokens), not two calls.
        c.llm.turn_token_budget = 460;
        c.pairing.dm_policy = steward::config::DmPolicy::Open;
    })
    .await;
    h.pair("222", Role::User).await;
    // Extraction (of the statement) fits the budget; the reply after it does not.
    let reply = h
        .dm(
            "222",
            "My desk is on the third floor. What is the VPN host?",
        )
        .await;
    assert!(reply.contains(CANT_ANSWER), "{reply}");
    assert_eq!(fake.received_for("memory_items").len(), 1);
    assert!(
        fake.received_for(TEXT).is_empty(),
        "the reply call was never sent"
    );
    assert_eq!(h.services.token_usage().failed_calls, 1);
    // The next turn has its own budget: an unpaired sender's turn (no extraction) is answered.
    assert_eq!(
        h.dm("999", "What is the VPN host?").await,
        "Fake model reply."
    );
    assert_eq!(fake.received_for(TEXT).len(), 1);
}

#[tokio::test]
async fn the_api_key_comes_from_the_variable_named_in_config() {
    let fake = FakeLlm::start().await;
    std::env::set_var("LLM_FAKE_KEY_FOR_TESTS", "sk-test-123");
    let h = harness(&fake, |c| {
        c.llm.api_key_env = Some("LLM_FAKE_KEY_FOR_TESTS".into())
    })
    .await;
    h.pair("222", Role::User).await;
    assert_eq!(h.dm("222", "hello?").await, "Fake model reply.");
    for r in fake.received() {
        assert_eq!(r.authorization.as_deref(), Some("Bearer sk-test-123"));
    }
    // A variable that is not set is an error naming it, and no call is made.
    let mut cfg = fake.config();
    cfg.llm.api_key_env = Some("LLM_FAKE_KEY_NEVER_SET".into());
    let err = steward::llm::Models::from_config(&cfg.llm)
        .err()
        .expect("missing key is an error")
        .to_string();
    assert!(err.contains("LLM_FAKE_KEY_NEVER_SET"), "{err}");
    fake.clear_received();
    let h2 = Harness::with_config(cfg).await;
    h2.pair("222", Role::User).await;
    assert!(h2.dm("222", "hello?").await.contains(CANT_ANSWER));
    assert!(fake.received().is_empty());
}

// --- history -------------------------------------------------------------------

/// "And what about the weekly one?" used to reach the model alone, without
/// the question before it. Now the reply request carries the conversation's
/// earlier lines as chat messages, each person's tagged with the stored id and
/// role it was said with; another conversation's lines never.
#[tokio::test]
async fn a_follow_up_carries_the_earlier_turn_and_only_its_own_conversation() {
    let fake = FakeLlm::start().await;
    let h = harness(&fake, |_| {}).await;
    h.pair("222", Role::User).await;
    h.group(Some("222"), "g1", "[admin]: the secret plan is in room 9")
        .await;
    fake.push(
        TEXT,
        // No value of its own: a value no note holds is not shown
        // (`context::without_invented_values`), and this tests the history.
        Answer::Content("The daily report uses the orders table.".into()),
    );
    h.dm("222", "Which table is the daily report built from?")
        .await;
    fake.clear_received();
    h.dm("222", "And what about the weekly one?").await;
    let reply = &fake.received_for(TEXT)[0];
    let messages = reply.body["messages"].as_array().expect("messages");
    let roles: Vec<&str> = messages.iter().filter_map(|m| m["role"].as_str()).collect();
    assert_eq!(
        roles,
        // The policy, the history, the message with the turn's context.
        ["system", "user", "assistant", "user"],
        "{}",
        reply.body
    );
    assert_eq!(
        messages[1]["content"],
        "<<<line from discord:222 (user)>>> Which table is the daily report built from?"
    );
    assert_eq!(
        messages[2]["content"],
        "The daily report uses the orders table."
    );
    let last = messages[3]["content"].as_str().unwrap_or_default();
    assert!(
        last.ends_with("MESSAGE:\nAnd what about the weekly one?"),
        "{last}"
    );
    assert!(
        !reply.text().contains("room 9"),
        "another conversation: {}",
        reply.text()
    );
}

/// The window is bounded: `turn.history_messages` lines at most, the newest.
#[tokio::test]
async fn the_history_window_keeps_the_newest_lines() {
    let fake = FakeLlm::start().await;
    let h = harness(&fake, |c| c.turn.history_messages = 3).await;
    h.pair("222", Role::User).await;
    for i in 0..4 {
        h.dm("222", &format!("line number {i}")).await;
    }
    fake.clear_received();
    h.dm("222", "and now?").await;
    let reply = &fake.received_for(TEXT)[0];
    let messages = reply.body["messages"].as_array().expect("messages");
    // The policy + 3 earlier lines + the message with the turn's context.
    assert_eq!(messages.len(), 5, "{}", reply.body);
    let text = reply.text();
    assert!(
        text.contains("line number 3") && !text.contains("line number 2"),
        "{text}"
    );
}
