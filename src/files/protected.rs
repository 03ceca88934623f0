//! The paths that need care whichever tool names them (CONTRACT, Folder trust): protected paths,
//! whose writes always ask, and secret files, whose reads ask. Paths are judged after
//! `files::paths::resolve`, never as the model spelled them.

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
    parents.iter().any(|name| is_guarded_dir(name)) || is_protected_lowercase_name(last)
}

/// Whether an entry of this name, in any directory, is protected itself (writing it or
/// anything beneath it asks): `.git`, `.harness9`, `.mcp.json`, `.env*`, without case. The
/// sandbox guards the same names at every depth of the workdir.
pub fn is_protected_name(name: &std::ffi::OsStr) -> bool {
    // Every protected name starts with a dot: the sandbox's walk asks this of every entry of
    // every folder, so the others are answered without lowering a copy.
    if name.as_encoded_bytes().first() != Some(&b'.') {
        return false;
    }
    is_protected_lowercase_name(&name.to_string_lossy().to_lowercase())
}

fn is_protected_lowercase_name(name: &str) -> bool {
    is_guarded_dir(name) || name == ".mcp.json" || name.starts_with(".env")
}

fn is_guarded_dir(name: &str) -> bool {
    name == ".harness9" || name == ".git"
}

/// Whether `path` (resolved) usually holds secrets, so reading it asks first: the contract's
/// `.env*`, `*.pem`, `*.key`, `id_rsa*`, `id_ed25519*`, `.aws/credentials`, `.netrc`, `.npmrc`,
/// `.pypirc`, and more of the same kind: the other SSH keys (`id_ecdsa*`, `id_dsa*`, and
/// anything in a `.ssh/` directory, whatever its name), `*.p12`/`*.pfx` key stores,
/// `.git-credentials`, `.pgpass`, `.docker/config.json`, `.kube/config`,
/// `.config/gh/hosts.yml` and everything under `.config/gcloud/`; other tools' tokens
/// (`.cargo/credentials.toml`, `.gem/credentials`, `.vault-token`, `.terraformrc`, `.s3cfg`...),
/// key stores (`.gnupg/`, `.password-store/`, `.azure/`) and the shells' histories
/// (`.bash_history`, `.zsh_history`, `fish_history`...). Names compare without case.
pub fn is_secret_file(path: &Path) -> bool {
    let Some(name) = path.file_name().map(|n| n.to_string_lossy().to_lowercase()) else {
        return false;
    };
    // Walks judge every file they meet: the parents are compared without copying them.
    let parents: Vec<std::borrow::Cow<'_, str>> = path
        .parent()
        .into_iter()
        .flat_map(Path::components)
        .map(|c| c.as_os_str().to_string_lossy())
        .collect();
    let is = |depth: usize, dir: &str| {
        parents
            .len()
            .checked_sub(depth)
            .and_then(|at| parents.get(at))
            .is_some_and(|parent| parent.eq_ignore_ascii_case(dir))
    };
    let below = |dirs: &[&str]| {
        parents.windows(dirs.len()).any(|window| {
            window
                .iter()
                .zip(dirs)
                .all(|(parent, dir)| parent.eq_ignore_ascii_case(dir))
        })
    };
    name.starts_with(".env")
        || [".pem", ".key", ".p12", ".pfx"]
            .iter()
            .any(|suffix| name.ends_with(suffix))
        || ["id_rsa", "id_ed25519", "id_ecdsa", "id_dsa"]
            .iter()
            .any(|prefix| name.starts_with(prefix))
        || matches!(
            name.as_str(),
            ".netrc"
                | ".npmrc"
                | ".pypirc"
                | ".git-credentials"
                | ".pgpass"
                | ".vault-token"
                | ".s3cfg"
                | ".boto"
                | ".dockercfg"
                | ".terraformrc"
                | ".histfile"
                | ".history"
                | ".lesshst"
        )
        || is_shell_history(&name)
        || (is(1, ".cargo") && (name == "credentials.toml" || name == "credentials"))
        || (is(1, ".gem") && name == "credentials")
        || (is(1, ".terraform.d") && name == "credentials.tfrc.json")
        || (is(1, ".config") && name == "hub")
        || (is(2, ".config") && is(1, "rclone") && name == "rclone.conf")
        || below(&[".gnupg"])
        || below(&[".password-store"])
        || below(&[".azure"])
        || (is(1, ".aws") && name == "credentials")
        || (is(1, ".docker") && name == "config.json")
        || (is(1, ".kube") && name == "config")
        || (is(2, ".config") && is(1, "gh") && name == "hosts.yml")
        || below(&[".ssh"])
        || below(&[".config", "gcloud"])
}

