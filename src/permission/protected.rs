//! The paths that need care whichever tool names them (CONTRACT, Folder trust): protected paths,
//! whose writes always ask, and secret files, whose reads ask. Paths are judged after
//! `tools::paths::resolve`, never as the model spelled them.

use std::path::Path;

/// Whether writing `path` (resolved) must ask in every mode but `yolo`: anything under a
/// `.harness9/` or `.git/` directory (at any depth: a nested repository's hooks run too), the
/// directories themselves, a `.mcp.json`, or a `.env*` file (`.envrc` is run by direnv). Names
/// compare without case: on a case-insensitive file system `.GIT/config` is `.git/config`.
pub fn is_protected_write(path: &Path) -> bool {
    let names: Vec<String> = path
        .components()
        .map(|c| c.as_os_str().to_string_lossy().to_lowercase())
        .collect();
    let Some((last, parents)) = names.split_last() else {
        return false;
    };
    parents.iter().any(|name| is_guarded_dir(name))
        || is_guarded_dir(last)
        || last == ".mcp.json"
        || last.starts_with(".env")
}

fn is_guarded_dir(name: &str) -> bool {
    name == ".harness9" || name == ".git"
}

/// Whether `path` (resolved) usually holds secrets, so reading it asks first: `.env*`,
/// `*.pem`, `*.key`, `id_rsa*`, `id_ed25519*`, `.aws/credentials`, `.netrc`, `.npmrc`,
/// `.pypirc`. Names compare without case.
pub fn is_secret_file(path: &Path) -> bool {
    let Some(name) = path.file_name().map(|n| n.to_string_lossy().to_lowercase()) else {
        return false;
    };
    let parent_is_aws = path
        .parent()
        .and_then(Path::file_name)
        .is_some_and(|p| p.eq_ignore_ascii_case(".aws"));
    name.starts_with(".env")
        || name.ends_with(".pem")
        || name.ends_with(".key")
        || name.starts_with("id_rsa")
        || name.starts_with("id_ed25519")
        || (parent_is_aws && name == "credentials")
        || matches!(name.as_str(), ".netrc" | ".npmrc" | ".pypirc")
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
            "/w/.envrc",
            "/w/.GIT/config",
            "/w/.Harness9/settings.json",
            "/w/.git",
            "/w/vendor/dep/.git/hooks/post-checkout",
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
            "/w/.ENV",
            "/w/Server.PEM",
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
