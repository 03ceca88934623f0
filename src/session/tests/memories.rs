//! `/memory` through the core: memories listed, searched, edited and forgotten by requests, with
//! `MEMORY.md` following; an MCP request for a server that is not configured is refused.

use super::*;

#[tokio::test]
async fn memories_are_listed_edited_and_forgotten_through_requests() {
    use crate::memory::long_term::{MemoryScope, NewMemory};
    let fixture = Fixture::new();
    let provider = scripted([]);
    let mut opened = fixture
        .open(&provider, SessionChoice::New, CoreOptions::default())
        .await;
    let store = crate::assemble::open_store(&fixture.settings).unwrap();
    let id = store
        .memory_write(NewMemory {
            title: String::new(),
            content: "tests run with nextest".into(),
            category: String::new(),
            scope: MemoryScope::Project,
            workdir: fixture.workdir().display().to_string(),
            importance: 3,
        })
        .await
        .unwrap()
        .id();
    let memories = |generation: u64| move |u: &Update| matches!(u, Update::Memories { generation: g, .. } if *g == generation);
    opened.handle.send(Request::ListMemories {
        query: "nextest".into(),
        generation: 1,
    });
    let (
        Update::Memories {
            memories: found, ..
        },
        _,
    ) = until(&mut opened.updates, "the list", memories(1)).await
    else {
        unreachable!()
    };
    assert_eq!(found.len(), 1);
    opened.handle.send(Request::ChangeMemory {
        id,
        content: Some("tests run with cargo test".into()),
        query: String::new(),
        generation: 2,
    });
    let (
        Update::Memories {
            memories: found, ..
        },
        _,
    ) = until(&mut opened.updates, "the edited list", memories(2)).await
    else {
        unreachable!()
    };
    assert_eq!(found[0].content, "tests run with cargo test");
    let readable = fixture.settings.home.join("memory/MEMORY.md");
    assert!(
        std::fs::read_to_string(&readable)
            .unwrap()
            .contains("cargo test")
    );
    opened.handle.send(Request::ChangeMemory {
        id,
        content: None,
        query: String::new(),
        generation: 3,
    });
    let (
        Update::Memories {
            memories: found, ..
        },
        _,
    ) = until(&mut opened.updates, "the emptied list", memories(3)).await
    else {
        unreachable!()
    };
    assert!(found.is_empty());
    // A server that is not configured: told, not ignored.
    opened.handle.send(Request::McpReconnect("nope".into()));
    let (failed, _) = until(&mut opened.updates, "a failure", |u| {
        matches!(u, Update::Failed(_))
    })
    .await;
    assert!(matches!(failed, Update::Failed(f) if f.kind == FailureKind::NotFound));
    close(&mut opened).await;
}
