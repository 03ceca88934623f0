//! Progress a running tool reports while it works (an MCP server's `notifications/progress`):
//! the engine runs each call inside `scope` with a sink of its own, turns every report into a
//! `tool_progress` event and restarts the call's timeout, since a tool that reports is alive.

use std::future::Future;

/// One report: how far, out of how much when known, and what the tool says it is doing.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    pub progress: f64,
    pub total: Option<f64>,
    pub message: Option<String>,
}

/// Where a call's reports go.
pub type ProgressSink = tokio::sync::mpsc::UnboundedSender<Progress>;

tokio::task_local! {
    static SINK: ProgressSink;
}

/// Runs `work` with `sink` as the place its progress goes.
pub async fn scope<F: Future>(sink: ProgressSink, work: F) -> F::Output {
    SINK.scope(sink, work).await
}

/// The running call's sink, when the engine gave it one.
pub fn current() -> Option<ProgressSink> {
    SINK.try_with(Clone::clone).ok()
}

/// Where a running call's output goes as it comes (`tool_output` events).
pub type OutputSink = tokio::sync::mpsc::UnboundedSender<String>;

tokio::task_local! {
    static OUTPUT: OutputSink;
}

/// Runs `work` with `sink` as the place its live output goes.
pub async fn scope_output<F: Future>(sink: OutputSink, work: F) -> F::Output {
    OUTPUT.scope(sink, work).await
}

/// The running call's output sink, when the engine gave it one.
pub fn output() -> Option<OutputSink> {
    OUTPUT.try_with(Clone::clone).ok()
}

tokio::task_local! {
    static CALL_ID: String;
}

/// Runs `work` as the call `id` (what a tool that shows itself elsewhere names it by: the
/// editor's terminal embedded in its tool call).
pub async fn scope_call<F: Future>(id: String, work: F) -> F::Output {
    CALL_ID.scope(id, work).await
}

/// The running call's id, when the engine runs it.
pub fn call_id() -> Option<String> {
    CALL_ID.try_with(Clone::clone).ok()
}
