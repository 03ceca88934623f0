//! The MCP servers the editor passes in `session/new` and `session/load`: started like
//! `.mcp.json` servers, as the editor's own (the user configured them there, so harness9 asks
//! no approval), over stdio or Streamable HTTP; an SSE server (the protocol's older transport,
//! which harness9 does not speak) is named in a notice instead.

use agent_client_protocol::v1::schema as acp;

use crate::config::{EditorMcpServer, EditorMcpTransport};

/// The servers harness9 starts, and a notice for each it cannot.
pub fn from_editor(servers: &[acp::McpServer]) -> (Vec<EditorMcpServer>, Vec<String>) {
    let mut started = Vec::new();
    let mut notices = Vec::new();
    for server in servers {
        let (name, transport) = match server {
            acp::McpServer::Stdio(s) => (
                &s.name,
                EditorMcpTransport::Stdio {
                    command: s.command.display().to_string(),
                    args: s.args.clone(),
                    env: s
                        .env
                        .iter()
                        .map(|v| (v.name.clone(), v.value.clone()))
                        .collect(),
                },
            ),
            acp::McpServer::Http(s) => (
                &s.name,
                EditorMcpTransport::Http {
                    url: s.url.clone(),
                    headers: s
                        .headers
                        .iter()
                        .map(|h| (h.name.clone(), h.value.clone()))
                        .collect(),
                },
            ),
            acp::McpServer::Sse(s) => {
                notices.push(format!(
                    "the editor's MCP server `{}` is not started: it speaks SSE, and harness9 \
                     reaches MCP servers over stdio or Streamable HTTP",
                    s.name
                ));
                continue;
            }
            _ => {
                notices.push(
                    "an MCP server of a kind this protocol version does not know is not started"
                        .to_owned(),
                );
                continue;
            }
        };
        started.push(EditorMcpServer {
            name: name.clone(),
            transport,
        });
    }
    (started, notices)
}
