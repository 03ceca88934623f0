//! OpenTelemetry export (the `otel` feature) from both front ends: spans reach an OTLP/HTTP
//! collector (a mock on 127.0.0.1) named by `OTEL_EXPORTER_OTLP_ENDPOINT`. `.ci/run` runs these
//! with `--features otel`.

use crate::exec::Run;
use crate::support::{MockLlm, Reply, Split, openai_text_sse};
use crate::tui::{Pty, env, harness9};

/// A collector that takes every export with 200.
fn collector() -> MockLlm {
    let collector = MockLlm::start_in_background();
    collector.set_fallback(Reply::Status {
        status: 200,
        body: String::new(),
        headers: Vec::new(),
    });
    collector
}

fn exported(collector: &MockLlm) -> bool {
    collector
        .requests()
        .iter()
        .any(|request| request.path == "/v1/traces")
}

#[test]
fn exec_exports_its_spans() {
    let mock = MockLlm::start_in_background();
    let collector = collector();
    let run = Run::new();
    mock.push(Reply::Sse {
        body: openai_text_sse("Hello."),
        split: Split::Whole,
    });
    let output = run
        .command(&mock, &["exec", "--json", "say hello"])
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", &collector.base_url)
        .output()
        .expect("harness9 runs");
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // The exporter flushes when harness9 ends, so the export has arrived by now.
    assert!(exported(&collector), "{:?}", collector.requests());
}

#[test]
fn the_tui_exports_its_spans() {
    let mock = MockLlm::start_in_background();
    let collector = collector();
    let run = Run::new();
    mock.push(Reply::Sse {
        body: openai_text_sse("Hello."),
        split: Split::Whole,
    });
    let mut environment = env(&run, &mock);
    environment.push(("OTEL_EXPORTER_OTLP_ENDPOINT", collector.base_url.clone()));
    // The shell says when harness9 has ended (and so flushed its exporter).
    let script = format!("'{}'; printf 'SHELL-DONE'; sleep 30", harness9().display());
    let mut pty = Pty::spawn(
        std::path::Path::new("/bin/sh"),
        &["-c", &script],
        &run.workdir,
        &environment,
    );
    pty.wait_for("Ask harness9 to do something");
    pty.send("say hello\r");
    pty.wait_for("Hello.");
    pty.wait_idle();
    pty.send("\x03");
    pty.wait_for("press Ctrl+C again to quit");
    pty.send("\x03");
    pty.wait_for("SHELL-DONE");
    assert!(exported(&collector), "{:?}", collector.requests());
}
