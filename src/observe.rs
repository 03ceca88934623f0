//! Observability: the `EngineObserver` the loop calls at the start and end of an interaction and
//! of each turn (design §6.1). Each start returns the span that the work under it inherits, so a
//! subscriber (a log file, or OpenTelemetry) sees interaction > turn > llm call / tool call.

use tracing::Span;

/// Hooks on the engine's lifecycle. Every method has a no-op default.
pub trait EngineObserver: Send + Sync {
    /// A run begins; the returned span is the parent of its turns.
    fn on_interaction_start(&self, _session_id: &str, _prompt: &str) -> Span {
        Span::none()
    }

    fn on_interaction_end(&self, _span: &Span, _turns: u32, _error: Option<&str>) {}

    /// A turn begins; the returned span is the parent of its model call and tool calls.
    fn on_turn_start(&self, _parent: &Span, _turn: u32) -> Span {
        Span::none()
    }

    fn on_turn_end(&self, _span: &Span, _turn: u32, _has_tool_calls: bool) {}
}

/// Observes nothing, at no cost.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoopObserver;

impl EngineObserver for NoopObserver {}

/// Opens `tracing` spans: `interaction` (session id), `turn` (number), and records outcomes on
/// them. Whatever subscriber is installed receives the tree.
#[derive(Debug, Default, Clone, Copy)]
pub struct TracingObserver;

impl EngineObserver for TracingObserver {
    fn on_interaction_start(&self, session_id: &str, prompt: &str) -> Span {
        tracing::info_span!(
            "interaction",
            session_id = %session_id,
            prompt_chars = prompt.chars().count(),
            turns = tracing::field::Empty,
            error = tracing::field::Empty,
        )
    }

    fn on_interaction_end(&self, span: &Span, turns: u32, error: Option<&str>) {
        span.record("turns", turns);
        if let Some(error) = error {
            span.record("error", error);
        }
    }

    fn on_turn_start(&self, parent: &Span, turn: u32) -> Span {
        tracing::info_span!(parent: parent, "turn", turn, has_tool_calls = tracing::field::Empty)
    }

    fn on_turn_end(&self, span: &Span, _turn: u32, has_tool_calls: bool) {
        span.record("has_tool_calls", has_tool_calls);
    }
}

/// Keeps the log writers and exporters alive; dropping it flushes them.
#[must_use = "dropping the guard stops and flushes the exporters"]
pub struct LogGuard {
    #[cfg(feature = "otel")]
    _otel: Option<otel::Guard>,
}

/// Logs for a headless run: plain lines on stderr (`[engine] …`), `info` by default, `RUST_LOG`
/// to change it. Stdout stays for the answer or the JSON events. With the `otel` feature and
/// `OTEL_EXPORTER_OTLP_ENDPOINT` set, spans are exported too.
pub fn init_stderr_logging() -> LogGuard {
    init_stderr_logging_from(LogLevel::Info)
}

/// The level of the stderr log when `RUST_LOG` does not set one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogLevel {
    /// Every `[engine] …` line: turns, tool calls, retries.
    Info,
    /// Errors only: `exec`'s text mode says what matters itself (notices, refusals, retries,
    /// errors, the closing line) and shows the log with `-v` (issue 32 point 17).
    Errors,
}

/// `init_stderr_logging` with `default` as the level when `RUST_LOG` is not set.
pub fn init_stderr_logging_from(default: LogLevel) -> LogGuard {
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;

    let default = match default {
        LogLevel::Info => "harness9=info",
        LogLevel::Errors => "harness9=error",
    };
    use tracing_subscriber::Layer;

    let filter = |default: &str| {
        tracing_subscriber::EnvFilter::try_from_default_env()
            .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default))
    };
    // The level is the terminal's: a quiet stderr still exports every span it would at info.
    let stderr = tracing_subscriber::fmt::layer()
        .with_writer(|| CleanStderr)
        .with_ansi(false)
        .event_format(MessageOnly)
        .with_filter(filter(default));
    let registry = tracing_subscriber::registry().with(stderr);
    #[cfg(feature = "otel")]
    {
        let (layer, guard) = otel::layer().unzip();
        let _ = registry
            .with(layer.with_filter(filter("harness9=info")))
            .try_init();
        LogGuard { _otel: guard }
    }
    #[cfg(not(feature = "otel"))]
    {
        let _ = registry.try_init();
        LogGuard {}
    }
}

