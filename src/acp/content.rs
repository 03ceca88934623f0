//! A `session/prompt`'s content as the one prompt text the core takes: text as it is, images
//! stored under `$HARNESS9_HOME/images` and mentioned (`@path`, as the TUI attaches a pasted
//! image), files the editor embedded (an `@` file, a selection: its unsaved text) inlined as
//! the core inlines mentioned files, links to files mentioned. Audio is refused clearly.

use std::path::Path;

use agent_client_protocol::v1::schema as acp;
use base64::Engine as _;

/// Why a prompt cannot be taken.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ContentError {
    #[error("harness9 does not take audio: describe it in text instead")]
    Audio,
    #[error("the image {0} cannot be used: {1}")]
    Image(String, String),
    #[error("the prompt is empty")]
    Empty,
}

/// The prompt text for `blocks`; images are stored under `home`.
pub fn prompt_text(
    blocks: &[acp::ContentBlock],
    home: &Path,
    workdir: &Path,
) -> Result<String, ContentError> {
    let mut text = String::new();
    let mut embedded = String::new();
    for block in blocks {
        match block {
            acp::ContentBlock::Text(part) => text.push_str(&part.text),
            acp::ContentBlock::Image(image) => {
                let name = image.uri.as_deref().unwrap_or("image").to_owned();
                let path = store_image(home, &name, &image.data)?;
                push_word(&mut text, &format!("@{}", path.display()));
            }
            acp::ContentBlock::Audio(_) => return Err(ContentError::Audio),
            acp::ContentBlock::ResourceLink(link) => {
                let word = match file_path(&link.uri) {
                    Some(path) => format!("@{}", mention_path(&path, workdir)),
                    None => format!("[{}]({})", link.name, link.uri),
                };
                push_word(&mut text, &word);
            }
            acp::ContentBlock::Resource(resource) => match &resource.resource {
                acp::EmbeddedResourceResource::TextResourceContents(file) => {
                    let name = file_path(&file.uri)
                        .map(|p| mention_path(&p, workdir))
                        .unwrap_or_else(|| file.uri.clone());
                    embedded.push_str(&format!("<file path=\"{name}\">\n{}\n</file>\n", file.text));
                }
                acp::EmbeddedResourceResource::BlobResourceContents(blob) => {
                    let is_image = blob
                        .mime_type
                        .as_deref()
                        .is_some_and(|m| m.starts_with("image/"));
                    if is_image {
                        let path = store_image(home, &blob.uri, &blob.blob)?;
                        push_word(&mut text, &format!("@{}", path.display()));
                    } else {
                        embedded.push_str(&format!(
                            "<file path=\"{}\">(not attached: binary content)</file>\n",
                            blob.uri
                        ));
                    }
                }
                _ => {}
            },
            _ => {}
        }
    }
    if !embedded.is_empty() {
        text.push_str(&format!(
            "\n\nFiles the user attached from the editor:\n{embedded}"
        ));
    }
    if text.trim().is_empty() {
        return Err(ContentError::Empty);
    }
    Ok(text)
}

/// `word` after the text so far, a space between.
fn push_word(text: &mut String, word: &str) {
    if !text.is_empty() && !text.ends_with(char::is_whitespace) {
        text.push(' ');
    }
    text.push_str(word);
}

/// The local path a `file://` URI names.
fn file_path(uri: &str) -> Option<std::path::PathBuf> {
    url::Url::parse(uri)
        .ok()
        .filter(|u| u.scheme() == "file")
        .and_then(|u| u.to_file_path().ok())
}

/// A path as a mention: relative to the session's folder when inside it.
fn mention_path(path: &Path, workdir: &Path) -> String {
    path.strip_prefix(workdir)
        .unwrap_or(path)
        .display()
        .to_string()
}

fn store_image(home: &Path, name: &str, data: &str) -> Result<std::path::PathBuf, ContentError> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data.trim())
        .map_err(|e| ContentError::Image(name.to_owned(), e.to_string()))?;
    crate::images::store(home, name, &bytes)
        .map(|image| image.path)
        .map_err(|e| ContentError::Image(name.to_owned(), e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(t: &str) -> acp::ContentBlock {
        acp::ContentBlock::Text(acp::TextContent::new(t))
    }

    #[test]
    fn text_links_and_embedded_files_become_one_prompt() {
        let home = tempfile::tempdir().unwrap();
        let link = acp::ContentBlock::ResourceLink(acp::ResourceLink::new(
            "a.rs",
            "file:///repo/src/a.rs",
        ));
        let embedded = acp::ContentBlock::Resource(acp::EmbeddedResource::new(
            acp::EmbeddedResourceResource::TextResourceContents(acp::TextResourceContents::new(
                "unsaved text",
                "file:///repo/b.rs",
            )),
        ));
        let prompt = prompt_text(
            &[text("look at"), link, embedded],
            home.path(),
            Path::new("/repo"),
        )
        .unwrap();
        assert!(prompt.starts_with("look at @src/a.rs"), "{prompt}");
        assert!(
            prompt.contains("<file path=\"b.rs\">\nunsaved text\n</file>"),
            "{prompt}"
        );
    }

    #[test]
    fn an_image_is_stored_and_mentioned_and_audio_is_refused() {
        let home = tempfile::tempdir().unwrap();
        let png = base64::engine::general_purpose::STANDARD.encode(crate::images::tests::png_3x2());
        let image = acp::ContentBlock::Image(acp::ImageContent::new(png, "image/png"));
        let prompt =
            prompt_text(&[text("what is this"), image], home.path(), Path::new("/r")).unwrap();
        let mentioned = prompt.split('@').nth(1).unwrap();
        assert!(Path::new(mentioned).is_file(), "{prompt}");
        let audio = acp::ContentBlock::Audio(acp::AudioContent::new("AAAA", "audio/wav"));
        assert_eq!(
            prompt_text(&[audio], home.path(), Path::new("/r")),
            Err(ContentError::Audio)
        );
        assert_eq!(
            prompt_text(&[text("  ")], home.path(), Path::new("/r")),
            Err(ContentError::Empty)
        );
    }
}
