//! One served session's events for its HTTP watchers. Each update of the core becomes one SSE
//! frame (`id: N` and the event's JSON with that `id`), formatted once and shared by every
//! watcher. Frames go out through a bounded broadcast channel, so a slow watcher never slows
//! the run: one that falls more than `BACKLOG` frames behind is disconnected, and reconnects
//! with `Last-Event-ID` to be replayed what it missed from a bounded log of recent frames.
//! Approvals still waiting are kept aside, so a watcher that connects later sees them first and
//! an answer over HTTP can be told whether it was the first.

use std::collections::{HashSet, VecDeque};
use std::sync::Mutex;

use bytes::Bytes;
use serde_json::{Value, json};
use tokio::sync::broadcast;

use crate::engine::{ApprovalDecision, ApprovalRequest, Event, EventKind};
use crate::session::Update;

/// Frames a watcher may fall behind before it is disconnected.
pub const BACKLOG: usize = 16_384;
/// Frames kept for `Last-Event-ID` replay (the current run's, unless it is very long)...
const LOG_FRAMES: usize = 50_000;
/// ...and at most this many bytes of them.
const LOG_BYTES: usize = 16 << 20;
/// Answered approval ids remembered, so a late answer gets 409 rather than 404.
const ANSWERED: usize = 1024;

/// One SSE frame, ready to write.
#[derive(Debug, Clone)]
pub struct Frame {
    pub id: u64,
    pub bytes: Bytes,
    /// The session's `closed` frame: nothing follows it.
    pub last: bool,
}

/// The outcome of answering an approval over HTTP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answered {
    /// This answer was the first: the call goes on as it says.
    First,
    /// Someone answered before (or the turn ended): this answer changes nothing.
    Late,
    /// No approval of that id was ever seen.
    Unknown,
}

struct Waiting {
    /// The id it is answered by over HTTP (the `id` of its frame's `data`).
    id: String,
    request: ApprovalRequest,
    frame: Frame,
}

struct State {
    next_id: u64,
    log: VecDeque<Frame>,
    log_bytes: usize,
    waiting: Vec<Waiting>,
    answered: VecDeque<String>,
    /// Every approval id this session's watchers were shown.
    approval_ids: HashSet<String>,
    closed: bool,
}

/// What a new watcher gets: frames to send first, then the live channel (`None` once the
/// session has closed: the replay is all there is).
pub struct Subscription {
    pub replay: Vec<Frame>,
    pub live: Option<broadcast::Receiver<Frame>>,
}

pub struct Feed {
    state: Mutex<State>,
    sender: broadcast::Sender<Frame>,
}

impl Default for Feed {
    fn default() -> Self {
        Feed {
            state: Mutex::new(State {
                next_id: 1,
                log: VecDeque::new(),
                log_bytes: 0,
                waiting: Vec::new(),
                answered: VecDeque::new(),
                approval_ids: HashSet::new(),
                closed: false,
            }),
            sender: broadcast::channel(BACKLOG).0,
        }
    }
}

/// The JSON of a core update for watchers: the engine's events as `exec --json` prints them,
/// plus what a remote front end needs to follow the session (`run_started`, `todos`, `queue`,
/// `closed`). `None` for updates that only concern the front end that asked (query answers).
pub fn update_json(update: &Update) -> Option<Value> {
    let (kind, data) = match update {
        Update::Engine(event) => return Some(event.to_json()),
        Update::RunStarted { prompt } => ("run_started", json!({ "prompt": prompt })),
        Update::Todos(items) => ("todos", json!(items)),
        Update::Queue(prompts) => ("queue", json!(prompts)),
        Update::Failed(failure) => ("notice", json!(failure.message)),
        Update::Renamed(name) => ("renamed", json!({ "name": name })),
        Update::Closed(closing) => (
            "closed",
            json!({"session_id": closing.session_id, "kept": closing.kept}),
        ),
        Update::Loaded(_)
        | Update::Sessions { .. }
        | Update::Files { .. }
        | Update::ShellDone { .. }
        | Update::SessionRead { .. }
        | Update::Prompts(_)
        | Update::Exported { .. }
        | Update::Worktrees(_)
        | Update::Jobs(_)
        | Update::Restored(_)
        | Update::Compacted(_)
        | Update::Memories { .. }
        | Update::Attached(_)
        | Update::Images(_)
        | Update::PastedImage(_)
        | Update::Mcp { .. }
        | Update::McpPrompt { .. }
        // `serve` opens its cores without asking forms: none comes.
        | Update::Elicitation(_) => return None,
    };
    Some(json!({"type": kind, "turn": 0, "data": data}))
}

