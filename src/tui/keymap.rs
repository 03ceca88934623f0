//! Keys to actions, in one place and aware of which layer has the focus (the top of
//! `App::layers`). The app never reads raw keys elsewhere, except the text boxes' editing keys
//! (`editing::edit`); the help overlay is generated from `KEY_HINTS`.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

/// Which layer receives keys: the top one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    Main,
    Picker,
    PlanReview,
    /// The plan review while the feedback for "keep planning" is typed.
    PlanFeedback,
    Approval,
    DenyReason,
    Help,
    /// The folder trust question, asked before the first prompt.
    Trust,
    /// Whether to approve a trusted project's hooks (or MCP server), asked at start.
    Extension,
    /// `/mcp`: the servers, their tools, reconnect and disable (`mcp_panel`).
    McpPanel,
    /// `/memory`: search, edit and forget memories (`memory_panel`).
    MemoryPanel,
    /// The memory panel while the chosen memory's content is edited.
    MemoryEdit,
    /// The memory panel while it asks whether to forget the chosen memory.
    MemoryForget,
    /// A sub-agent's transcript, opened from its task block (`subagents`).
    TaskTranscript,
    /// `/rewind`'s list of prompts (`rewind`).
    Rewind,
    /// Files changed since a checkpoint: overwrite, keep or cancel (`restore_question`).
    RestoreQuestion,
    /// An MCP server's form: fields, accept, decline or cancel (`elicitation_form`).
    Elicitation,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Submit,
    Newline,
    Interrupt,
    ClearOrQuit,
    QuitIfEmpty,
    HistoryPrev,
    HistoryNext,
    ScrollUp(u16),
    ScrollDown(u16),
    PageUp,
    PageDown,
    Top,
    Bottom,
    CycleMode,
    Help,
    ToggleTodos,
    ToggleExpand,
    ApproveOnce,
    ApproveAlways,
    ApproveRule,
    Deny,
    DenyWithReason,
    SendDenyReason,
    Close,
    OpenPicker,
    PickerToggleAll,
    PickerResume,
    CopyLast,
    /// Attach an image from the system clipboard (`Ctrl+V`, `Alt+V`).
    PasteImage,
    ToggleMouse,
    /// Take the last queued prompt back into the input.
    EditQueued,
    /// Completion popup: move, complete (Tab: never runs), accept (Enter: a command that takes
    /// no argument runs), close (Esc).
    PopupUp,
    PopupDown,
    PopupComplete,
    PopupAccept,
    PopupClose,
    /// Plan review: run with auto-continue (in auto-edit when `true`), step by step, keep
    /// planning, discard.
    PlanAuto(bool),
    PlanStep,
    PlanKeep,
    PlanDiscard,
    /// Folder trust: trust this folder (remembered), or not for now.
    TrustFolder(bool),
    /// A project extension: approve it (remembered by its hash), or not for now.
    ApproveExtension(bool),
    /// A sub-agent's transcript: show the next (`true`) or previous task's; read it again.
    OtherTask(bool),
    ReadAgain,
    /// A list: the entry above or below the chosen one.
    Prev,
    Next,
    /// A list: take the chosen entry (the memory panel edits it).
    Choose,
    /// `/mcp`: start the chosen server again, or stop it for the session.
    Reconnect,
    Disable,
    /// `/mcp`: log in to the chosen HTTP server (`true`), or forget its tokens.
    LogIn(bool),
    /// `/rewind`: back to before the chosen prompt, with its files and/or the conversation.
    Rewind {
        files: bool,
        conversation: bool,
    },
    /// Files changed since the checkpoint: overwrite them too, or keep them.
    Overwrite,
    Keep,
    /// `/memory`: ask to forget the chosen memory; `y` to that question.
    Forget,
    Confirm,
    /// The key goes to the focused text input.
    Edit(KeyEvent),
    Ignore,
}

impl Action {
    /// The entry of a list of `count` chosen after this action from `selected` (`Prev` and
    /// `Next` move by one, within the list); `None` for any other action.
    pub fn chosen(self, selected: usize, count: usize) -> Option<usize> {
        match self {
            Action::Prev => Some(selected.saturating_sub(1)),
            Action::Next => Some((selected + 1).min(count.saturating_sub(1))),
            _ => None,
        }
    }

    /// What a question or a list over the conversation leaves to the conversation under it:
    /// Ctrl+C, the page keys and the wheel.
    pub fn is_the_conversations(self) -> bool {
        matches!(
            self,
            Action::ClearOrQuit
                | Action::PageUp
                | Action::PageDown
                | Action::ScrollUp(_)
                | Action::ScrollDown(_)
        )
    }
}

