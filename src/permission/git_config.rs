//! Whether the configuration a repository controls lets git run a program of its choosing on a
//! command that only reads: a cloned or unpacked folder's `.git/config` can name a clean filter
//! (`git status` runs it), an external diff (`git diff`), an fsmonitor, a pager, a textconv, a
//! gpg program with `log.showSignature`... Read with a real git configuration parser
//! (`gix-config`), following every `include.path` and `includeIf.*.path` whatever its condition
//! (a condition that does not hold today may hold tomorrow), in the repository's `config`, its
//! worktree configuration and those of the repositories a command recurses into (populated
//! submodules). Only keys on an allowlist of settings known to run nothing count as inert:
//! anything else keeps the command from being read-only, so it asks. The user's own
//! `~/.gitconfig` and the system's are theirs and not judged.

use std::path::{Path, PathBuf};

use gix_config::file::Metadata;

use super::tracked::{self, TrackedError};

/// Sections whose every key (and subsection) is inert for commands that only read.
const INERT_SECTIONS: &[&str] = &[
    "advice",
    "color",
    "column",
    "i18n",
    "status",
    "user",
    "author",
    "committer",
    "init",
    "pull",
    "push",
    "fetch",
    "pack",
    "index",
    "rerere",
    "feature",
    "lfs",
    "blame",
];

/// Keys (`section.name`, lower case) of sections without a subsection that are inert.
const INERT_KEYS: &[&str] = &[
    "core.repositoryformatversion",
    "core.filemode",
    "core.bare",
    "core.logallrefupdates",
    "core.ignorecase",
    "core.precomposeunicode",
    "core.symlinks",
    "core.autocrlf",
    "core.eol",
    "core.safecrlf",
    "core.quotepath",
    "core.checkstat",
    "core.trustctime",
    "core.abbrev",
    "core.compression",
    "core.loosecompression",
    "core.commentchar",
    "core.commentstring",
    "core.whitespace",
    "core.untrackedcache",
    "core.splitindex",
    "core.multipackindex",
    "core.preloadindex",
    "core.bigfilethreshold",
    "core.longpaths",
    "core.protectntfs",
    "core.protecthfs",
    "core.sparsecheckout",
    "core.sparsecheckoutcone",
    "core.warnambiguousrefs",
    "diff.renames",
    "diff.renamelimit",
    "diff.algorithm",
    "diff.noprefix",
    "diff.mnemonicprefix",
    "diff.colormoved",
    "diff.colormovedws",
    "diff.indentheuristic",
    "diff.context",
    "diff.interhunkcontext",
    "diff.submodule",
    "diff.statgraphwidth",
    "diff.dirstat",
    "diff.relative",
    "diff.ignoresubmodules",
    "diff.suppressblankempty",
    "diff.wserrorhighlight",
    "log.date",
    "log.decorate",
    "log.abbrevcommit",
    "log.follow",
    "log.showroot",
    "log.mailmap",
    "log.graphcolors",
    "log.excludedecoration",
    "log.diffmerges",
    "merge.ff",
    "merge.conflictstyle",
    "merge.renames",
    "merge.log",
    "extensions.objectformat",
    "extensions.worktreeconfig",
    "extensions.refstorage",
    "gc.auto",
    "gc.autodetach",
    "gc.reflogexpire",
    "gc.reflogexpireunreachable",
];

/// Keys (`section.name`) of sections with a subsection (`[remote "origin"]`) that are inert.
/// A remote's URL is contacted only by commands that fetch or push, which are not read-only;
/// a promisor remote (partial clone), which reading commands fetch from, is not on the list.
const INERT_NAMED_KEYS: &[&str] = &[
    "remote.url",
    "remote.fetch",
    "remote.pushurl",
    "remote.push",
    "remote.tagopt",
    "remote.prune",
    "remote.prunetags",
    "remote.mirror",
    "remote.skipdefaultupdate",
    "remote.skipfetchall",
    "branch.remote",
    "branch.merge",
    "branch.rebase",
    "branch.pushremote",
    "branch.description",
];

