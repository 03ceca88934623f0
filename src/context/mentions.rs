//! `@` mentions: the working directory's files for the completion popup (respecting
//! `.gitignore`), fuzzy ranking, and attaching the mentioned files to a prompt, capped in size
//! with a note when cut. A mention is a read like any other: a path a deny rule covers is never
//! attached, and neither is a file that usually holds secrets (the model may ask for it with
//! `read_file`, which asks the user first).

use std::path::Path;

use crate::files::paths;
use crate::files::protected;
use crate::files::walk::walker;

/// What separates a prompt from the files attached to it (the transcript shows the prompt only).
pub const ATTACHMENTS_MARKER: &str = "\n\n<attached-files>";
/// Bytes of one file attached.
const MAX_FILE: usize = 64 * 1024;
/// Bytes of all attached files together.
const MAX_TOTAL: usize = 256 * 1024;

/// Up to `limit` files under `workdir`, relative and sorted.
pub fn list_files(workdir: &Path, limit: usize) -> Vec<String> {
    let mut files: Vec<String> = walker(workdir)
        .build()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .filter_map(|e| {
            e.path()
                .strip_prefix(workdir)
                .ok()
                .map(|p| p.display().to_string())
        })
        .take(limit)
        .collect();
    files.sort();
    files
}

/// The files matching `query` (its characters in order, case-insensitive), best first: a match
/// in the file name beats one in the directories, and tighter matches beat looser ones.
pub fn rank<'a>(query: &str, files: &'a [String], limit: usize) -> Vec<&'a str> {
    let query: Vec<char> = query.to_lowercase().chars().collect();
    let mut scored: Vec<(i64, &str)> = files
        .iter()
        .filter_map(|file| score(&query, file).map(|s| (s, file.as_str())))
        .collect();
    scored.sort_by(|a, b| {
        b.0.cmp(&a.0)
            .then(a.1.len().cmp(&b.1.len()))
            .then(a.1.cmp(b.1))
    });
    scored.into_iter().take(limit).map(|(_, f)| f).collect()
}

fn score(query: &[char], file: &str) -> Option<i64> {
    if query.is_empty() {
        return Some(0);
    }
    let lower: Vec<char> = file.to_lowercase().chars().collect();
    let name_start = file
        .rfind('/')
        .map(|i| file[..=i].chars().count())
        .unwrap_or(0);
    let mut score = 0i64;
    let mut at = 0usize;
    let mut previous: Option<usize> = None;
    for &wanted in query {
        let found = (at..lower.len()).find(|&i| lower[i] == wanted)?;
        score += if found >= name_start { 10 } else { 2 };
        if previous.is_some_and(|p| p + 1 == found) {
            score += 8;
        }
        if found == name_start || found == 0 {
            score += 12;
        }
        previous = Some(found);
        at = found + 1;
    }
    Some(score - lower.len() as i64 / 8)
}

/// The `@path` mentions of a prompt that name files under `workdir`.
pub fn mentioned(prompt: &str, workdir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for word in prompt.split_whitespace() {
        if let Some(path) = word.strip_prefix('@') {
            let path = path.trim_end_matches([',', '.', ';', ':', ')', '?', '!']);
            if !path.is_empty() && workdir.join(path).is_file() && !found.iter().any(|f| f == path)
            {
                found.push(path.to_owned());
            }
        }
    }
    found
}

/// Whether a deny rule covers reading a resolved path: the permission check's judgement
/// (`permission::read_denied`), passed in by the session, which sits above both.
pub type ReadDenied<'a> = &'a dyn Fn(&Path) -> bool;

/// The prompt with the files it mentions attached after `ATTACHMENTS_MARKER`, judged by
/// `read_denied` after resolution.
pub fn attach(prompt: &str, workdir: &Path, read_denied: ReadDenied<'_>) -> String {
    attach_with_images(prompt, workdir, read_denied, None).text
}

/// A prompt with its mentioned files: text files inline, images stored (under `home`) and
/// referenced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attached {
    pub text: String,
    pub images: Vec<crate::schema::ImageRef>,
    /// The files attached, each with the bytes of it sent (a cut file's shown part).
    pub files: Vec<(String, usize)>,
}

