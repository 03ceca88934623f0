//! One tool call's run under the tool timeout: the call runs with a progress sink of its own;
//! each report it makes is passed on as a `tool_progress` event and restarts the timeout (a tool
//! that reports is alive), and a call silent for the whole timeout is stopped. What a command
//! prints as it runs is passed on as `tool_output` events.

use std::future::Future;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::event::{EventKind, ToolOutput, ToolProgress};
use crate::tools::ToolError;

/// Runs `work` (call `call_id`), stopping it after `timeout` without a progress report.
pub async fn run(
    work: impl Future<Output = Result<String, ToolError>>,
    timeout: Option<Duration>,
    cancel: &CancellationToken,
    call_id: &str,
    progress_tx: &mpsc::UnboundedSender<EventKind>,
) -> Result<String, ToolError> {
    let (sink, mut reports) = mpsc::unbounded_channel();
    let (output_sink, mut outputs) = mpsc::unbounded_channel();
    let call = crate::tools::progress::RunningCall {
        id: call_id.to_owned(),
        progress: sink,
        output: output_sink,
    };
    let run = crate::tools::progress::scope(call, work);
    tokio::pin!(run);
    let mut deadline = timeout.map(|limit| Instant::now() + limit);
    let pass_on = |report: crate::tools::progress::Progress| {
        let _ = progress_tx.send(EventKind::ToolProgress(ToolProgress {
            tool_call_id: call_id.to_owned(),
            progress: report.progress,
            total: report.total,
            message: report.message,
        }));
    };
    let pass_output = |chunk: String| {
        let _ = progress_tx.send(EventKind::ToolOutput(ToolOutput {
            tool_call_id: call_id.to_owned(),
            chunk,
        }));
    };
    loop {
        tokio::select! {
            // Reports first: those made before the answer come out before the result.
            biased;
            Some(report) = reports.recv() => {
                deadline = timeout.map(|limit| Instant::now() + limit);
                pass_on(report);
            }
            Some(chunk) = outputs.recv() => pass_output(chunk),
            outcome = &mut run => {
                while let Ok(report) = reports.try_recv() {
                    pass_on(report);
                }
                while let Ok(chunk) = outputs.try_recv() {
                    pass_output(chunk);
                }
                return outcome;
            }
            () = sleep_until_or_never(deadline) => {
                cancel.cancel();
                return Err(ToolError::new(format!(
                    "timed out after {}s and was stopped. If the work needs longer, \
                     split it or run it in the background with a shorter check.",
                    timeout.unwrap_or_default().as_secs()
                )));
            }
        }
    }
}

/// Sleeps until `deadline`, or forever when there is none.
async fn sleep_until_or_never(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Work that reports every `gap`, `reports` times, then finishes.
    async fn reporting(gap: Duration, reports: u32) -> Result<String, ToolError> {
        for i in 0..reports {
            tokio::time::sleep(gap).await;
            if let Some(sink) = crate::tools::progress::current() {
                let _ = sink.send(crate::tools::progress::Progress {
                    progress: f64::from(i),
                    total: None,
                    message: None,
                });
            }
        }
        tokio::time::sleep(gap).await;
        Ok("done".into())
    }

    #[tokio::test(start_paused = true)]
    async fn each_progress_report_restarts_the_timeout() {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let cancel = CancellationToken::new();
        // Five reports 60 ms apart, then the answer: 360 ms in all, a 100 ms timeout.
        let work = reporting(Duration::from_millis(60), 5);
        let outcome = run(work, Some(Duration::from_millis(100)), &cancel, "c1", &tx).await;
        assert_eq!(outcome.unwrap(), "done");
        let mut seen = 0;
        while let Ok(EventKind::ToolProgress(progress)) = rx.try_recv() {
            assert_eq!(progress.tool_call_id, "c1");
            seen += 1;
        }
        assert_eq!(seen, 5);
        assert!(!cancel.is_cancelled());
    }

    #[tokio::test(start_paused = true)]
    async fn a_silent_call_still_times_out() {
        let (tx, _rx) = mpsc::unbounded_channel();
        let cancel = CancellationToken::new();
        let work = reporting(Duration::from_millis(150), 0);
        let outcome = run(work, Some(Duration::from_millis(100)), &cancel, "c1", &tx).await;
        assert!(outcome.unwrap_err().0.contains("timed out"));
        assert!(cancel.is_cancelled());
    }
}
