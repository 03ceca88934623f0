//! When and how long to wait before another attempt: exponential backoff with jitter, bounded,
//! honouring the server's `retry-after`, and cancellable while it sleeps.

use std::future::Future;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::schema::{ProviderError, RetryNotice};

/// How a provider retries transient failures.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetryPolicy {
    /// Attempts in all, the first included.
    pub max_attempts: u32,
    pub base_delay: Duration,
    pub max_delay: Duration,
    /// The longest `retry-after` honoured; a server asking for more gets this instead.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 4,
            base_delay: Duration::from_millis(1000),
            max_delay: Duration::from_secs(30),
            max_retry_after: Duration::from_secs(120),
        }
    }
}

impl RetryPolicy {
    /// The wait before `next_attempt` (2 for the first retry).
    pub fn delay(&self, next_attempt: u32, retry_after: Option<Duration>) -> Duration {
        if let Some(after) = retry_after {
            return after.min(self.max_retry_after);
        }
        let exponent = next_attempt.saturating_sub(2).min(16);
        let backoff = self
            .base_delay
            .saturating_mul(1 << exponent)
            .min(self.max_delay);
        // ±20% jitter so that many clients hit by the same outage do not retry in lockstep.
        let jitter = 0.8 + fastrand::f64() * 0.4;
        backoff.mul_f64(jitter)
    }
}

/// A failed attempt, and whether it had already emitted output (which forbids a silent retry).
pub(crate) struct AttemptError {
    pub error: ProviderError,
    pub emitted: bool,
}

impl From<ProviderError> for AttemptError {
    fn from(error: ProviderError) -> Self {
        AttemptError {
            error,
            emitted: false,
        }
    }
}

/// Runs `attempt` until it succeeds, fails for good, or the policy's attempts are spent.
///
/// A transient failure before any output is retried after `notify` has been told why and for how
/// long; one after output is returned marked `retryable`, so the caller can restart its turn.
pub(crate) async fn with_retries<T, F, Fut>(
    policy: &RetryPolicy,
    cancel: &CancellationToken,
    mut notify: impl FnMut(RetryNotice),
    mut attempt: F,
) -> Result<T, ProviderError>
where
    F: FnMut(u32) -> Fut,
    Fut: Future<Output = Result<T, AttemptError>>,
{
    let max_attempts = policy.max_attempts.max(1);
    let mut number = 1;
    loop {
        let outcome = tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(ProviderError::cancelled()),
            outcome = attempt(number) => outcome,
        };
        let AttemptError { mut error, emitted } = match outcome {
            Ok(value) => return Ok(value),
            Err(failure) => failure,
        };
        if !error.kind.is_transient() {
            return Err(error);
        }
        if emitted {
            error.retryable = true;
            return Err(error);
        }
        if number >= max_attempts {
            error.message = format!("{} (gave up after {number} attempts)", error.message);
            return Err(error);
        }
        number += 1;
        let delay = policy.delay(number, error.retry_after);
        notify(RetryNotice {
            attempt: number,
            max_attempts,
            reason: error.message.clone(),
            delay,
        });
        tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(ProviderError::cancelled()),
            _ = tokio::time::sleep(delay) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_and_is_capped() {
        let policy = RetryPolicy {
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(300),
            ..RetryPolicy::default()
        };
        let second = policy.delay(2, None);
        assert!(second >= Duration::from_millis(80) && second <= Duration::from_millis(120));
        let third = policy.delay(3, None);
        assert!(third >= Duration::from_millis(160) && third <= Duration::from_millis(240));
        assert!(policy.delay(10, None) <= Duration::from_millis(360));
    }

    #[test]
    fn retry_after_wins_but_is_bounded() {
        let policy = RetryPolicy {
            max_retry_after: Duration::from_secs(5),
            ..RetryPolicy::default()
        };
        assert_eq!(
            policy.delay(2, Some(Duration::from_secs(2))),
            Duration::from_secs(2)
        );
        assert_eq!(
            policy.delay(2, Some(Duration::from_secs(600))),
            Duration::from_secs(5)
        );
    }
}
