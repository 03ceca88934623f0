//! The session commands users expect from other agents: `/clear` (a fresh context: a new
//! session), `/export [FILE]` (the transcript as Markdown), `/status` (provider, model, session,
//! sandbox, context use) and `/init` (the model writes an `AGENTS.md`). The app only decides;
//! the session core writes the export file (`Request::Export`), never over an existing one.

use super::app::{App, Effect};
use super::tool_view;
use super::transcript::{EntryKind, Tone};
use crate::session::Request;
use crate::session::text::INIT_PROMPT;
use crate::session::worktrees::WorktreeAction;

/// What `/worktree` takes.
const WORKTREE_USAGE: &str = "/worktree lists this repository's worktrees; /worktree merge NAME; /worktree remove NAME [--force]";

/// `/worktree`'s arguments: nothing or `list`, `merge NAME`, `remove NAME [--force]`.
fn worktree_action(rest: &str) -> Option<WorktreeAction> {
    let words: Vec<&str> = rest.split_whitespace().collect();
    match words.as_slice() {
        [] | ["list"] => Some(WorktreeAction::List),
        ["merge", name] => Some(WorktreeAction::Merge {
            name: (*name).to_owned(),
        }),
        ["remove", name] => Some(WorktreeAction::Remove {
            name: (*name).to_owned(),
            force: false,
        }),
        ["remove", name, "--force"] | ["remove", "--force", name] => Some(WorktreeAction::Remove {
            name: (*name).to_owned(),
            force: true,
        }),
        _ => None,
    }
}

impl App {
    /// The session commands; `None` when `name` is not one of them.
    pub(super) fn session_command(&mut self, name: &str, rest: &str) -> Option<Vec<Effect>> {
        let commands = match name {
            "/clear" if self.busy() => {
                self.flash_mut().text =
                    Some("wait for the turn to end (or Esc) before /clear".into());
                Vec::new()
            }
            "/clear" => {
                self.flash_mut().text = Some(format!(
                    "a fresh context; the last session is kept (harness9 --resume {})",
                    short_id(&self.session().session_id)
                ));
                vec![Effect::Request(Request::NewSession)]
            }
            "/export" => {
                let file = if rest.is_empty() {
                    format!("harness9-{}.md", short_id(&self.session().session_id))
                } else {
                    rest.to_owned()
                };
                vec![Effect::Request(Request::Export {
                    file,
                    markdown: self.markdown(),
                    overwrite: false,
                })]
            }
            "/status" => {
                let text = self.status_text();
                self.transcript_mut().notice(text, Tone::Quiet);
                Vec::new()
            }
            "/tasks" => {
                let text = self.tasks_text();
                self.transcript_mut().notice(text, Tone::Quiet);
                Vec::new()
            }
            "/cost" => {
                let text = self.cost_text();
                self.transcript_mut().notice(text, Tone::Quiet);
                Vec::new()
            }
            "/init" if self.busy() => {
                vec![self.queue_mut().push(INIT_PROMPT.into())]
            }
            "/init" => self.start_run_shown("/init".into(), INIT_PROMPT.into()),
            "/undo" => self.undo(),
            "/rewind" => self.open_rewind(),
            "/ps" => self.ps(rest),
            "/rules" => vec![Effect::Request(Request::ConfirmRules)],
            "/worktree" => match worktree_action(rest) {
                Some(action) => vec![Effect::Request(Request::Worktrees(action))],
                None => {
                    self.transcript_mut()
                        .notice(WORKTREE_USAGE.to_owned(), Tone::Warning);
                    Vec::new()
                }
            },
            _ => return None,
        };
        Some(commands)
    }

