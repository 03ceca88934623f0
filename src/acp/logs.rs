//! The agent's log: stdout carries the protocol only and an editor rarely shows stderr, so log
//! lines go to `$HARNESS9_HOME/logs/acp.log` (one file a day).

use std::path::Path;

/// Keeps the log writer alive; dropping it flushes what is queued.
pub struct Logs {
    _writer: tracing_appender::non_blocking::WorkerGuard,
}

/// Lines waiting for the writer's thread at most (the default queue is 4 MB resident).
const QUEUE_LINES: usize = 4096;

/// Starts file logging under `home`; `None` when the folder cannot be made (then nothing is
/// logged: stdout must stay the protocol's).
pub fn init(home: &Path) -> Option<Logs> {
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;

    let dir = home.join("logs");
    crate::private_home::create_dir(&dir).ok()?;
    let (writer, guard) = tracing_appender::non_blocking::NonBlockingBuilder::default()
        .buffered_lines_limit(QUEUE_LINES)
        .finish(tracing_appender::rolling::daily(&dir, "acp.log"));
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("harness9=info"));
    tracing_subscriber::registry()
        .with(filter)
        .with(
            tracing_subscriber::fmt::layer()
                .with_writer(writer)
                .with_ansi(false),
        )
        .try_init()
        .ok()?;
    Some(Logs { _writer: guard })
}
