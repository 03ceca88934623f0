//! `--no-alt-screen`: on exit the conversation is printed as plain lines, so it stays in the
//! terminal's scrollback after the TUI has gone (as Codex does inline).

use super::transcript::Transcript;

/// Every entry of the transcript laid out at `width`, folded as on screen, without styles.
pub fn transcript_text(transcript: &mut Transcript, width: u16) -> String {
    let width = width.max(20);
    let height = transcript.total_height(width, false, 0);
    let (lines, _) = transcript.window(width, height, 0, false, 0);
    let mut out = String::new();
    for line in lines {
        let text: String = line.spans.iter().map(|s| s.content.as_ref()).collect();
        out.push_str(text.trim_end());
        out.push_str("\r\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::EntryKind;

    #[test]
    fn the_transcript_prints_as_plain_lines() {
        let mut transcript = Transcript::default();
        transcript.push(EntryKind::User("fix it".into()));
        transcript.push(EntryKind::Assistant {
            text: "**Done**: the parser trims.".into(),
            streaming: false,
        });
        let text = transcript_text(&mut transcript, 80);
        assert_eq!(text, "› fix it\r\n\r\nDone: the parser trims.\r\n");
    }
}
