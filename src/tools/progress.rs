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

/// Where a running call's output goes as it comes (`tool_output` events).
pub type OutputSink = tokio::sync::mpsc::UnboundedSender<String>;

/// What the engine gives the call it runs: its id (what a tool that shows itself elsewhere
/// names it by: the editor's terminal embedded in its tool call), where its progress reports
/// go and where its live output goes.
pub struct RunningCall {
    pub id: String,
    pub progress: ProgressSink,
    pub output: OutputSink,
}

tokio::task_local! {
    static CALL: RunningCall;
}

/// Runs `work` as `call`.
pub async fn scope<F: Future>(call: RunningCall, work: F) -> F::Output {
    CALL.scope(call, work).await
}

/// The running call's progress sink, when the engine runs it.
pub fn current() -> Option<ProgressSink> {
    CALL.try_with(|call| call.progress.clone()).ok()
}

/// The running call's output sink, when the engine runs it.
pub fn output() -> Option<OutputSink> {
    CALL.try_with(|call| call.output.clone()).ok()
}

/// The running call's id, when the engine runs it.
pub fn call_id() -> Option<String> {
    CALL.try_with(|call| call.id.clone()).ok()
}
