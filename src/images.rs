//! Images attached to a prompt (`@shot.png`): recognised by their content (PNG, JPEG, GIF or
//! WebP, whatever the name says), stored once under `$HARNESS9_HOME/images/` by the SHA-256 of
//! their bytes so a session refers to them without holding them, and read back (base64) when a
//! request is built. A file that is not one of those images, or is larger than `MAX_IMAGE`, is
//! not attached.

use std::path::Path;

use base64::Engine as _;

use crate::schema::ImageRef;

/// The largest image attached (the providers refuse larger ones).
pub const MAX_IMAGE: usize = 5 * 1024 * 1024;

/// The media type of `bytes` when they are an image a provider takes.
pub fn media_type(bytes: &[u8]) -> Option<&'static str> {
    match imagesize::image_type(bytes).ok()? {
        imagesize::ImageType::Png => Some("image/png"),
        imagesize::ImageType::Jpeg => Some("image/jpeg"),
        imagesize::ImageType::Gif => Some("image/gif"),
        imagesize::ImageType::Webp => Some("image/webp"),
        _ => None,
    }
}

/// Whether `path` is named like an image (`.png`, `.jpg`, `.jpeg`, `.gif`, `.webp`).
pub fn named_like_image(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    [".png", ".jpg", ".jpeg", ".gif", ".webp"]
        .iter()
        .any(|ext| lower.ends_with(ext))
}

/// Why an image was not attached, in words for the model and the user.
#[derive(Debug, thiserror::Error)]
pub enum ImageError {
    #[error("it is not a PNG, JPEG, GIF or WebP image")]
    NotAnImage,
    #[error("it is larger than {} MB", MAX_IMAGE / (1024 * 1024))]
    TooLarge,
    #[error("it could not be stored: {0}")]
    Store(String),
}

/// Stores `bytes` (named `name`) under `home` and returns the reference a message keeps.
pub fn store(home: &Path, name: &str, bytes: &[u8]) -> Result<ImageRef, ImageError> {
    if bytes.len() > MAX_IMAGE {
        return Err(ImageError::TooLarge);
    }
    let media_type = media_type(bytes).ok_or(ImageError::NotAnImage)?;
    let size = imagesize::blob_size(bytes).map_err(|_| ImageError::NotAnImage)?;
    let hash = crate::files::hash_of(bytes);
    let extension = media_type.trim_start_matches("image/");
    let dir = home.join("images");
    let path = dir.join(format!("{hash}.{extension}"));
    if !path.exists() {
        let store_error = |e: std::io::Error| ImageError::Store(e.to_string());
        std::fs::create_dir_all(&dir).map_err(store_error)?;
        // Written beside and renamed, so a crash never leaves half an image under its hash.
        let partial = dir.join(format!("{hash}.partial"));
        std::fs::write(&partial, bytes).map_err(store_error)?;
        std::fs::rename(&partial, &path).map_err(store_error)?;
    }
    Ok(ImageRef {
        path,
        media_type: media_type.to_owned(),
        name: name.to_owned(),
        width: u32::try_from(size.width).unwrap_or(u32::MAX),
        height: u32::try_from(size.height).unwrap_or(u32::MAX),
    })
}

/// The stored image as base64, for a request; `None` when it is gone or no longer the image it
/// was (the request then says so in text instead).
pub fn base64_of(image: &ImageRef) -> Option<String> {
    let bytes = std::fs::read(&image.path).ok()?;
    (media_type(&bytes) == Some(image.media_type.as_str()))
        .then(|| base64::engine::general_purpose::STANDARD.encode(bytes))
}

/// What a request says in place of an image it could not read back.
pub fn missing_note(image: &ImageRef) -> String {
    format!(
        "[image {} could not be read back from {}]",
        image.name,
        image.path.display()
    )
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A 3x2 PNG.
    pub fn png_3x2() -> Vec<u8> {
        base64::engine::general_purpose::STANDARD
            .decode("iVBORw0KGgoAAAANSUhEUgAAAAMAAAACCAIAAAASFvFNAAAAEklEQVR4nGP4z8AARAwMDAwMAD/dBP2HWvdRAAAAAElFTkSuQmCC")
            .unwrap()
    }

    #[test]
    fn an_image_is_stored_once_by_its_content_and_read_back() {
        let home = tempfile::tempdir().unwrap();
        let bytes = png_3x2();
        let first = store(home.path(), "shot.png", &bytes).unwrap();
        let again = store(home.path(), "copy.png", &bytes).unwrap();
        assert_eq!(first.path, again.path, "one copy per content");
        assert_eq!((first.width, first.height), (3, 2));
        assert_eq!(first.media_type, "image/png");
        let encoded = base64_of(&first).unwrap();
        assert_eq!(
            base64::engine::general_purpose::STANDARD
                .decode(encoded)
                .unwrap(),
            bytes
        );
    }

    #[test]
    fn a_text_file_named_png_or_a_huge_one_is_not_an_image() {
        let home = tempfile::tempdir().unwrap();
        assert!(matches!(
            store(home.path(), "fake.png", b"not an image at all"),
            Err(ImageError::NotAnImage)
        ));
        let mut huge = png_3x2();
        huge.resize(MAX_IMAGE + 1, 0);
        assert!(matches!(
            store(home.path(), "huge.png", &huge),
            Err(ImageError::TooLarge)
        ));
        assert!(named_like_image("a/B.JPEG") && !named_like_image("notes.txt"));
    }
}
