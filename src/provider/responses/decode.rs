//! Reading Responses answers: `ResponsesDecoder` accumulates a streamed one event by event (text
//! and reasoning-summary deltas shown as they come; function calls by output item, their
//! arguments in pieces; each finished output item taken as the authority on its content), and
//! `parse_response` reads a whole response object through the same item handling. A
//! `response.failed` or in-band `error` becomes a typed error (a server error or rate limit is
//! retried like an HTTP 5xx or 429).

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use crate::provider::Completion;
use crate::provider::api_error::ApiErrorBody;
use crate::provider::limits::{
    PartialCall, check_argument_growth, check_index, finish_streamed_calls,
};
use crate::provider::transport::{StreamDecoder, excerpt};
use crate::provider::wire_error::{ended_early, read_body, read_event, reported};
use crate::schema::{Message, ProviderError, ProviderErrorKind, StreamChunk, ThinkingBlock, Usage};

/// The fields of a stream event this decoder reads; the hot ones (`type`, `delta`) borrowed.
#[derive(Deserialize)]
struct WireEvent<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(default, borrow)]
    delta: Option<Cow<'a, str>>,
    #[serde(default)]
    output_index: Option<u64>,
    #[serde(default)]
    summary_index: Option<u64>,
    #[serde(default)]
    item: Option<Value>,
    #[serde(default)]
    response: Option<Value>,
    /// An in-band `error` event's own fields.
    #[serde(default)]
    code: Option<Value>,
    #[serde(default)]
    message: Option<String>,
}

/// Accumulates one streamed response.
#[derive(Default)]
pub(crate) struct ResponsesDecoder {
    text: String,
    /// The reasoning summaries as they streamed (shown as thinking).
    summary: String,
    /// Finished reasoning items, replayed on the next request.
    reasoning: Vec<ThinkingBlock>,
    /// Function calls by output index.
    calls: BTreeMap<u32, PartialCall>,
    usage: Option<Usage>,
    /// Why the response ended incomplete, when it did.
    stop: Option<crate::schema::ModelStop>,
    complete: bool,
    /// Text that came only in finished items (no deltas), as a non-streaming server sends it.
    item_text: String,
    /// The provider's own searches (`web_search_call` items), replayed verbatim.
    searches: Vec<Value>,
    /// Chunks an absorbed item produced (a search shown), sent with the event's own.
    pending: Vec<StreamChunk>,
}

impl ResponsesDecoder {
    fn call(&mut self, output_index: Option<u64>) -> Result<&mut PartialCall, ProviderError> {
        let index = check_index("OpenAI", output_index.unwrap_or(0))?;
        Ok(self.calls.entry(index).or_default())
    }

