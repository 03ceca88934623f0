//! Pure text and time helpers front ends share with the core: the store's clock and how a
//! prompt becomes a title, the markers the core writes into messages (a summary, attached
//! files), the ranking of `@` mentions, the token estimate, and how an age reads. They do no
//! IO; a front end names them through the session, never through storage or context.

pub use crate::context::estimate_tokens;
pub use crate::context::mentions::{ATTACHMENTS_MARKER, rank, split_attachments};
pub use crate::images::named_like_image;
pub use crate::memory::{SUMMARY_MARKER, now_ms, store_time, title_from};

/// What `/init` asks of the model.
pub const INIT_PROMPT: &str = "Write an AGENTS.md file at the root of this project for coding agents \
working in it: what the project is, how it is laid out, how to build, test and lint it (the exact \
commands), and the conventions its code follows. Read the project first (README, build files, a \
few source files); keep it short and factual. If an AGENTS.md exists, improve it instead of \
starting over.";

/// A stored prompt as the user typed it: `/init` for the text `/init` sends (what `/rewind`
/// lists and puts back in the input box).
pub fn as_typed(prompt: &str) -> &str {
    if prompt.trim() == INIT_PROMPT {
        "/init"
    } else {
        prompt
    }
}

/// "just now", "5m ago", "3h ago", "2d ago".
pub fn age(ms: i64) -> String {
    let secs = ms.max(0) / 1000;
    match secs {
        0..=59 => "just now".into(),
        60..=3599 => format!("{}m ago", secs / 60),
        3600..=86_399 => format!("{}h ago", secs / 3600),
        _ => format!("{}d ago", secs / 86_400),
    }
}

/// A context window as models' pages name it: "128k", "200k", "1M" (GPT-4.1's 1,047,576).
pub fn window_size(tokens: u64) -> String {
    let (value, unit) = if tokens >= 1_000_000 {
        (tokens as f64 / 1e6, "M")
    } else if tokens >= 1000 {
        (tokens as f64 / 1e3, "k")
    } else {
        return tokens.to_string();
    };
    let rounded = (value * 10.0).round() / 10.0;
    if rounded.fract() == 0.0 || rounded >= 100.0 {
        format!("{}{unit}", rounded.round())
    } else {
        format!("{rounded:.1}{unit}")
    }
}

#[cfg(test)]
mod tests {
    use super::{INIT_PROMPT, age, as_typed, window_size};

    /// Issue 32 point 8: rewinding to an `/init` prompt puts `/init` back.
    #[test]
    fn the_init_prompt_reads_as_typed() {
        assert_eq!(as_typed(INIT_PROMPT), "/init");
        assert_eq!(as_typed("fix the parser"), "fix the parser");
    }

    /// Issue 32: `/model` said "1047576 tokens".
    #[test]
    fn a_window_reads_as_its_model_page_says() {
        assert_eq!(window_size(1_047_576), "1M");
        assert_eq!(window_size(128_000), "128k");
        assert_eq!(window_size(200_000), "200k");
        assert_eq!(window_size(1_500_000), "1.5M");
        assert_eq!(window_size(8_192), "8.2k");
        assert_eq!(window_size(900), "900");
    }

    #[test]
    fn an_age_reads_in_the_largest_whole_unit() {
        assert_eq!(age(-5), "just now");
        assert_eq!(age(59_999), "just now");
        assert_eq!(age(60_000), "1m ago");
        assert_eq!(age(3 * 3_600_000 + 1), "3h ago");
        assert_eq!(age(2 * 86_400_000), "2d ago");
    }
}
