//! The colours for a dark or a light terminal. The theme comes from `--theme` or the user's
//! settings, else from the terminal: `COLORFGBG` when it is set, else its background colour
//! asked with OSC 11 (a DA1 query sent after it ends the wait at once on terminals that do not
//! answer OSC 11), else dark. Only foreground colours that read on the chosen background are
//! handed out; syntect's theme follows.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use ratatui::style::Color;

pub use crate::session::launch::Theme;

static LIGHT: AtomicBool = AtomicBool::new(false);

/// How long the terminal has to answer the background query.
const QUERY_WAIT: Duration = Duration::from_millis(100);

pub fn set(theme: Theme) {
    LIGHT.store(theme == Theme::Light, Ordering::Relaxed);
}

pub fn current() -> Theme {
    if LIGHT.load(Ordering::Relaxed) {
        Theme::Light
    } else {
        Theme::Dark
    }
}

fn light() -> bool {
    LIGHT.load(Ordering::Relaxed)
}

/// Names, prompts, links, the spinner.
pub fn accent() -> Color {
    if light() { Color::Blue } else { Color::Cyan }
}

/// Warnings, retries, inline code, the command of an approval.
pub fn warn() -> Color {
    // Yellow on white cannot be read: a dark orange from the 256-colour palette instead.
    if light() {
        Color::Indexed(130)
    } else {
        Color::Yellow
    }
}

/// Done marks and added lines.
pub fn ok() -> Color {
    if light() {
        Color::Indexed(28)
    } else {
        Color::Green
    }
}

/// A tool's output.
pub fn output() -> Color {
    if light() { Color::Reset } else { Color::Gray }
}

/// The theme `COLORFGBG` names ("15;0": light text on black), if it is set and readable.
pub fn from_colorfgbg(value: &str) -> Option<Theme> {
    let background: u8 = value.rsplit(';').next()?.trim().parse().ok()?;
    // The 16 ANSI colours: 7 (white-grey) and 9–15 are light backgrounds.
    Some(if background == 7 || (9..=15).contains(&background) {
        Theme::Light
    } else {
        Theme::Dark
    })
}

/// The theme an OSC 11 answer (`ESC ] 11 ; rgb:RRRR/GGGG/BBBB`) describes, by the background's
/// luminance.
pub fn from_osc11(reply: &[u8]) -> Option<Theme> {
    let text = std::str::from_utf8(reply).ok()?;
    let rgb = &text[text.find("rgb:")? + 4..];
    let channel = |part: &str| -> Option<f64> {
        let hex: String = part.chars().take_while(char::is_ascii_hexdigit).collect();
        let value = u32::from_str_radix(&hex, 16).ok()?;
        let max = (1u32 << (4 * hex.len().min(4))) - 1;
        Some(f64::from(value) / f64::from(max.max(1)))
    };
    let mut parts = rgb.split('/');
    let (r, g, b) = (
        channel(parts.next()?)?,
        channel(parts.next()?)?,
        channel(parts.next()?)?,
    );
    let luminance = 0.2126 * r + 0.7152 * g + 0.0722 * b;
    Some(if luminance > 0.5 {
        Theme::Light
    } else {
        Theme::Dark
    })
}

/// Asks the terminal for its background colour (raw mode must be on). The theme is `None`
/// when it does not say: it answered DA1 only, or nothing within `QUERY_WAIT`. Also returns
/// the text typed meanwhile (read with the answers), for the input.
pub fn query_background() -> (Option<Theme>, String) {
    use std::io::{IsTerminal, Write};
    if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        return (None, String::new());
    }
    let mut out = std::io::stdout();
    if out.write_all(b"\x1b]11;?\x1b\\\x1b[c").is_err() || out.flush().is_err() {
        return (None, String::new());
    }
    let reply = read_reply(QUERY_WAIT).unwrap_or_default();
    (from_osc11(&reply), typed_text(&reply))
}

/// What is left of `reply` once the terminal's answers (OSC and CSI sequences) are taken out:
/// printable text the user typed while it was read. Other keys are dropped.
pub fn typed_text(reply: &[u8]) -> String {
    let text = String::from_utf8_lossy(reply);
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\x1b' {
            if !c.is_control() {
                out.push(c);
            }
            continue;
        }
        match chars.next() {
            // OSC: up to BEL or ESC \.
            Some(']') => {
                while let Some(c) = chars.next() {
                    if c == '\x07' || (c == '\x1b' && chars.next_if_eq(&'\\').is_some()) {
                        break;
                    }
                }
            }
            // CSI: up to its final byte.
            Some('[') => {
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// Reads the terminal's answers from standard input until the DA1 answer (`ESC [ ? … c`) ends
/// them or `wait` has passed.
fn read_reply(wait: Duration) -> Option<Vec<u8>> {
    let deadline = std::time::Instant::now() + wait;
    let mut reply = Vec::new();
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            return (!reply.is_empty()).then_some(reply);
        }
        let mut poll = libc::pollfd {
            fd: libc::STDIN_FILENO,
            events: libc::POLLIN,
            revents: 0,
        };
        let ms = i32::try_from(left.as_millis()).unwrap_or(i32::MAX).max(1);
        // SAFETY: one valid pollfd for the duration of the call.
        let ready = unsafe { libc::poll(&mut poll, 1, ms) };
        if ready <= 0 {
            continue;
        }
        let mut buffer = [0u8; 256];
        // SAFETY: the buffer is valid for its length.
        let n = unsafe { libc::read(libc::STDIN_FILENO, buffer.as_mut_ptr().cast(), buffer.len()) };
        if n <= 0 {
            return None;
        }
        reply.extend_from_slice(&buffer[..n as usize]);
        if da1_done(&reply) {
            return Some(reply);
        }
    }
}

/// Whether `reply` holds a whole DA1 answer.
fn da1_done(reply: &[u8]) -> bool {
    reply
        .windows(3)
        .position(|w| w == b"\x1b[?")
        .is_some_and(|at| reply[at..].contains(&b'c'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_background_decides_from_colorfgbg_or_an_osc_11_answer() {
        assert_eq!(from_colorfgbg("15;0"), Some(Theme::Dark));
        assert_eq!(from_colorfgbg("0;15"), Some(Theme::Light));
        assert_eq!(from_colorfgbg("0;default;7"), Some(Theme::Light));
        assert_eq!(from_colorfgbg("oops"), None);
        assert_eq!(
            from_osc11(b"\x1b]11;rgb:ffff/ffff/ffff\x1b\\\x1b[?62;c"),
            Some(Theme::Light)
        );
        assert_eq!(
            from_osc11(b"\x1b]11;rgb:1e1e/1e1e/2e2e\x07"),
            Some(Theme::Dark)
        );
        assert_eq!(from_osc11(b"\x1b[?62;22c"), None, "DA1 only");
        assert!(da1_done(b"\x1b]11;rgb:0/0/0\x07\x1b[?1;2c"));
        assert!(!da1_done(b"\x1b]11;rgb:0/0/0\x07"));
        // Keys typed while the answers were read are kept when they are text.
        assert_eq!(
            typed_text(b"fi\x1b]11;rgb:ffff/ffff/ffff\x1b\\x\x1b[?62;22c\x1b[Z"),
            "fix"
        );
    }
}
