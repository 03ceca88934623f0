//! A failure as front ends see it: what kind of thing went wrong, decided from the typed error
//! where it arose (a provider's HTTP status class, the store's own error), and the words for the
//! user. Front ends choose what to say or do from the kind, never from the wording.

use crate::memory::MemoryError;
use crate::schema::{ProviderError, ProviderErrorKind};

use super::EngineError;

/// What kind of thing went wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FailureKind {
    /// The user (or a signal) cancelled the work.
    Interrupted,
    /// The provider refused the key (401 / 403).
    Auth,
    /// The provider could not be reached, or went silent.
    Network,
    /// The provider does not know the model (404).
    Model,
    /// Any other provider failure (a bad request, a broken stream, retries used up).
    Provider,
    /// The run used up its turns.
    MaxTurns,
    /// The prompt does not fit the model even after compacting.
    ContextTooLong,
    /// The session store (`sessions.db`) failed or holds something unreadable.
    Storage,
    /// A session that does not exist, or a key that names more than one.
    NotFound,
    /// A setting that cannot be used (a model or provider that cannot be set up).
    Config,
}

impl FailureKind {
    /// The kind's name in machine-readable output.
    pub fn as_str(self) -> &'static str {
        match self {
            FailureKind::Interrupted => "interrupted",
            FailureKind::Auth => "auth",
            FailureKind::Network => "network",
            FailureKind::Model => "model",
            FailureKind::Provider => "provider",
            FailureKind::MaxTurns => "max_turns",
            FailureKind::ContextTooLong => "context_too_long",
            FailureKind::Storage => "storage",
            FailureKind::NotFound => "not_found",
            FailureKind::Config => "config",
        }
    }

    /// The kind `as_str` names.
    pub fn parse(name: &str) -> Option<FailureKind> {
        use FailureKind::*;
        [
            Interrupted,
            Auth,
            Network,
            Model,
            Provider,
            MaxTurns,
            ContextTooLong,
            Storage,
            NotFound,
            Config,
        ]
        .into_iter()
        .find(|kind| kind.as_str() == name)
    }
}

impl std::fmt::Display for FailureKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A typed failure with the words for the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub kind: FailureKind,
    pub message: String,
}

impl Failure {
    pub fn new(kind: FailureKind, message: impl Into<String>) -> Self {
        Failure {
            kind,
            message: message.into(),
        }
    }

    /// The same failure with `context` in front of its message (its kind unchanged).
    pub fn context(mut self, context: &str) -> Self {
        self.message = format!("{context}: {}", self.message);
        self
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<&ProviderError> for FailureKind {
    fn from(error: &ProviderError) -> Self {
        match error.kind {
            ProviderErrorKind::Auth => FailureKind::Auth,
            ProviderErrorKind::Connection | ProviderErrorKind::Timeout => FailureKind::Network,
            ProviderErrorKind::InvalidRequest if error.status == Some(404) => FailureKind::Model,
            ProviderErrorKind::ContextTooLong => FailureKind::ContextTooLong,
            ProviderErrorKind::Cancelled => FailureKind::Interrupted,
            ProviderErrorKind::RateLimited
            | ProviderErrorKind::Overloaded
            | ProviderErrorKind::Server
            | ProviderErrorKind::StreamCut
            | ProviderErrorKind::InvalidRequest
            | ProviderErrorKind::Protocol => FailureKind::Provider,
        }
    }
}

impl From<&MemoryError> for FailureKind {
    fn from(error: &MemoryError) -> Self {
        match error {
            MemoryError::Store(_) | MemoryError::Corrupt(_) => FailureKind::Storage,
            MemoryError::NotFound(_) | MemoryError::Ambiguous(_) => FailureKind::NotFound,
            // A summary the model could not write.
            MemoryError::Compaction(_) => FailureKind::Provider,
        }
    }
}

impl From<&EngineError> for FailureKind {
    fn from(error: &EngineError) -> Self {
        match error {
            EngineError::MaxTurns(_) => FailureKind::MaxTurns,
            EngineError::Cancelled => FailureKind::Interrupted,
            EngineError::Provider(error) => error.into(),
            EngineError::ContextTooLong { .. } => FailureKind::ContextTooLong,
            EngineError::Memory(error) => error.into(),
        }
    }
}

impl From<&MemoryError> for Failure {
    fn from(error: &MemoryError) -> Self {
        Failure::new(error.into(), error.to_string())
    }
}

impl From<&EngineError> for Failure {
    fn from(error: &EngineError) -> Self {
        Failure::new(error.into(), error.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provider_errors_are_classed_by_their_kind_and_status_not_their_words() {
        let mut not_found = ProviderError::new(ProviderErrorKind::InvalidRequest, "no such thing");
        not_found.status = Some(404);
        assert_eq!(FailureKind::from(&not_found), FailureKind::Model);
        // Words that look like another class change nothing.
        let auth = ProviderError::new(ProviderErrorKind::Auth, "model gpt-9 does not exist");
        assert_eq!(FailureKind::from(&auth), FailureKind::Auth);
        let bad = ProviderError::new(ProviderErrorKind::InvalidRequest, "401 api key interrupted");
        assert_eq!(FailureKind::from(&bad), FailureKind::Provider);
        assert_eq!(
            FailureKind::from(&EngineError::Cancelled),
            FailureKind::Interrupted
        );
        let store = EngineError::Memory(MemoryError::Store("disk I/O error".into()));
        assert_eq!(Failure::from(&store).kind, FailureKind::Storage);
    }
}