/// A shell's or a REPL's history (`.bash_history`, `.zsh_history`, `.sh_history`,
/// `fish_history`, `.python_history`, `.psql_history`, `.mysql_history`, `.node_repl_history`,
/// `.Rhistory`...): commands typed with their tokens and passwords.
fn is_shell_history(name: &str) -> bool {
    name.ends_with("_history") || name == ".rhistory"
}

/// Whether `path` is an environment template committed to be copied (`.env.example`,
/// `.env.sample`, `.env.template`, `.env.dist`): secret by its name, not by its purpose. Only
/// what git tracks is judged so (a tracked template is published anyway); reading one still
/// asks like any `.env*`.
pub fn is_env_template(path: &Path) -> bool {
    path.file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
        .is_some_and(|name| {
            name.starts_with(".env")
                && [".example", ".sample", ".template", ".dist"]
                    .iter()
                    .any(|suffix| name.ends_with(suffix))
        })
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

    /// Issue 19, item 5: the contract's list is a minimum.
    #[test]
    fn more_secret_names() {
        for p in [
            "/root/.ssh/id_ecdsa",
            "/root/.ssh/id_ecdsa_sk",
            "/root/.ssh/id_dsa",
            "/w/deploy/id_ecdsa",
            "/w/deploy/id_dsa.old",
            "/root/.git-credentials",
            "/root/.pgpass",
            "/root/.docker/config.json",
            "/root/.kube/config",
            "/root/.config/gh/hosts.yml",
            "/w/certs/client.p12",
            "/w/certs/client.PFX",
            "/root/.ssh/deploy_key",
            "/root/.ssh/github",
            "/home/u/.SSH/work",
            "/root/.config/gcloud/credentials.db",
            "/root/.config/gcloud/application_default_credentials.json",
            "/root/.config/gcloud/legacy_credentials/me@example.com/adc.json",
            "/root/.config/gcloud/credentials.json",
            // Issue 29 point 12: more tools' tokens, and the shells' histories.
            "/root/.cargo/credentials.toml",
            "/root/.cargo/credentials",
            "/root/.bash_history",
            "/root/.zsh_history",
            "/root/.sh_history",
            "/root/.histfile",
            "/root/.local/share/fish/fish_history",
            "/root/.python_history",
            "/root/.psql_history",
            "/root/.mysql_history",
            "/root/.node_repl_history",
            "/root/.Rhistory",
            "/root/.gem/credentials",
            "/root/.vault-token",
            "/root/.terraform.d/credentials.tfrc.json",
            "/root/.config/hub",
            "/root/.config/rclone/rclone.conf",
            "/root/.gnupg/private-keys-v1.d/x.key",
            "/root/.gnupg/secring.gpg",
            "/root/.password-store/site.gpg",
            "/root/.azure/msal_token_cache.json",
            "/root/.s3cfg",
            "/root/.docker/config.json",
            "/root/.npmrc",
            "/root/.netrc",
        ] {
            assert!(is_secret_file(Path::new(p)), "{p}");
        }
        for p in [
            "/w/docker/config.json",
            "/w/kube/config",
            "/w/.config/gh/config.yml",
            "/w/src/credentials.json",
            "/w/ssh.rs",
            "/w/.sshd/notes.txt",
            "/w/.cargo/config.toml",
            "/w/src/history.rs",
            "/w/docs/history.md",
        ] {
            assert!(!is_secret_file(Path::new(p)), "{p}");
        }
    }
}
