//! `hindsight memory write|search|forget|get`. Runs the operation in-process when the data dir is
//! free, or through the owning daemon's MCP endpoint when it is not (same rules either way).

use clap::{Args as ClapArgs, Subcommand};
use hindsight::configuration::Settings;
use hindsight::lock::{Acquired, DataDirLock, read_endpoint};
use hindsight::service::requests::{ForgetFilterRequest, TimeRange};
use hindsight::service::{ForgetRequest, SearchRequest, WriteRequest};
use hindsight::startup;
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::Value;

#[derive(Debug, Subcommand)]
pub enum MemoryCommand {
    /// Store a memory.
    Write(WriteArgs),
    /// Search memories.
    Search(SearchArgs),
    /// Forget one memory (--id) or all matching a filter (--namespace …).
    Forget(ForgetArgs),
    /// Show one memory with all its fields.
    Get { id: String },
}

#[derive(Debug, ClapArgs)]
pub struct WriteArgs {
    content: String,
    /// working | episodic | semantic
    #[arg(long = "type")]
    memory_type: Option<String>,
    #[arg(long)]
    importance: Option<f64>,
    #[arg(long)]
    ttl_days: Option<f64>,
    #[arg(long)]
    namespace: Option<String>,
    #[arg(long)]
    entity: Option<String>,
    #[arg(long)]
    attribute: Option<String>,
    /// Provenance as JSON, e.g. '{"conversation": "c-42"}'
    #[arg(long)]
    source: Option<String>,
    /// JSON object
    #[arg(long)]
    metadata: Option<String>,
    /// When it happened, RFC 3339 (default: now)
    #[arg(long)]
    occurred_at: Option<String>,
}

#[derive(Debug, ClapArgs)]
pub struct SearchArgs {
    query: String,
    #[arg(long)]
    top_k: Option<i64>,
    /// Repeat for several types.
    #[arg(long = "type")]
    memory_types: Vec<String>,
    #[arg(long)]
    namespace: Option<String>,
    /// Only what happened at or after this time (RFC 3339)
    #[arg(long)]
    from: Option<String>,
    /// Only what happened at or before this time (RFC 3339)
    #[arg(long)]
    to: Option<String>,
    #[arg(long)]
    include_deprecated: bool,
}

#[derive(Debug, ClapArgs)]
pub struct ForgetArgs {
    #[arg(long, conflicts_with = "namespace")]
    id: Option<String>,
    #[arg(long)]
    namespace: Option<String>,
    #[arg(long = "type", requires = "namespace")]
    memory_type: Option<String>,
    #[arg(long, requires = "namespace")]
    entity: Option<String>,
    /// RFC 3339
    #[arg(long, requires = "namespace")]
    created_before: Option<String>,
    #[arg(long)]
    hard: bool,
}

fn json_arg(field: &str, raw: Option<String>) -> anyhow::Result<Option<Value>> {
    raw.map(|r| {
        serde_json::from_str(&r).map_err(|e| anyhow::anyhow!("--{field}: not valid JSON: {e}"))
    })
    .transpose()
}

fn print(value: &impl serde::Serialize) -> anyhow::Result<()> {
    println!("{}", serde_json::to_string_pretty(value)?);
    Ok(())
}

