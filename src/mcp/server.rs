//! The three MCP tools over the memory service. Each result is one JSON object, sent as text
//! content and as structured content; invalid arguments give a tool error naming the field.

use std::sync::Arc;
use std::time::Instant;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{Implementation, ServerCapabilities, ServerConfig};
use rmcp::{Json, ServerHandler, tool, tool_handler, tool_router};

use crate::domain::Namespace;
use crate::service::{
    Args, ForgetRequest, ForgetResult, MemoryService, SearchRequest, SearchResult, ServiceError,
    WriteRequest, WriteResult,
};

const INSTRUCTIONS: &str = "Long-term memory that persists across conversations. \
Call memory_search before answering questions that may depend on what you learned earlier about \
the user, their projects or past events. Call memory_write when you learn something worth keeping: \
a durable fact or preference (memory_type semantic, with entity and attribute when it is a property \
that can change, e.g. entity \"user\", attribute \"preferred_language\"), something that happened \
(episodic), or scratch context for the current task (working, expires after 24 h). Write one \
self-contained statement per memory. Near-duplicates are merged automatically. Use memory_forget \
when the user asks you to forget something.";

#[derive(Clone)]
pub struct HindsightMcp {
    service: Arc<MemoryService>,
    tool_router: ToolRouter<Self>,
}

fn outcome<T>(
    metrics: &crate::metrics::Metrics,
    tool: &'static str,
    namespace: &str,
    started: Instant,
    result: Result<T, ServiceError>,
) -> Result<Json<T>, String> {
    let seconds = started.elapsed().as_secs_f64();
    let latency_ms = seconds * 1e3;
    metrics.mcp_call(tool, result.is_ok(), seconds);
    match result {
        Ok(value) => {
            tracing::info!(tool, namespace, outcome = "ok", latency_ms, "mcp call");
            Ok(Json(value))
        }
        Err(e) if e.is_client_error() => {
            tracing::info!(tool, namespace, outcome = "invalid", latency_ms, error = %e, "mcp call");
            Err(e.to_string())
        }
        Err(e) => {
            tracing::error!(tool, namespace, outcome = "error", latency_ms, error = %e, "mcp call");
            Err(e.to_string())
        }
    }
}

fn invalid<T>(e: crate::domain::ValidationError) -> Result<T, ServiceError> {
    Err(ServiceError::Invalid(e))
}

#[tool_router]
impl HindsightMcp {
    pub fn new(service: Arc<MemoryService>) -> Self {
        Self {
            service,
            tool_router: Self::tool_router(),
        }
    }

    /// Store a memory. Returns {status: stored|merged|skipped, memory_id, reason, duplicate_of,
    /// superseded, superseded_by}. Importance below 0.3 is skipped; a near-duplicate of an
    /// active memory of the same namespace and type is merged into it; a memory with the same
    /// entity and attribute as an active one supersedes (deprecates) the older one — unless the
    /// active one happened later (occurred_at), when the new one is kept as superseded by it.
    /// Set occurred_at when writing down something that happened earlier.
    #[tool(annotations(destructive_hint = false, idempotent_hint = false))]
    async fn memory_write(
        &self,
        Parameters(Args(args)): Parameters<Args<WriteRequest>>,
    ) -> Result<Json<WriteResult>, String> {
        let started = Instant::now();
        let namespace = args.as_ref().ok().and_then(|a| a.namespace.clone());
        let result = match args {
            Ok(request) => self.service.write(&request).await,
            Err(e) => invalid(e),
        };
        outcome(
            self.service.metrics(),
            "memory_write",
            namespace.as_deref().unwrap_or(Namespace::DEFAULT),
            started,
            result,
        )
    }

    /// Search memories by meaning and by their words (vector and full-text matches, fused).
    /// Returns {memories: [...]}, best first, each with its content, type, provenance (source),
    /// when it happened (occurred_at) and was stored (created_at), and
    /// score = 0.7·relevance + 0.2·recency + 0.1·importance (recency from occurred_at).
    /// Expired, forgotten and (unless include_deprecated) superseded memories are never returned.
    #[tool(annotations(read_only_hint = true))]
    async fn memory_search(
        &self,
        Parameters(Args(args)): Parameters<Args<SearchRequest>>,
    ) -> Result<Json<SearchResult>, String> {
        let started = Instant::now();
        let namespace = args.as_ref().ok().and_then(|a| a.namespace.clone());
        let result = match args {
            Ok(request) => self.service.search(&request).await,
            Err(e) => invalid(e),
        };
        outcome(
            self.service.metrics(),
            "memory_search",
            namespace.as_deref().unwrap_or(Namespace::DEFAULT),
            started,
            result,
        )
    }

    /// Forget memories: one by memory_id, or all matching a filter (namespace required; optional
    /// memory_type, entity, created_before), archived ones included. Soft by default (no longer
    /// returned, kept for audit); hard: true deletes them for good. A forgotten memory is never
    /// restored. Returns {forgotten: count, ids, archived, exported}.
    #[tool(annotations(destructive_hint = true, idempotent_hint = true))]
    async fn memory_forget(
        &self,
        Parameters(Args(args)): Parameters<Args<ForgetRequest>>,
    ) -> Result<Json<ForgetResult>, String> {
        let started = Instant::now();
        let namespace = args
            .as_ref()
            .ok()
            .and_then(|a| a.filter.as_ref().map(|f| f.namespace.clone()));
        let result = match args {
            Ok(request) => self.service.forget(&request).await,
            Err(e) => invalid(e),
        };
        // By id the namespace is only known once the row is read: log that it was by id.
        outcome(
            self.service.metrics(),
            "memory_forget",
            namespace.as_deref().unwrap_or("(by id)"),
            started,
            result,
        )
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for HindsightMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("hindsight", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }
}
