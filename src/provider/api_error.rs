//! What a provider's error answer means: the `error.code`, `error.type` and `error.message` of
//! either protocol's error body, the status and body classified into a `ProviderErrorKind`
//! (the "context too long" refusal among them), and the server's `retry-after`.

use std::time::Duration;

use reqwest::header::HeaderMap;

use crate::schema::ProviderErrorKind;

/// Maps an HTTP status and the provider's parsed error body to a kind.
pub(crate) fn classify_status(status: u16, detail: &ApiErrorBody) -> ProviderErrorKind {
    if detail.is_context_too_long() && (400..500).contains(&status) && status != 429 {
        return ProviderErrorKind::ContextTooLong;
    }
    match (status, detail.error_type.as_deref()) {
        (_, Some("overloaded_error")) | (529, _) => ProviderErrorKind::Overloaded,
        (429, _) => ProviderErrorKind::RateLimited,
        (408, _) | (500..=599, _) => ProviderErrorKind::Server,
        (401 | 403, _) => ProviderErrorKind::Auth,
        _ => ProviderErrorKind::InvalidRequest,
    }
}

/// The provider's `error.code`, `error.type` and `error.message`, from either protocol's body.
#[derive(Debug, Default)]
pub(crate) struct ApiErrorBody {
    /// OpenAI's machine-readable reason (`invalid_api_key`, `context_length_exceeded`).
    pub code: Option<String>,
    /// Both protocols' error class (`invalid_request_error`, `overloaded_error`).
    pub error_type: Option<String>,
    pub message: Option<String>,
}

/// OpenAI's `error.code` for a prompt that does not fit the model's window.
const OPENAI_CONTEXT_CODE: &str = "context_length_exceeded";
/// How Anthropic's `invalid_request_error` message starts when the prompt does not fit.
const ANTHROPIC_CONTEXT_MESSAGE: &str = "prompt is too long";

impl ApiErrorBody {
    pub fn parse(body: &[u8]) -> Self {
        let Ok(value) = serde_json::from_slice::<serde_json::Value>(body) else {
            return Self::default();
        };
        Self::from_value(&value)
    }

    /// Both OpenAI (`{"error": {...}}`) and Anthropic (`{"type": "error", "error": {...}}`) nest
    /// the details under `error`.
    pub fn from_value(value: &serde_json::Value) -> Self {
        let error = value.get("error").unwrap_or(value);
        let text = |key: &str| error.get(key).and_then(|v| v.as_str()).map(str::to_owned);
        ApiErrorBody {
            code: text("code"),
            error_type: text("type"),
            message: text("message"),
        }
    }

    /// The most precise name of the error: OpenAI's `code` before its `type`.
    pub fn label(&self) -> Option<&str> {
        self.code.as_deref().or(self.error_type.as_deref())
    }

    /// The server refused the prompt as longer than the model's context window: OpenAI says so
    /// by its `code`; Anthropic by an `invalid_request_error` whose message says the prompt is
    /// too long (it has no more specific type).
    pub fn is_context_too_long(&self) -> bool {
        if self.code.as_deref() == Some(OPENAI_CONTEXT_CODE) {
            return true;
        }
        self.error_type.as_deref() == Some("invalid_request_error")
            && self.message.as_deref().is_some_and(|message| {
                message
                    .trim_start()
                    .get(..ANTHROPIC_CONTEXT_MESSAGE.len())
                    .is_some_and(|start| start.eq_ignore_ascii_case(ANTHROPIC_CONTEXT_MESSAGE))
            })
    }
}

/// `retry-after-ms` (OpenAI) or `retry-after` in seconds.
pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let number = |name: &str| {
        headers
            .get(name)?
            .to_str()
            .ok()?
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && *v >= 0.0)
    };
    if let Some(ms) = number("retry-after-ms") {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    number("retry-after").map(Duration::from_secs_f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_are_classified() {
        let none = ApiErrorBody::default();
        assert_eq!(classify_status(429, &none), ProviderErrorKind::RateLimited);
        assert_eq!(classify_status(529, &none), ProviderErrorKind::Overloaded);
        let overloaded = ApiErrorBody {
            error_type: Some("overloaded_error".into()),
            ..ApiErrorBody::default()
        };
        assert_eq!(
            classify_status(500, &overloaded),
            ProviderErrorKind::Overloaded
        );
        assert_eq!(classify_status(503, &none), ProviderErrorKind::Server);
        assert_eq!(classify_status(408, &none), ProviderErrorKind::Server);
        assert_eq!(classify_status(401, &none), ProviderErrorKind::Auth);
        assert_eq!(
            classify_status(400, &none),
            ProviderErrorKind::InvalidRequest
        );
        assert!(!ProviderErrorKind::Auth.is_transient());
    }

    #[test]
    fn a_context_refusal_is_recognised_from_the_parsed_body() {
        let openai = br#"{"error": {"message": "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.", "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}}"#;
        let anthropic = br#"{"type": "error", "error": {"type": "invalid_request_error", "message": "prompt is too long: 208310 tokens > 200000 maximum"}}"#;
        for body in [&openai[..], &anthropic[..]] {
            let detail = ApiErrorBody::parse(body);
            assert!(detail.is_context_too_long());
            assert_eq!(
                classify_status(400, &detail),
                ProviderErrorKind::ContextTooLong
            );
            assert!(!ProviderErrorKind::ContextTooLong.is_transient());
        }
        // The words alone, in another error class or field, are not the refusal.
        for body in [
            &br#"{"error": {"type": "invalid_request_error", "message": "max_tokens: prompt is too long is not a number"}}"#[..],
            br#"{"error": {"type": "api_error", "message": "prompt is too long"}}"#,
            br#"{"error": {"message": "context_length_exceeded", "type": "invalid_request_error"}}"#,
            b"prompt is too long",
        ] {
            let detail = ApiErrorBody::parse(body);
            assert!(!detail.is_context_too_long(), "{}", String::from_utf8_lossy(body));
        }
    }

    #[test]
    fn error_bodies_of_both_providers_parse() {
        let openai = br#"{"error": {"message": "Incorrect API key", "type": "invalid_request_error", "param": null, "code": "invalid_api_key"}}"#;
        let parsed = ApiErrorBody::parse(openai);
        assert_eq!(parsed.label(), Some("invalid_api_key"));
        assert_eq!(parsed.message.as_deref(), Some("Incorrect API key"));
        let anthropic =
            br#"{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}"#;
        let parsed = ApiErrorBody::parse(anthropic);
        assert_eq!(parsed.label(), Some("overloaded_error"));
        assert_eq!(parsed.message.as_deref(), Some("Overloaded"));
    }

    #[test]
    fn retry_after_headers_parse() {
        let mut headers = HeaderMap::new();
        headers.insert("retry-after", "2".parse().unwrap());
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(2)));
        headers.insert("retry-after-ms", "150".parse().unwrap());
        assert_eq!(retry_after(&headers), Some(Duration::from_millis(150)));
    }
}
