//! The paths that need care whichever tool names them (CONTRACT, Folder trust): protected paths,
//! whose writes always ask, and secret files, whose reads ask. Paths are judged after
//! `tools::paths::resolve`, never as the model spelled them.

use std::path::Path;

/// Whether writing `path` (resolved) must ask in every mode but `yolo`: anything under a
/// `.harness9/` or `.git/` directory, a `.mcp.json`, or a `.env*` file.
pub fn is_protected_write(path: &Path) -> bool {
    let mut components = path.components().peekable();
    while let Some(component) = components.next() {
        let name = component.as_os_str().to_string_lossy();
        let last = components.peek().is_none();
        if !last && (name == ".harness9" || name == ".git") {
            return true;
        }
        if last
            && (name == ".mcp.json"
                || name == ".harness9"
                || name == ".git"
                || name.starts_with(".env"))
        {
            return true;
        }
    }
    false
}

/// Whether `path` (resolved) usually holds secrets, so reading it asks first: `.env*`,
/// `*.pem`, `*.key`, `id_rsa*`, `id_ed25519*`, `.aws/credentials`, `.netrc`, `.npmrc`,
/// `.pypirc`.
pub fn is_secret_file(path: &Path) -> bool {
    let Some(name) = path.file_name().map(|n| n.to_string_lossy()) else {
        return false;
    };
    let parent_is_aws = path
        .parent()
        .and_then(Path::file_name)
        .is_some_and(|p| p == ".aws");
    name.starts_with(".env")
        || name.ends_with(".pem")
        || name.ends_with(".key")
        || name.starts_with("id_rsa")
        || name.starts_with("id_ed25519")
        || (parent_is_aws && name == "credentials")
        || matches!(name.as_ref(), ".netrc" | ".npmrc" | ".pypirc")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protected_and_secret_paths() {
        for p in [
            "/w/.harness9/settings.json",
            "/w/.harness9/settings.local.json",
            "/w/.git/config",
            "/w/.git/hooks/pre-commit",
            "/w/sub/.git/config",
            "/w/.mcp.json",
            "/w/.env",
            "/w/.env.local",
        ] {
            assert!(is_protected_write(Path::new(p)), "{p}");
        }
        for p in [
            "/w/src/main.rs",
            "/w/.gitignore",
            "/w/docs/env.md",
            "/w/.github/x.yml",
        ] {
            assert!(!is_protected_write(Path::new(p)), "{p}");
        }
        for p in [
            "/w/.env",
            "/w/config/.env.production",
            "/w/certs/server.pem",
            "/w/server.key",
            "/root/.ssh/id_rsa",
            "/root/.ssh/id_ed25519.pub",
            "/root/.aws/credentials",
            "/root/.netrc",
            "/w/.npmrc",
            "/w/.pypirc",
        ] {
            assert!(is_secret_file(Path::new(p)), "{p}");
        }
        for p in [
            "/w/src/env.rs",
            "/w/keys.rs",
            "/w/credentials",
            "/w/README.md",
        ] {
            assert!(!is_secret_file(Path::new(p)), "{p}");
        }
    }
}