/// The keys the help overlay lists.
pub const KEY_HINTS: &[(&str, &str)] = &[
    ("Enter", "send the prompt"),
    ("Shift+Enter, Alt+Enter, Ctrl+J", "new line"),
    ("Esc", "interrupt the running turn or ! command"),
    (
        "Ctrl+C",
        "interrupt; when idle clear the input, twice within a second quits",
    ),
    (
        "Ctrl+A / Ctrl+E, Alt+B / Alt+F",
        "start / end of the line, a word back / forward",
    ),
    (
        "Ctrl+U / Ctrl+K / Ctrl+W",
        "delete to the line's start / its end / the previous word",
    ),
    ("Ctrl+D", "quit (on an empty input)"),
    ("Up / Down", "earlier prompts (on an empty input)"),
    ("PageUp / PageDown, wheel", "scroll the transcript"),
    (
        "Home / End",
        "top / bottom of the transcript (on an empty input)",
    ),
    ("Shift+Tab", "cycle mode: default → auto-edit → plan"),
    (
        "Ctrl+O",
        "expand or fold tool output and thinking; after a task block of this turn, open the \
         sub-agent's transcript (Esc closes it)",
    ),
    ("Ctrl+T", "show or hide the todo list"),
    ("Ctrl+R", "resume another session"),
    ("Ctrl+Y", "copy the last answer (OSC 52)"),
    (
        "Ctrl+V, Alt+V",
        "attach an image from the clipboard (wl-paste, xclip or macOS)",
    ),
    (
        "F2",
        "mouse: wheel scrolling / the terminal's own text selection",
    ),
    (
        "/",
        "commands (Tab completes, Enter runs, Esc closes); @ attaches a file or directory; \
         ! runs a shell command",
    ),
    ("? or F1", "this help"),
];