    fn status_text(&self) -> String {
        let s = &self.session();
        let name = self
            .session_name()
            .as_deref()
            .map(|n| format!(" ({n})"))
            .unwrap_or_default();
        let context = match self.run().tokens {
            Some(t) if s.context_window > 0 || t.context_window > 0 => {
                let window = if t.context_window > 0 {
                    t.context_window
                } else {
                    s.context_window
                };
                let used = t.input_tokens + t.output_tokens;
                format!(
                    "{}{used} of {window} tokens ({:.0}%)",
                    if t.estimated { "about " } else { "" },
                    used as f64 * 100.0 / window as f64
                )
            }
            _ => format!("nothing sent yet (window {} tokens)", s.context_window),
        };
        format!(
            "status\nprovider: {}\nmodel: {}\nsession: {}{name}\nmode: {}\n{}\n{}\ncontext: {context}\nworking directory: {}\n{}",
            s.provider,
            s.model,
            s.session_id,
            s.mode,
            self.facts()
                .sandbox
                .as_deref()
                .unwrap_or("sandbox: unknown"),
            self.facts()
                .web_search
                .as_deref()
                .unwrap_or("web search: unknown"),
            s.workdir,
            self.cost_text()
        )
    }

    /// What the model calls since this screen opened used, by kind, and cost; by model too
    /// when more than one answered.
    fn cost_text(&self) -> String {
        let spent = |spend: &super::app::Spend| {
            let cost = if spend.priced {
                spend.dollars()
            } else if spend.estimated {
                "unknown (the server sent no usage: the tokens are harness9's count)".to_owned()
            } else {
                "unknown (the model's prices are not in the catalogue)".to_owned()
            };
            // A server that sends no usage leaves harness9's own count, and the screen says so.
            let about = if spend.estimated { "about " } else { "" };
            format!(
                "{cost} for {about}{} input, {} cached input read, {} written to the cache, {} \
                 output tokens",
                spend.input, spend.cache_read, spend.cache_write, spend.output
            )
        };
        let spending = self.spending();
        if spending.by_model().len() < 2 {
            return format!(
                "cost since this screen opened: {} ({})",
                spent(spending.total()),
                self.session().model
            );
        }
        let mut text = format!("cost since this screen opened: {}", spent(spending.total()));
        for (model, spend) in spending.by_model() {
            text.push_str(&format!("\n  {model}: {}", spent(spend)));
        }
        text
    }

    /// The transcript as Markdown: prompts, answers, tool calls with their output, notices.
    pub fn markdown(&self) -> String {
        let mut out = format!(
            "# harness9 session {}\n\n{} · {}/{}\n",
            self.session().session_id,
            self.session().workdir,
            self.session().provider,
            self.session().model
        );
        for entry in self.transcript().entries() {
            out.push('\n');
            match &entry.kind {
                EntryKind::User(text) => {
                    out.push_str("## You\n\n");
                    out.push_str(text.trim_end());
                    out.push('\n');
                }
                EntryKind::Assistant { text, .. } => {
                    out.push_str("## harness9\n\n");
                    out.push_str(text.trim_end());
                    out.push('\n');
                }
                EntryKind::Thinking { text, .. } => {
                    out.push_str("## harness9 (thinking)\n\n");
                    for line in text.trim().lines() {
                        out.push_str(&format!("> {line}\n"));
                    }
                }
                EntryKind::Tool { call, output, .. } => {
                    out.push_str(&format!(
                        "**{}** `{}`\n",
                        call.name,
                        tool_view::summary(call).replace('`', "'")
                    ));
                    push_output(&mut out, output.as_deref());
                }
                EntryKind::Task(task) => {
                    out.push_str(&format!(
                        "**task** {} `{}`\n",
                        task.agent,
                        task.description.replace('`', "'")
                    ));
                    push_output(&mut out, task.output.as_deref());
                }
                EntryKind::Notice { text, .. } => {
                    out.push_str(&format!("_{}_\n", text.trim().replace('\n', " · ")));
                }
            }
        }
        out
    }
}

/// A tool's or task's output in a fence of its own, when it has any.
fn push_output(out: &mut String, output: Option<&str>) {
    if let Some(output) = output.filter(|o| !o.trim().is_empty()) {
        let clean = crate::terminal_text::sanitize(output);
        let fence = fence_for(&clean);
        out.push_str(&format!("\n{fence}\n{}\n{fence}\n", clean.trim_end()));
    }
}

/// A code fence longer than any run of backticks in `text`, so the output cannot close it.
fn fence_for(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    "`".repeat(longest.max(2) + 1)
}

fn short_id(id: &str) -> &str {
    &id[..id.len().min(8)]
}