    /// Takes a finished output item (from `response.output_item.done`, or a whole response).
    fn absorb_item(
        &mut self,
        output_index: Option<u64>,
        item: &Value,
    ) -> Result<(), ProviderError> {
        let text = |key: &str| item.get(key).and_then(Value::as_str).unwrap_or_default();
        match text("type") {
            "function_call" => {
                let (call_id, name, arguments) = (text("call_id"), text("name"), text("arguments"));
                let call = self.call(output_index)?;
                if !call_id.is_empty() {
                    call.id = call_id.to_owned();
                }
                if !name.is_empty() {
                    call.name = name.to_owned();
                }
                // The finished item holds the whole argument text: it wins over the deltas.
                if !arguments.is_empty() {
                    check_argument_growth("OpenAI", 0, arguments.len())?;
                    call.arguments = arguments.to_owned();
                }
            }
            "reasoning" => {
                let summary: Vec<&str> = item
                    .get("summary")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|part| part.get("text").and_then(Value::as_str))
                    .collect();
                let summary = summary.join("\n\n");
                match item.get("encrypted_content").and_then(Value::as_str) {
                    Some(encrypted) if !encrypted.is_empty() => {
                        self.reasoning.push(ThinkingBlock::Encrypted {
                            summary,
                            encrypted_content: encrypted.to_owned(),
                        })
                    }
                    // Without its encrypted content it cannot be replayed: kept for display.
                    _ if !summary.is_empty() => self.reasoning.push(ThinkingBlock::Thinking {
                        thinking: summary,
                        signature: String::new(),
                    }),
                    _ => {}
                }
            }
            "message" => {
                for part in item
                    .get("content")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    if part.get("type").and_then(Value::as_str) == Some("output_text")
                        && let Some(text) = part.get("text").and_then(Value::as_str)
                    {
                        self.item_text.push_str(text);
                    }
                }
            }
            "web_search_call" => {
                self.pending.extend(super::web_search::chunks(item));
                self.searches.push(item.clone());
            }
            _ => {}
        }
        Ok(())
    }

    fn absorb_usage(&mut self, response: &Value) {
        let Some(usage) = response.get("usage").filter(|u| u.is_object()) else {
            return;
        };
        let number = |v: &Value, key: &str| v.get(key).and_then(Value::as_u64).unwrap_or(0);
        let input = number(usage, "input_tokens");
        let cached = usage
            .get("input_tokens_details")
            .map_or(0, |d| number(d, "cached_tokens"))
            .min(input);
        self.usage = Some(Usage {
            input_tokens: input - cached,
            output_tokens: number(usage, "output_tokens"),
            cache_read_tokens: cached,
            cache_creation_tokens: 0,
        });
    }

    fn build(&mut self) -> Result<Completion, ProviderError> {
        let calls = finish_streamed_calls("OpenAI", std::mem::take(&mut self.calls))?;
        let text = if self.text.is_empty() {
            std::mem::take(&mut self.item_text)
        } else {
            std::mem::take(&mut self.text)
        };
        let mut message = Message::assistant(text);
        message.tool_calls = calls;
        message.thinking = std::mem::take(&mut self.reasoning);
        message.provider_blocks =
            super::web_search::provider_blocks(std::mem::take(&mut self.searches));
        if message.thinking.is_empty() && !self.summary.is_empty() {
            message.thinking.push(ThinkingBlock::Thinking {
                thinking: std::mem::take(&mut self.summary),
                signature: String::new(),
            });
        }
        Ok(Completion {
            message,
            usage: self.usage,
            stop: self.stop,
        })
    }
}

/// A failure the server reported (`response.failed`'s `error`, or an `error` event).
fn reported_error(code: Option<&str>, message: Option<&str>) -> ProviderError {
    let code = code.unwrap_or_default();
    let detail = ApiErrorBody {
        code: Some(code.to_owned()),
        error_type: None,
        message: message.map(str::to_owned),
    };
    let kind_of = |_: &ApiErrorBody| match code {
        "rate_limit_exceeded" | "rate_limit_error" => ProviderErrorKind::RateLimited,
        "server_error" | "server_is_overloaded" | "" => ProviderErrorKind::Server,
        "overloaded" | "overloaded_error" | "slow_down" => ProviderErrorKind::Overloaded,
        _ => ProviderErrorKind::InvalidRequest,
    };
    let label = if code.is_empty() { "error" } else { code };
    reported(
        "OpenAI",
        &detail,
        kind_of,
        label,
        message.unwrap_or("no message"),
    )
}

fn code_text(code: &Value) -> Option<&str> {
    code.as_str()
}

