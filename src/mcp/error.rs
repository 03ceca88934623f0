//! What can go wrong with an MCP server, as data: a definition that cannot be used
//! (`DefinitionError`, found before anything starts) and a connection or request that failed
//! (`McpError`). A front end decides on `McpError::kind` (authorize, upgrade, retry) and shows
//! the Display text, which is the sentence users have always read.

use std::time::Duration;

use rmcp::ServiceError;
use rmcp::service::ClientInitializeError;

/// Why a server's definition in `mcp.json` / `.mcp.json` cannot be used (it is then shown as
/// failed with this reason). Cloned with the server's spec.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DefinitionError {
    #[error("the definition is not a JSON object")]
    NotAnObject,
    #[error("`{key}` is not a string")]
    NotAString { key: String },
    #[error("an http server needs a `url`")]
    NoUrl,
    #[error(
        "the older HTTP+SSE transport (`\"type\": \"sse\"`) is not supported; use the \
         server's Streamable HTTP endpoint with `\"type\": \"http\"`"
    )]
    OldSse,
    #[error("a stdio server needs a `command`")]
    NoCommand,
    #[error("`args` is not a list")]
    ArgsNotAList,
    #[error("unknown server type `{kind}` (expected `stdio` or `http`)")]
    UnknownType { kind: String },
    #[error("an entry of `{key}` is not a string")]
    EntryNotAString { key: String },
    #[error("the `{key}` entry `{entry}` has no `{separator}`")]
    NoSeparator {
        key: String,
        entry: String,
        separator: char,
    },
    #[error("`{key}` is neither an object nor a list")]
    NotObjectOrList { key: String },
    #[error("`{text}` has a `${{` without its `}}`")]
    Unclosed { text: String },
    #[error("`${{{inner}}}` is not a variable name")]
    BadVariableName { inner: String },
    #[error(
        "the environment variable {name} is not set (write `${{{name}:-default}}` for a default)"
    )]
    Unset { name: String },
}

/// What a front end may do about a failed server or request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum McpErrorKind {
    /// The server wants (new) authorization: retrying as is will not help.
    Authorization,
    /// The server and harness9 share no protocol revision.
    ProtocolVersion,
    /// The process could not start, the connection broke, or the server stopped.
    Transport,
    /// The server did not answer in time: trying again may work.
    Timeout,
    /// The request was cancelled by the user.
    Cancelled,
    /// The server answered, with an error or something unexpected.
    Server,
    /// Our side is misconfigured (a header harness9 cannot send) or asked for what no server
    /// offers.
    Request,
}

