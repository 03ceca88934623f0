//! `harness9 sessions`: stored sessions newest first, as a table or as JSON (CONTRACT.md).
//! Titles, names and snippets come from model and user text: the table strips terminal control
//! sequences from them (JSON escapes them by itself).

use std::io::Write;
use std::path::Path;

use serde_json::json;

use crate::config::SessionsArgs;
use crate::session::text::{age, now_ms, store_time};
use crate::session::{Catalogue, SessionHit, SessionSummary};

/// The most sessions listed.
const LIMIT: usize = 100_000;

/// Lists sessions; returns the exit status.
pub async fn run(home: &Path, workdir: &Path, args: SessionsArgs) -> u8 {
    let catalogue = match Catalogue::open(home) {
        Ok(catalogue) => catalogue,
        Err(failure) => {
            eprintln!("harness9: {failure}");
            return 1;
        }
    };
    let dir = workdir.display().to_string();
    let scope = (!args.all).then_some(dir.as_str());
    let hits = catalogue
        .find_sessions(args.search.as_deref().unwrap_or(""), scope, LIMIT)
        .await;
    let hits = match hits {
        Ok(hits) => hits,
        Err(error) => {
            eprintln!("harness9: {error}");
            return 1;
        }
    };
    let mut out = std::io::stdout().lock();
    let written = if args.json {
        let list: Vec<_> = hits
            .iter()
            .map(|hit| as_json(&hit.session, &hit.snippet))
            .collect();
        writeln!(out, "{}", serde_json::Value::Array(list))
    } else {
        write_table(&mut out, &hits, args.all, &dir)
    };
    if written.is_err() {
        return 1;
    }
    0
}

pub(crate) fn as_json(session: &SessionSummary, snippet: &str) -> serde_json::Value {
    let mut value = json!({
        "id": session.id,
        "name": session.name,
        "title": session.title,
        "workdir": session.workdir,
        "provider": session.provider,
        "model": session.model,
        "mode": session.mode,
        "created_at": store_time(session.created_at),
        "updated_at": store_time(session.updated_at),
        "messages": session.message_count,
        "input_tokens": session.totals.input_tokens,
        "output_tokens": session.totals.output_tokens,
        "cache_read_tokens": session.totals.cache_read_tokens,
        "cache_write_tokens": session.totals.cache_write_tokens,
        "cost_usd": session.totals.cost_usd,
    });
    if !snippet.is_empty() {
        value["match"] = json!(snippet);
    }
    value
}

fn write_table(
    out: &mut impl Write,
    hits: &[SessionHit],
    all: bool,
    workdir: &str,
) -> std::io::Result<()> {
    if hits.is_empty() {
        let scope = if all {
            String::new()
        } else {
            format!(" in {workdir} (--all shows every directory's)")
        };
        return writeln!(out, "No sessions{scope}.");
    }
    writeln!(out, "{:<12}  {:>9}  {:>5}  TITLE", "ID", "UPDATED", "MSGS")?;
    let now = now_ms();
    for hit in hits {
        let s = &hit.session;
        let mut label = s.label().to_owned();
        if all {
            label = format!("{label}  ({})", s.workdir);
        }
        if !hit.snippet.is_empty() && hit.snippet != s.label() {
            label = format!("{label}  — {}", hit.snippet);
        }
        let label = crate::terminal_text::sanitize(&label).replace(['\n', '\t'], " ");
        writeln!(
            out,
            "{:<12}  {:>9}  {:>5}  {label}",
            &s.id[..s.id.len().min(12)],
            age(now - s.updated_at),
            s.message_count
        )?;
    }
    Ok(())
}