pub async fn run(settings: Settings, command: MemoryCommand) -> anyhow::Result<()> {
    let (tool, args) = match command {
        MemoryCommand::Get { id } => return get(&settings, &id).await,
        MemoryCommand::Write(a) => {
            let metadata = match json_arg("metadata", a.metadata)? {
                None => None,
                Some(Value::Object(map)) => Some(map),
                Some(_) => anyhow::bail!("--metadata: must be a JSON object"),
            };
            let request = WriteRequest {
                content: a.content,
                memory_type: a.memory_type,
                importance: a.importance,
                ttl_days: a.ttl_days,
                namespace: a.namespace,
                entity: a.entity,
                attribute: a.attribute,
                source: json_arg("source", a.source)?,
                metadata,
                occurred_at: a.occurred_at,
            };
            ("memory_write", Operation::Write(request))
        }
        MemoryCommand::Search(a) => {
            let time_range = (a.from.is_some() || a.to.is_some()).then_some(TimeRange {
                from: a.from,
                to: a.to,
            });
            let request = SearchRequest {
                query: a.query,
                top_k: a.top_k,
                memory_types: (!a.memory_types.is_empty()).then_some(a.memory_types),
                namespace: a.namespace,
                time_range,
                include_deprecated: Some(a.include_deprecated),
            };
            ("memory_search", Operation::Search(request))
        }
        MemoryCommand::Forget(a) => {
            let filter = a.namespace.map(|namespace| ForgetFilterRequest {
                namespace,
                memory_type: a.memory_type,
                entity: a.entity,
                created_before: a.created_before,
            });
            let request = ForgetRequest {
                memory_id: a.id,
                filter,
                hard: Some(a.hard),
            };
            ("memory_forget", Operation::Forget(request))
        }
    };
    match DataDirLock::try_acquire(&settings.data_dir)? {
        Acquired::Owner(lock) => {
            let service = startup::build_service(&settings).await?;
            let result = match &args {
                Operation::Write(r) => serde_json::to_value(service.write(r).await?)?,
                Operation::Search(r) => serde_json::to_value(service.search(r).await?)?,
                Operation::Forget(r) => serde_json::to_value(service.forget(r).await?)?,
            };
            service.flush().await?;
            drop(lock);
            print(&result)
        }
        Acquired::Taken => {
            let endpoint = read_endpoint(&settings.data_dir).ok_or_else(|| {
                anyhow::anyhow!(
                    "data dir {} is locked by a process that publishes no endpoint",
                    settings.data_dir.display()
                )
            })?;
            print(&call_remote(&endpoint, tool, args.to_json()).await?)
        }
    }
}

enum Operation {
    Write(WriteRequest),
    Search(SearchRequest),
    Forget(ForgetRequest),
}

impl Operation {
    /// The MCP arguments: the request types are the tools' argument types.
    fn to_json(&self) -> serde_json::Map<String, Value> {
        let value = match self {
            Operation::Write(r) => serde_json::to_value(r),
            Operation::Search(r) => serde_json::to_value(r),
            Operation::Forget(r) => serde_json::to_value(r),
        };
        match value {
            Ok(Value::Object(mut map)) => {
                map.retain(|_, v| !v.is_null());
                map
            }
            _ => Default::default(),
        }
    }
}

async fn call_remote(
    endpoint: &hindsight::lock::Endpoint,
    tool: &'static str,
    args: serde_json::Map<String, Value>,
) -> anyhow::Result<Value> {
    let mut config = StreamableHttpClientTransportConfig::with_uri(endpoint.url.clone());
    if let Some(token) = &endpoint.token {
        config = config.auth_header(token.expose().to_owned());
    }
    let client = ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("hindsight-cli", env!("CARGO_PKG_VERSION")),
    )
    .serve(StreamableHttpClientTransport::from_config(config))
    .await?;
    let result = client
        .call_tool(CallToolRequestParams::new(tool).with_arguments(args))
        .await;
    let _ = client.cancel().await;
    let result = result?;
    if result.is_error == Some(true) {
        let text: Vec<String> = result
            .content
            .iter()
            .filter_map(|c| c.as_text().map(|t| t.text.clone()))
            .collect();
        anyhow::bail!("{}", text.join("\n"));
    }
    result
        .structured_content
        .ok_or_else(|| anyhow::anyhow!("{tool}: the daemon returned no structured result"))
}

/// Reads go straight to the database (SQLite's WAL allows a reader beside the daemon).
async fn get(settings: &Settings, id: &str) -> anyhow::Result<()> {
    let id = uuid::Uuid::parse_str(id.trim())
        .map_err(|_| anyhow::anyhow!("memory_id: must be a UUID, got {id:?}"))?;
    let store = hindsight::startup::open_store(settings).await?;
    match store.get(id).await? {
        Some(memory) => print(&memory),
        None => anyhow::bail!("no memory with id {id}"),
    }
}