/// How deep includes may nest, as git allows.
const MAX_INCLUDE_DEPTH: usize = 10;
/// Configuration files read for one judgement, at most (includes and submodules together).
const MAX_FILES: usize = 64;

/// Why the configuration a repository controls keeps a git command from counting as read-only.
#[derive(Debug, thiserror::Error)]
pub(super) enum NotInert {
    #[error(
        "the repository's configuration sets `{key}` ({}), which could name a program git runs",
        file.display()
    )]
    Names { key: String, file: PathBuf },
    #[error("the repository's configuration {} cannot be read: {source}", file.display())]
    Unreadable {
        file: PathBuf,
        source: std::io::Error,
    },
    #[error("the repository's configuration {} is not one git could parse", file.display())]
    Unparsable { file: PathBuf },
    #[error(
        "the repository's configuration includes more than {MAX_FILES} files or nests deeper than {MAX_INCLUDE_DEPTH}"
    )]
    TooMany,
    #[error("which repository git reads is not known: {0}")]
    Repository(#[from] TrackedError),
}

/// `Ok` when git, run in `dir`, would find no repository, or one whose configuration (and that
/// of the populated submodules it recurses into) sets only inert keys.
pub(super) fn check(dir: &Path) -> Result<(), NotInert> {
    tracked::redirected()?;
    let Some(layout) = tracked::discover(dir)? else {
        return Ok(());
    };
    let mut read = 0;
    check_git_dir(&layout.git_dir, &mut read)?;
    // `git status`, `git grep --recurse-submodules`... run git in every populated submodule,
    // which reads that repository's own configuration.
    let tracked = tracked::tracked(&layout.toplevel)?;
    for file in tracked.iter().flat_map(|t| t.files.iter()) {
        if file.join(".git").exists()
            && let Some(inner) = tracked::discover(file)?
        {
            check_git_dir(&inner.git_dir, &mut read)?;
        }
    }
    Ok(())
}

/// The configuration files of one git directory: its `config` and `config.worktree`, and for a
/// linked worktree those of the repository it shares (`commondir`).
fn check_git_dir(git_dir: &Path, read: &mut usize) -> Result<(), NotInert> {
    let mut dirs = vec![git_dir.to_owned()];
    if let Ok(common) = std::fs::read_to_string(git_dir.join("commondir")) {
        dirs.push(git_dir.join(common.trim()));
    }
    for dir in dirs {
        for name in ["config", "config.worktree"] {
            check_file(&dir.join(name), 0, read)?;
        }
    }
    Ok(())
}

/// One configuration file and everything it includes. A file that does not exist sets nothing
/// (git skips a missing include too).
fn check_file(file: &Path, depth: usize, read: &mut usize) -> Result<(), NotInert> {
    if depth > MAX_INCLUDE_DEPTH || *read >= MAX_FILES {
        return Err(NotInert::TooMany);
    }
    let bytes = match std::fs::read(file) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(source) => {
            return Err(NotInert::Unreadable {
                file: file.to_owned(),
                source,
            });
        }
    };
    *read += 1;
    let parsed = gix_config::File::from_bytes_no_includes(
        &bytes,
        Metadata::from(gix_config::Source::Local),
        Default::default(),
    )
    .map_err(|_| NotInert::Unparsable {
        file: file.to_owned(),
    })?;
    for section in parsed.sections() {
        let header = section.header();
        let name = header.name().to_string().to_ascii_lowercase();
        let named = header.subsection_name().is_some();
        let body = section.body();
        if name == "include" || name == "includeif" {
            for value in body.values("path") {
                if let Some(included) = include_path(file, &value.to_string()) {
                    check_file(&included, depth + 1, read)?;
                }
            }
            continue;
        }
        for key in body.value_names() {
            let key = key.to_ascii_lowercase();
            if !is_inert(&name, named, &key) {
                let subsection = header
                    .subsection_name()
                    .map(|s| format!(".{s}"))
                    .unwrap_or_default();
                return Err(NotInert::Names {
                    key: format!("{name}{subsection}.{key}"),
                    file: file.to_owned(),
                });
            }
        }
    }
    Ok(())
}

