//! What a front end settles with the user before a session opens in a folder (CONTRACT "Folder
//! trust"): whether to trust the folder, and which of a trusted project's own extensions (the
//! hooks of a settings file, an MCP server of `.mcp.json`) to approve. Every function here reads
//! or writes files and blocks: a front end calls them off its UI task.

use crate::config::Settings;
pub use crate::config::approved::{ExtensionKind, PendingExtension};
/// Why an answer could not be remembered.
pub use crate::config::trust::TrustError as SetupError;

/// The project extensions of a trusted folder that wait for the user's approval.
pub fn pending_extensions(settings: &Settings) -> Vec<PendingExtension> {
    if !settings.trusted {
        return Vec::new();
    }
    let mut pending = crate::hooks::settings::load(&crate::hooks::HookSources {
        home: &settings.home,
        workdir: &settings.workdir,
        trusted: true,
        approve_all: false,
    })
    .pending;
    // The project's MCP servers (`.mcp.json`) join the same question.
    pending
        .extend(crate::mcp::config::load(&settings.workdir, &settings.home, true, false).pending);
    // And the server its `.env` names for the environment's key.
    pending.extend(settings.pending_base_url.clone());
    pending
}

/// Remembers that the user trusts the settings' working directory.
pub fn remember_trust(settings: &Settings) -> Result<(), SetupError> {
    crate::config::trust::remember(&settings.home, &settings.workdir)
}

/// Remembers the user's approval of `extension` (by the hash of its definition, so a changed
/// one is asked about again); an approved `.env` server is used from this session on.
pub fn approve_extension(
    settings: &mut Settings,
    extension: &PendingExtension,
) -> Result<(), SetupError> {
    crate::config::approved::approve(
        &settings.home,
        &settings.workdir,
        extension.kind,
        &extension.name,
        &extension.hash,
    )?;
    if extension.kind == ExtensionKind::BaseUrl
        && settings.pending_base_url.as_ref() == Some(extension)
    {
        settings.provider.base_url = extension.summary.clone();
        settings.pending_base_url = None;
    }
    Ok(())
}
