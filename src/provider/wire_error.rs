//! The failures every protocol's decoder reports alike: an answer that cannot be read (quoted
//! in part), a stream that ended before its end, and an error the server sent inside its answer,
//! classified by the protocol's own names for it. One wording each, whichever protocol speaks.

use serde::Deserialize;
use serde_json::{Value, json};

use super::api_error::ApiErrorBody;
use super::transport::excerpt;
use crate::schema::{ProviderError, ProviderErrorKind};

/// `provider` sent `what`, which could not be read for `error`; `text` is quoted in part.
pub(crate) fn unreadable(
    provider: &str,
    what: &str,
    error: impl std::fmt::Display,
    text: &str,
) -> ProviderError {
    ProviderError::new(
        ProviderErrorKind::Protocol,
        format!("{provider} sent {what} ({error}): {}", excerpt(text)),
    )
}

/// A stream event's JSON as `T`, or the error saying `provider` sent something that is not
/// valid JSON.
pub(crate) fn read_event<'a, T: Deserialize<'a>>(
    provider: &str,
    data: &'a str,
) -> Result<T, ProviderError> {
    serde_json::from_str(data)
        .map_err(|e| unreadable(provider, "a stream event that is not valid JSON", e, data))
}

/// A whole answer's JSON as `T`, or the error saying `provider` sent `what` instead.
pub(crate) fn read_body<'a, T: Deserialize<'a>>(
    provider: &str,
    what: &str,
    body: &'a [u8],
) -> Result<T, ProviderError> {
    serde_json::from_slice(body)
        .map_err(|e| unreadable(provider, what, e, &String::from_utf8_lossy(body)))
}

/// The stream ended before `missing`: the connection broke, so the answer may be retried.
pub(crate) fn ended_early(provider: &str, missing: &str) -> ProviderError {
    ProviderError::new(
        ProviderErrorKind::Connection,
        format!("{provider} stream ended before {missing}"),
    )
}

/// An error the server reported inside its answer: a prompt too long for the model as both
/// protocols say it, any other by what the protocol's `kind_of` makes of the error's details.
pub(crate) fn reported(
    provider: &str,
    detail: &ApiErrorBody,
    kind_of: impl FnOnce(&ApiErrorBody) -> ProviderErrorKind,
    label: &str,
    message: &str,
) -> ProviderError {
    let kind = if detail.is_context_too_long() {
        ProviderErrorKind::ContextTooLong
    } else {
        kind_of(detail)
    };
    ProviderError::new(
        kind,
        format!("{provider} stream error ({label}): {message}"),
    )
}

/// An `error` object sent inside a stream (`{"type": ..., "code": ..., "message": ...}`), named
/// by its code or type, its message shown (the object itself when it has none).
pub(crate) fn in_stream(
    provider: &str,
    error: &Value,
    kind_of: impl FnOnce(&ApiErrorBody) -> ProviderErrorKind,
) -> ProviderError {
    let detail = ApiErrorBody::from_value(&json!({ "error": error }));
    let label = detail.label().unwrap_or_default();
    let message = match &detail.message {
        Some(message) => message.clone(),
        None => error.to_string(),
    };
    reported(provider, &detail, kind_of, label, &message)
}
