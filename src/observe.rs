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

/// Logs for a headless run: plain lines on stderr (`[engine] …`), `info` by default, `RUST_LOG`
/// to change it. Stdout stays for the answer or the JSON events.
pub fn init_stderr_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("harness9=info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .event_format(MessageOnly)
        .try_init();
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