impl Feed {
    /// Publishes one update of the core to every watcher.
    pub fn publish(&self, update: &Update) {
        let Some(mut value) = update_json(update) else {
            return;
        };
        let Ok(mut state) = self.state.lock() else {
            return;
        };
        let id = state.next_id;
        state.next_id += 1;
        value["id"] = json!(id);
        // The id an approval is answered by over HTTP: the tool call's, unless this session has
        // shown an approval of that id before (the model picks the ids, and may use one twice
        // in a response or again in a later turn): then one of its own, so an answer meant for
        // the earlier call can never approve the later one.
        let approval_id = match update {
            Update::Engine(Event {
                kind: EventKind::ApprovalRequired(request),
                ..
            }) => {
                let mut approval_id = request.id.clone();
                if state.approval_ids.contains(&approval_id) {
                    approval_id = format!("{}~{id}", request.id);
                    value["data"]["id"] = json!(approval_id);
                }
                state.approval_ids.insert(approval_id.clone());
                Some(approval_id)
            }
            _ => None,
        };
        let frame = Frame {
            id,
            bytes: Bytes::from(format!("id: {id}\ndata: {value}\n\n")),
            last: matches!(update, Update::Closed(_)),
        };
        match update {
            Update::Engine(event) => match &event.kind {
                EventKind::ApprovalRequired(request) => state.waiting.push(Waiting {
                    id: approval_id.unwrap_or_default(),
                    request: request.clone(),
                    frame: frame.clone(),
                }),
                EventKind::ToolResult(outcome) => {
                    // One result ends one call: the first still waiting of that tool call id.
                    let id = &outcome.result.tool_call_id;
                    if let Some(at) = state.waiting.iter().position(|w| &w.request.id == id) {
                        state.waiting.remove(at);
                    }
                }
                // The turn is over: nothing it asked can be answered any more.
                EventKind::Done(_) | EventKind::Error(_) => state.waiting.clear(),
                _ => {}
            },
            Update::Closed(_) => {
                state.closed = true;
                state.waiting.clear();
            }
            _ => {}
        }
        state.log_bytes += frame.bytes.len();
        state.log.push_back(frame.clone());
        while state.log.len() > LOG_FRAMES || state.log_bytes > LOG_BYTES {
            if let Some(old) = state.log.pop_front() {
                state.log_bytes -= old.bytes.len();
            }
        }
        // Sent under the lock: a watcher subscribing at the same time gets each frame exactly
        // once, in the replay or live. Sending never waits; nobody listening is no error.
        let _ = self.sender.send(frame);
    }

    /// A new watcher. Without `last_event_id` it starts with the approvals still waiting; with
    /// one, it is replayed every kept frame after it (and any waiting approval the log no
    /// longer holds).
    pub fn subscribe(&self, last_event_id: Option<u64>) -> Subscription {
        let Ok(state) = self.state.lock() else {
            return Subscription {
                replay: Vec::new(),
                live: None,
            };
        };
        let mut replay = Vec::new();
        match last_event_id {
            None => replay.extend(state.waiting.iter().map(|w| w.frame.clone())),
            Some(seen) => {
                let oldest_kept = state.log.front().map_or(state.next_id, |f| f.id);
                replay.extend(
                    state
                        .waiting
                        .iter()
                        .filter(|w| w.frame.id > seen && w.frame.id < oldest_kept)
                        .map(|w| w.frame.clone()),
                );
                replay.extend(state.log.iter().filter(|f| f.id > seen).cloned());
            }
        }
        let live = (!state.closed).then(|| self.sender.subscribe());
        Subscription { replay, live }
    }

