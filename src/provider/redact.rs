//! The one redaction every provider error passes through before it is shown, logged or stored:
//! the API keys this process was given (and any run of 12 or more of their characters, so a
//! server echoing a truncated or altered key shows none of it), and text shaped like common
//! keys (`sk-…`, `AKIA…`, `ghp_…`, `xoxb-…`, the token after `Bearer`).

use std::collections::HashSet;
use std::sync::{PoisonError, RwLock};

/// What a redacted secret reads as.
pub const REDACTED: &str = "[redacted]";
/// The shortest run of a known key's characters that gives it away.
const MIN_KEY_FRAGMENT: usize = 12;

/// Every key handed to a provider in this process.
static KNOWN_KEYS: RwLock<Vec<String>> = RwLock::new(Vec::new());

/// Adds `key` to the keys every later redaction removes.
pub fn remember_key(key: &str) {
    if key.trim().is_empty() {
        return;
    }
    let mut keys = KNOWN_KEYS.write().unwrap_or_else(PoisonError::into_inner);
    if !keys.iter().any(|known| known == key) {
        keys.push(key.to_owned());
    }
}

/// `text` with the known keys, fragments of them, and key-shaped tokens replaced by `[redacted]`.
pub fn redact(text: &str) -> String {
    let keys = KNOWN_KEYS.read().unwrap_or_else(PoisonError::into_inner);
    let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
    redact_with(text, &keys)
}

/// `redact` against an explicit list of keys.
pub fn redact_with(text: &str, keys: &[&str]) -> String {
    let mut text = text.to_owned();
    // Keys too short (or too unusual) to look for by fragment are at least removed whole.
    for key in keys {
        if key.len() >= 4 && text.contains(key) {
            text = text.replace(key, REDACTED);
        }
    }
    let bytes = text.as_bytes();
    let mut ranges = fragment_ranges(bytes, keys);
    ranges.extend(shape_ranges(bytes));
    if ranges.is_empty() {
        return text;
    }
    ranges.sort_unstable();
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (start, end) in ranges {
        if end <= at {
            continue;
        }
        let start = start.max(at);
        if start > at {
            out.push_str(&text[at..start]);
        }
        if !out.ends_with(REDACTED) || start > at {
            out.push_str(REDACTED);
        }
        at = end;
    }
    out.push_str(&text[at..]);
    out
}

/// A byte of the characters keys and tokens are made of.
fn is_token_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'-' || byte == b'_'
}

/// The whole token around `start..end`.
fn widen(bytes: &[u8], mut start: usize, mut end: usize) -> (usize, usize) {
    while start > 0 && is_token_byte(bytes[start - 1]) {
        start -= 1;
    }
    while end < bytes.len() && is_token_byte(bytes[end]) {
        end += 1;
    }
    (start, end)
}

/// Tokens holding 12 or more consecutive characters of a known key.
fn fragment_ranges(bytes: &[u8], keys: &[&str]) -> Vec<(usize, usize)> {
    let windows: HashSet<&[u8]> = keys
        .iter()
        .filter(|key| key.is_ascii())
        .flat_map(|key| key.as_bytes().windows(MIN_KEY_FRAGMENT))
        .collect();
    if windows.is_empty() {
        return Vec::new();
    }
    bytes
        .windows(MIN_KEY_FRAGMENT)
        .enumerate()
        .filter(|(_, window)| windows.contains(window))
        .map(|(start, _)| widen(bytes, start, start + MIN_KEY_FRAGMENT))
        .collect()
}

/// Prefixes of well-known key formats, and how long a token with one must be to count.
const SHAPES: &[(&str, usize)] = &[
    ("sk-", 20),
    ("ghp_", 20),
    ("gho_", 20),
    ("ghu_", 20),
    ("ghs_", 20),
    ("ghr_", 20),
    ("github_pat_", 30),
    ("xoxb-", 15),
    ("xoxp-", 15),
    ("xoxa-", 15),
    ("xoxr-", 15),
    ("xoxs-", 15),
    ("xoxe-", 15),
    ("AKIA", 20),
    ("ASIA", 20),
];

