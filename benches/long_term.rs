//! Long-term memory benchmarks over 10,000 memories (50 projects and user ones), made once
//! under target/: FTS5 search ranked by relevance, scope, importance and recency; the digest
//! for the system prompt. The fixture prints the digest's size and its cost in prompt tokens
//! (tiktoken `o200k_base`). Run with `cargo bench --bench long_term`.

use std::path::PathBuf;
use std::sync::OnceLock;

use divan::Bencher;
use harness9::memory::SessionStore;
use harness9::memory::long_term::{MemoryScope, NewMemory, digest};

fn main() {
    divan::main();
}

const MEMORIES: usize = 10_000;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

const TOPICS: &[&str] = &[
    "build",
    "tests",
    "deploy",
    "database",
    "logging",
    "style",
    "review",
    "release",
    "docs",
    "benchmarks",
    "ci",
    "dependencies",
];

fn content(n: usize) -> String {
    let topic = TOPICS[n % TOPICS.len()];
    format!(
        "For {topic} in module {n}, run `make {topic}-{n}` before pushing; the {topic} step \
         fails when the cache in target/{topic} is stale, so clear it first."
    )
}

fn store() -> &'static SessionStore {
    static STORE: OnceLock<SessionStore> = OnceLock::new();
    STORE.get_or_init(|| {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/bench-memories.db");
        let fresh = !path.exists();
        let store = SessionStore::open(&path).unwrap();
        let runtime = runtime();
        if fresh {
            for n in 0..MEMORIES {
                let scope = if n % 10 == 0 {
                    MemoryScope::User
                } else {
                    MemoryScope::Project
                };
                runtime
                    .block_on(store.memory_write(NewMemory {
                        title: format!("{} note {n}", TOPICS[n % TOPICS.len()]),
                        content: content(n),
                        category: String::new(),
                        scope,
                        workdir: format!("/repo/{}", n % 50),
                        importance: (n % 5) as i64 + 1,
                    }))
                    .unwrap();
            }
        }
        let visible = runtime
            .block_on(store.memory_list(Some("/repo/7")))
            .unwrap();
        let text = digest(&visible).unwrap_or_default();
        let tokens = tiktoken_rs::o200k_base()
            .unwrap()
            .encode_ordinary(&text)
            .len();
        eprintln!(
            "digest for /repo/7: {} memories visible, {} bytes, {} lines, {tokens} tokens \
             (o200k_base), estimate {}",
            visible.len(),
            text.len(),
            text.lines().count(),
            harness9::context::tokens::count(&text)
        );
        store
    })
}

#[divan::bench(sample_count = 50)]
fn search_10000_memories_two_words(bencher: Bencher) {
    let store = store();
    let runtime = runtime();
    bencher.bench(|| {
        let hits = runtime
            .block_on(store.memory_search("deploy cache", "/repo/7", 10))
            .unwrap();
        assert_eq!(hits.len(), 10);
    });
}

#[divan::bench(sample_count = 50)]
fn search_10000_memories_rare_word(bencher: Bencher) {
    let store = store();
    let runtime = runtime();
    bencher.bench(|| {
        let hits = runtime
            .block_on(store.memory_search("deploy-4242", "/repo/42", 10))
            .unwrap();
        assert!(!hits.is_empty());
    });
}

#[divan::bench(sample_count = 50)]
fn digest_of_one_project(bencher: Bencher) {
    let store = store();
    let runtime = runtime();
    bencher.bench(|| {
        let visible = runtime
            .block_on(store.memory_list(Some("/repo/7")))
            .unwrap();
        assert!(digest(&visible).is_some());
    });
}
