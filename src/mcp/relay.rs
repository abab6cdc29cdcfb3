//! `hindsight mcp` when another process owns the data dir: relay JSON-RPC between our stdio and
//! the owner's Streamable HTTP endpoint, message by message, without interpreting them.
//! The HTTP transport handles the session id, SSE and reconnects; the client on our stdin never
//! notices it is talking to a relay.

use std::collections::HashSet;
use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::{ClientJsonRpcMessage, ErrorData, RequestId, ServerJsonRpcMessage};
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, Transport};
use tokio::task::JoinSet;

use crate::lock::Endpoint;

/// After stdin closes, replies still in flight get this long to arrive.
const DRAIN_GRACE: Duration = Duration::from_secs(30);

fn upstream_error(id: RequestId, message: String) -> ServerJsonRpcMessage {
    ServerJsonRpcMessage::error(
        ErrorData::internal_error(format!("upstream: {message}"), None),
        Some(id),
    )
}

/// Relay until stdin closes or the upstream goes away.
pub async fn run(endpoint: &Endpoint) -> std::io::Result<()> {
    let (stdin, stdout) = rmcp::transport::stdio();
    let mut down = AsyncRwTransport::<RoleServer, _, _>::new_server(stdin, stdout);
    let mut config = StreamableHttpClientTransportConfig::with_uri(endpoint.url.clone());
    if let Some(token) = &endpoint.token {
        config = config.auth_header(token.expose().to_owned());
    }
    let mut up = StreamableHttpClientTransport::from_config(config);

    // Sends to the upstream resolve only when the POST completes, so after the handshake they run
    // concurrently; dropping one would cancel its request, hence the JoinSet.
    let mut pending: JoinSet<(Option<RequestId>, Result<(), String>)> = JoinSet::new();
    // initialize and notifications/initialized must reach the upstream in order.
    let mut handshake = 2usize;
    let drain = tokio::time::sleep(Duration::from_secs(86_400 * 365));
    tokio::pin!(drain);
    let mut stdin_open = true;
    // Requests forwarded and not yet answered: on stdin EOF we wait for these, then stop.
    let mut outstanding: HashSet<RequestId> = HashSet::new();
    loop {
        tokio::select! {
            message = down.receive(), if stdin_open => {
                let Some(message): Option<ClientJsonRpcMessage> = message else {
                    stdin_open = false;
                    drain.as_mut().reset(tokio::time::Instant::now() + DRAIN_GRACE);
                    if outstanding.is_empty() { break; }
                    continue;
                };
                let id = match &message {
                    ClientJsonRpcMessage::Request(r) => Some(r.id.clone()),
                    _ => None,
                };
                outstanding.extend(id.clone());
                let send = up.send(message);
                if handshake > 0 {
                    handshake -= 1;
                    if let (Some(id), Err(e)) = (id, send.await) {
                        tracing::error!(error = %e, url = %endpoint.url, "relay: upstream refused the handshake");
                        let _ = down.send(upstream_error(id, e.to_string())).await;
                        break;
                    }
                } else {
                    pending.spawn(async move { (id, send.await.map_err(|e| e.to_string())) });
                }
            }
            message = up.receive() => {
                let Some(message): Option<ServerJsonRpcMessage> = message else {
                    tracing::warn!(url = %endpoint.url, "relay: upstream closed");
                    break;
                };
                match &message {
                    ServerJsonRpcMessage::Response(r) => { outstanding.remove(&r.id); }
                    ServerJsonRpcMessage::Error(e) => { if let Some(id) = &e.id { outstanding.remove(id); } }
                    _ => {}
                }
                if down.send(message).await.is_err() {
                    break;
                }
                if !stdin_open && outstanding.is_empty() { break; }
            }
            Some(Ok((id, result))) = pending.join_next(), if !pending.is_empty() => {
                if let (Some(id), Err(e)) = (id, result) {
                    outstanding.remove(&id);
                    let _ = down.send(upstream_error(id, e)).await;
                }
                if !stdin_open && outstanding.is_empty() { break; }
            }
            _ = &mut drain => break,
        }
    }
    let _ = up.close().await;
    let _ = down.close().await;
    Ok(())
}
