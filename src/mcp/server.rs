//! The four MCP tools, answered through `Operations` (the one way in). Each result is one JSON object, sent as text
//! content and as structured content; invalid arguments give a tool error naming the field.

use std::sync::Arc;
use std::time::Instant;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{Implementation, ServerCapabilities, ServerConfig};
use rmcp::service::RequestContext;
use rmcp::{Json, RoleServer, ServerHandler, tool, tool_handler, tool_router};

use super::{descriptions, schema};
use crate::auth::Principal;
use crate::domain::Namespace;
use crate::metrics::Metrics;
use crate::operations::{Guarded, LocalOperations, OperationError, Operations};
use crate::service::{
    Args, ForgetRequest, ForgetResult, Rules, SearchRequest, SearchResult, ServiceError,
    WriteBatchRequest, WriteBatchResult, WriteRequest, WriteResult,
};

#[derive(Clone)]
pub struct HindsightMcp {
    ops: Arc<LocalOperations>,
    /// Who calls when the transport names no one: the stdio owner's own user. Over HTTP each
    /// request carries the caller its bearer token stands for.
    caller: Option<Principal>,
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
    pub fn new(
        ops: Arc<LocalOperations>,
        caller: Option<Principal>,
        rules: &Rules,
        metrics: Arc<Metrics>,
    ) -> Self {
        let mut tool_router = Self::tool_router();
        // The descriptions state the rules in force, not the defaults (`descriptions.rs`).
        for (name, description) in [
            ("memory_write", descriptions::memory_write(rules)),
            (
                "memory_write_batch",
                descriptions::memory_write_batch(rules),
            ),
            ("memory_search", descriptions::memory_search(rules)),
            ("memory_forget", descriptions::memory_forget(rules)),
        ] {
            if let Some(route) = tool_router.map.get_mut(name) {
                route.attr.description = Some(description.into());
            }
        }
        // Standard JSON Schema only: no Rust integer widths as formats (`schema.rs`).
        for route in tool_router.map.values_mut() {
            schema::standardise(Arc::make_mut(&mut route.attr.input_schema));
            if let Some(output) = route.attr.output_schema.as_mut() {
                schema::standardise(Arc::make_mut(output));
            }
        }
        Self {
            ops,
            caller,
            instructions: descriptions::instructions(rules),
            metrics,
            tool_router,
        }
    }

    /// The operations as this request's caller may use them: the one the HTTP bearer layer put
    /// in the request's extensions, else the transport's own (stdio).
    fn guarded(&self, ctx: &RequestContext<RoleServer>) -> Result<Guarded, OperationError> {
        let from_http = ctx
            .extensions
            .get::<axum::http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<Principal>())
            .cloned();
        match from_http.or_else(|| self.caller.clone()) {
            Some(caller) => Ok(self.ops.guarded(caller)),
            None => Err(OperationError::Forbidden(
                "no caller: the request carried no token".to_owned(),
            )),
        }
    }

    /// Store a memory (described to agents by `descriptions::memory_write`).
    #[tool(annotations(destructive_hint = false, idempotent_hint = false))]
    async fn memory_write(
        &self,
        ctx: RequestContext<RoleServer>,
        Parameters(Args(args)): Parameters<Args<WriteRequest>>,
    ) -> Result<Json<WriteResult>, String> {
        let started = Instant::now();
        let namespace = args.as_ref().ok().and_then(|a| a.namespace.clone());
        let result = match args {
            Ok(request) => match self.guarded(&ctx) {
                Ok(ops) => ops.write(request).await,
                Err(e) => Err(e),
            },
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

    /// Store several memories (described to agents by `descriptions::memory_write_batch`).
    #[tool(annotations(destructive_hint = false, idempotent_hint = false))]
    async fn memory_write_batch(
        &self,
        ctx: RequestContext<RoleServer>,
        Parameters(Args(args)): Parameters<Args<WriteBatchRequest>>,
    ) -> Result<Json<WriteBatchResult>, String> {
        let started = Instant::now();
        // The log names the first memory's namespace (a batch usually has one).
        let namespace = args
            .as_ref()
            .ok()
            .and_then(|a| a.memories.first().and_then(|m| m.namespace.clone()));
        let result = match args {
            Ok(request) => match self.guarded(&ctx) {
                Ok(ops) => ops.write_batch(request).await,
                Err(e) => Err(e),
            },
            Err(e) => invalid(e),
        };
        outcome(
            &self.metrics,
            "memory_write_batch",
            namespace.as_deref().unwrap_or(Namespace::DEFAULT),
            started,
            result,
        )
    }

    /// Search memories (described to agents by `descriptions::memory_search`).
    #[tool(annotations(read_only_hint = true))]
    async fn memory_search(
        &self,
        ctx: RequestContext<RoleServer>,
        Parameters(Args(args)): Parameters<Args<SearchRequest>>,
    ) -> Result<Json<SearchResult>, String> {
        let started = Instant::now();
        let namespace = args.as_ref().ok().and_then(|a| a.namespace.clone());
        let result = match args {
            Ok(request) => match self.guarded(&ctx) {
                Ok(ops) => ops.search(request).await,
                Err(e) => Err(e),
            },
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
        ctx: RequestContext<RoleServer>,
        Parameters(Args(args)): Parameters<Args<ForgetRequest>>,
    ) -> Result<Json<ForgetResult>, String> {
        let started = Instant::now();
        let namespace = args
            .as_ref()
            .ok()
            .and_then(|a| a.filter.as_ref().map(|f| f.namespace.clone()));
        let result = match args {
            Ok(request) => match self.guarded(&ctx) {
                Ok(ops) => ops.forget(request).await,
                Err(e) => Err(e),
            },
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
