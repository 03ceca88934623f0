//! What a hook's exit status and output mean (CONTRACT "Hooks"): exit 0 goes on (its stdout is
//! context for the events that take it, or a JSON decision); exit 2 blocks with stderr as the
//! reason; any other ending (another code, a crash, a timeout, a command that is missing) is a
//! notice and decides nothing. Several hooks of one event are combined here: any block blocks,
//! and for `PreToolUse` deny beats ask beats allow.

use serde_json::Value;

use super::command::{Exit, Ran};
use super::settings::{CommandHook, HookEvent};

/// What one hook said.
#[derive(Debug, Clone, Default)]
pub struct Said {
    /// Exit 2, or `{"decision": "block"}`: the reason.
    pub block: Option<String>,
    /// Text for the model (plain stdout of a context event, or `additionalContext`).
    pub context: Option<String>,
    /// `PreToolUse`'s `permissionDecision`, with its reason.
    pub permission: Option<(Permission, String)>,
    /// `PreToolUse`'s `updatedInput`.
    pub updated_input: Option<Value>,
    /// For the user: `systemMessage`, or why the hook decided nothing.
    pub notices: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Permission {
    Allow,
    Ask,
    Deny,
}

/// A hook named for the user: its event and command, cut to one short line.
pub fn label(hook: &CommandHook) -> String {
    let first = hook.command.lines().next().unwrap_or("");
    let mut shown: String = first.chars().take(60).collect();
    if shown.len() < hook.command.len() {
        shown.push('…');
    }
    format!("{} hook `{shown}`", hook.event.name())
}

/// Reads what one hook's run means.
pub fn interpret(hook: &CommandHook, ran: &Ran) -> Said {
    let mut said = Said::default();
    let who = label(hook);
    let stderr = ran.stderr.trim();
    match &ran.exit {
        Exit::Code(0) => {}
        Exit::Code(2) => {
            said.block = Some(if stderr.is_empty() {
                format!("the {who} blocked this without giving a reason")
            } else {
                stderr.to_owned()
            });
            return said;
        }
        other => {
            let how = match other {
                Exit::Code(code) => format!("failed with exit status {code}"),
                Exit::Signal => "was killed by a signal".to_owned(),
                Exit::TimedOut(limit) => format!(
                    "ran past its timeout of {}s and was stopped with its children",
                    limit.as_secs_f64()
                ),
                Exit::Cancelled => "was stopped: the run was interrupted".to_owned(),
                Exit::NotStarted(why) => format!("could not be started: {why}"),
            };
            let detail = stderr
                .lines()
                .next()
                .filter(|l| !l.is_empty())
                .map(|l| format!(": {l}"))
                .unwrap_or_default();
            said.notices.push(format!("{who} {how}{detail}; going on"));
            return said;
        }
    }
    let stdout = ran.stdout.trim();
    if stdout.starts_with('{') {
        match serde_json::from_str::<Value>(stdout) {
            Ok(json) => read_json(hook, &json, &mut said),
            Err(e) => said.notices.push(format!(
                "{who} printed something that is not valid JSON ({e}); ignored"
            )),
        }
    } else if !stdout.is_empty()
        && matches!(
            hook.event,
            HookEvent::UserPromptSubmit | HookEvent::SessionStart
        )
    {
        said.context = Some(stdout.to_owned());
    }
    said
}

fn read_json(hook: &CommandHook, json: &Value, said: &mut Said) {
    let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_owned);
    if let Some(message) = text(json.get("systemMessage")) {
        said.notices.push(format!("{}: {message}", label(hook)));
    }
    if json.get("decision").and_then(Value::as_str) == Some("block") {
        said.block = Some(text(json.get("reason")).unwrap_or_else(|| {
            format!("the {} blocked this without giving a reason", label(hook))
        }));
    }
    let Some(specific) = json.get("hookSpecificOutput") else {
        return;
    };
    if let Some(context) = text(specific.get("additionalContext")) {
        said.context = Some(context);
    }
    if hook.event != HookEvent::PreToolUse {
        return;
    }
    let reason = text(specific.get("permissionDecisionReason")).unwrap_or_default();
    match specific.get("permissionDecision").and_then(Value::as_str) {
        Some("allow") => said.permission = Some((Permission::Allow, reason)),
        Some("ask") => said.permission = Some((Permission::Ask, reason)),
        Some("deny") => said.permission = Some((Permission::Deny, reason)),
        Some(other) => said.notices.push(format!(
            "{} gave the permissionDecision {other:?}; expected allow, ask or deny; ignored",
            label(hook)
        )),
        None => {}
    }
    match specific.get("updatedInput") {
        Some(input) if input.is_object() => said.updated_input = Some(input.clone()),
        Some(_) => said.notices.push(format!(
            "{} gave an updatedInput that is not an object; ignored",
            label(hook)
        )),
        None => {}
    }
}