/// Whether `section.key` (lower case; `named` when the section has a subsection) is on the
/// allowlist.
fn is_inert(section: &str, named: bool, key: &str) -> bool {
    if INERT_SECTIONS.contains(&section) {
        return true;
    }
    let full = format!("{section}.{key}");
    if named {
        INERT_NAMED_KEYS.contains(&full.as_str())
    } else {
        INERT_KEYS.contains(&full.as_str())
    }
}

/// Where an include's `path` points, as git resolves it: `~/` from the home directory, a
/// relative path from the including file's directory. `None` when it cannot be resolved (git
/// then reads nothing either).
fn include_path(including: &Path, value: &str) -> Option<PathBuf> {
    if let Some(rest) = value.strip_prefix("~/") {
        return std::env::var_os("HOME").map(|home| PathBuf::from(home).join(rest));
    }
    let path = Path::new(value);
    if path.is_absolute() {
        return Some(path.to_owned());
    }
    Some(including.parent()?.join(path))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::permission::bypass_tests::git;

    fn repository(config: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let top = dir.path().canonicalize().unwrap();
        git(&top, &["init", "-q"]);
        let path = top.join(".git/config");
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str(config);
        std::fs::write(&path, text).unwrap();
        (dir, top)
    }

    #[test]
    fn a_fresh_repository_and_a_clones_settings_are_inert() {
        let (_dir, top) = repository(
            "[remote \"origin\"]\n\turl = https://example.invalid/x.git\n\t\
             fetch = +refs/heads/*:refs/remotes/origin/*\n[branch \"main\"]\n\tremote = origin\n\t\
             merge = refs/heads/main\n[user]\n\tname = A\n",
        );
        check(&top).unwrap();
        let outside = tempfile::tempdir().unwrap();
        check(outside.path()).unwrap();
    }

    #[test]
    fn keys_that_name_programs_are_not_inert_in_any_spelling() {
        for config in [
            "[filter \"x\"]\n\tclean = touch marker\n",
            "[diff]\n\texternal = touch marker\n",
            "[Diff \"x\"]\n\ttextconv = cat\n",
            "[core]\n\tfsmonitor = touch marker\n",
            "[core]\n\tPager = less\n",
            "[core]\n\tsshCommand = ssh\n",
            "[log]\n\tshowSignature = true\n[gpg]\n\tprogram = x\n",
            "[credential]\n\thelper = store\n",
            "[merge \"x\"]\n\tdriver = x\n",
            "[core]\n\thooksPath = hooks\n",
            "[remote \"origin\"]\n\tpromisor = true\n",
            "[core]\n\tfsmonitor\n",
        ] {
            let (_dir, top) = repository(config);
            assert!(
                matches!(check(&top), Err(NotInert::Names { .. })),
                "{config}"
            );
        }
    }

    #[test]
    fn includes_are_followed_whatever_their_condition() {
        let (_dir, top) = repository("[includeIf \"gitdir:/nowhere/\"]\n\tpath = ../extra\n");
        std::fs::write(top.join("extra"), "[core]\n\tpager = touch marker\n").unwrap();
        let err = check(&top).unwrap_err();
        assert!(err.to_string().contains("core.pager"), "{err}");
        let (_dir, top) = repository("[include]\n\tpath = missing\n");
        check(&top).unwrap();
        let (_dir, top) = repository("[include]\n\tpath = config\n");
        assert!(matches!(check(&top), Err(NotInert::TooMany)));
    }
}
