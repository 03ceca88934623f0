//! Which language servers a folder may use. The built-in ones are detected from the project's
//! marker files (a Python project's `pyproject.toml`, a Rust crate's `Cargo.toml`, ...) when
//! their program is on PATH; the `lsp` section of the settings changes them or adds others
//! (`command`, `args`, `files`, `initialization_options`; `false` turns one off). Only the
//! user's own `$HARNESS9_HOME/settings.json` may name a program: a project's settings may only
//! turn a server off, since a program a cloned repository names would run with the user's rights.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use globset::{Glob, GlobSet, GlobSetBuilder};
use serde::Deserialize;
use serde_json::Value;

/// A server harness9 knows without being told.
struct Builtin {
    name: &'static str,
    /// The programs that serve, first found wins, each with its arguments.
    programs: &'static [(&'static str, &'static [&'static str])],
    files: &'static [&'static str],
    markers: &'static [&'static str],
}

const PYTHON_FILES: &[&str] = &["*.py", "*.pyi"];
const PYTHON_MARKERS: &[&str] = &["pyproject.toml", "setup.py"];

const BUILTINS: &[Builtin] = &[
    Builtin {
        name: "pyright",
        programs: &[
            ("pyright-langserver", &["--stdio"]),
            ("basedpyright-langserver", &["--stdio"]),
        ],
        files: PYTHON_FILES,
        markers: PYTHON_MARKERS,
    },
    Builtin {
        name: "ruff",
        programs: &[("ruff", &["server"])],
        files: PYTHON_FILES,
        markers: PYTHON_MARKERS,
    },
    Builtin {
        name: "typescript",
        programs: &[("typescript-language-server", &["--stdio"])],
        files: &[
            "*.ts", "*.tsx", "*.js", "*.jsx", "*.mts", "*.cts", "*.mjs", "*.cjs",
        ],
        markers: &["package.json", "tsconfig.json"],
    },
    Builtin {
        name: "rust-analyzer",
        programs: &[("rust-analyzer", &[])],
        files: &["*.rs"],
        markers: &["Cargo.toml"],
    },
    Builtin {
        name: "gopls",
        programs: &[("gopls", &[])],
        files: &["*.go"],
        markers: &["go.mod"],
    },
];

/// One server a folder may start.
#[derive(Debug, Clone)]
pub struct ServerSpec {
    pub name: String,
    /// The program, found on PATH (or as the settings name it).
    pub program: PathBuf,
    pub args: Vec<String>,
    /// The file patterns it serves (`*.py`), matched against the path below the workdir.
    pub files: Vec<String>,
    /// Files that mark a workspace root; none: the workdir is the root.
    pub markers: Vec<String>,
    pub initialization_options: Option<Value>,
    matcher: GlobSet,
}

impl ServerSpec {
    /// Whether `workdir` holds a project of its language: one of its markers at the top or one
    /// folder down (a server without markers serves every folder).
    pub fn detected_in(&self, workdir: &Path) -> bool {
        if self.markers.is_empty() {
            return true;
        }
        let has_marker = |dir: &Path| self.markers.iter().any(|m| dir.join(m).is_file());
        has_marker(workdir)
            || std::fs::read_dir(workdir).is_ok_and(|entries| {
                entries
                    .flatten()
                    .filter(|entry| entry.file_type().is_ok_and(|t| t.is_dir()))
                    .any(|entry| has_marker(&entry.path()))
            })
    }

    /// Whether it serves `file` (absolute, under `workdir`).
    pub fn serves(&self, workdir: &Path, file: &Path) -> bool {
        let relative = file.strip_prefix(workdir).unwrap_or(file);
        self.matcher.is_match(relative)
    }

    /// The workspace root of `file`: the nearest folder up to `workdir` that holds one of the
    /// markers (`None`: no project of this server's language holds the file).
    pub fn root_for(&self, workdir: &Path, file: &Path) -> Option<PathBuf> {
        if self.markers.is_empty() {
            return Some(workdir.to_path_buf());
        }
        file.ancestors()
            .skip(1)
            .take_while(|dir| dir.starts_with(workdir))
            .find(|dir| self.markers.iter().any(|marker| dir.join(marker).is_file()))
            .map(Path::to_path_buf)
    }
}

/// The language identifier the protocol names `file` by.
pub fn language_id(file: &Path) -> String {
    let extension = file.extension().and_then(|e| e.to_str()).unwrap_or("");
    match extension {
        "py" | "pyi" => "python",
        "ts" | "mts" | "cts" => "typescript",
        "tsx" => "typescriptreact",
        "js" | "mjs" | "cjs" => "javascript",
        "jsx" => "javascriptreact",
        "rs" => "rust",
        "go" => "go",
        other => other,
    }
    .to_owned()
}

