//! The `"sandbox"` part of the three settings files, combined with `--sandbox`. Invariant: the
//! user's file and the flag set the policy; the project's files (`<workdir>/.harness9/
//! settings.json` and `settings.local.json`) can only narrow it (a stricter mode, network off,
//! no writable root outside the workdir), whatever the folder's trust.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::SandboxMode;

/// The resolved policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxSettings {
    pub mode: SandboxMode,
    pub network: bool,
    /// Extra writable directories, absolute.
    pub writable_roots: Vec<PathBuf>,
}

impl Default for SandboxSettings {
    fn default() -> Self {
        SandboxSettings {
            mode: SandboxMode::WorkspaceWrite,
            network: false,
            writable_roots: Vec::new(),
        }
    }
}

#[derive(Debug, Default, Deserialize)]
struct File {
    #[serde(default)]
    sandbox: Option<Section>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Section {
    #[serde(default)]
    mode: Option<SandboxMode>,
    #[serde(default)]
    network: Option<bool>,
    #[serde(default)]
    writable_roots: Vec<String>,
}

/// One file's `"sandbox"` section; a missing file is no section, a broken one is ignored with
/// a notice (the defaults, which are strict, stay).
fn section(path: &Path, notices: &mut Vec<String>) -> Option<Section> {
    let text = std::fs::read_to_string(path).ok()?;
    match serde_json::from_str::<File>(&text) {
        Ok(file) => file.sandbox,
        Err(e) => {
            notices.push(format!(
                "{}: its \"sandbox\" settings were ignored: {e}",
                path.display()
            ));
            None
        }
    }
}

/// Reads `$HARNESS9_HOME/settings.json`, then the project's two files, and combines them
/// with the flag.
pub fn read_settings(
    workdir: &Path,
    home: &Path,
    flag: Option<SandboxMode>,
    notices: &mut Vec<String>,
) -> SandboxSettings {
    let user = section(&home.join("settings.json"), notices);
    let project: Vec<(PathBuf, Section)> = ["settings.json", "settings.local.json"]
        .iter()
        .map(|name| workdir.join(".harness9").join(name))
        .filter_map(|path| section(&path, notices).map(|s| (path, s)))
        .collect();
    combine(workdir, flag, user, project, notices)
}

fn combine(
    workdir: &Path,
    flag: Option<SandboxMode>,
    user: Option<Section>,
    project: Vec<(PathBuf, Section)>,
    notices: &mut Vec<String>,
) -> SandboxSettings {
    let mut settings = SandboxSettings::default();
    if let Some(user) = user {
        if let Some(mode) = user.mode {
            settings.mode = mode;
        }
        settings.network = user.network.unwrap_or(false);
        settings.writable_roots = user
            .writable_roots
            .iter()
            .map(|raw| crate::files::paths::resolve(workdir, raw))
            .collect();
    }
    if let Some(mode) = flag {
        settings.mode = mode;
    }
    for (path, section) in project {
        if let Some(mode) = section.mode {
            let narrowed = settings.mode.stricter(mode);
            if narrowed != mode {
                notices.push(format!(
                    "{}: sandbox mode {mode} ignored: a project's settings may only make the \
                     sandbox stricter than {}",
                    path.display(),
                    settings.mode
                ));
            }
            settings.mode = narrowed;
        }
        match section.network {
            Some(false) => settings.network = false,
            Some(true) if !settings.network => notices.push(format!(
                "{}: sandbox network ignored: only your own settings can turn the network on",
                path.display()
            )),
            _ => {}
        }
        for raw in &section.writable_roots {
            let root = crate::files::paths::resolve(workdir, raw);
            if !crate::files::paths::is_inside(workdir, &root) {
                notices.push(format!(
                    "{}: writable root {} ignored: a project's settings may not open a \
                     directory outside the working directory",
                    path.display(),
                    root.display()
                ));
            }
            // Inside the workdir it is writable already: nothing to add.
        }
    }
    settings
}

#[cfg(test)]
mod tests {
    use super::*;

    fn section(json: &str) -> Section {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn a_project_file_narrows_but_never_widens() {
        let workdir = Path::new("/w");
        let mut notices = Vec::new();
        let user = section(r#"{"mode": "workspace-write", "network": false}"#);
        let project = vec![(
            PathBuf::from("/w/.harness9/settings.json"),
            section(r#"{"mode": "off", "network": true, "writable_roots": ["/etc", "sub"]}"#),
        )];
        let s = combine(workdir, None, Some(user), project, &mut notices);
        assert_eq!(s.mode, SandboxMode::WorkspaceWrite);
        assert!(!s.network);
        assert!(s.writable_roots.is_empty());
        assert_eq!(notices.len(), 3, "{notices:?}");

        let mut notices = Vec::new();
        let user = section(r#"{"network": true, "writable_roots": ["/opt/cache"]}"#);
        let project = vec![(
            PathBuf::from("/w/.harness9/settings.local.json"),
            section(r#"{"mode": "read-only", "network": false}"#),
        )];
        let s = combine(
            workdir,
            Some(SandboxMode::Off),
            Some(user),
            project,
            &mut notices,
        );
        assert_eq!(s.mode, SandboxMode::ReadOnly);
        assert!(!s.network);
        assert_eq!(s.writable_roots, vec![PathBuf::from("/opt/cache")]);
    }

    #[test]
    fn the_flag_beats_the_user_file_and_the_default_is_workspace_write() {
        let mut notices = Vec::new();
        let s = combine(Path::new("/w"), None, None, Vec::new(), &mut notices);
        assert_eq!(s, SandboxSettings::default());
        let user = section(r#"{"mode": "read-only"}"#);
        let s = combine(
            Path::new("/w"),
            Some(SandboxMode::WorkspaceWrite),
            Some(user),
            Vec::new(),
            &mut notices,
        );
        assert_eq!(s.mode, SandboxMode::WorkspaceWrite);
    }
}
