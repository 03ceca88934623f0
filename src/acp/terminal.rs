//! Commands in the editor's terminal: when the editor declares `terminal` at `initialize` and
//! the user chose it (`"acp": {"terminal": true}` in `$HARNESS9_HOME/settings.json`, the user's
//! file only: a project must not take commands out of harness9's sandbox), `bash` runs a
//! foreground command through `terminal/create`, `terminal/wait_for_exit` (`terminal/kill` at
//! the time limit or an interruption), `terminal/output` and `terminal/release`. Once made, the
//! terminal is embedded in the command's tool call (`{"type": "terminal", "terminalId"}`), so
//! the editor shows its output live there, and keeps showing it after the release.

use std::collections::HashSet;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema as acp;
use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use crate::tools::{EditorTerminal, EditorTerminalError, TerminalRun};

/// The most of a command's output the editor is asked to keep (harness9's own `bash` keeps a
/// head and tail of about this much too).
const OUTPUT_BYTE_LIMIT: u64 = 64 * 1024;

/// Whether the user chose the editor's terminal for commands (`acp.terminal` in the user's
/// settings file; a file that cannot be read chooses nothing).
pub fn chosen(home: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(home.join("settings.json")) else {
        return false;
    };
    serde_json::from_str::<serde_json::Value>(&text)
        .ok()
        .and_then(|settings| settings.get("acp")?.get("terminal")?.as_bool())
        .unwrap_or(false)
}

/// The longest a terminal waits for its tool call to be shown before it is embedded in it
/// anyway (the call's `tool_call` goes out through the session's pump, which may lag).
const CALL_SHOWN_WAIT: Duration = Duration::from_secs(2);

/// The session's tool calls the editor has been shown and not yet seen end, and those among them
/// whose command runs in an embedded terminal (their end keeps the terminal as their content).
#[derive(Default)]
pub struct ShownCalls {
    started: Mutex<HashSet<String>>,
    in_terminal: Mutex<HashSet<String>>,
    changed: tokio::sync::Notify,
}

impl ShownCalls {
    /// The call's `tool_call` went out.
    pub fn started(&self, id: &str) {
        if let Ok(mut started) = self.started.lock() {
            started.insert(id.to_owned());
        }
        self.changed.notify_waiters();
    }

    /// The call ended; whether its content is an embedded terminal.
    pub fn ended(&self, id: &str) -> bool {
        if let Ok(mut started) = self.started.lock() {
            started.remove(id);
        }
        self.in_terminal
            .lock()
            .map(|mut embedded| embedded.remove(id))
            .unwrap_or(false)
    }

    fn is_started(&self, id: &str) -> bool {
        self.started.lock().is_ok_and(|s| s.contains(id))
    }

    /// Waits (bounded) until the call's `tool_call` went out: an update must not come first.
    async fn wait_started(&self, id: &str) {
        let shown = async {
            loop {
                let changed = self.changed.notified();
                if self.is_started(id) {
                    return;
                }
                changed.await;
            }
        };
        let _ = tokio::time::timeout(CALL_SHOWN_WAIT, shown).await;
    }

    fn embed(&self, id: &str) {
        if let Ok(mut embedded) = self.in_terminal.lock() {
            embedded.insert(id.to_owned());
        }
    }
}

/// The editor's terminals for one session.
pub struct EditorTerminals {
    cx: ConnectionTo<Client>,
    session: Arc<OnceLock<acp::SessionId>>,
    shown: Arc<ShownCalls>,
}

impl EditorTerminals {
    /// The editor's terminals when it offers them and the user chose them.
    pub fn offered(
        cx: &ConnectionTo<Client>,
        offers: bool,
        home: &Path,
        session: Arc<OnceLock<acp::SessionId>>,
        shown: Arc<ShownCalls>,
    ) -> Option<Arc<dyn EditorTerminal>> {
        (offers && chosen(home)).then(|| {
            Arc::new(EditorTerminals {
                cx: cx.clone(),
                session,
                shown,
            }) as Arc<dyn EditorTerminal>
        })
    }