/// The action of `key` in `layer`. `input_empty` says whether the prompt input is empty.
pub fn action(layer: Focus, key: KeyEvent, input_empty: bool) -> Action {
    if key.kind == KeyEventKind::Release {
        return Action::Ignore;
    }
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    let shift = key.modifiers.contains(KeyModifiers::SHIFT);
    let alt = key.modifiers.contains(KeyModifiers::ALT);
    // A memory being edited takes every key but its two (Ctrl+C included).
    if layer == Focus::MemoryEdit {
        return match key.code {
            KeyCode::Esc => Action::Close,
            KeyCode::Enter => Action::Submit,
            _ => Action::Edit(key),
        };
    }
    // Keys that work whatever has the focus.
    match key.code {
        KeyCode::Char('c') if ctrl => return Action::ClearOrQuit,
        KeyCode::PageUp => return Action::PageUp,
        KeyCode::PageDown => return Action::PageDown,
        _ => {}
    }
    match layer {
        Focus::Trust => match key.code {
            KeyCode::Char('t' | 'T') => Action::TrustFolder(true),
            KeyCode::Char('n' | 'N') | KeyCode::Esc => Action::TrustFolder(false),
            _ => Action::Ignore,
        },
        Focus::McpPanel => match key.code {
            KeyCode::Esc | KeyCode::Char('q') => Action::Close,
            KeyCode::Up | KeyCode::Char('k') => Action::Prev,
            KeyCode::Down | KeyCode::Char('j') => Action::Next,
            KeyCode::Char('r') => Action::Reconnect,
            KeyCode::Char('d') => Action::Disable,
            KeyCode::Char('l') => Action::LogIn(true),
            KeyCode::Char('o') => Action::LogIn(false),
            _ => Action::Ignore,
        },
        Focus::MemoryPanel => match key.code {
            KeyCode::Esc => Action::Close,
            KeyCode::Up => Action::Prev,
            KeyCode::Down => Action::Next,
            KeyCode::Enter => Action::Choose,
            KeyCode::Delete => Action::Forget,
            KeyCode::Char('d') if ctrl => Action::Forget,
            // The search query's own editing.
            KeyCode::Backspace => Action::Edit(key),
            KeyCode::Char(_) if !ctrl => Action::Edit(key),
            _ => Action::Ignore,
        },
        Focus::MemoryEdit => Action::Edit(key),
        Focus::MemoryForget => match key.code {
            KeyCode::Char('y') => Action::Confirm,
            _ => Action::Ignore,
        },
        Focus::Rewind => match key.code {
            KeyCode::Esc | KeyCode::Char('q') => Action::Close,
            KeyCode::Up | KeyCode::Char('k') => Action::Prev,
            KeyCode::Down | KeyCode::Char('j') => Action::Next,
            KeyCode::Enter => Action::Rewind {
                files: true,
                conversation: true,
            },
            KeyCode::Char('c') => Action::Rewind {
                files: false,
                conversation: true,
            },
            KeyCode::Char('f') => Action::Rewind {
                files: true,
                conversation: false,
            },
            _ => Action::Ignore,
        },
        Focus::RestoreQuestion => match key.code {
            KeyCode::Char('o' | 'O') => Action::Overwrite,
            KeyCode::Char('k' | 'K') => Action::Keep,
            KeyCode::Char('n' | 'N') | KeyCode::Esc => Action::Close,
            _ => Action::Ignore,
        },
        Focus::Elicitation => super::elicitation_form::action(key),
        Focus::TaskTranscript => match key.code {
            KeyCode::Esc | KeyCode::Char('q') => Action::Close,
            KeyCode::Char('o') if ctrl => Action::ToggleExpand,
            KeyCode::Char('r') => Action::ReadAgain,
            KeyCode::Tab => Action::OtherTask(true),
            KeyCode::BackTab => Action::OtherTask(false),
            KeyCode::Up => Action::ScrollUp(1),
            KeyCode::Down => Action::ScrollDown(1),
            KeyCode::Home => Action::Top,
            KeyCode::End => Action::Bottom,
            _ => Action::Ignore,
        },
        Focus::Extension => match key.code {
            KeyCode::Char('a' | 'A') => Action::ApproveExtension(true),
            KeyCode::Char('n' | 'N') | KeyCode::Esc => Action::ApproveExtension(false),
            _ => Action::Ignore,
        },
        Focus::Help => match key.code {
            KeyCode::Esc | KeyCode::Char('q' | '?') | KeyCode::F(1) | KeyCode::Enter => {
                Action::Close
            }
            KeyCode::Up => Action::ScrollUp(1),
            KeyCode::Down => Action::ScrollDown(1),
            _ => Action::Ignore,
        },
        Focus::Picker => match key.code {
            KeyCode::Esc => Action::Close,
            KeyCode::Enter => Action::PickerResume,
            KeyCode::Up => Action::Prev,
            KeyCode::Down => Action::Next,
            KeyCode::Tab | KeyCode::BackTab => Action::PickerToggleAll,
            _ => Action::Edit(key),
        },
        Focus::PlanReview => match key.code {
            KeyCode::Char('a') => Action::PlanAuto(false),
            KeyCode::Char('e') => Action::PlanAuto(true),
            KeyCode::Char('s') => Action::PlanStep,
            KeyCode::Char('k') => Action::PlanKeep,
            KeyCode::Char('x') | KeyCode::Esc => Action::PlanDiscard,
            _ => Action::Ignore,
        },
        Focus::PlanFeedback => match key.code {
            KeyCode::Enter if !shift && !alt => Action::Submit,
            KeyCode::Esc => Action::Close,
            _ => Action::Edit(key),
        },
        Focus::Approval => match key.code {
            KeyCode::Char('y' | 'Y') => Action::ApproveOnce,
            KeyCode::Char('a' | 'A') => Action::ApproveAlways,
            KeyCode::Char('r' | 'R') => Action::ApproveRule,
            KeyCode::Char('n' | 'N') | KeyCode::Esc => Action::Deny,
            KeyCode::Char('d' | 'D') => Action::DenyWithReason,
            KeyCode::Up => Action::ScrollUp(1),
            KeyCode::Down => Action::ScrollDown(1),
            KeyCode::Home => Action::Top,
            KeyCode::End => Action::Bottom,
            _ => Action::Ignore,
        },
        Focus::DenyReason => match key.code {
            KeyCode::Enter if !shift && !alt => Action::SendDenyReason,
            KeyCode::Esc => Action::Close,
            _ => Action::Edit(key),
        },
        Focus::Main => match key.code {
            KeyCode::Enter if shift || alt => Action::Newline,
            KeyCode::Char('j') if ctrl => Action::Newline,
            KeyCode::Enter => Action::Submit,
            KeyCode::Esc => Action::Interrupt,
            KeyCode::Char('d') if ctrl => Action::QuitIfEmpty,
            KeyCode::Char('t') if ctrl => Action::ToggleTodos,
            KeyCode::Char('o') if ctrl => Action::ToggleExpand,
            KeyCode::Char('r') if ctrl => Action::OpenPicker,
            KeyCode::Char('y') if ctrl => Action::CopyLast,
            KeyCode::Char('v') if ctrl || alt => Action::PasteImage,
            KeyCode::F(2) => Action::ToggleMouse,
            KeyCode::BackTab => Action::CycleMode,
            KeyCode::Tab if shift => Action::CycleMode,
            KeyCode::F(1) => Action::Help,
            KeyCode::Char('?') if input_empty => Action::Help,
            KeyCode::Up if input_empty => Action::HistoryPrev,
            KeyCode::Down if input_empty => Action::HistoryNext,
            KeyCode::Home if ctrl || input_empty => Action::Top,
            KeyCode::End if ctrl || input_empty => Action::Bottom,
            _ => Action::Edit(key),
        },
    }
}
