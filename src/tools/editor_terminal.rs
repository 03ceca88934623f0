//! The editor's terminal for `bash`: a front end whose editor runs commands in terminals of its
//! own (ACP's `terminal/create`, where the user chose so in settings) hands `bash` an
//! `EditorTerminal`, and a foreground command runs there instead of in harness9's own sandboxed
//! process. The permission decision is made before, as for every call; background commands keep
//! to harness9's own processes.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use super::ToolError;

/// Why the editor's terminal could not run a command.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the editor's terminal could not run the command: {0}")]
pub struct EditorTerminalError(pub String);

/// A command's end in the editor's terminal.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TerminalRun {
    /// What the terminal kept of the output.
    pub output: String,
    /// The terminal kept only the end of the output.
    pub truncated: bool,
    /// `None` when a signal ended it, or it was killed.
    pub exit_code: Option<i32>,
    pub signal: Option<String>,
    /// Killed at the time limit.
    pub timed_out: bool,
    /// Killed because the run was interrupted.
    pub cancelled: bool,
}

/// Commands run in the editor's terminal.
#[async_trait]
pub trait EditorTerminal: Send + Sync {
    /// Runs `command` (a `bash -c` line) in `cwd` for the tool call `call_id` (the editor shows
    /// the terminal inside that call); killed at `limit` or when `cancel` fires.
    async fn run(
        &self,
        call_id: &str,
        command: &str,
        cwd: &Path,
        limit: Option<Duration>,
        cancel: &CancellationToken,
    ) -> Result<TerminalRun, EditorTerminalError>;
}

/// A sub-agent's calls as its parent's front end names them: `TASK_ID/CALL_ID` (the `task`
/// call that started it, then the sub-agent's own call).
struct UnderTask {
    terminal: Arc<dyn EditorTerminal>,
    task_id: String,
}

#[async_trait]
impl EditorTerminal for UnderTask {
    async fn run(
        &self,
        call_id: &str,
        command: &str,
        cwd: &Path,
        limit: Option<Duration>,
        cancel: &CancellationToken,
    ) -> Result<TerminalRun, EditorTerminalError> {
        let call_id = format!("{}/{call_id}", self.task_id);
        let terminal = &self.terminal;
        terminal.run(&call_id, command, cwd, limit, cancel).await
    }
}

/// The editor's terminal for a sub-agent started by the call `task_id`.
pub fn under_task(terminal: Arc<dyn EditorTerminal>, task_id: &str) -> Arc<dyn EditorTerminal> {
    Arc::new(UnderTask {
        terminal,
        task_id: task_id.to_owned(),
    })
}

/// `bash`'s answer for a command run in the editor's terminal.
pub(super) async fn run(
    terminal: &dyn EditorTerminal,
    command: &str,
    cwd: &Path,
    limit: Option<Duration>,
    cancel: &CancellationToken,
) -> Result<String, ToolError> {
    let call_id = super::progress::call_id().unwrap_or_default();
    let ran = terminal
        .run(&call_id, command, cwd, limit, cancel)
        .await
        .map_err(|e| ToolError::new(e.to_string()))?;
    let mut shown = ran.output.trim_end().to_owned();
    if shown.is_empty() {
        shown = "(no output)".to_owned();
    }
    if ran.truncated {
        shown.insert_str(
            0,
            "[the editor's terminal kept only the end of the output]\n",
        );
    }
    // Worded as harness9's own `bash` words its ends.
    let (end, success) = match (ran.exit_code, &ran.signal) {
        _ if ran.cancelled => (
            "cancelled: the user interrupted the command; it was killed in the editor's terminal."
                .to_owned(),
            false,
        ),
        _ if ran.timed_out => (
            format!(
                "timed out after {}s: the command was killed in the editor's terminal.",
                limit.unwrap_or_default().as_secs()
            ),
            false,
        ),
        (Some(code), _) => (format!("exit status: {code}"), code == 0),
        (None, Some(signal)) => (format!("the command was killed by signal {signal}"), false),
        (None, None) => ("the command ended without an exit status".to_owned(), false),
    };
    let text = format!("{shown}\n{end}");
    if success {
        Ok(text)
    } else {
        Err(ToolError::new(text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A terminal that ends every command as `ran` says.
    struct Ends(TerminalRun);

    #[async_trait]
    impl EditorTerminal for Ends {
        async fn run(
            &self,
            _: &str,
            _: &str,
            _: &Path,
            _: Option<Duration>,
            _: &CancellationToken,
        ) -> Result<TerminalRun, EditorTerminalError> {
            Ok(self.0.clone())
        }
    }

    async fn answer(ran: TerminalRun) -> Result<String, ToolError> {
        let limit = Some(Duration::from_secs(5));
        run(
            &Ends(ran),
            "x",
            Path::new("/"),
            limit,
            &CancellationToken::new(),
        )
        .await
    }

    #[tokio::test]
    async fn a_terminals_end_is_worded_as_bash_words_it() {
        let ran = |exit_code| TerminalRun {
            output: "out\n".into(),
            exit_code,
            ..TerminalRun::default()
        };
        assert_eq!(answer(ran(Some(0))).await.unwrap(), "out\nexit status: 0");
        let failed = answer(ran(Some(2))).await.unwrap_err();
        assert_eq!(failed.0, "out\nexit status: 2");
        let timed_out = TerminalRun {
            timed_out: true,
            ..TerminalRun::default()
        };
        let error = answer(timed_out).await.unwrap_err();
        assert!(
            error.0.starts_with("(no output)\ntimed out after 5s"),
            "{error}"
        );
        let cancelled = TerminalRun {
            cancelled: true,
            truncated: true,
            output: "tail".into(),
            ..TerminalRun::default()
        };
        let error = answer(cancelled).await.unwrap_err();
        assert!(error.0.contains("kept only the end") && error.0.contains("cancelled"));
    }
}
