//! The distill job's LLM client against a scripted OpenAI-compatible server: real HTTP, the real
//! `/v1/chat/completions` wire format, async-openai on the client side. Each test scripts the
//! replies the server gives, in order, and checks what the client makes of them.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use common::openai::{Reply, Script};
use hindsight::distill::llm::{FormatUsed, LlmClient, LlmConfig, LlmError, StructuredOutput, Turn};
use hindsight::distill::prompt::{ReplyError, parse_reply};
use hindsight::domain::MemoryId;
use serde_json::json;

/// A server answering with `replies`, and a client for it.
async fn scripted(replies: Vec<Reply>, timeout: Duration) -> (Arc<Script>, LlmClient) {
    scripted_with(replies, timeout, StructuredOutput::Auto).await
}

async fn scripted_with(
    replies: Vec<Reply>,
    timeout: Duration,
    structured_output: StructuredOutput,
) -> (Arc<Script>, LlmClient) {
    let server = common::openai::start(replies).await;
    let client = LlmClient::new(LlmConfig {
        base_url: server.base_url,
        model: "scripted-model".to_owned(),
        api_key: Some("sk-test".into()),
        timeout,
        retries: 2,
        backoff: Duration::from_millis(20),
        max_tokens: 512,
        structured_output,
    })
    .unwrap();
    (server.script, client)
}

/// A reply citing the first `n` episodes.
fn drafts_json(n: u32) -> String {
    json!({"candidates": [{"content": "The user wants data sources cited in every report.",
            "entity": null, "attribute": null, "confidence": 0.9,
            "sources": (1..=n).collect::<Vec<_>>()}]})
    .to_string()
}

fn ask(text: &str) -> Vec<Turn> {
    vec![Turn::User(text.to_owned())]
}

#[tokio::test]
async fn a_valid_reply_is_parsed_with_its_token_counts_and_the_request_is_well_formed() {
    let ids = vec![MemoryId::now_v7(), MemoryId::now_v7()];
    let (script, client) = scripted(
        vec![Reply::Content(drafts_json(ids.len() as u32))],
        Duration::from_secs(5),
    )
    .await;
    let completion = client.complete(&ask("the prompt"), None).await.unwrap();
    assert_eq!(
        (completion.prompt_tokens, completion.completion_tokens),
        (120, 30)
    );
    assert_eq!(completion.attempts, 1);
    let drafts = parse_reply(&completion.text, &ids, 8000).unwrap();
    assert_eq!(drafts[0].source_ids, ids);
    let requests = script.requests.lock().unwrap();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0]["model"], json!("scripted-model"));
    assert_eq!(requests[0]["messages"][0]["role"], json!("user"));
    assert_eq!(requests[0]["messages"][0]["content"], json!("the prompt"));
}

/// async-openai's own retry layer (3 retries, backoff, Retry-After) handles these.
#[tokio::test]
async fn a_500_and_a_429_are_retried_with_backoff() {
    let (script, client) = scripted(
        vec![
            Reply::Error(500),
            Reply::Error(429),
            Reply::Content(drafts_json(1)),
        ],
        Duration::from_secs(5),
    )
    .await;
    let completion = client.complete(&ask("p"), None).await.unwrap();
    assert_eq!(completion.text, drafts_json(1));
    assert_eq!(script.requests.lock().unwrap().len(), 3);
}

