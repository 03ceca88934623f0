use std::collections::HashSet;
use std::path::PathBuf;

use async_trait::async_trait;
use serde_json::{Value, json};

use super::*;
use crate::tools::{ToolContext, ToolError};

struct Kinded(&'static str, ToolKind);

#[async_trait]
impl Tool for Kinded {
    fn name(&self) -> &'static str {
        self.0
    }
    fn description(&self) -> &'static str {
        ""
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object"})
    }
    fn kind(&self) -> ToolKind {
        self.1
    }
    fn written_paths(&self, arguments: &Value) -> Vec<String> {
        arguments["path"]
            .as_str()
            .map(str::to_owned)
            .into_iter()
            .collect()
    }
    async fn execute(&self, _: Value, _: &ToolContext) -> Result<String, ToolError> {
        Ok(String::new())
    }
}

fn workdir() -> PathBuf {
    std::env::temp_dir().canonicalize().unwrap()
}

fn verdict(kind: ToolKind, args: Value, mode: Mode, allowed: &[&str]) -> Verdict {
    let allowed: HashSet<String> = allowed.iter().map(|s| s.to_string()).collect();
    let name = match kind {
        ToolKind::Dangerous => "bash",
        ToolKind::Edit => "edit_file",
        _ => "read_file",
    };
    decide(
        &Kinded(name, kind),
        &args,
        mode,
        &workdir(),
        &allowed,
        &super::rules::PermissionRules::none(),
    )
}

fn asks(v: &Verdict) -> bool {
    matches!(v, Verdict::Ask { .. })
}

#[test]
fn the_mode_table_of_the_contract() {
    let read = || json!({"path": "a.txt"});
    let edit = || json!({"path": "src/a.rs"});
    let bash = || json!({"command": "ls"});
    let table = [
        (Mode::Default, ToolKind::ReadOnly, read(), false),
        (Mode::Default, ToolKind::Edit, edit(), true),
        (Mode::Default, ToolKind::Dangerous, bash(), true),
        (Mode::AutoEdit, ToolKind::ReadOnly, read(), false),
        (Mode::AutoEdit, ToolKind::Edit, edit(), false),
        (Mode::AutoEdit, ToolKind::Dangerous, bash(), true),
        (Mode::Yolo, ToolKind::Edit, edit(), false),
        (Mode::Yolo, ToolKind::Dangerous, bash(), false),
        (Mode::Plan, ToolKind::Planning, json!({}), false),
    ];
    for (mode, kind, args, should_ask) in table {
        let v = verdict(kind, args, mode, &[]);
        assert_eq!(asks(&v), should_ask, "{mode} {kind:?}: {v:?}");
    }
}

#[test]
fn writing_outside_the_workdir_always_asks_except_in_yolo() {
    for mode in [Mode::Default, Mode::AutoEdit] {
        let v = verdict(
            ToolKind::Edit,
            json!({"path": "../elsewhere.txt"}),
            mode,
            &["edit:workdir"],
        );
        let Verdict::Ask { reason, .. } = v else {
            panic!("{mode}: {v:?}")
        };
        assert!(reason.contains("outside the working directory"));
    }
    assert_eq!(
        verdict(ToolKind::Edit, json!({"path": "/etc/x"}), Mode::Yolo, &[]),
        Verdict::Run
    );
}

#[test]
fn allow_always_covers_its_scope_only() {
    let allowed = ["bash:prefix:cargo test", "edit:workdir"];
    assert_eq!(
        verdict(
            ToolKind::Dangerous,
            json!({"command": "cargo test -q"}),
            Mode::Default,
            &allowed
        ),
        Verdict::Run
    );
    assert!(asks(&verdict(
        ToolKind::Dangerous,
        json!({"command": "cargo build"}),
        Mode::Default,
        &allowed
    )));
    assert!(
        asks(&verdict(
            ToolKind::Dangerous,
            json!({"command": "cargo test && rm -rf /"}),
            Mode::Default,
            &allowed
        )),
        "a chain never matches a prefix"
    );
    assert_eq!(
        verdict(
            ToolKind::Edit,
            json!({"path": "a.rs"}),
            Mode::Default,
            &allowed
        ),
        Verdict::Run
    );
}

#[test]
fn command_scopes_take_one_or_two_words() {
    let scope = |c: &str| command_scope("bash", &json!({"command": c})).map(|s| s.key);
    assert_eq!(scope("ls -la src").as_deref(), Some("bash:prefix:ls"));
    assert_eq!(
        scope("git status --short").as_deref(),
        Some("bash:prefix:git status")
    );
    assert_eq!(
        scope("cargo --version").as_deref(),
        Some("bash:prefix:cargo")
    );
    assert_eq!(scope("echo hi > out.txt"), None);
    assert_eq!(scope("a; b"), None);
    assert_eq!(scope("echo $(whoami)"), None);
}
