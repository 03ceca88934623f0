//! Pure text and time helpers front ends share with the core: the store's clock and how a
//! prompt becomes a title, the markers the core writes into messages (a summary, attached
//! files), the ranking of `@` mentions, the token estimate, and how an age reads. They do no
//! IO; a front end names them through the session, never through storage or context.

pub use crate::context::estimate_tokens;
pub use crate::context::mentions::{ATTACHMENTS_MARKER, rank, split_attachments};
pub use crate::images::named_like_image;
pub use crate::memory::{SUMMARY_MARKER, now_ms, store_time, title_from};

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

#[cfg(test)]
mod tests {
    use super::age;

    #[test]
    fn an_age_reads_in_the_largest_whole_unit() {
        assert_eq!(age(-5), "just now");
        assert_eq!(age(59_999), "just now");
        assert_eq!(age(60_000), "1m ago");
        assert_eq!(age(3 * 3_600_000 + 1), "3h ago");
        assert_eq!(age(2 * 86_400_000), "2d ago");
    }
}
