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

/// The protected names of a writable workdir, as SBPL filters.
fn protected_filters(workdir: &Path) -> Vec<String> {
    vec![
        format!("(subpath {})", quoted(&workdir.join(".harness9"))),
        format!("(subpath {})", quoted(&workdir.join(".git/hooks"))),
        format!("(literal {})", quoted(&workdir.join(".git/config"))),
        format!("(literal {})", quoted(&workdir.join(".mcp.json"))),
        format!(
            "(regex #\"^{}/\\.env[^/]*(/.*)?$\")",
            regex_literal(workdir)
        ),
    ]
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
        .map(|workdir| protected_filters(workdir))
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
            read_only: Vec::new(),
            hidden: vec![PathBuf::from("/Users/me/.harness9")],
        }
    }

    #[test]
    fn workspace_write_allows_the_roots_but_not_the_protected_names() {
        let text = profile(&spec(false, &["/Users/me/proj \"x\"", "/private/tmp"]));
        assert!(text.starts_with("(version 1)\n(deny default)\n"));
        assert!(text.contains("(deny file-read* (subpath \"/Users/me/.harness9\"))"));
        assert!(text.contains(
            "(allow file-write* (require-all (subpath \"/Users/me/proj \\\"x\\\"\") (require-not (require-any \
             (subpath \"/Users/me/proj \\\"x\\\"/.harness9\") (subpath \"/Users/me/proj \\\"x\\\"/.git/hooks\") \
             (literal \"/Users/me/proj \\\"x\\\"/.git/config\") (literal \"/Users/me/proj \\\"x\\\"/.mcp.json\") \
             (regex #\"^/Users/me/proj \\\"x\\\"/\\.env[^/]*(/.*)?$\")))))"
        ), "{text}");
        assert!(text.contains("(allow file-write* (literal \"/dev/null\"))"));
        assert!(!text.contains("network"), "{text}");
    }

    #[test]
    fn read_only_allows_no_write_but_devices_and_network_follows_the_spec() {
        let text = profile(&spec(true, &[]));
        let writes: Vec<&str> = text.lines().filter(|l| l.contains("file-write")).collect();
        assert_eq!(writes, ["(allow file-write* (literal \"/dev/null\"))"]);
        assert!(text.contains("(allow network*)\n"));
    }
}
