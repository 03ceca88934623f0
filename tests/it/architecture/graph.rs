//! The graph of `src/`'s top-level modules: an arrow `a -> b` for every place in a file under
//! `a` that names the top-level module `b` (`source::references`). Each arrow keeps the places
//! that make it, so a failure can say where to look.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};

use super::source::{declared_modules, references, strip};

/// A place in the source that makes an arrow: file (relative to the crate) and line.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Site {
    pub file: String,
    pub line: usize,
}

pub struct Graph {
    pub modules: BTreeSet<String>,
    pub arrows: BTreeMap<String, BTreeMap<String, Vec<Site>>>,
}

impl Graph {
    /// The graph of the crate whose `src/` is `src` (modules as `lib.rs` declares them).
    pub fn read(src: &Path) -> Graph {
        let lib = std::fs::read_to_string(src.join("lib.rs")).expect("src/lib.rs is readable");
        let modules = declared_modules(&strip(&lib));
        let mut arrows: BTreeMap<String, BTreeMap<String, Vec<Site>>> = BTreeMap::new();
        let mut files = Vec::new();
        rust_files(src, &mut files);
        for file in files {
            let relative = file.strip_prefix(src).expect("a file under src");
            let parts: Vec<String> = relative
                .iter()
                .map(|part| part.to_string_lossy().into_owned())
                .collect();
            let top = parts[0].trim_end_matches(".rs").to_owned();
            if !modules.contains(&top) {
                continue; // lib.rs and main.rs: the crate root and the binary, not modules
            }
            let text = std::fs::read_to_string(&file).expect("a source file is readable");
            let shown = format!("src/{}", parts.join("/"));
            for (target, line) in references(&strip(&text), parts.len()) {
                if target != top && modules.contains(&target) {
                    let site = Site {
                        file: shown.clone(),
                        line,
                    };
                    let sites = arrows
                        .entry(top.clone())
                        .or_default()
                        .entry(target)
                        .or_default();
                    sites.push(site);
                }
            }
        }
        for targets in arrows.values_mut() {
            for sites in targets.values_mut() {
                sites.sort();
            }
        }
        Graph { modules, arrows }
    }

    /// The modules `from` imports directly.
    pub fn targets(&self, from: &str) -> impl Iterator<Item = &String> {
        self.arrows.get(from).into_iter().flat_map(|t| t.keys())
    }

    /// Where `from -> to` is made, for a message: the first site and how many more there are.
    pub fn explain(&self, from: &str, to: &str) -> String {
        let sites = &self.arrows[from][to];
        let more = match sites.len() - 1 {
            0 => String::new(),
            n => format!(" and {n} more"),
        };
        format!("{from} -> {to}: {}:{}{more}", sites[0].file, sites[0].line)
    }

    /// The shortest chain of arrows from `from` to any module `hit` accepts (`from` itself
    /// included, for a cycle), if there is one.
    pub fn path_to(&self, from: &str, hit: impl Fn(&str) -> bool) -> Option<Vec<String>> {
        let mut came_from: BTreeMap<String, String> = BTreeMap::new();
        let mut queue = VecDeque::from([from.to_owned()]);
        while let Some(at) = queue.pop_front() {
            for next in self.targets(&at) {
                if hit(next) {
                    let mut path = vec![next.clone(), at.clone()];
                    let mut back = &at;
                    while let Some(before) = came_from.get(back) {
                        path.push(before.clone());
                        back = before;
                    }
                    path.reverse();
                    return Some(path);
                }
                if next != from && !came_from.contains_key(next) {
                    came_from.insert(next.clone(), at.clone());
                    queue.push_back(next.clone());
                }
            }
        }
        None
    }

    /// Every group of modules that reach each other (strongly connected, more than one module),
    /// each with one cycle through its first module.
    pub fn cycles(&self) -> Vec<(Vec<String>, Vec<String>)> {
        let mut found = Vec::new();
        let mut placed = BTreeSet::new();
        for module in &self.modules {
            if placed.contains(module) {
                continue;
            }
            let group: Vec<String> = self
                .modules
                .iter()
                .filter(|other| {
                    *other == module
                        || (self.path_to(module, |m| m == other.as_str()).is_some()
                            && self.path_to(other, |m| m == module.as_str()).is_some())
                })
                .cloned()
                .collect();
            placed.extend(group.iter().cloned());
            if group.len() > 1 {
                let cycle = self
                    .path_to(module, |m| m == module.as_str())
                    .unwrap_or_default();
                found.push((group, cycle));
            }
        }
        found
    }
}

/// Every `.rs` file under `dir`, in a stable order.
pub fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("a source folder is readable")
        .map(|entry| entry.expect("a folder entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}
