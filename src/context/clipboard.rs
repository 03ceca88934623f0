//! An image from the system clipboard (a screenshot copied, then `Ctrl+V` in the TUI): terminals
//! paste text only, so the clipboard is asked directly, with the tools the desktop has —
//! `wl-paste` under Wayland, `xclip` under X11, `osascript` on macOS — for the first image type
//! it offers. The bytes must be an image a provider takes (checked by content, as for `@shot.png`)
//! and are written to `$HARNESS9_HOME/clipboard/`, so the prompt can mention the file like any
//! other image; such files older than a day are removed at the next paste.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, SystemTime};

use tokio::process::Command;

use crate::images::{MAX_IMAGE, media_type};

/// How long a clipboard tool may take (one that hangs, say a dead X server, must not leave the
/// paste waiting).
const PATIENCE: Duration = Duration::from_secs(3);
/// How long a pasted image's file is kept (a prompt sent by then has stored its own copy).
const KEPT_FOR: Duration = Duration::from_secs(24 * 3600);
/// The image types asked for, in the order preferred.
const TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/// An image taken from the clipboard: its file and size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClipboardImage {
    pub path: PathBuf,
    pub width: u32,
    pub height: u32,
}

#[derive(Debug, thiserror::Error)]
pub enum ClipboardError {
    #[error(
        "no clipboard can be read here (no Wayland or X display{}); paste the image's file path instead",
        if cfg!(target_os = "macos") { "" } else { ", or neither wl-paste nor xclip is installed" }
    )]
    Unreachable,
    #[error("the clipboard holds no image")]
    NoImage,
    #[error("the clipboard's image is not attached: {0}")]
    Unusable(String),
    #[error("the clipboard's image could not be kept: {0}")]
    Io(#[from] std::io::Error),
}

/// Reads an image from the clipboard and writes it under `home`.
pub async fn read_image(home: &Path) -> Result<ClipboardImage, ClipboardError> {
    let bytes = clipboard_bytes().await?;
    if bytes.len() > MAX_IMAGE {
        return Err(ClipboardError::Unusable(format!(
            "it is larger than {} MB",
            MAX_IMAGE / (1024 * 1024)
        )));
    }
    let media = media_type(&bytes).ok_or(ClipboardError::NoImage)?;
    let size = imagesize::blob_size(&bytes)
        .map_err(|_| ClipboardError::Unusable("its size cannot be read".into()))?;
    let dir = home.join("clipboard");
    std::fs::create_dir_all(&dir)?;
    remove_old(&dir);
    let stamp = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0);
    let hash = crate::files::hash_of(&bytes);
    let extension = media.trim_start_matches("image/");
    let path = dir.join(format!("clipboard-{stamp}-{}.{extension}", &hash[..8]));
    std::fs::write(&path, &bytes)?;
    Ok(ClipboardImage {
        path,
        width: u32::try_from(size.width).unwrap_or(u32::MAX),
        height: u32::try_from(size.height).unwrap_or(u32::MAX),
    })
}

/// The clipboard's image bytes, from the first tool of this desktop that offers an image type.
async fn clipboard_bytes() -> Result<Vec<u8>, ClipboardError> {
    if cfg!(target_os = "macos") {
        return mac_clipboard().await;
    }
    let wayland = std::env::var_os("WAYLAND_DISPLAY").is_some_and(|v| !v.is_empty());
    let x11 = std::env::var_os("DISPLAY").is_some_and(|v| !v.is_empty());
    let mut reached = false;
    if wayland && let Some(types) = run("wl-paste", &["--list-types"]).await {
        reached = true;
        if let Some(kind) = image_type(&types) {
            return run("wl-paste", &["--no-newline", "--type", kind])
                .await
                .ok_or(ClipboardError::NoImage);
        }
    }
    if x11
        && let Some(types) = run("xclip", &["-selection", "clipboard", "-t", "TARGETS", "-o"]).await
    {
        reached = true;
        if let Some(kind) = image_type(&types) {
            return run("xclip", &["-selection", "clipboard", "-t", kind, "-o"])
                .await
                .ok_or(ClipboardError::NoImage);
        }
    }
    Err(if reached {
        ClipboardError::NoImage
    } else {
        ClipboardError::Unreachable
    })
}

/// The first image type a tool's list of offered types holds (one type a line).
fn image_type(listed: &[u8]) -> Option<&'static str> {
    let listed = String::from_utf8_lossy(listed);
    let offered: Vec<&str> = listed.lines().map(str::trim).collect();
    TYPES.into_iter().find(|kind| offered.contains(kind))
}

/// macOS: AppleScript writes the clipboard's PNG to a file (it has no other way out).
async fn mac_clipboard() -> Result<Vec<u8>, ClipboardError> {
    let file = tempfile::NamedTempFile::new()?;
    let target = file.path().display().to_string().replace('"', "");
    let script = format!(
        "set png to (the clipboard as «class PNGf»)\n\
         set f to open for access POSIX file \"{target}\" with write permission\n\
         write png to f\nclose access f"
    );
    run("osascript", &["-e", &script])
        .await
        .ok_or(ClipboardError::NoImage)?;
    let bytes = std::fs::read(file.path())?;
    if bytes.is_empty() {
        return Err(ClipboardError::NoImage);
    }
    Ok(bytes)
}

/// `program args`' output when it ran and succeeded within `PATIENCE`.
async fn run(program: &str, args: &[&str]) -> Option<Vec<u8>> {
    let child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .output();
    match tokio::time::timeout(PATIENCE, child).await {
        Ok(Ok(output)) if output.status.success() && !output.stdout.is_empty() => {
            Some(output.stdout)
        }
        _ => None,
    }
}

/// Removes pasted images older than `KEPT_FOR` from `dir`.
fn remove_old(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > KEPT_FOR);
        let ours = entry
            .file_name()
            .to_string_lossy()
            .starts_with("clipboard-");
        if old && ours {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_offered_image_type_is_asked_for() {
        assert_eq!(
            image_type(b"TARGETS\ntext/plain\nimage/jpeg\nimage/png\n"),
            Some("image/png")
        );
        assert_eq!(image_type(b"image/webp\n"), Some("image/webp"));
        assert_eq!(image_type(b"text/plain\nUTF8_STRING\n"), None);
        assert_eq!(image_type(b"image/pngx\n"), None, "whole lines only");
    }
}
