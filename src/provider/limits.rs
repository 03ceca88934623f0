//! Bounds on everything a server controls: how many tool calls one answer may carry, how large
//! their arguments, a response body, an SSE line or event and a whole stream may grow. A server
//! past a bound gets a clear `Protocol` error, which is never retried: a hostile or broken server
//! cannot make the process allocate by a number it chose.

use std::collections::BTreeMap;

use crate::schema::{ProviderError, ProviderErrorKind, ToolCall};

/// Parallel tool calls (OpenAI `index`) or content blocks (Anthropic `index`) in one answer.
pub const MAX_TOOL_CALLS: u64 = 1024;
/// The argument text of one tool call.
pub const MAX_TOOL_ARGUMENT_BYTES: usize = 4 * 1024 * 1024;
/// A whole non-streamed response body.
pub const MAX_RESPONSE_BYTES: usize = 32 * 1024 * 1024;
/// The part of an error body read to find the provider's message; the rest is not read.
pub const MAX_ERROR_BODY_BYTES: usize = 64 * 1024;
/// One line of a server-sent event stream (an event's data may span several lines).
pub const MAX_SSE_LINE_BYTES: usize = 8 * 1024 * 1024;
/// The data of one server-sent event.
pub const MAX_SSE_EVENT_BYTES: usize = 8 * 1024 * 1024;
/// A whole streamed answer, in bytes on the wire.
pub const MAX_STREAM_BYTES: usize = 64 * 1024 * 1024;

/// A bound was passed: the server's answer is refused, never retried.
pub(crate) fn exceeded(label: &str, what: impl std::fmt::Display) -> ProviderError {
    ProviderError::new(
        ProviderErrorKind::Protocol,
        format!("{label} sent {what}; the answer was refused"),
    )
}

/// The index of a streamed tool call or content block, checked before anything is stored by it.
pub(crate) fn check_index(label: &str, index: u64) -> Result<u32, ProviderError> {
    match u32::try_from(index) {
        Ok(small) if index < MAX_TOOL_CALLS => Ok(small),
        _ => Err(exceeded(
            label,
            format_args!(
                "a tool call or content block with index {index} (at most {MAX_TOOL_CALLS} are accepted)"
            ),
        )),
    }
}

/// Whether `held` bytes of arguments may grow by `more`.
pub(crate) fn check_argument_growth(
    label: &str,
    held: usize,
    more: usize,
) -> Result<(), ProviderError> {
    if held.saturating_add(more) > MAX_TOOL_ARGUMENT_BYTES {
        return Err(exceeded(
            label,
            format_args!(
                "tool call arguments larger than {} MB",
                MAX_TOOL_ARGUMENT_BYTES / (1024 * 1024)
            ),
        ));
    }
    Ok(())
}

/// The tool calls of a finished OpenAI-style answer from their `(id, name, arguments)`: a call
/// the server gave no id is `call_N` (its place), empty arguments are `{}`; then checked as
/// `check_tool_calls` does.
pub(crate) fn finish_calls(
    label: &str,
    calls: impl IntoIterator<Item = (String, String, String)>,
) -> Result<Vec<ToolCall>, ProviderError> {
    let calls: Vec<ToolCall> = calls
        .into_iter()
        .enumerate()
        .map(|(i, (id, name, arguments))| ToolCall {
            id: if id.is_empty() {
                format!("call_{i}")
            } else {
                id
            },
            name,
            arguments: if arguments.trim().is_empty() {
                "{}".to_owned()
            } else {
                arguments
            },
        })
        .collect();
    check_tool_calls(label, &calls)?;
    Ok(calls)
}

/// A tool call of a streamed OpenAI-style answer being assembled, kept by the server's index.
#[derive(Default)]
pub(crate) struct PartialCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

/// The tool calls assembled from a stream, in index order, as `finish_calls` makes them; a
/// call that never got a name is left out.
pub(crate) fn finish_streamed_calls(
    label: &str,
    calls: BTreeMap<u32, PartialCall>,
) -> Result<Vec<ToolCall>, ProviderError> {
    finish_calls(
        label,
        calls
            .into_values()
            .filter(|call| !call.name.is_empty())
            .map(|call| (call.id, call.name, call.arguments)),
    )
}

/// The tool calls of a whole answer: how many, and how large each one's arguments.
pub(crate) fn check_tool_calls(label: &str, calls: &[ToolCall]) -> Result<(), ProviderError> {
    if calls.len() as u64 > MAX_TOOL_CALLS {
        return Err(exceeded(
            label,
            format_args!(
                "{} tool calls in one answer (at most {MAX_TOOL_CALLS} are accepted)",
                calls.len()
            ),
        ));
    }
    for call in calls {
        check_argument_growth(label, 0, call.arguments.len())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indexes_a_server_chose_are_bounded() {
        assert_eq!(check_index("X", 0).unwrap(), 0);
        assert_eq!(check_index("X", 1023).unwrap(), 1023);
        for index in [1024, 20_000_000, u64::from(u32::MAX), u64::MAX] {
            let error = check_index("X", index).unwrap_err();
            assert_eq!(error.kind, ProviderErrorKind::Protocol);
            assert!(!error.kind.is_transient());
            assert!(
                error.message.contains(&index.to_string()),
                "{}",
                error.message
            );
        }
    }

    #[test]
    fn argument_growth_is_bounded_without_overflow() {
        assert!(check_argument_growth("X", 10, 10).is_ok());
        assert!(check_argument_growth("X", MAX_TOOL_ARGUMENT_BYTES, 1).is_err());
        assert!(check_argument_growth("X", usize::MAX, usize::MAX).is_err());
    }
}