    /// Shows `terminal` live inside the call `call_id`.
    async fn embed(&self, session: &acp::SessionId, call_id: &str, terminal: &acp::TerminalId) {
        if call_id.is_empty() {
            return;
        }
        self.shown.wait_started(call_id).await;
        self.shown.embed(call_id);
        let content = acp::ToolCallContent::Terminal(acp::Terminal::new(terminal.clone()));
        let fields = acp::ToolCallUpdateFields::new().content(vec![content]);
        let update = acp::ToolCallUpdate::new(call_id.to_owned(), fields);
        let notification = acp::SessionNotification::new(
            session.clone(),
            acp::SessionUpdate::ToolCallUpdate(update),
        );
        if let Err(error) = self.cx.send_notification(notification) {
            tracing::debug!("the terminal's tool call update was not sent: {error}");
        }
    }

    fn session(&self) -> Result<acp::SessionId, EditorTerminalError> {
        self.session
            .get()
            .cloned()
            .ok_or_else(|| EditorTerminalError("the session is not open yet".to_owned()))
    }
}

fn failed(error: agent_client_protocol::Error) -> EditorTerminalError {
    EditorTerminalError(error.to_string())
}

/// How the wait ended.
enum Waited {
    Exited(acp::TerminalExitStatus),
    TimedOut,
    Cancelled,
}

#[async_trait]
impl EditorTerminal for EditorTerminals {
    async fn run(
        &self,
        call_id: &str,
        command: &str,
        cwd: &Path,
        limit: Option<Duration>,
        cancel: &CancellationToken,
    ) -> Result<TerminalRun, EditorTerminalError> {
        let session = self.session()?;
        let create = acp::CreateTerminalRequest::new(session.clone(), "bash")
            .args(vec!["-c".to_owned(), command.to_owned()])
            .cwd(cwd.to_path_buf())
            .output_byte_limit(OUTPUT_BYTE_LIMIT);
        let created = self.cx.send_request(create).block_task().await;
        let terminal = created.map_err(failed)?.terminal_id;
        self.embed(&session, call_id, &terminal).await;
        let wait = acp::WaitForTerminalExitRequest::new(session.clone(), terminal.clone());
        let exit = self.cx.send_request(wait).block_task();
        let deadline = async {
            match limit {
                Some(limit) => tokio::time::sleep(limit).await,
                None => std::future::pending().await,
            }
        };
        let waited = tokio::select! {
            exit = exit => Waited::Exited(exit.map_err(failed)?.exit_status),
            () = deadline => Waited::TimedOut,
            () = cancel.cancelled() => Waited::Cancelled,
        };
        if !matches!(waited, Waited::Exited(_)) {
            let kill = acp::KillTerminalRequest::new(session.clone(), terminal.clone());
            if let Err(error) = self.cx.send_request(kill).block_task().await {
                tracing::warn!("terminal/kill failed: {error}");
            }
        }
        let output = acp::TerminalOutputRequest::new(session.clone(), terminal.clone());
        let output = self.cx.send_request(output).block_task().await;
        // Released whatever the output's fate: the editor frees the terminal.
        let release = acp::ReleaseTerminalRequest::new(session, terminal);
        if let Err(error) = self.cx.send_request(release).block_task().await {
            tracing::warn!("terminal/release failed: {error}");
        }
        let output = output.map_err(failed)?;
        let mut ran = TerminalRun {
            output: output.output,
            truncated: output.truncated,
            ..TerminalRun::default()
        };
        match waited {
            Waited::Exited(status) => {
                ran.exit_code = status.exit_code.and_then(|code| i32::try_from(code).ok());
                ran.signal = status.signal;
            }
            Waited::TimedOut => ran.timed_out = true,
            Waited::Cancelled => ran.cancelled = true,
        }
        Ok(ran)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_users_acp_terminal_setting_chooses_the_editors_terminal() {
        let home = tempfile::tempdir().unwrap();
        assert!(!chosen(home.path()), "no settings file");
        let settings = home.path().join("settings.json");
        for (text, want) in [
            (r#"{"acp": {"terminal": true}}"#, true),
            (r#"{"acp": {"terminal": false}}"#, false),
            (r#"{"acp": {}}"#, false),
            (r#"{"acp": {"terminal": "yes"}}"#, false),
            ("not json", false),
        ] {
            std::fs::write(&settings, text).unwrap();
            assert_eq!(chosen(home.path()), want, "{text}");
        }
    }
}
