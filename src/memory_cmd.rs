//! `harness9 memory list|search|rm`: the long-term memories (through the session's
//! `Catalogue`) without the TUI. Memory text was written by a model: the table strips terminal control sequences (JSON
//! escapes them by itself). `rm` rewrites `$HARNESS9_HOME/memory/MEMORY.md`.

use std::io::Write;
use std::path::Path;

use serde_json::json;

use crate::config::{MemoryAction, MemoryArgs};
use crate::session::text::store_time;
use crate::session::{Catalogue, Memory};
use crate::terminal_text::sanitize;

/// Runs the action; returns the exit status.
pub async fn run(home: &Path, workdir: &Path, args: MemoryArgs) -> u8 {
    let catalogue = match Catalogue::open(home) {
        Ok(catalogue) => catalogue,
        Err(failure) => {
            eprintln!("harness9: {failure}");
            return 1;
        }
    };
    let dir = workdir.display().to_string();
    let (listed, json) = match args.action {
        MemoryAction::List { all, json } => (
            catalogue.memories((!all).then_some(dir.as_str())).await,
            json,
        ),
        MemoryAction::Search { text, json } => {
            (catalogue.search_memories(&text, &dir, 50).await, json)
        }
        MemoryAction::Rm { id } => {
            return match catalogue.remove_memory(id, home).await {
                Ok((true, not_exported)) => {
                    if let Some(failure) = not_exported {
                        eprintln!("harness9: {failure}");
                    }
                    println!("removed memory #{id}");
                    0
                }
                Ok((false, _)) => {
                    eprintln!("harness9: there is no memory #{id}");
                    1
                }
                Err(error) => {
                    eprintln!("harness9: {error}");
                    1
                }
            };
        }
    };
    let memories = match listed {
        Ok(memories) => memories,
        Err(error) => {
            eprintln!("harness9: {error}");
            return 1;
        }
    };
    let mut out = std::io::stdout().lock();
    let written = if json {
        let list: Vec<_> = memories.iter().map(as_json).collect();
        writeln!(out, "{}", serde_json::Value::Array(list))
    } else if memories.is_empty() {
        writeln!(out, "no memories")
    } else {
        memories.iter().try_for_each(|m| {
            writeln!(
                out,
                "#{:<5} {}  ({}, used {})",
                m.id,
                sanitize(&m.line()),
                store_time(m.updated_at),
                m.use_count
            )
        })
    };
    u8::from(written.is_err())
}

fn as_json(memory: &Memory) -> serde_json::Value {
    json!({
        "id": memory.id,
        "title": memory.title,
        "content": memory.content,
        "category": memory.category,
        "scope": memory.scope.as_str(),
        "workdir": memory.workdir,
        "importance": memory.importance,
        "use_count": memory.use_count,
        "created_at": store_time(memory.created_at),
        "updated_at": store_time(memory.updated_at),
        "last_used_at": memory.last_used_at.map(store_time),
    })
}
