//! `Spec`: exactly what one sandboxed command may touch, as absolute canonical paths, computed
//! in harness9 and handed to the platform (the Linux helper reads it as JSON). Invariant: every
//! path in it exists and is canonical, so the helper never resolves a name the command could
//! have swapped.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::SandboxMode;
use super::guard::protected_paths;

/// Devices commands write to as a matter of course (`> /dev/null`).
const WRITABLE_DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
];

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Spec {
    /// Whether network sockets are allowed (AF_UNIX always is).
    pub network: bool,
    /// Directories writable with everything beneath them; empty in read-only mode.
    pub writable: Vec<PathBuf>,
    /// Device files that stay writable in every mode.
    pub devices: Vec<PathBuf>,
    /// Existing files and directories inside `writable` that must stay read-only.
    pub read_only: Vec<PathBuf>,
    /// Directories the command must not even read (`$HARNESS9_HOME`).
    pub hidden: Vec<PathBuf>,
}

impl Spec {
    /// The spec of one call in `mode` (not `off`).
    pub fn build(
        mode: SandboxMode,
        network: bool,
        workdir: &Path,
        writable_roots: &[PathBuf],
        home: &Path,
    ) -> Spec {
        let mut writable = Vec::new();
        if mode == SandboxMode::WorkspaceWrite {
            let temp = [PathBuf::from("/tmp"), std::env::temp_dir()];
            for path in std::iter::once(workdir)
                .chain(temp.iter().map(PathBuf::as_path))
                .chain(writable_roots.iter().map(PathBuf::as_path))
            {
                if let Ok(path) = path.canonicalize()
                    && path.is_dir()
                    && !writable.contains(&path)
                {
                    writable.push(path);
                }
            }
        }
        let read_only = if writable.is_empty() {
            Vec::new()
        } else {
            protected_paths(workdir)
                .into_iter()
                .filter_map(|p| p.canonicalize().ok())
                .filter(|p| writable.iter().any(|root| p.starts_with(root)))
                .collect()
        };
        let devices = WRITABLE_DEVICES
            .iter()
            .map(PathBuf::from)
            .filter(|p| p.exists())
            .collect();
        // Hiding a directory that holds the workdir would hide the workdir too.
        let hidden = home
            .canonicalize()
            .ok()
            .filter(|home| home.is_dir() && !workdir.starts_with(home))
            .into_iter()
            .collect();
        Spec {
            network: network && mode == SandboxMode::WorkspaceWrite,
            writable,
            devices,
            read_only,
            hidden,
        }
    }
}