/// Where a server stands for this folder, as `harness9 lsp list` shows it.
#[derive(Debug, Clone)]
pub enum Availability {
    /// It starts on the first file it serves.
    Ready(Box<ServerSpec>),
    /// None of its programs is on PATH.
    NotOnPath(Vec<String>),
    /// The settings say `false`.
    Off,
    /// Its settings entry is unusable (no command, a bad pattern).
    Broken(String),
}

/// One server, known or configured.
#[derive(Debug, Clone)]
pub struct Candidate {
    pub name: String,
    pub files: Vec<String>,
    pub markers: Vec<String>,
    pub availability: Availability,
}

/// One entry of the `lsp` section: `false`, `true`, or fields.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Fields {
    command: Option<String>,
    args: Option<Vec<String>>,
    files: Option<Vec<String>>,
    markers: Option<Vec<String>>,
    initialization_options: Option<Value>,
}

#[derive(Debug, Clone)]
enum Entry {
    Off,
    On(Fields),
}

#[derive(Debug, Default, Deserialize)]
struct File {
    #[serde(default)]
    lsp: Option<BTreeMap<String, Value>>,
}

/// The `lsp` section of one settings file; a broken one is ignored with a notice.
fn section(path: &Path, notices: &mut Vec<String>) -> BTreeMap<String, Entry> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return BTreeMap::new();
    };
    let file = match serde_json::from_str::<File>(&text) {
        Ok(file) => file,
        Err(error) => {
            notices.push(format!(
                "{}: its \"lsp\" settings were ignored: {error}",
                path.display()
            ));
            return BTreeMap::new();
        }
    };
    let mut entries = BTreeMap::new();
    for (name, value) in file.lsp.unwrap_or_default() {
        let entry = match value {
            Value::Bool(false) => Entry::Off,
            Value::Bool(true) => Entry::On(Fields::default()),
            other => match serde_json::from_value::<Fields>(other) {
                Ok(fields) => Entry::On(fields),
                Err(error) => {
                    notices.push(format!(
                        "{}: its \"lsp\" entry `{name}` was ignored: {error}",
                        path.display()
                    ));
                    continue;
                }
            },
        };
        entries.insert(name, entry);
    }
    entries
}

/// The `lsp` entries of the user's settings, narrowed by the project's two files (which may
/// only turn servers off).
fn entries(workdir: &Path, home: &Path, notices: &mut Vec<String>) -> BTreeMap<String, Entry> {
    let mut entries = section(&home.join("settings.json"), notices);
    for name in ["settings.json", "settings.local.json"] {
        let path = workdir.join(".harness9").join(name);
        for (server, entry) in section(&path, notices) {
            match entry {
                Entry::Off => {
                    entries.insert(server, Entry::Off);
                }
                Entry::On(_) => notices.push(format!(
                    "{}: its \"lsp\" entry `{server}` was ignored: only your own settings may \
                     name or change a language server (a project's may only turn one off)",
                    path.display()
                )),
            }
        }
    }
    entries
}

/// `program` found as the settings or PATH name it.
fn find_program(program: &str, path_var: Option<&OsString>) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let executable = |path: &Path| {
        std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if program.contains('/') {
        let path = PathBuf::from(program);
        return executable(&path).then_some(path);
    }
    std::env::split_paths(path_var?)
        .map(|dir| dir.join(program))
        .find(|path| executable(path))
}

fn matcher(patterns: &[String]) -> Result<GlobSet, String> {
    let mut builder = GlobSetBuilder::new();
    for pattern in patterns {
        builder.add(Glob::new(pattern).map_err(|e| format!("file pattern `{pattern}`: {e}"))?);
    }
    builder.build().map_err(|e| e.to_string())
}