/// Keeps a full-screen front end's log writer (and, with the `otel` feature, its span exporter)
/// alive; dropping it flushes them.
pub struct FileLogs {
    _writer: tracing_appender::non_blocking::WorkerGuard,
    #[cfg(feature = "otel")]
    _otel: Option<otel::Guard>,
}

/// Log lines waiting for the file writer's thread at most.
const LOG_QUEUE_LINES: usize = 8192;

/// File logs in `<home>/logs/` (made 0700 by `private_home`: a full-screen front end never logs
/// to the terminal), and with the `otel` feature and `OTEL_EXPORTER_OTLP_ENDPOINT` set, the
/// engine's spans exported as `exec` does.
pub fn init_file_logging(home: &std::path::Path) -> Option<FileLogs> {
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;

    let dir = home.join("logs");
    crate::private_home::create_dir(&dir).ok()?;
    let appender = tracing_appender::rolling::daily(&dir, "harness9.log");
    // The writer's queue is allocated (and touched) whole at the start: the default of 128,000
    // lines is 4 MB resident for the whole session. A TUI logs a few lines a turn, and a file
    // drains them in microseconds; a burst beyond the queue drops lines, as it did before.
    let (writer, guard) = tracing_appender::non_blocking::NonBlockingBuilder::default()
        .buffered_lines_limit(LOG_QUEUE_LINES)
        .finish(appender);
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("harness9=info"));
    let layer = tracing_subscriber::fmt::layer()
        .with_writer(writer)
        .with_ansi(false)
        .with_target(false);
    let registry = tracing_subscriber::registry().with(filter).with(layer);
    #[cfg(feature = "otel")]
    {
        let (otel, otel_guard) = otel::layer().unzip();
        registry.with(otel).try_init().ok()?;
        Some(FileLogs {
            _writer: guard,
            _otel: otel_guard,
        })
    }
    #[cfg(not(feature = "otel"))]
    {
        registry.try_init().ok()?;
        Some(FileLogs { _writer: guard })
    }
}

/// Stderr with terminal control sequences stripped: log lines carry provider errors, tool
/// names and paths, which a model or a server chose.
struct CleanStderr;

impl std::io::Write for CleanStderr {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let clean = crate::terminal_text::sanitize(&String::from_utf8_lossy(buf));
        std::io::stderr().write_all(clean.as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

/// Formats an event as its message and fields only: the `[engine] key=value` lines of design
/// §6.2, without timestamps, levels or span context.
struct MessageOnly;

impl<S, N> tracing_subscriber::fmt::FormatEvent<S, N> for MessageOnly
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
    N: for<'a> tracing_subscriber::fmt::FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &tracing_subscriber::fmt::FmtContext<'_, S, N>,
        mut writer: tracing_subscriber::fmt::format::Writer<'_>,
        event: &tracing::Event<'_>,
    ) -> std::fmt::Result {
        ctx.field_format().format_fields(writer.by_ref(), event)?;
        writeln!(writer)
    }
}

#[cfg(feature = "otel")]
pub mod otel {
    //! OTLP/HTTP export of the engine's spans, configured by the standard `OTEL_EXPORTER_OTLP_*`
    //! variables.

    use opentelemetry::trace::TracerProvider as _;
    use opentelemetry_sdk::trace::SdkTracerProvider;

    /// Shuts the provider down (flushing the last spans) when dropped.
    pub struct Guard(SdkTracerProvider);

    impl Drop for Guard {
        fn drop(&mut self) {
            let _ = self.0.shutdown();
        }
    }

    /// The layer that feeds spans to OTLP, when an endpoint is configured.
    pub fn layer<S>() -> Option<(impl tracing_subscriber::Layer<S>, Guard)>
    where
        S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
    {
        let configured = [
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
        ]
        .iter()
        .any(|name| std::env::var_os(name).is_some_and(|v| !v.is_empty()));
        if !configured {
            return None;
        }
        let exporter = match opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .build()
        {
            Ok(exporter) => exporter,
            Err(error) => {
                eprintln!("harness9: OpenTelemetry export is off: {error}");
                return None;
            }
        };
        let resource = opentelemetry_sdk::Resource::builder()
            .with_service_name("harness9")
            .build();
        let provider = SdkTracerProvider::builder()
            .with_batch_exporter(exporter)
            .with_resource(resource)
            .build();
        let tracer = provider.tracer("harness9");
        Some((
            tracing_opentelemetry::layer().with_tracer(tracer),
            Guard(provider),
        ))
    }
}
