//! What can go wrong with a language server.

/// A language server could not be started or answered wrongly.
#[derive(Debug, thiserror::Error)]
pub enum LspError {
    #[error("cannot start `{command}`: {source}")]
    Start {
        command: String,
        source: std::io::Error,
    },
    #[error("`{server}` did not answer `{method}` within {seconds} s")]
    Timeout {
        server: String,
        method: &'static str,
        seconds: u64,
    },
    #[error("`{server}` failed `{method}`: {source}")]
    Protocol {
        server: String,
        method: &'static str,
        source: Box<async_lsp::Error>,
    },
    #[error("{path} is not a path a language server can name")]
    Path { path: String },
}
