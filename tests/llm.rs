//! The distill job's LLM client against a scripted OpenAI-compatible server: real HTTP, the real
//! `/v1/chat/completions` wire format, async-openai on the client side. Each test scripts the
//! replies the server gives, in order, and checks what the client makes of them.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::openai::{Reply, Script};
use hindsight::distill::draft::{ReplyError, parse_reply};
use hindsight::distill::llm::{LlmClient, LlmConfig, LlmError};
use hindsight::domain::MemoryId;
use serde_json::json;

/// A server answering with `replies`, and a client for it.
async fn scripted(replies: Vec<Reply>, timeout: Duration) -> (Arc<Script>, LlmClient) {
    let server = common::openai::start(replies).await;
    let client = LlmClient::new(LlmConfig {
        base_url: server.base_url,
        model: "scripted-model".to_owned(),
        api_key: Some("sk-test".to_owned()),
        timeout,
        retries: 2,
        backoff: Duration::from_millis(20),
        max_tokens: 512,
    })
    .unwrap();
    (server.script, client)
}

fn drafts_json(ids: &[MemoryId]) -> String {
    json!([{"content": "The user wants data sources cited in every report.",
            "confidence": 0.9, "source_ids": ids}])
    .to_string()
}

#[tokio::test]
async fn a_valid_reply_is_parsed_with_its_token_counts_and_the_request_is_well_formed() {
    let ids = vec![MemoryId::now_v7(), MemoryId::now_v7()];
    let (script, client) = scripted(
        vec![Reply::Content(drafts_json(&ids))],
        Duration::from_secs(5),
    )
    .await;
    let completion = client.complete("the prompt").await.unwrap();
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
    let ids = vec![MemoryId::now_v7()];
    let (script, client) = scripted(
        vec![
            Reply::Error(500),
            Reply::Error(429),
            Reply::Content(drafts_json(&ids)),
        ],
        Duration::from_secs(5),
    )
    .await;
    let completion = client.complete("p").await.unwrap();
    assert_eq!(completion.text, drafts_json(&ids));
    assert_eq!(script.requests.lock().unwrap().len(), 3);
}

#[tokio::test]
async fn retries_are_bounded_and_a_400_is_not_retried() {
    let (script, client) = scripted(vec![Reply::Error(503); 4], Duration::from_secs(5)).await;
    match client.complete("p").await {
        Err(LlmError::Status { status: 503, .. }) => {}
        other => panic!("{other:?}"),
    }
    assert_eq!(
        script.requests.lock().unwrap().len(),
        4,
        "1 + async-openai's 3 retries, not multiplied by ours"
    );

    let (script, client) = scripted(vec![Reply::Error(400)], Duration::from_secs(5)).await;
    let error = client.complete("p").await.unwrap_err();
    assert!(
        matches!(error, LlmError::Status { status: 400, .. }),
        "{error:?}"
    );
    assert!(!error.is_retryable());
    assert_eq!(script.requests.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn a_slow_reply_times_out_and_the_retry_gets_through() {
    let ids = vec![MemoryId::now_v7()];
    let (script, client) = scripted(
        vec![
            Reply::Slow(Duration::from_secs(3), drafts_json(&ids)),
            Reply::Content(drafts_json(&ids)),
        ],
        Duration::from_millis(300),
    )
    .await;
    let completion = client.complete("p").await.unwrap();
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
                json!([{"content": "x", "confidence": 0.5, "source_ids": [MemoryId::now_v7()]}])
                    .to_string(),
            ),
        ],
        Duration::from_secs(5),
    )
    .await;
    let text = client.complete("p").await.unwrap().text;
    assert!(matches!(
        parse_reply(&text, &ids, 8000),
        Err(ReplyError::NotJson(_))
    ));
    let text = client.complete("p").await.unwrap().text;
    assert!(matches!(
        parse_reply(&text, &ids, 8000),
        Err(ReplyError::Invalid {
            field: "source_ids",
            ..
        })
    ));
}