/// Several hooks of one event, combined: every block's reason, every context, the strongest
/// permission decision (deny > ask > allow), the first `updatedInput`, every notice.
pub fn combine(all: Vec<Said>) -> Said {
    let mut out = Said::default();
    let mut blocks = Vec::new();
    let mut contexts = Vec::new();
    for said in all {
        blocks.extend(said.block);
        contexts.extend(said.context);
        if let Some((decision, reason)) = said.permission
            && out.permission.as_ref().is_none_or(|(d, _)| decision > *d)
        {
            out.permission = Some((decision, reason));
        }
        if out.updated_input.is_none() {
            out.updated_input = said.updated_input;
        }
        out.notices.extend(said.notices);
    }
    out.block = (!blocks.is_empty()).then(|| blocks.join("\n"));
    out.context = (!contexts.is_empty()).then(|| contexts.join("\n"));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hooks::settings::{Matcher, Origin};
    use std::time::Duration;

    fn hook(event: HookEvent) -> CommandHook {
        CommandHook {
            event,
            matcher: Matcher::All,
            command: "check".into(),
            timeout: Duration::from_secs(1),
            origin: Origin::User,
            file: "settings.json".into(),
        }
    }

    fn ran(code: i32, stdout: &str, stderr: &str) -> Ran {
        Ran {
            exit: Exit::Code(code),
            stdout: stdout.into(),
            stderr: stderr.into(),
        }
    }

    #[test]
    fn exit_codes_mean_what_the_contract_says() {
        let pre = hook(HookEvent::PreToolUse);
        assert_eq!(
            interpret(&pre, &ran(2, "", "no rm\n")).block.as_deref(),
            Some("no rm")
        );
        let failed = interpret(&pre, &ran(1, "", "boom"));
        assert!(failed.block.is_none());
        assert!(failed.notices[0].contains("exit status 1: boom"));
        let prompt = hook(HookEvent::UserPromptSubmit);
        assert_eq!(
            interpret(&prompt, &ran(0, "it is Tuesday\n", ""))
                .context
                .as_deref(),
            Some("it is Tuesday")
        );
        // Plain stdout of a tool hook is not context.
        assert!(interpret(&pre, &ran(0, "formatted", "")).context.is_none());
    }

    #[test]
    fn json_decides_and_garbage_is_a_notice() {
        let pre = hook(HookEvent::PreToolUse);
        let said = interpret(
            &pre,
            &ran(
                0,
                r#"{"hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": "no", "updatedInput": {"command": "ls"}}}"#,
                "",
            ),
        );
        assert_eq!(said.permission, Some((Permission::Deny, "no".into())));
        assert_eq!(
            said.updated_input,
            Some(serde_json::json!({"command": "ls"}))
        );
        let garbage = interpret(&pre, &ran(0, "{not json", ""));
        assert!(garbage.permission.is_none() && garbage.block.is_none());
        assert!(garbage.notices[0].contains("not valid JSON"));
        let stop = hook(HookEvent::Stop);
        let said = interpret(
            &stop,
            &ran(0, r#"{"decision": "block", "reason": "tests fail"}"#, ""),
        );
        assert_eq!(said.block.as_deref(), Some("tests fail"));
    }

    #[test]
    fn deny_beats_ask_beats_allow() {
        let said = |p| Said {
            permission: Some((p, format!("{p:?}"))),
            ..Said::default()
        };
        let combined = combine(vec![
            said(Permission::Allow),
            said(Permission::Deny),
            said(Permission::Ask),
        ]);
        assert_eq!(combined.permission.unwrap().0, Permission::Deny);
        let combined = combine(vec![said(Permission::Allow), said(Permission::Ask)]);
        assert_eq!(combined.permission.unwrap().0, Permission::Ask);
    }
}
