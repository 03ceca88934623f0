//! The macOS sandbox: one Seatbelt profile (SBPL) generated from a `Spec` and passed to
//! `sandbox-exec -p`. It cannot run on this Linux machine, so its text is what the tests check.
//! Invariant: everything is denied unless allowed below; writes are allowed only beneath the
//! writable roots and never beneath the protected paths, which Seatbelt matches by name, so
//! they stay protected where they do not exist yet.

use std::fmt::Write;
use std::path::Path;

use super::Spec;

/// An SBPL string literal.
fn quoted(path: &Path) -> String {
    let mut out = String::from("\"");
    for c in path.to_string_lossy().chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// A regex matching `path` literally, for SBPL's `#"..."` syntax.
fn regex_literal(path: &Path) -> String {
    let mut out = String::new();
    for c in path.to_string_lossy().chars() {
        if "\\.+*?()|[]{}^$\"".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The protected names of a writable workdir, as SBPL filters (by name, so they hold where
/// nothing exists yet: `.git` itself cannot be created, replaced, renamed or removed).
fn protected_filters(workdir: &Path) -> Vec<String> {
    let subpath = |name: &str| format!("(subpath {})", quoted(&workdir.join(name)));
    let literal = |name: &str| format!("(literal {})", quoted(&workdir.join(name)));
    vec![
        subpath(".harness9"),
        literal(".git"),
        subpath(".git/hooks"),
        literal(".git/config"),
        literal(".git/config.worktree"),
        literal(".git/commondir"),
        subpath(".git/modules"),
        subpath(".git/worktrees"),
        literal(".mcp.json"),
        format!(
            "(regex #\"^{}/\\.env[^/]*(/.*)?$\")",
            regex_literal(workdir)
        ),
    ]
}

/// Everything a write must not touch: the protected names, the spec's read-only and hidden
/// paths, and its pinned directories themselves (not what is in them: no rename or removal).
fn unwritable_filters(spec: &Spec, workdir: &Path) -> Vec<String> {
    let mut out = protected_filters(workdir);
    for path in spec.read_only.iter().chain(&spec.hidden) {
        out.push(format!("(subpath {})", quoted(path)));
    }
    for path in &spec.pinned {
        out.push(format!("(literal {})", quoted(path)));
    }
    out
}

/// The Seatbelt profile for `spec`.
pub fn profile(spec: &Spec) -> String {
    let mut p = String::from(
        "(version 1)\n\
         (deny default)\n\
         (allow process-exec)\n\
         (allow process-fork)\n\
         (allow signal (target same-sandbox))\n\
         (allow sysctl-read)\n\
         (allow mach-lookup)\n\
         (allow ipc-posix-shm)\n\
         (allow file-read*)\n",
    );
    for hidden in &spec.hidden {
        let _ = writeln!(p, "(deny file-read* (subpath {}))", quoted(hidden));
    }
    let protected: Vec<String> = spec
        .writable
        .first()
        .map(|workdir| unwritable_filters(spec, workdir))
        .unwrap_or_default();
    for root in &spec.writable {
        if protected.is_empty() {
            let _ = writeln!(p, "(allow file-write* (subpath {}))", quoted(root));
        } else {
            let _ = writeln!(
                p,
                "(allow file-write* (require-all (subpath {}) (require-not (require-any {}))))",
                quoted(root),
                protected.join(" ")
            );
        }
    }
    for device in &spec.devices {
        let _ = writeln!(p, "(allow file-write* (literal {}))", quoted(device));
    }
    // Without the network, no Unix socket either: one outside (Docker's) reaches a process
    // that is not sandboxed.
    if spec.network {
        p.push_str("(allow network*)\n");
    }
    p
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    fn spec(network: bool, writable: &[&str]) -> Spec {
        Spec {
            network,
            writable: writable.iter().map(PathBuf::from).collect(),
            devices: vec![PathBuf::from("/dev/null")],
            pinned: Vec::new(),
            read_only: Vec::new(),
            hidden: vec![PathBuf::from("/Users/me/.harness9")],
        }
    }

    #[test]
    fn workspace_write_allows_the_roots_but_not_the_protected_names() {
        let text = profile(&spec(false, &["/Users/me/proj \"x\"", "/private/tmp"]));
        assert!(text.starts_with("(version 1)\n(deny default)\n"));
        assert!(text.contains("(deny file-read* (subpath \"/Users/me/.harness9\"))"));
        // The workdir as SBPL quotes it.
        let w = "/Users/me/proj \\\"x\\\"";
        let unwritable = [
            format!("(subpath \"{w}/.harness9\")"),
            format!("(literal \"{w}/.git\")"),
            format!("(subpath \"{w}/.git/hooks\")"),
            format!("(literal \"{w}/.git/config\")"),
            format!("(literal \"{w}/.git/config.worktree\")"),
            format!("(literal \"{w}/.git/commondir\")"),
            format!("(subpath \"{w}/.git/modules\")"),
            format!("(subpath \"{w}/.git/worktrees\")"),
            format!("(literal \"{w}/.mcp.json\")"),
            format!("(regex #\"^{w}/\\.env[^/]*(/.*)?$\")"),
            "(subpath \"/Users/me/.harness9\")".to_owned(),
        ];
        let expected = format!(
            "(allow file-write* (require-all (subpath \"{w}\") (require-not (require-any {}))))",
            unwritable.join(" ")
        );
        assert!(text.contains(&expected), "{text}");
        assert!(text.contains("(allow file-write* (literal \"/dev/null\"))"));
        assert!(!text.contains("network"), "{text}");
    }

    #[test]
    fn pinned_directories_cannot_be_renamed_and_read_only_paths_not_written() {
        let mut spec = spec(false, &["/private/tmp/w"]);
        spec.pinned = vec![PathBuf::from("/private/tmp/w/.git")];
        spec.read_only = vec![PathBuf::from("/private/tmp/main/.git/config")];
        let text = profile(&spec);
        assert!(
            text.contains("(subpath \"/private/tmp/main/.git/config\")"),
            "{text}"
        );
        assert!(
            text.contains("(literal \"/private/tmp/w/.git\")))))"),
            "{text}"
        );
    }

    #[test]
    fn read_only_allows_no_write_but_devices_and_network_follows_the_spec() {
        let text = profile(&spec(true, &[]));
        let writes: Vec<&str> = text.lines().filter(|l| l.contains("file-write")).collect();
        assert_eq!(writes, ["(allow file-write* (literal \"/dev/null\"))"]);
        assert!(text.contains("(allow network*)\n"));
    }
}
