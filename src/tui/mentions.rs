//! `@` mentions on screen: the popup offers files and directories (a directory completes with
//! `/` so the path can go on), a prompt's mentions are checked against the working directory's
//! list (a missing one is warned about, the attached ones are named), and a stored prompt's
//! attachments are listed with their sizes.

use super::app::App;
use super::slash::Completion;

/// The files of the list and every directory above them (`src/`, `src/engine/`), sorted.
pub fn with_directories(files: Vec<String>) -> Vec<String> {
    let mut directories: Vec<String> = files
        .iter()
        .flat_map(|file| {
            file.match_indices('/')
                .map(|(at, _)| file[..=at].to_owned())
                .collect::<Vec<_>>()
        })
        .collect();
    directories.sort();
    directories.dedup();
    let mut all = files;
    all.extend(directories);
    all.sort();
    all
}

/// A completion for one path: a directory's keeps the mention open.
pub fn completion(path: &str) -> Completion {
    Completion {
        insert: if path.ends_with('/') {
            format!("@{path}")
        } else {
            format!("@{path} ")
        },
        label: path.to_owned(),
        help: if path.ends_with('/') {
            "directory".into()
        } else {
            String::new()
        },
    }
}

/// The `@path` words of a prompt, without trailing punctuation.
pub fn mentions(prompt: &str) -> Vec<&str> {
    prompt
        .split_whitespace()
        .filter_map(|word| word.strip_prefix('@'))
        .map(|path| path.trim_end_matches([',', '.', ';', ':', ')', '?', '!']))
        .filter(|path| !path.is_empty())
        .collect()
}

impl App {
    /// A warning about a prompt's mentions that name nothing in the working directory (they
    /// are sent as plain text); nothing while the file list is not known. The files attached
    /// are named by the core once it has read them (`attached_note`).
    pub(super) fn missing_mentions(&self, prompt: &str) -> Option<String> {
        let known = self.input_box().files.as_ref().filter(|f| !f.is_empty())?;
        let mut missing = Vec::new();
        for path in mentions(prompt) {
            let trimmed = path.trim_end_matches('/');
            let is_file = known.iter().any(|k| k == path);
            let is_dir = known
                .iter()
                .any(|k| k.trim_end_matches('/') == trimmed && k.ends_with('/'));
            if !is_file && !is_dir && known.len() < crate::session::MENTION_FILES {
                missing.push(format!("@{path}"));
            }
        }
        (!missing.is_empty()).then(|| {
            format!(
                "{}: no such file here; sent as plain text",
                missing.join(", ")
            )
        })
    }
}

/// `attached: a.rs (2.0 KB), b.rs (12 B)`: the files a prompt carries, as the transcript says.
pub fn attached_note(files: &[(String, usize)]) -> String {
    let listed: Vec<String> = files
        .iter()
        .map(|(name, bytes)| {
            format!(
                "{} ({})",
                crate::terminal_text::sanitize(name),
                size(*bytes)
            )
        })
        .collect();
    format!("attached: {}", listed.join(", "))
}

/// The files a stored prompt carried (`mentions::attach`'s format) with their sizes in bytes.
pub fn stored_attachments(content: &str) -> Vec<(String, usize)> {
    let Some((_, files)) = content.split_once(crate::session::text::ATTACHMENTS_MARKER) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut rest = files;
    while let Some(start) = rest.find("<file path=\"") {
        rest = &rest[start + 12..];
        let Some(end_name) = rest.find("\">") else {
            break;
        };
        let name = rest[..end_name].to_owned();
        rest = &rest[end_name + 2..];
        let end = rest.find("</file>").unwrap_or(rest.len());
        let body = rest[..end].trim_start_matches('\n').trim_end_matches('\n');
        out.push((name, body.len()));
        rest = &rest[end..];
    }
    out
}

/// `1.2 KB`-style sizes.
pub fn size(bytes: usize) -> String {
    if bytes < 1024 {
        format!("{bytes} B")
    } else if bytes < 1024 * 1024 {
        format!("{:.1} KB", bytes as f64 / 1024.0)
    } else {
        format!("{:.1} MB", bytes as f64 / (1024.0 * 1024.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directories_are_offered_and_stored_attachments_listed_with_sizes() {
        let all = with_directories(vec!["src/main.rs".into(), "src/engine/run.rs".into()]);
        assert_eq!(
            all,
            ["src/", "src/engine/", "src/engine/run.rs", "src/main.rs"]
        );
        assert_eq!(completion("src/").insert, "@src/");
        assert_eq!(completion("src/main.rs").insert, "@src/main.rs ");
        let stored = format!(
            "look{}\n<file path=\"a.rs\">\nfn a() {{}}\n</file>\n<file path=\".env\">(not attached)</file>\n</attached-files>",
            crate::session::text::ATTACHMENTS_MARKER
        );
        assert_eq!(
            stored_attachments(&stored),
            [("a.rs".to_owned(), 9), (".env".to_owned(), 14)]
        );
        assert_eq!(size(2048), "2.0 KB");
    }
}