    /// Answers the waiting approval `id`: the first answer (from any watcher) wins.
    pub fn answer(&self, id: &str, decision: ApprovalDecision) -> Answered {
        let Ok(mut state) = self.state.lock() else {
            return Answered::Unknown;
        };
        if let Some(at) = state.waiting.iter().position(|w| w.id == id) {
            let waiting = state.waiting.remove(at);
            remember(&mut state.answered, id);
            return if waiting.request.respond(decision) {
                Answered::First
            } else {
                Answered::Late
            };
        }
        let seen = state.answered.iter().any(|a| a == id)
            || state.log.iter().any(|f| is_approval_frame(f, id));
        if seen {
            Answered::Late
        } else {
            Answered::Unknown
        }
    }

    /// The id the next frame will carry (for a client that wants only what comes next).
    pub fn next_id(&self) -> u64 {
        self.state.lock().map_or(0, |s| s.next_id)
    }
}

fn remember(answered: &mut VecDeque<String>, id: &str) {
    answered.push_back(id.to_owned());
    if answered.len() > ANSWERED {
        answered.pop_front();
    }
}

/// Whether `frame` is the `approval_required` of approval `id` (read back from its JSON: the
/// log holds only frames, and this is asked only for ids no longer waiting).
fn is_approval_frame(frame: &Frame, id: &str) -> bool {
    let Some(json) = frame
        .bytes
        .split(|b| *b == b'\n')
        .nth(1)
        .and_then(|line| line.strip_prefix(b"data: "))
    else {
        return false;
    };
    serde_json::from_slice::<Value>(json)
        .is_ok_and(|v| v["type"] == "approval_required" && v["data"]["id"].as_str() == Some(id))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Event;
    use crate::schema::ToolCall;

    fn delta(text: &str) -> Update {
        Update::Engine(Event {
            turn: 1,
            kind: EventKind::ActionDelta(text.into()),
        })
    }

    fn approval(id: &str) -> (Update, tokio::sync::oneshot::Receiver<ApprovalDecision>) {
        let call = ToolCall {
            id: id.into(),
            name: "bash".into(),
            arguments: r#"{"command":"make"}"#.into(),
        };
        let (request, rx) =
            ApprovalRequest::new(call, "asks".into(), String::new(), "--mode yolo", None);
        let event = Event {
            turn: 1,
            kind: EventKind::ApprovalRequired(request),
        };
        (Update::Engine(event), rx)
    }

    fn text(frame: &Frame) -> String {
        String::from_utf8(frame.bytes.to_vec()).unwrap()
    }

    #[test]
    fn frames_carry_increasing_ids_in_the_sse_line_and_the_json() {
        let feed = Feed::default();
        let mut live = feed.subscribe(None).live.unwrap();
        feed.publish(&delta("a"));
        feed.publish(&delta("b"));
        let first = live.try_recv().unwrap();
        let second = live.try_recv().unwrap();
        assert_eq!((first.id, second.id), (1, 2));
        let frame = text(&second);
        let data = frame
            .strip_prefix("id: 2\ndata: ")
            .and_then(|rest| rest.strip_suffix("\n\n"))
            .unwrap_or_else(|| panic!("{frame:?}"));
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(data).unwrap(),
            serde_json::json!({"data": "b", "id": 2, "turn": 1, "type": "action_delta"})
        );
    }

    #[test]
    fn a_reconnecting_watcher_is_replayed_what_it_missed() {
        let feed = Feed::default();
        for word in ["a", "b", "c", "d"] {
            feed.publish(&delta(word));
        }
        let sub = feed.subscribe(Some(2));
        let ids: Vec<u64> = sub.replay.iter().map(|f| f.id).collect();
        assert_eq!(ids, [3, 4]);
    }

    #[test]
    fn a_new_watcher_first_sees_the_waiting_approval_and_the_first_answer_wins() {
        let feed = Feed::default();
        feed.publish(&delta("a"));
        let (update, mut rx) = approval("call_9");
        feed.publish(&update);
        let sub = feed.subscribe(None);
        assert_eq!(sub.replay.len(), 1);
        assert!(text(&sub.replay[0]).contains("approval_required"));
        assert_eq!(
            feed.answer("call_9", ApprovalDecision::AllowOnce),
            Answered::First
        );
        assert_eq!(rx.try_recv().unwrap(), ApprovalDecision::AllowOnce);
        let deny = ApprovalDecision::Deny { reason: None };
        assert_eq!(feed.answer("call_9", deny.clone()), Answered::Late);
        assert_eq!(feed.answer("call_404", deny), Answered::Unknown);
        assert!(feed.subscribe(None).replay.is_empty(), "no longer waiting");
    }

    fn done() -> Update {
        Update::Engine(Event {
            turn: 1,
            kind: EventKind::Done(crate::engine::DoneInfo::default()),
        })
    }

    fn data_id(frame: &Frame) -> String {
        let line = text(frame).lines().nth(1).unwrap().to_owned();
        let value: Value = serde_json::from_str(line.strip_prefix("data: ").unwrap()).unwrap();
        value["data"]["id"].as_str().unwrap().to_owned()
    }

    #[test]
    fn a_late_answer_never_approves_a_later_call_that_reuses_the_tool_call_id() {
        // Turn 1 asks about call_1 and ends; turn 2's model reuses call_1 for another command.
        // A watcher's answer to the first (sent late) must not approve the second.
        let feed = Feed::default();
        let (first, _first_rx) = approval("call_1");
        feed.publish(&first);
        feed.publish(&done());
        let (second, mut second_rx) = approval("call_1");
        feed.publish(&second);
        assert_eq!(
            feed.answer("call_1", ApprovalDecision::AllowOnce),
            Answered::Late
        );
        assert!(
            second_rx.try_recv().is_err(),
            "the later call was not approved"
        );
        // The later call is shown, and answerable, under an id of its own.
        let waiting = feed.subscribe(None).replay;
        let fresh = data_id(&waiting[0]);
        assert_ne!(fresh, "call_1");
        assert_eq!(
            feed.answer(&fresh, ApprovalDecision::AllowOnce),
            Answered::First
        );
        assert_eq!(second_rx.try_recv().unwrap(), ApprovalDecision::AllowOnce);
    }

    #[test]
    fn two_waiting_calls_with_one_id_are_answered_each_by_its_own() {
        let feed = Feed::default();
        let (first, mut first_rx) = approval("dup");
        let (second, mut second_rx) = approval("dup");
        feed.publish(&first);
        feed.publish(&second);
        let ids: Vec<String> = feed.subscribe(None).replay.iter().map(data_id).collect();
        assert_eq!(ids.len(), 2);
        assert_ne!(ids[0], ids[1]);
        let deny = ApprovalDecision::Deny { reason: None };
        assert_eq!(feed.answer(&ids[1], deny.clone()), Answered::First);
        assert_eq!(second_rx.try_recv().unwrap(), deny);
        assert!(
            first_rx.try_recv().is_err(),
            "the first call is still waiting"
        );
        assert_eq!(feed.answer(&ids[1], deny), Answered::Late);
    }

    #[test]
    fn a_watcher_that_falls_too_far_behind_is_told_it_lagged() {
        let feed = Feed::default();
        let mut live = feed.subscribe(None).live.unwrap();
        for _ in 0..BACKLOG + 10 {
            feed.publish(&delta("x"));
        }
        assert!(matches!(
            live.try_recv(),
            Err(broadcast::error::TryRecvError::Lagged(_))
        ));
    }
}