/// `attach`, with mentioned images (`@shot.png`) stored under `home`'s `images/` and returned
/// beside the text; without `home`, an image is named but not attached.
pub fn attach_with_images(
    prompt: &str,
    workdir: &Path,
    read_denied: ReadDenied<'_>,
    home: Option<&Path>,
) -> Attached {
    let files = mentioned(prompt, workdir);
    let mut images = Vec::new();
    let mut attached = Vec::new();
    if files.is_empty() {
        return Attached {
            text: prompt.to_owned(),
            images,
            files: attached,
        };
    }
    let mut out = format!("{prompt}{ATTACHMENTS_MARKER}\n");
    let mut total = 0;
    for file in files {
        let resolved = paths::resolve(workdir, &file);
        if read_denied(&resolved) {
            out.push_str(&format!(
                "<file path=\"{file}\">(not attached: a permission rule denies reading it)</file>\n"
            ));
            continue;
        }
        if protected::is_secret_file(&resolved) {
            out.push_str(&format!(
                "<file path=\"{file}\">(not attached: it usually holds secrets; read_file asks \
                 the user first)</file>\n"
            ));
            continue;
        }
        // Opened as judged (no link swapped in since), and only a regular file is read.
        let sensitive = |path: &Path| read_denied(path) || protected::is_secret_file(path);
        let Some(bytes) = read_mentioned(workdir, &file, &sensitive) else {
            continue;
        };
        if crate::images::named_like_image(&file) {
            let name = resolved
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| file.clone());
            let note = match home.map(|home| crate::images::store(home, &name, &bytes)) {
                Some(Ok(image)) => {
                    let note = format!("(attached as an image, {}x{})", image.width, image.height);
                    images.push(image);
                    attached.push((file.clone(), bytes.len()));
                    note
                }
                Some(Err(error)) => format!("(not attached as an image: {error})"),
                None => "(an image; not attached here)".to_owned(),
            };
            out.push_str(&format!("<file path=\"{file}\">{note}</file>\n"));
            continue;
        }
        if bytes[..bytes.len().min(8192)].contains(&0) {
            out.push_str(&format!(
                "<file path=\"{file}\">(a binary file of {} bytes, not attached)</file>\n",
                bytes.len()
            ));
            continue;
        }
        let room = MAX_FILE.min(MAX_TOTAL.saturating_sub(total));
        let text = String::from_utf8_lossy(&bytes);
        let cut = text
            .char_indices()
            .map(|(i, _)| i)
            .take_while(|&i| i <= room)
            .last()
            .unwrap_or(0);
        let (shown, note) = if text.len() > room {
            (
                &text[..cut],
                format!(
                    "\n[cut: {} of {} bytes shown; read the rest with read_file]",
                    cut,
                    text.len()
                ),
            )
        } else {
            (&text[..], String::new())
        };
        total += shown.len();
        attached.push((file.clone(), shown.len()));
        out.push_str(&format!("<file path=\"{file}\">\n{shown}{note}\n</file>\n"));
    }
    out.push_str("</attached-files>");
    Attached {
        text: out,
        images,
        files: attached,
    }
}

/// The part of a stored prompt the user typed, and how many files were attached to it.
pub fn split_attachments(content: &str) -> (&str, usize) {
    match content.split_once(ATTACHMENTS_MARKER) {
        Some((typed, files)) => (typed, files.matches("<file path=").count()),
        None => (content, 0),
    }
}

/// The content of the regular file named `file`, opened as it was judged (`files::open`).
fn read_mentioned(
    workdir: &Path,
    file: &str,
    sensitive: &dyn Fn(&Path) -> bool,
) -> Option<Vec<u8>> {
    use std::io::Read;
    let mut file = crate::files::open::open_read(workdir, Path::new(file), sensitive).ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).ok()?;
    Some(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_file_names_first_and_attaches_with_caps() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("src/engine")).unwrap();
        std::fs::write(root.join("src/engine/run_loop.rs"), "fn run() {}\n").unwrap();
        std::fs::write(root.join("src/main.rs"), "fn main() {}\n").unwrap();
        std::fs::write(root.join("README.md"), "x".repeat(100_000)).unwrap();
        std::fs::write(root.join(".gitignore"), "target/\n").unwrap();
        std::fs::create_dir_all(root.join("target")).unwrap();
        std::fs::write(root.join("target/main.rs"), "").unwrap();

        let files = list_files(root, 100);
        assert_eq!(
            files,
            [
                ".gitignore",
                "README.md",
                "src/engine/run_loop.rs",
                "src/main.rs"
            ]
        );
        assert_eq!(rank("main", &files, 5), ["src/main.rs"]);
        assert_eq!(rank("rl", &files, 5)[0], "src/engine/run_loop.rs");

        let prompt = "look at @src/main.rs and @README.md, not @nope.rs";
        let attached = attach(prompt, root, &|_| false);
        assert!(attached.starts_with(prompt));
        assert!(attached.contains("<file path=\"src/main.rs\">\nfn main() {}"));
        assert!(attached.contains("[cut: 65536 of 100000 bytes shown"));
        assert!(!attached.contains("nope.rs\">"));
        assert_eq!(split_attachments(&attached), (prompt, 2));
    }
}