impl StreamDecoder for ResponsesDecoder {
    fn on_event(&mut self, data: &str, out: &mut Vec<StreamChunk>) -> Result<bool, ProviderError> {
        if data == "[DONE]" {
            return Ok(false);
        }
        let event: WireEvent<'_> = read_event("OpenAI", data)?;
        match event.kind.as_ref() {
            "response.output_text.delta" => {
                if let Some(delta) = event.delta.filter(|d| !d.is_empty()) {
                    self.text.push_str(&delta);
                    out.push(StreamChunk::TextDelta(delta.into_owned()));
                }
            }
            "response.reasoning_summary_text.delta" => {
                if let Some(delta) = event.delta.filter(|d| !d.is_empty()) {
                    self.summary.push_str(&delta);
                    out.push(StreamChunk::ThinkingDelta(delta.into_owned()));
                }
            }
            // A second summary part starts a new paragraph of the shown thinking.
            "response.reasoning_summary_part.added" if event.summary_index.unwrap_or(0) > 0 => {
                self.summary.push_str("\n\n");
                out.push(StreamChunk::ThinkingDelta("\n\n".into()));
            }
            "response.output_item.added" => {
                if let Some(item) = &event.item
                    && item.get("type").and_then(Value::as_str) == Some("function_call")
                {
                    let text = |key: &str| item.get(key).and_then(Value::as_str).unwrap_or("");
                    let (call_id, name) = (text("call_id").to_owned(), text("name").to_owned());
                    let call = self.call(event.output_index)?;
                    call.id = call_id;
                    call.name = name;
                }
            }
            "response.function_call_arguments.delta" => {
                if let Some(delta) = event.delta {
                    let call = self.call(event.output_index)?;
                    check_argument_growth("OpenAI", call.arguments.len(), delta.len())?;
                    call.arguments.push_str(&delta);
                }
            }
            "response.output_item.done" => {
                if let Some(item) = &event.item {
                    self.absorb_item(event.output_index, item)?;
                    out.append(&mut self.pending);
                }
            }
            "response.completed" | "response.incomplete" => {
                if let Some(response) = &event.response {
                    self.absorb_usage(response);
                    self.stop = incomplete_reason(response);
                }
                self.complete = true;
                return Ok(true);
            }
            "response.failed" => {
                let error = event.response.as_ref().and_then(|r| r.get("error"));
                let code = error.and_then(|e| e.get("code")).and_then(code_text);
                let message = error.and_then(|e| e.get("message")).and_then(Value::as_str);
                return Err(reported_error(code, message));
            }
            "error" => {
                let code = event.code.as_ref().and_then(code_text);
                return Err(reported_error(code, event.message.as_deref()));
            }
            _ => {}
        }
        Ok(false)
    }

    fn finish(&mut self) -> Result<Completion, ProviderError> {
        if !self.complete {
            return Err(ended_early(
                "OpenAI",
                "the answer was complete (no response.completed)",
            ));
        }
        self.build()
    }
}

/// A whole (non-streamed) response object.
pub(crate) fn parse_response(body: &[u8]) -> Result<Completion, ProviderError> {
    let response: Value = read_body("OpenAI", "a response that is not JSON", body)?;
    if response.get("status").and_then(Value::as_str) == Some("failed") {
        let error = response.get("error");
        let code = error.and_then(|e| e.get("code")).and_then(code_text);
        let message = error.and_then(|e| e.get("message")).and_then(Value::as_str);
        return Err(reported_error(code, message));
    }
    let Some(output) = response.get("output").and_then(Value::as_array) else {
        return Err(ProviderError::new(
            ProviderErrorKind::Protocol,
            format!(
                "OpenAI sent a response with no output: {}",
                excerpt(&String::from_utf8_lossy(body))
            ),
        ));
    };
    let mut decoder = ResponsesDecoder::default();
    for (index, item) in output.iter().enumerate() {
        decoder.absorb_item(Some(index as u64), item)?;
    }
    decoder.absorb_usage(&response);
    decoder.stop = incomplete_reason(&response);
    decoder.build()
}

/// Why a response ended incomplete (`incomplete_details.reason`), as a stop of the model.
fn incomplete_reason(response: &Value) -> Option<crate::schema::ModelStop> {
    let reason = response
        .get("incomplete_details")?
        .get("reason")?
        .as_str()?;
    crate::schema::ModelStop::from_reason(reason)
}