fn owned(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

/// Every server known for `workdir`: the built-in ones and those the settings add, with where
/// each stands. `path_var` is the PATH programs are looked up in.
pub fn candidates(
    workdir: &Path,
    home: &Path,
    path_var: Option<&OsString>,
    notices: &mut Vec<String>,
) -> Vec<Candidate> {
    let mut entries = entries(workdir, home, notices);
    let mut out = Vec::new();
    for builtin in BUILTINS {
        let entry = entries.remove(builtin.name);
        let fields = match entry {
            Some(Entry::Off) => {
                out.push(Candidate {
                    name: builtin.name.to_owned(),
                    files: owned(builtin.files),
                    markers: owned(builtin.markers),
                    availability: Availability::Off,
                });
                continue;
            }
            Some(Entry::On(fields)) => fields,
            None => Fields::default(),
        };
        let programs: Vec<(String, Vec<String>)> = match &fields.command {
            Some(command) => vec![(command.clone(), fields.args.clone().unwrap_or_default())],
            None => builtin
                .programs
                .iter()
                .map(|(program, args)| {
                    let args = fields.args.clone().unwrap_or_else(|| owned(args));
                    ((*program).to_owned(), args)
                })
                .collect(),
        };
        out.push(candidate(
            builtin.name,
            &programs,
            fields.files.unwrap_or_else(|| owned(builtin.files)),
            fields.markers.unwrap_or_else(|| owned(builtin.markers)),
            fields.initialization_options,
            path_var,
        ));
    }
    for (name, entry) in entries {
        let Entry::On(fields) = entry else {
            continue;
        };
        let files = fields.files.unwrap_or_default();
        let Some(command) = fields.command.filter(|_| !files.is_empty()) else {
            out.push(Candidate {
                name,
                files,
                markers: Vec::new(),
                availability: Availability::Broken(
                    "a server of your own needs `command` and `files`".into(),
                ),
            });
            continue;
        };
        out.push(candidate(
            &name,
            &[(command, fields.args.unwrap_or_default())],
            files,
            fields.markers.unwrap_or_default(),
            fields.initialization_options,
            path_var,
        ));
    }
    out
}

fn candidate(
    name: &str,
    programs: &[(String, Vec<String>)],
    files: Vec<String>,
    markers: Vec<String>,
    initialization_options: Option<Value>,
    path_var: Option<&OsString>,
) -> Candidate {
    let availability = match matcher(&files) {
        Err(reason) => Availability::Broken(reason),
        Ok(matcher) => programs
            .iter()
            .find_map(|(program, args)| {
                find_program(program, path_var).map(|found| {
                    Box::new(ServerSpec {
                        name: name.to_owned(),
                        program: found,
                        args: args.clone(),
                        files: files.clone(),
                        markers: markers.clone(),
                        initialization_options: initialization_options.clone(),
                        matcher: matcher.clone(),
                    })
                })
            })
            .map_or_else(
                || Availability::NotOnPath(programs.iter().map(|(p, _)| p.clone()).collect()),
                Availability::Ready,
            ),
    };
    Candidate {
        name: name.to_owned(),
        files,
        markers,
        availability,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn program(dir: &Path, name: &str) {
        use std::os::unix::fs::PermissionsExt;
        let path = dir.join(name);
        std::fs::write(&path, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    fn ready<'a>(candidates: &'a [Candidate], name: &str) -> Option<&'a ServerSpec> {
        candidates
            .iter()
            .find(|c| c.name == name)
            .and_then(|c| match &c.availability {
                Availability::Ready(spec) => Some(spec.as_ref()),
                _ => None,
            })
    }

    #[test]
    fn a_server_is_ready_when_its_program_is_on_path_and_serves_its_project_files() {
        let bin = tempfile::tempdir().unwrap();
        let work = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        program(bin.path(), "pyright-langserver");
        std::fs::create_dir(work.path().join("app")).unwrap();
        std::fs::write(work.path().join("app/pyproject.toml"), "").unwrap();
        let path = OsString::from(bin.path());
        let all = candidates(work.path(), home.path(), Some(&path), &mut Vec::new());
        let pyright = ready(&all, "pyright").expect("pyright is ready");
        assert_eq!(pyright.args, ["--stdio"]);
        let file = work.path().join("app/m.py");
        assert!(pyright.serves(work.path(), &file));
        assert!(!pyright.serves(work.path(), &work.path().join("app/m.rs")));
        assert_eq!(
            pyright.root_for(work.path(), &file),
            Some(work.path().join("app"))
        );
        // Outside any Python project: no root, so no server for it.
        assert_eq!(
            pyright.root_for(work.path(), &work.path().join("m.py")),
            None
        );
        assert!(ready(&all, "ruff").is_none());
        assert!(pyright.detected_in(work.path()), "one folder down");
        assert!(!pyright.detected_in(&work.path().join("app/none")));
    }

    #[test]
    fn only_the_users_settings_name_a_program_and_a_project_may_only_turn_one_off() {
        let bin = tempfile::tempdir().unwrap();
        let work = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        program(bin.path(), "pyright-langserver");
        program(bin.path(), "gopls");
        std::fs::write(
            home.path().join("settings.json"),
            r#"{"lsp": {"mine": {"command": "gopls", "files": ["*.x"]}, "gopls": false}}"#,
        )
        .unwrap();
        std::fs::create_dir(work.path().join(".harness9")).unwrap();
        std::fs::write(
            work.path().join(".harness9/settings.json"),
            r#"{"lsp": {"pyright": false, "evil": {"command": "/bin/sh", "files": ["*"]}}}"#,
        )
        .unwrap();
        let path = OsString::from(bin.path());
        let mut notices = Vec::new();
        let all = candidates(work.path(), home.path(), Some(&path), &mut notices);
        assert!(ready(&all, "mine").is_some());
        assert!(ready(&all, "evil").is_none(), "{all:?}");
        for off in ["pyright", "gopls"] {
            let found = all.iter().find(|c| c.name == off).unwrap();
            assert!(matches!(found.availability, Availability::Off));
        }
        assert!(notices.iter().any(|n| n.contains("`evil`")), "{notices:?}");
    }
}
