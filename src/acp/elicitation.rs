//! MCP elicitations as the protocol's `elicitation/create`: when the editor declared form
//! elicitation at `initialize`, a server's form is asked in the editor, scoped to the session,
//! and the user's answer goes back to the server. Without it (or when the form cannot be put in
//! the protocol's schema), the request is declined with a notice, as in `exec`.

use std::sync::Arc;

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema as acp;
use async_trait::async_trait;
use serde_json::Value;

use crate::mcp::{Elicited, Elicitor};

/// The editor's user, asked on a server's behalf in one session.
pub struct EditorElicitor {
    cx: ConnectionTo<Client>,
    session: acp::SessionId,
}

impl EditorElicitor {
    /// An elicitor when `capabilities` offers form elicitation.
    pub fn offered(
        cx: &ConnectionTo<Client>,
        capabilities: Option<&acp::ElicitationCapabilities>,
        session: acp::SessionId,
    ) -> Option<Arc<dyn Elicitor>> {
        capabilities?.form.as_ref()?;
        Some(Arc::new(EditorElicitor {
            cx: cx.clone(),
            session,
        }))
    }
}

#[async_trait]
impl Elicitor for EditorElicitor {
    async fn ask(&self, server: &str, message: &str, schema: &Value) -> Option<Elicited> {
        let schema: acp::ElicitationSchema = match serde_json::from_value(schema.clone()) {
            Ok(schema) => schema,
            Err(error) => {
                tracing::warn!(server, "a form the protocol cannot carry: {error}");
                return None;
            }
        };
        let mode = acp::ElicitationMode::Form(acp::ElicitationFormMode::new(
            acp::ElicitationScope::Session(acp::ElicitationSessionScope::new(self.session.clone())),
            schema,
        ));
        let request =
            acp::CreateElicitationRequest::new(mode, format!("MCP server `{server}`: {message}"));
        let answer = match self.cx.send_request(request).block_task().await {
            Ok(answer) => answer,
            Err(error) => {
                tracing::warn!(server, "the editor did not answer the form: {error}");
                return None;
            }
        };
        Some(match answer.action {
            acp::ElicitationAction::Accept(accepted) => {
                let content = accepted
                    .content
                    .and_then(|values| serde_json::to_value(values).ok())
                    .and_then(|value| match value {
                        Value::Object(values) => Some(values),
                        _ => None,
                    })
                    .unwrap_or_default();
                Elicited::Accept(content)
            }
            acp::ElicitationAction::Cancel => Elicited::Cancel,
            // A decline, or an answer this protocol version does not know: declined.
            _ => Elicited::Decline,
        })
    }
}
