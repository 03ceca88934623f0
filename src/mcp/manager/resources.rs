//! A server's resources attached to a prompt that mentions them as `@server:uri`.

use std::sync::Arc;

use super::{Connection, FETCH_TIMEOUT, McpManager, Status};

impl McpManager {
    /// `prompt` with the resources it mentions as `@server:uri` attached (a server by its
    /// configured name, connected); a resource that cannot be read is named with the reason.
    /// The attachments follow the same marker as attached files, so the transcript shows the
    /// prompt only.
    pub async fn attach_resources(&self, prompt: String) -> String {
        use crate::context::mentions::ATTACHMENTS_MARKER;
        let typed = prompt.split(ATTACHMENTS_MARKER).next().unwrap_or("");
        let mut wanted: Vec<(Arc<Connection>, String, String)> = Vec::new();
        for word in typed.split_whitespace() {
            let Some((server, uri)) = word.strip_prefix('@').and_then(|w| w.split_once(':')) else {
                continue;
            };
            let uri = uri.trim_end_matches(['.', ',', ';', ')']);
            let connection = self.entries().iter().find_map(|e| {
                (e.spec.name == server && e.status == Status::Connected)
                    .then(|| e.connection.clone())
                    .flatten()
            });
            if let Some(connection) = connection
                && !uri.is_empty()
                && !wanted.iter().any(|(_, s, u)| s == server && u == uri)
            {
                wanted.push((connection, server.to_owned(), uri.to_owned()));
            }
        }
        if wanted.is_empty() {
            return prompt;
        }
        let mut out = prompt;
        if !out.contains(ATTACHMENTS_MARKER) {
            out.push_str(ATTACHMENTS_MARKER);
            out.push('\n');
        }
        for (connection, server, uri) in wanted {
            let read = tokio::time::timeout(FETCH_TIMEOUT, connection.read_resource(&uri)).await;
            let body = match read {
                Ok(Ok(wire)) => resource_text(&wire),
                Ok(Err(e)) => format!("(not attached: {e})"),
                Err(_) => format!(
                    "(not attached: no answer within {}s)",
                    FETCH_TIMEOUT.as_secs()
                ),
            };
            out.push_str(&format!(
                "<mcp-resource server=\"{server}\" uri=\"{uri}\">\n{body}\n</mcp-resource>\n"
            ));
        }
        out
    }
}

/// A resource's contents for the model: text as it is (64 KB at most), binary named.
fn resource_text(wire: &serde_json::Value) -> String {
    const MAX: usize = 64 * 1024;
    let mut parts = Vec::new();
    for content in wire["contents"].as_array().into_iter().flatten() {
        match content["text"].as_str() {
            Some(text) => {
                let cut = text
                    .char_indices()
                    .map(|(i, _)| i)
                    .take_while(|&i| i <= MAX)
                    .last()
                    .unwrap_or(0);
                if text.len() > MAX {
                    parts.push(format!(
                        "{}\n(cut: {} bytes in all)",
                        &text[..cut],
                        text.len()
                    ));
                } else {
                    parts.push(text.to_owned());
                }
            }
            None => parts.push(format!(
                "(binary content, {})",
                content["mimeType"].as_str().unwrap_or("unknown type")
            )),
        }
    }
    parts.join("\n")
}
