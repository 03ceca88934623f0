//! The decision for the network tools and user memories: a `user` `memory_write` asks first;
//! `web_fetch` asks per domain unless a rule
//! (`web_fetch(domain:docs.rs)`) or the session allows it, in plan mode too; deny rules hold in
//! `yolo`; "always allow" suggests the domain rule.

use serde_json::json;

use super::tests::{Env, V, case, check_table, judge};
use super::*;
use crate::web::{AddressPolicy, WebFetch, WebSearch};

fn fetch(url: &str) -> serde_json::Value {
    json!({ "url": url })
}

#[test]
fn web_fetch_asks_per_domain_unless_a_rule_or_the_session_allows_it() {
    let env = Env::new().user(
        r#"{"permissions": {"allow": ["web_fetch(domain:docs.rs)", "web_fetch(domain:*.example.org)"],
                            "deny": ["web_fetch(domain:evil.example)"]}}"#,
    );
    let rules = env.rules(true);
    let tool = WebFetch::new(AddressPolicy::default());
    use Mode::*;
    let mut granted = case(&tool, fetch("https://crates.io/x"), Default);
    granted.granted = &["web_fetch:domain:crates.io"];
    check_table(
        &env,
        &rules,
        &[
            (case(&tool, fetch("https://docs.rs/serde"), Default), V::Run),
            (
                case(&tool, fetch("https://DOCS.rs:443/x"), AutoEdit),
                V::Run,
            ),
            (
                case(&tool, fetch("https://docs.rs.evil.example/"), Default),
                V::Ask,
            ),
            (case(&tool, fetch("https://crates.io/"), Default), V::Ask),
            (
                case(&tool, fetch("https://api.example.org/v1"), Default),
                V::Run,
            ),
            (
                case(&tool, fetch("https://example.org.evil.test/"), Default),
                V::Ask,
            ),
            (
                case(&tool, fetch("https://user@evil.test/#docs.rs"), Default),
                V::Ask,
            ),
            (case(&tool, fetch("https://crates.io/"), AutoEdit), V::Ask),
            (case(&tool, fetch("https://crates.io/"), Plan), V::Ask),
            (granted, V::Run),
            (case(&tool, fetch("https://evil.example/"), Yolo), V::Deny),
            (case(&tool, fetch("https://crates.io/"), Yolo), V::Run),
        ],
    );
}

#[test]
fn the_ask_names_the_domain_and_always_allow_writes_the_domain_rule() {
    let env = Env::new();
    let rules = env.rules(true);
    let tool = WebFetch::new(AddressPolicy::default());
    let verdict = judge(
        &env.work,
        &rules,
        &case(&tool, fetch("https://docs.rs/a?b=c"), Mode::Default),
    );
    let Verdict::Ask { reason, scope } = verdict else {
        panic!("{verdict:?}");
    };
    assert!(reason.contains("docs.rs"), "{reason}");
    assert_eq!(scope.key, "web_fetch:domain:docs.rs");
    assert_eq!(
        suggested_rule(&tool, &fetch("https://docs.rs/a"), &env.work).as_deref(),
        Some("web_fetch(domain:docs.rs)")
    );
    // A glob would read `[::1]` as a character class: no rule is offered for an IPv6 host.
    assert_eq!(
        suggested_rule(&tool, &fetch("http://[2606:4700::1]/"), &env.work),
        None
    );
    let search = WebSearch::new(None);
    assert_eq!(
        suggested_rule(&search, &json!({"query": "q"}), &env.work).as_deref(),
        Some("web_search")
    );
}

#[test]
fn web_search_asks_once_per_session_unless_allowed() {
    let env = Env::new();
    let rules = env.rules(true);
    let search = WebSearch::new(None);
    let mut granted = case(&search, json!({"query": "rust"}), Mode::Default);
    granted.granted = &["web_search:any"];
    check_table(
        &env,
        &rules,
        &[
            (
                case(&search, json!({"query": "rust"}), Mode::Default),
                V::Ask,
            ),
            (granted, V::Run),
        ],
    );
    let env = Env::new().user(r#"{"permissions": {"allow": ["web_search"]}}"#);
    let rules = env.rules(true);
    check_table(
        &env,
        &rules,
        &[(
            case(&search, json!({"query": "rust"}), Mode::Default),
            V::Run,
        )],
    );
}

#[test]
fn a_user_memory_asks_first_and_a_project_one_does_not() {
    use crate::tools::memory::{MemoryPlace, MemoryWrite};
    let env = Env::new();
    let rules = env.rules(true);
    let tool = MemoryWrite(MemoryPlace {
        store: crate::memory::SessionStore::open_in_memory().unwrap(),
        workdir: env.work.display().to_string(),
        home: env.home.clone(),
    });
    use Mode::*;
    let user = || json!({"content": "prefers tabs", "scope": "user"});
    let mut granted = case(&tool, user(), Default);
    granted.granted = &["memory_write:user"];
    check_table(
        &env,
        &rules,
        &[
            (
                case(&tool, json!({"content": "uses tabs"}), Default),
                V::Run,
            ),
            (
                case(&tool, json!({"content": "x", "scope": "project"}), Plan),
                V::Run,
            ),
            (case(&tool, user(), Default), V::Ask),
            (case(&tool, user(), AutoEdit), V::Ask),
            (case(&tool, user(), Plan), V::Ask),
            (granted, V::Run),
            (case(&tool, user(), Yolo), V::Run),
        ],
    );
}
