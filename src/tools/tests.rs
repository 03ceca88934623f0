use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::*;

struct Echo(&'static str, ToolKind);

#[async_trait]
impl Tool for Echo {
    fn name(&self) -> &'static str {
        self.0
    }
    fn description(&self) -> &'static str {
        "echoes"
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"], "additionalProperties": false})
    }
    fn kind(&self) -> ToolKind {
        self.1
    }
    async fn execute(&self, arguments: Value, _: &ToolContext) -> Result<String, ToolError> {
        Ok(arguments["text"].as_str().unwrap_or_default().to_owned())
    }
}

fn registry() -> Registry {
    let mut registry = Registry::new();
    registry
        .register(Arc::new(Echo("echo", ToolKind::ReadOnly)))
        .unwrap();
    registry
        .register(Arc::new(Echo("write", ToolKind::Edit)))
        .unwrap();
    registry
}

fn ctx(mode: Mode) -> ToolContext {
    ToolContext {
        workdir: std::env::temp_dir(),
        cancel: CancellationToken::new(),
        mode,
        todos: Arc::default(),
        read_guard: Default::default(),
        outputs: None,
        editor_files: None,
        editor_terminal: None,
    }
}

fn call(name: &str, arguments: &str) -> ToolCall {
    ToolCall {
        id: "c".into(),
        name: name.into(),
        arguments: arguments.into(),
    }
}

#[test]
fn a_second_tool_of_one_name_is_refused() {
    let mut registry = registry();
    let error = registry
        .register(Arc::new(Echo("echo", ToolKind::ReadOnly)))
        .unwrap_err();
    assert!(error.to_string().contains("`echo` is already registered"));
}

#[test]
fn plan_mode_offers_only_what_it_allows() {
    let registry = registry();
    let names = |mode| {
        registry
            .available_tools(mode)
            .into_iter()
            .map(|t| t.name)
            .collect::<Vec<_>>()
    };
    assert_eq!(names(Mode::Default), ["echo", "write"]);
    assert_eq!(names(Mode::Plan), ["echo"]);
}

#[tokio::test]
async fn every_bad_call_is_an_instructive_error_result() {
    let registry = registry();
    let cases = [
        (
            call("nope", "{}"),
            Mode::Default,
            "There is no tool named `nope`. Available tools: echo, write.",
        ),
        (call("echo", "{\"text\": "), Mode::Default, "not valid JSON"),
        (
            call("echo", "{}"),
            Mode::Default,
            "missing the required field `text`",
        ),
        (
            call("echo", "{\"text\": 1}"),
            Mode::Default,
            "`text` must be a string",
        ),
        (
            call("write", "{\"text\": \"x\"}"),
            Mode::Plan,
            "not available in plan mode",
        ),
    ];
    for (call, mode, expected) in cases {
        let result = registry.execute(&call, &ctx(mode)).await;
        assert!(result.is_error, "{call:?}");
        assert!(
            result.output.contains(expected),
            "{call:?}: {}",
            result.output
        );
    }
    let ok = registry
        .execute(&call("echo", "{\"text\": \"hi\"}"), &ctx(Mode::Default))
        .await;
    assert_eq!((ok.is_error, ok.output.as_str()), (false, "hi"));
}

/// What the tool definitions cost in every request (the figures are in PERFORMANCE.md).
#[test]
fn the_tool_schemas_stay_compact() {
    let registry = standard_registry(
        Arc::new(crate::context::SkillIndex::default()),
        Bash::default(),
    );
    for mode in [Mode::Default, Mode::Plan] {
        let tools = registry.available_tools(mode);
        let tokens = crate::context::estimate_tokens(&[], &tools);
        println!(
            "tool schemas, {} mode: {} tools, {tokens} tokens",
            mode.as_str(),
            tools.len()
        );
        assert!(tokens < 3_000, "{tokens}");
    }
}

#[tokio::test]
async fn use_skill_returns_the_body_on_demand() {
    let root = tempfile::tempdir().unwrap();
    let work = root.path().join("w");
    let skill = work.join(".harness9/skills/deploy");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: deploy\ndescription: Ship it\n---\nStep 1: build.\nStep 2: push.\n",
    )
    .unwrap();
    let registry = standard_registry(
        Arc::new(crate::context::SkillIndex::discover(
            &work,
            &root.path().join("h"),
        )),
        Bash::default(),
    );
    let ctx = ToolContext {
        workdir: work.clone(),
        cancel: Default::default(),
        mode: Mode::Plan,
        todos: Arc::default(),
        read_guard: Default::default(),
        outputs: None,
        editor_files: None,
        editor_terminal: None,
    };
    let call = |args: &str| ToolCall {
        id: "u".into(),
        name: "use_skill".into(),
        arguments: args.into(),
    };
    let result = registry.execute(&call(r#"{"name":"deploy"}"#), &ctx).await;
    assert_eq!(result.output, "Step 1: build.\nStep 2: push.");
    let missing = registry.execute(&call(r#"{"name":"lint"}"#), &ctx).await;
    assert!(missing.is_error && missing.output.contains("available: deploy"));
}
