/// The length of the longest word in `text`.
pub fn longest(text: &str) -> usize {
    text.split_whitespace().map(|w| w.len()).max().unwrap_or(0) as i32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_longest() {
        assert_eq!(longest("a bb ccc"), 3);
        assert_eq!(longest(""), 0);
    }
}