/// A connection to, or a request of, an MCP server that failed.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    #[error("cannot start `{command}`: {source}")]
    Start {
        command: String,
        #[source]
        source: std::io::Error,
    },
    #[error("the header name `{key}` is not valid: {source}")]
    HeaderName {
        key: String,
        #[source]
        source: reqwest::header::InvalidHeaderName,
    },
    #[error("the value of the header `{key}` is not valid: {source}")]
    HeaderValue {
        key: String,
        #[source]
        source: reqwest::header::InvalidHeaderValue,
    },
    /// The handshake (`server/discover` or `initialize`) failed.
    #[error(transparent)]
    Handshake(Box<ClientInitializeError>),
    /// A request after the handshake failed.
    #[error(transparent)]
    Request(#[from] ServiceError),
    #[error("the call could not be sent: {0}")]
    Send(#[source] ServiceError),
    /// The server's connection ended while a call was waiting for its answer.
    #[error("the server stopped during the call ({0})")]
    Stopped(#[source] ServiceError),
    #[error("cancelled")]
    Cancelled,
    #[error("the server answered the call with something else than a tool result")]
    NotAToolResult,
    #[error("{0}")]
    Decode(#[from] serde_json::Error),
    /// Starting (connect, handshake, first tool list) took longer than `limit`.
    #[error("it did not answer within {}s", .limit.as_secs())]
    StartTimeout { limit: Duration },
    /// Fetching a prompt took longer than `limit`.
    #[error("the server did not answer within {}s", .limit.as_secs())]
    Timeout { limit: Duration },
    #[error("no connected MCP server offers the prompt /{command}")]
    NoSuchPrompt { command: String },
    /// The server settled on a protocol revision harness9 does not speak.
    #[error(
        "it speaks MCP protocol version {version}, which harness9 does not (it speaks {known})"
    )]
    UnsupportedVersion { version: String, known: String },
}

impl From<ClientInitializeError> for McpError {
    fn from(error: ClientInitializeError) -> Self {
        McpError::Handshake(Box::new(error))
    }
}

impl McpError {
    pub fn kind(&self) -> McpErrorKind {
        match self {
            McpError::Start { .. } | McpError::Stopped(_) => McpErrorKind::Transport,
            McpError::HeaderName { .. }
            | McpError::HeaderValue { .. }
            | McpError::NoSuchPrompt { .. } => McpErrorKind::Request,
            McpError::UnsupportedVersion { .. } => McpErrorKind::ProtocolVersion,
            McpError::Handshake(e) if e.is_authorization_required() => McpErrorKind::Authorization,
            McpError::Handshake(e) => handshake_kind(e),
            McpError::Request(e) | McpError::Send(e) => service_kind(e),
            McpError::Cancelled => McpErrorKind::Cancelled,
            McpError::NotAToolResult | McpError::Decode(_) => McpErrorKind::Server,
            McpError::StartTimeout { .. } | McpError::Timeout { .. } => McpErrorKind::Timeout,
        }
    }

    /// The error as the user reads it: what happened, with the HTTP status when the server
    /// gave one, and what to do next.
    pub fn with_next_step(&self, server: &str) -> String {
        match self.kind() {
            McpErrorKind::Authorization => format!(
                "it needs authorization (HTTP 401: {self}): `harness9 mcp login {server}` logs \
                 in, or give it a token in its `headers` in mcp.json"
            ),
            McpErrorKind::ProtocolVersion => format!(
                "{self}; a newer or older release of the server may speak one harness9 does"
            ),
            McpErrorKind::Transport | McpErrorKind::Timeout => format!(
                "{self}; check that it runs and its definition (`harness9 mcp list` shows it), \
                 then reconnect it with /mcp"
            ),
            _ => self.to_string(),
        }
    }

    /// Whether the same request may succeed if simply tried again (or the server reconnected).
    pub fn is_retryable(&self) -> bool {
        matches!(self.kind(), McpErrorKind::Transport | McpErrorKind::Timeout)
    }
}

fn handshake_kind(error: &ClientInitializeError) -> McpErrorKind {
    match error {
        ClientInitializeError::NoCompatibleProtocolVersion { .. }
        | ClientInitializeError::NoPreferredProtocolVersion => McpErrorKind::ProtocolVersion,
        ClientInitializeError::LegacyFallbackFailed { fallback, .. } => handshake_kind(fallback),
        ClientInitializeError::Cancelled => McpErrorKind::Cancelled,
        ClientInitializeError::JsonRpcError(_)
        | ClientInitializeError::ExpectedInitResponse(_)
        | ClientInitializeError::ExpectedInitResult(_)
        | ClientInitializeError::ConflictInitResponseId(..)
        | ClientInitializeError::UncorrelatedErrorResponse { .. } => McpErrorKind::Server,
        _ => McpErrorKind::Transport,
    }
}

fn service_kind(error: &ServiceError) -> McpErrorKind {
    if error.auth_challenge().is_some() {
        return McpErrorKind::Authorization;
    }
    match error {
        ServiceError::McpError(_) | ServiceError::UnexpectedResponse => McpErrorKind::Server,
        ServiceError::Cancelled { .. } => McpErrorKind::Cancelled,
        ServiceError::Timeout { .. } => McpErrorKind::Timeout,
        _ => McpErrorKind::Transport,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_are_decided_without_reading_words() {
        let timeout = McpError::StartTimeout {
            limit: Duration::from_secs(30),
        };
        assert_eq!(timeout.to_string(), "it did not answer within 30s");
        assert_eq!(timeout.kind(), McpErrorKind::Timeout);
        assert!(timeout.is_retryable());
        let versions = McpError::from(ClientInitializeError::NoCompatibleProtocolVersion {
            client_supported: Vec::new(),
            server_supported: Vec::new(),
        });
        assert_eq!(versions.kind(), McpErrorKind::ProtocolVersion);
        assert!(!versions.is_retryable());
        let missing = McpError::NoSuchPrompt {
            command: "mcp__a__b".into(),
        };
        assert_eq!(
            missing.to_string(),
            "no connected MCP server offers the prompt /mcp__a__b"
        );
        assert_eq!(McpError::Cancelled.kind(), McpErrorKind::Cancelled);
    }

    #[test]
    fn a_definition_error_names_its_key() {
        let error = DefinitionError::NoSeparator {
            key: "env".into(),
            entry: "NOEQUALS".into(),
            separator: '=',
        };
        assert_eq!(error.to_string(), "the `env` entry `NOEQUALS` has no `=`");
        let unset = DefinitionError::Unset {
            name: "NOPE".into(),
        };
        assert_eq!(
            unset.to_string(),
            "the environment variable NOPE is not set (write `${NOPE:-default}` for a default)"
        );
    }
}
