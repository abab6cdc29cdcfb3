//! `hindsight memory write|search|forget|get|list`, through `Operations`: in-process when the data
//! dir is free, or in the daemon that owns it (same rules either way).

use clap::{Args as ClapArgs, Subcommand};
use hindsight::configuration::Settings;
use hindsight::service::requests::{ForgetFilterRequest, ListRequest, TimeRange};
use hindsight::service::{ForgetRequest, SearchRequest, WriteRequest};
use serde_json::{Value, json};

use super::connection::{print, with_operations};

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
    /// Page through memories by filters, newest stored first (no search: every row matching).
    List(ListArgs),
}

#[derive(Debug, ClapArgs)]
pub struct ListArgs {
    #[arg(long)]
    namespace: Option<String>,
    /// working | episodic | semantic
    #[arg(long = "type")]
    memory_type: Option<String>,
    /// active | deprecated | expired | forgotten | archived
    #[arg(long)]
    status: Option<String>,
    #[arg(long)]
    entity: Option<String>,
    #[arg(long)]
    attribute: Option<String>,
    /// The memories this one superseded.
    #[arg(long)]
    deprecated_by: Option<String>,
    /// Only what happened at or after this time (RFC 3339)
    #[arg(long)]
    from: Option<String>,
    /// Only what happened at or before this time (RFC 3339)
    #[arg(long)]
    to: Option<String>,
    /// The last id of the previous page.
    #[arg(long)]
    before: Option<String>,
    /// 1 to 500.
    #[arg(long, default_value_t = 50)]
    limit: i64,
    #[command(flatten)]
    format: super::listing::Format,
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
    /// Repeat to search several namespaces at once, ranked together.
    #[arg(long = "namespace")]
    namespaces: Vec<String>,
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

pub async fn run(settings: Settings, command: MemoryCommand) -> anyhow::Result<()> {
    let operation = match command {
        MemoryCommand::List(a) => return list(settings, a).await,
        MemoryCommand::Get { id } => {
            let id = uuid::Uuid::parse_str(id.trim())
                .map_err(|_| anyhow::anyhow!("memory_id: must be a UUID, got {id:?}"))?;
            Operation::Get(id)
        }
        MemoryCommand::Write(a) => {
            let metadata = match json_arg("metadata", a.metadata)? {
                None => None,
                Some(Value::Object(map)) => Some(map),
                Some(_) => anyhow::bail!("--metadata: must be a JSON object"),
            };
            Operation::Write(WriteRequest {
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
            })
        }
        MemoryCommand::Search(a) => {
            let time_range = (a.from.is_some() || a.to.is_some()).then_some(TimeRange {
                from: a.from,
                to: a.to,
            });
            Operation::Search(SearchRequest {
                query: a.query,
                top_k: a.top_k,
                memory_types: (!a.memory_types.is_empty()).then_some(a.memory_types),
                namespace: (a.namespaces.len() == 1).then(|| a.namespaces[0].clone()),
                namespaces: (a.namespaces.len() > 1).then_some(a.namespaces),
                time_range,
                include_deprecated: Some(a.include_deprecated),
                browsing: false,
            })
        }
        MemoryCommand::Forget(a) => {
            let filter = a.namespace.map(|namespace| ForgetFilterRequest {
                namespace,
                memory_type: a.memory_type,
                entity: a.entity,
                created_before: a.created_before,
            });
            Operation::Forget(ForgetRequest {
                memory_id: a.id,
                filter,
                hard: Some(a.hard),
            })
        }
    };
    let result = with_operations(&settings, |ops, _| async move {
        Ok(match operation {
            Operation::Write(r) => json!(ops.write(r).await?),
            Operation::Search(r) => json!(ops.search(r).await?),
            Operation::Forget(r) => json!(ops.forget(r).await?),
            Operation::Get(id) => json!(ops.get(id).await?),
        })
    })
    .await?;
    print(&result)
}

async fn list(settings: Settings, a: ListArgs) -> anyhow::Result<()> {
    let request = ListRequest {
        namespace: a.namespace,
        memory_type: a.memory_type,
        status: a.status,
        entity: a.entity,
        attribute: a.attribute,
        deprecated_by: a.deprecated_by,
        from: a.from,
        to: a.to,
        before: a.before,
        limit: Some(a.limit),
    };
    let rows = with_operations(&settings, |ops, _| async move { ops.list(request).await }).await?;
    super::listing::print_list(a.format, &json!({ "memories": rows }), || {
        let mut table = super::listing::Table::new(&[
            "id",
            "namespace",
            "type",
            "status",
            "happened",
            "content",
        ]);
        for m in &rows {
            table.row(vec![
                m.id.to_string(),
                m.namespace.clone(),
                m.memory_type.as_str().to_owned(),
                m.status.as_str().to_owned(),
                super::listing::when(Some(m.occurred_at)),
                m.content.clone(),
            ]);
        }
        table
    })
}

enum Operation {
    Write(WriteRequest),
    Search(SearchRequest),
    Forget(ForgetRequest),
    Get(uuid::Uuid),
}
