//! A scripted OpenAI-compatible server for the tests: real HTTP, the real
//! `/v1/chat/completions` wire format, so async-openai is exercised for real. Each request
//! takes the next scripted reply; with the script empty, the fallback (if any) answers.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};

/// What the server does with one request.
#[derive(Clone)]
pub enum Reply {
    /// 200 with this message content.
    Content(String),
    /// This status with an OpenAI error body.
    Error(u16),
    /// Wait this long, then 200 with this content.
    Slow(Duration, String),
    /// Decided from the prompt (the first user message's text).
    From(Arc<dyn Fn(&str) -> Reply + Send + Sync>),
    /// Decided from the whole request body (messages, response_format, …).
    FromRequest(Arc<dyn Fn(&Value) -> Reply + Send + Sync>),
}

impl Reply {
    pub fn from_prompt(f: impl Fn(&str) -> Reply + Send + Sync + 'static) -> Self {
        Reply::From(Arc::new(f))
    }

    pub fn from_request(f: impl Fn(&Value) -> Reply + Send + Sync + 'static) -> Self {
        Reply::FromRequest(Arc::new(f))
    }
}

#[derive(Default)]
pub struct Script {
    replies: Mutex<VecDeque<Reply>>,
    fallback: Mutex<Option<Reply>>,
    /// Every request body, in arrival order.
    pub requests: Mutex<Vec<Value>>,
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
}

impl Script {
    pub fn push(&self, reply: Reply) {
        self.replies.lock().unwrap().push_back(reply);
    }

    pub fn set_fallback(&self, reply: Reply) {
        *self.fallback.lock().unwrap() = Some(reply);
    }

    /// The most requests the server was answering at one time.
    pub fn max_in_flight(&self) -> usize {
        self.max_in_flight.load(Ordering::SeqCst)
    }

    pub fn request_count(&self) -> usize {
        self.requests.lock().unwrap().len()
    }

    /// The prompts asked so far.
    pub fn prompts(&self) -> Vec<String> {
        self.requests
            .lock()
            .unwrap()
            .iter()
            .map(|r| {
                r["messages"][0]["content"]
                    .as_str()
                    .unwrap_or("")
                    .to_owned()
            })
            .collect()
    }
}

pub struct Server {
    pub script: Arc<Script>,
    /// `http://127.0.0.1:<port>/v1`
    pub base_url: String,
}

pub async fn start(replies: Vec<Reply>) -> Server {
    let script = Arc::new(Script {
        replies: Mutex::new(replies.into()),
        ..Script::default()
    });
    let app = axum::Router::new()
        .route("/v1/chat/completions", post(completions))
        .with_state(script.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    Server {
        script,
        base_url: format!("http://{address}/v1"),
    }
}

/// The episodes a distill prompt lists (`[n] (date) content`): their numbers, as a reply
/// cites them.
pub fn episode_numbers(prompt: &str) -> Vec<u32> {
    episodes(prompt).map(|(n, _)| n).collect()
}

/// The contents of the episodes a distill prompt lists, in order.
pub fn episode_texts(prompt: &str) -> Vec<String> {
    episodes(prompt).map(|(_, text)| text.to_owned()).collect()
}

fn episodes(prompt: &str) -> impl Iterator<Item = (u32, &str)> {
    prompt.lines().filter_map(|line| {
        let (n, rest) = line.strip_prefix('[')?.split_once("] (")?;
        let (_date, text) = rest.split_once(") ")?;
        Some((n.parse().ok()?, text))
    })
}

/// The user message of a request, as sent (the last one: a retry's feedback).
pub fn last_user_message(request: &Value) -> String {
    request["messages"]
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"))
        .and_then(|m| m["content"].as_str())
        .unwrap_or("")
        .to_owned()
}

/// Counts a request in flight until dropped (also when the client hangs up mid-reply).
struct InFlight(Arc<Script>);

impl InFlight {
    fn enter(script: &Arc<Script>) -> Self {
        let now = script.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        script.max_in_flight.fetch_max(now, Ordering::SeqCst);
        InFlight(script.clone())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

async fn completions(State(script): State<Arc<Script>>, Json(body): Json<Value>) -> Response {
    let _in_flight = InFlight::enter(&script);
    let prompt = body["messages"][0]["content"]
        .as_str()
        .unwrap_or("")
        .to_owned();
    script.requests.lock().unwrap().push(body.clone());
    let next = script.replies.lock().unwrap().pop_front();
    let mut reply = next
        .or_else(|| script.fallback.lock().unwrap().clone())
        .expect("the test scripted fewer replies than the client asked for");
    let reply = loop {
        match reply {
            Reply::From(decide) => reply = decide(&prompt),
            Reply::FromRequest(decide) => reply = decide(&body),
            other => break other,
        }
    };
    let content = match reply {
        Reply::Error(status) => {
            let error = json!({"error": {"message": format!("scripted {status}"),
                "type": "server_error", "param": null, "code": null}});
            return (StatusCode::from_u16(status).unwrap(), Json(error)).into_response();
        }
        Reply::Slow(wait, content) => {
            tokio::time::sleep(wait).await;
            content
        }
        Reply::Content(content) => content,
        Reply::From(_) | Reply::FromRequest(_) => unreachable!(),
    };
    Json(json!({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1_717_200_000,
        "model": "scripted",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150}
    }))
    .into_response()
}

/// A client of `base_url` (a scripted server's) as the optional model calls use it: one
/// attempt, the reply's JSON Schema sent as `response_format`.
pub fn client(base_url: &str) -> hindsight::distill::llm::LlmClient {
    use hindsight::distill::llm::{LlmClient, LlmConfig, StructuredOutput};
    LlmClient::new(LlmConfig {
        base_url: base_url.to_owned(),
        model: "scripted-model".to_owned(),
        api_key: Some("sk-test".into()),
        timeout: Duration::from_secs(2),
        retries: 0,
        backoff: Duration::from_millis(10),
        max_tokens: 64,
        structured_output: StructuredOutput::JsonSchema,
    })
    .unwrap()
}