/// Key-shaped tokens, and the credential after `Bearer`.
fn shape_ranges(bytes: &[u8]) -> Vec<(usize, usize)> {
    let mut ranges = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        if !is_token_byte(bytes[at]) {
            at += 1;
            continue;
        }
        let start = at;
        while at < bytes.len() && is_token_byte(bytes[at]) {
            at += 1;
        }
        let token = &bytes[start..at];
        if let Some(offset) = shaped_key_start(token) {
            ranges.push((start + offset, at));
        }
        if token.eq_ignore_ascii_case(b"bearer")
            && let Some(range) = bearer_credential(bytes, at)
        {
            ranges.push(range);
        }
    }
    ranges
}

/// Where in `token` a key of a known shape starts (at the token's start or after a non-letter).
fn shaped_key_start(token: &[u8]) -> Option<usize> {
    (0..token.len()).find(|&offset| {
        let rest = &token[offset..];
        let at_boundary = offset == 0 || !token[offset - 1].is_ascii_alphanumeric();
        at_boundary
            && SHAPES.iter().any(|(prefix, min_len)| {
                rest.starts_with(prefix.as_bytes())
                    && rest.len() >= *min_len
                    && (!prefix.starts_with('A')
                        || rest[..20]
                            .iter()
                            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit()))
            })
    })
}

/// The credential that follows `Bearer` and its spaces at `after`.
fn bearer_credential(bytes: &[u8], after: usize) -> Option<(usize, usize)> {
    let mut start = after;
    while start < bytes.len() && (bytes[start] == b' ' || bytes[start] == b'\t') {
        start += 1;
    }
    if start == after {
        return None;
    }
    let mut end = start;
    while end < bytes.len()
        && bytes[end].is_ascii_graphic()
        && !matches!(bytes[end], b'"' | b'\'' | b',' | b';')
    {
        end += 1;
    }
    (end - start >= 8).then_some((start, end))
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "sk-test-secret-0123456789abcdef";

    #[test]
    fn the_key_and_its_fragments_are_removed() {
        let truncated = &KEY[..18];
        let shown = redact_with(&format!("Incorrect API key provided: {truncated}."), &[KEY]);
        assert_eq!(shown, "Incorrect API key provided: [redacted].");

        let mut altered = KEY.to_owned();
        altered.replace_range(10..11, "X");
        let shown = redact_with(&format!("key '{altered}' is wrong"), &[KEY]);
        assert_eq!(shown, "key '[redacted]' is wrong");

        // A fragment in the middle of a plain-looking word still goes.
        let inner = &KEY[5..25];
        let shown = redact_with(&format!("x={inner}"), &["zz-not-this-key", KEY]);
        assert_eq!(shown, "x=[redacted]");
    }

    #[test]
    fn key_shaped_tokens_are_removed() {
        let cases = [
            ("sk-ant-api03-AbCdEfGhIjKlMnOpQrSt", "[redacted]"),
            ("sk-proj-abcdefghijklmnopqrstuv", "[redacted]"),
            ("id AKIAIOSFODNN7EXAMPLE here", "id [redacted] here"),
            (
                "token=ghp_0123456789abcdefghijABCDEFGHIJ",
                "token=[redacted]",
            ),
            ("slack xoxb-1234-5678-abcdefgh", "slack [redacted]"),
            (
                "Authorization: Bearer abc.def-ghi/jkl=, next",
                "Authorization: Bearer [redacted], next",
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(redact_with(text, &[]), expected, "{text}");
        }
    }

    #[test]
    fn ordinary_text_is_left_alone() {
        for text in [
            "This model's maximum context length is 128000 tokens.",
            "risk-free ask-me task-list sk-short",
            "Bearer token missing",
            "AKIA is a prefix",
            "stream cut mid-answer: connection reset",
        ] {
            assert_eq!(redact_with(text, &[KEY]), text);
        }
    }

    #[test]
    fn remembered_keys_are_redacted_everywhere() {
        let key = "remembered-key-Zq8w7e6r5t4y3u2i";
        remember_key(key);
        let shown = redact(&format!("echo {} end", &key[3..20]));
        assert_eq!(shown, "echo [redacted] end");
    }
}