#[tokio::test]
async fn retries_are_bounded_and_a_400_is_not_retried() {
    let (script, client) = scripted(vec![Reply::Error(503); 4], Duration::from_secs(5)).await;
    match client.complete(&ask("p"), None).await {
        Err(LlmError::Status { status: 503, .. }) => {}
        other => panic!("{other:?}"),
    }
    assert_eq!(
        script.requests.lock().unwrap().len(),
        4,
        "1 + async-openai's 3 retries, not multiplied by ours"
    );

    let (script, client) = scripted(vec![Reply::Error(400)], Duration::from_secs(5)).await;
    let error = client.complete(&ask("p"), None).await.unwrap_err();
    assert!(
        matches!(error, LlmError::Status { status: 400, .. }),
        "{error:?}"
    );
    assert!(!error.is_retryable());
    assert_eq!(script.requests.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn a_slow_reply_times_out_and_the_retry_gets_through() {
    let (script, client) = scripted(
        vec![
            Reply::Slow(Duration::from_secs(3), drafts_json(1)),
            Reply::Content(drafts_json(1)),
        ],
        Duration::from_millis(300),
    )
    .await;
    let completion = client.complete(&ask("p"), None).await.unwrap();
    assert_eq!(completion.attempts, 2);
    assert_eq!(script.requests.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn a_malformed_reply_arrives_as_text_and_is_refused_by_the_schema() {
    let ids = vec![MemoryId::now_v7()];
    let (_, client) = scripted(
        vec![
            Reply::Content("Sure! Here are the facts: [{\"content\": ".to_owned()),
            Reply::Content(
                json!([{"content": "x", "confidence": 0.5, "sources": [7]}]).to_string(),
            ),
        ],
        Duration::from_secs(5),
    )
    .await;
    let text = client.complete(&ask("p"), None).await.unwrap().text;
    assert!(matches!(
        parse_reply(&text, &ids, 8000),
        Err(ReplyError::NotJson(_))
    ));
    let text = client.complete(&ask("p"), None).await.unwrap().text;
    assert!(matches!(
        parse_reply(&text, &ids, 8000),
        Err(ReplyError::Invalid { ref field, .. }) if field == "sources"
    ));
}

/// The schema travels as `response_format` (strict `json_schema`); an endpoint that refuses
/// it is asked with `json_object`, then with no format, and the client stays with what worked.
#[tokio::test]
async fn the_schema_is_sent_and_refused_formats_fall_back_in_order() {
    let schema = hindsight::distill::schema::reply_schema(2, 3);
    let (script, client) = scripted(vec![], Duration::from_secs(5)).await;
    script.set_fallback(Reply::from_request(|body| {
        match body["response_format"]["type"].as_str() {
            Some("json_schema") | Some("json_object") => Reply::Error(400),
            _ => Reply::Content(drafts_json(2)),
        }
    }));
    assert_eq!(client.format_used(), FormatUsed::JsonSchema);
    let completion = client.complete(&ask("p"), Some(&schema)).await.unwrap();
    assert_eq!(completion.format, FormatUsed::Off);
    assert_eq!(client.format_used(), FormatUsed::Off);
    {
        let requests = script.requests.lock().unwrap();
        assert_eq!(requests.len(), 3, "json_schema, json_object, then none");
        let format = &requests[0]["response_format"];
        assert_eq!(format["type"], json!("json_schema"));
        assert_eq!(format["json_schema"]["strict"], json!(true));
        assert_eq!(format["json_schema"]["schema"], schema);
        assert_eq!(
            requests[1]["response_format"],
            json!({"type": "json_object"})
        );
        assert!(requests[2].get("response_format").is_none());
    }
    // The next call goes straight to what worked.
    client.complete(&ask("p"), Some(&schema)).await.unwrap();
    assert_eq!(script.request_count(), 4);

    // An endpoint that takes the schema keeps getting it; without a schema, no format is sent.
    let (script, client) = scripted(vec![], Duration::from_secs(5)).await;
    script.set_fallback(Reply::Content(drafts_json(1)));
    let completion = client.complete(&ask("p"), Some(&schema)).await.unwrap();
    assert_eq!(completion.format, FormatUsed::JsonSchema);
    client.complete(&ask("p"), None).await.unwrap();
    let requests = script.requests.lock().unwrap();
    assert_eq!(requests[0]["response_format"]["type"], json!("json_schema"));
    assert!(requests[1].get("response_format").is_none());
}

/// A format set explicitly is not given up on: the endpoint's refusal is the call's error.
#[tokio::test]
async fn an_explicit_format_is_not_downgraded() {
    let schema = hindsight::distill::schema::reply_schema(2, 3);
    let (script, client) = scripted_with(
        vec![Reply::Error(400)],
        Duration::from_secs(5),
        StructuredOutput::JsonSchema,
    )
    .await;
    let error = client.complete(&ask("p"), Some(&schema)).await.unwrap_err();
    assert!(
        matches!(error, LlmError::Status { status: 400, .. }),
        "{error:?}"
    );
    assert_eq!(script.request_count(), 1);
    assert_eq!(client.format_used(), FormatUsed::JsonSchema);

    let (script, client) = scripted_with(
        vec![Reply::Content(drafts_json(1))],
        Duration::from_secs(5),
        StructuredOutput::JsonObject,
    )
    .await;
    client.complete(&ask("p"), Some(&schema)).await.unwrap();
    assert_eq!(
        script.requests.lock().unwrap()[0]["response_format"],
        json!({"type": "json_object"})
    );
}
