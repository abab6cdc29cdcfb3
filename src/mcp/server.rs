//! The three MCP tools, answered through `Operations` (the one way in). Each result is one JSON object, sent as text
//! content and as structured content; invalid arguments give a tool error naming the field.

use std::sync::Arc;
use std::time::Instant;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{Implementation, ServerCapabilities, ServerConfig};
use rmcp::{Json, ServerHandler, tool, tool_handler, tool_router};

use super::descriptions;
use crate::domain::Namespace;
use crate::metrics::Metrics;
use crate::operations::{OperationError, Operations};
use crate::service::{
    Args, ForgetRequest, ForgetResult, Rules, SearchRequest, SearchResult, ServiceError,
    WriteRequest, WriteResult,
};

#[derive(Clone)]
pub struct HindsightMcp {
    ops: Arc<dyn Operations>,
    /// What the instructions tell agents (the rules in force).
    instructions: String,
    metrics: Arc<Metrics>,
    tool_router: ToolRouter<Self>,
}

fn outcome<T>(
    metrics: &Metrics,
    tool: &'static str,
    namespace: &str,
    started: Instant,
    result: Result<T, OperationError>,
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

fn invalid<T>(e: crate::domain::ValidationError) -> Result<T, OperationError> {
    Err(OperationError::Service(ServiceError::Invalid(e)))
}

#[tool_router]
impl HindsightMcp {
    pub fn new(ops: Arc<dyn Operations>, rules: &Rules, metrics: Arc<Metrics>) -> Self {
        let mut tool_router = Self::tool_router();
        // The descriptions state the rules in force, not the defaults (`descriptions.rs`).
        for (name, description) in [
            ("memory_write", descriptions::memory_write(rules)),
            ("memory_search", descriptions::memory_search(rules)),
            ("memory_forget", descriptions::memory_forget(rules)),
        ] {
            if let Some(route) = tool_router.map.get_mut(name) {
                route.attr.description = Some(description.into());
            }
        }
        Self {
            ops,
            instructions: descriptions::instructions(rules),
            metrics,
            tool_router,
        }
    }

    /// Store a memory (described to agents by `descriptions::memory_write`).
    #[tool(annotations(destructive_hint = false, idempotent_hint = false))]
    async fn memory_write(
        &self,
        Parameters(Args(args)): Parameters<Args<WriteRequest>>,
    ) -> Result<Json<WriteResult>, String> {
        let started = Instant::now();
        let namespace = args.as_ref().ok().and_then(|a| a.namespace.clone());
        let result = match args {
            Ok(request) => self.ops.write(request).await,
            Err(e) => invalid(e),
        };
        outcome(
            &self.metrics,
            "memory_write",
            namespace.as_deref().unwrap_or(Namespace::DEFAULT),
            started,
            result,
        )
    }

    /// Search memories (described to agents by `descriptions::memory_search`).
    #[tool(annotations(read_only_hint = true))]
    async fn memory_search(
        &self,
        Parameters(Args(args)): Parameters<Args<SearchRequest>>,
    ) -> Result<Json<SearchResult>, String> {
        let started = Instant::now();
        let namespace = args.as_ref().ok().and_then(|a| a.namespace.clone());
        let result = match args {
            Ok(request) => self.ops.search(request).await,
            Err(e) => invalid(e),
        };
        outcome(
            &self.metrics,
            "memory_search",
            namespace.as_deref().unwrap_or(Namespace::DEFAULT),
            started,
            result,
        )
    }

    /// Forget memories (described to agents by `descriptions::memory_forget`).
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
            Ok(request) => self.ops.forget(request).await,
            Err(e) => invalid(e),
        };
        // By id the namespace is only known once the row is read: log that it was by id.
        outcome(
            &self.metrics,
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
            .with_instructions(self.instructions.clone())
    }
}
