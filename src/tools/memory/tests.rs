//! `memory_write`'s add, update and remove, and the lines it keeps: another project's memories
//! are out of reach, and a `user` memory is changed only by a call that says so (and is asked).

use std::sync::Arc;

use serde_json::{Value, json};

use super::*;
use crate::planning::{Mode, TodoStore};

struct Fixture {
    write: MemoryWrite,
    store: SessionStore,
    _home: tempfile::TempDir,
}

fn fixture(workdir: &str) -> Fixture {
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::open_in_memory().unwrap();
    let place = MemoryPlace {
        store: store.clone(),
        workdir: workdir.into(),
        home: home.path().to_owned(),
    };
    Fixture {
        write: MemoryWrite(place),
        store,
        _home: home,
    }
}

fn ctx() -> ToolContext {
    ToolContext {
        workdir: std::env::temp_dir(),
        cancel: Default::default(),
        mode: Mode::Default,
        todos: Arc::new(TodoStore::default()),
        read_guard: Default::default(),
        outputs: None,
        editor_files: None,
        editor_terminal: None,
    }
}

async fn call(f: &Fixture, arguments: Value) -> Result<String, ToolError> {
    f.write.execute(arguments, &ctx()).await
}

async fn id_of(f: &Fixture, arguments: Value) -> i64 {
    let said = call(f, arguments).await.unwrap();
    let start = said.find('#').unwrap() + 1;
    said[start..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .unwrap()
}

#[tokio::test]
async fn a_memory_is_added_with_an_importance_updated_by_id_and_retired() {
    let f = fixture("/p");
    let id = id_of(
        &f,
        json!({"content": "Tests run with make check.", "importance": 4}),
    )
    .await;
    let stored = f.store.memory_get(id).await.unwrap().unwrap();
    assert_eq!(stored.importance, 4);

    let said = call(
        &f,
        json!({"action": "update", "id": id, "content": "Tests run with just test.", "importance": 5}),
    )
    .await
    .unwrap();
    assert_eq!(said, format!("Updated memory #{id}."));
    let stored = f.store.memory_get(id).await.unwrap().unwrap();
    assert_eq!(
        (stored.content.as_str(), stored.importance),
        ("Tests run with just test.", 5)
    );
    let found = f.store.memory_search("just", "/p", 10).await.unwrap();
    assert_eq!(found.len(), 1, "the search finds the new words");

    call(&f, json!({"action": "remove", "id": id}))
        .await
        .unwrap();
    assert!(f.store.memory_get(id).await.unwrap().is_none());
    assert!(
        f.store
            .memory_search("just", "/p", 10)
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn another_projects_memory_is_out_of_reach_and_a_user_one_needs_scope_user() {
    let f = fixture("/p");
    let theirs = f
        .store
        .memory_write(NewMemory {
            title: String::new(),
            content: "The other project deploys on Fridays.".into(),
            category: String::new(),
            scope: MemoryScope::Project,
            workdir: "/other".into(),
            importance: 3,
        })
        .await
        .unwrap()
        .id();
    for action in ["update", "remove"] {
        let error = call(
            &f,
            json!({"action": action, "id": theirs, "content": "Deploy any day."}),
        )
        .await
        .unwrap_err();
        assert!(error.0.contains("no memory"), "{}", error.0);
    }
    assert_eq!(
        f.store.memory_get(theirs).await.unwrap().unwrap().content,
        "The other project deploys on Fridays."
    );

    let user = id_of(&f, json!({"content": "Answer in French.", "scope": "user"})).await;
    // Without `scope: user` the permission decision would not have asked: refused.
    let error = call(&f, json!({"action": "remove", "id": user}))
        .await
        .unwrap_err();
    assert!(error.0.contains("say `scope: user`"), "{}", error.0);
    assert!(f.store.memory_get(user).await.unwrap().is_some());
    // With it, the permission decision asks (as for a `user` write), then it is changed.
    let arguments = json!({"action": "remove", "id": user, "scope": "user"});
    assert!(writes_user_memory(&f.write, &arguments));
    call(&f, arguments).await.unwrap();
    assert!(f.store.memory_get(user).await.unwrap().is_none());
}

#[tokio::test]
async fn malformed_calls_say_what_is_missing() {
    let f = fixture("/p");
    for (arguments, expected) in [
        (json!({}), "`content` is missing"),
        (json!({"action": "update"}), "`id` is missing"),
        (json!({"action": "update", "id": 1}), "no memory #1"),
        (json!({"content": "x", "importance": 9}), "from 1 to 5"),
        (
            json!({"action": "forget", "id": 1}),
            "expected one of `add`, `update`, `remove`",
        ),
    ] {
        let error = call(&f, arguments.clone()).await.unwrap_err();
        assert!(error.0.contains(expected), "{arguments}: {}", error.0);
    }
    let id = id_of(&f, json!({"content": "A fact."})).await;
    let error = call(&f, json!({"action": "update", "id": id}))
        .await
        .unwrap_err();
    assert!(error.0.contains("nothing to update"), "{}", error.0);
}
