//! The module graph's rules (docs/ARCHITECTURE.md), checked against the source: no top-level
//! module of `src/` imports one that imports it back, and no forbidden arrow exists, directly or
//! through modules in between. A failure names the modules and, for each arrow, a file and line
//! that makes it.

mod graph;
mod graph_tests;
mod source;

use std::path::Path;

use graph::Graph;

/// Which modules a rule speaks of.
enum Modules {
    These(&'static [&'static str]),
    /// Every top-level module but those of these lists.
    AllBut(&'static [&'static [&'static str]]),
}

impl Modules {
    fn contains(&self, module: &str) -> bool {
        match self {
            Modules::These(names) => names.contains(&module),
            Modules::AllBut(lists) => !lists.iter().any(|names| names.contains(&module)),
        }
    }

    fn names(&self) -> Vec<&'static str> {
        match self {
            Modules::These(names) => names.to_vec(),
            Modules::AllBut(lists) => lists.concat(),
        }
    }
}

/// `from` never reaches a module of `never`, directly or through others.
struct Rule {
    from: Modules,
    never: Modules,
    why: &'static str,
}

use Modules::{AllBut, These};

const FRONT_ENDS: &[&str] = &[
    "acp",
    "eval",
    "exec",
    "memory_cmd",
    "serve",
    "sessions_cmd",
    "tui",
    "worktree_cmd",
];

/// The leaves: they import nothing of ours, so every module may use them.
const LEAVES: &[&str] = &[
    "schema",
    "files",
    "shell",
    "terminal_text",
    "heap",
    "hardening",
    "detach",
    "private_home",
];

/// The forbidden arrows (docs/ARCHITECTURE.md, "Rules"). A leaf may import only the leaves
/// named beside it.
const RULES: &[Rule] = &[
    Rule {
        from: These(LEAVES),
        never: AllBut(&[]),
        why: "a leaf imports nothing of ours: everything may use it",
    },
    Rule {
        from: These(&["images"]),
        never: AllBut(&[&["schema", "files"]]),
        why: "images is a leaf the providers use: it may use only the leaves schema and files",
    },
    Rule {
        from: These(&["config"]),
        never: These(FRONT_ENDS),
        why: "config knows no front end (EvalArgs lives in config)",
    },
    Rule {
        from: AllBut(&[&["tui"]]),
        never: These(&["tui"]),
        why: "the core never imports the TUI: the TUI is a client of the session core",
    },
    Rule {
        from: These(&["provider"]),
        never: These(&["engine", "context"]),
        why: "providers speak the data model only (image encoding is the leaf `images`)",
    },
    Rule {
        from: These(&["tools", "web", "mcp", "lsp"]),
        never: These(&["engine", "permission"]),
        why: "tools run what they are given; the permission check and the engine sit above them \
              and pass judgements in (a read-deny function, a ReadGuard)",
    },
    Rule {
        from: These(&["context", "memory", "sandbox"]),
        never: These(&["tools"]),
        why: "tools use them; the general file helpers they need live in the leaf `files`",
    },
    Rule {
        from: These(&["planning"]),
        never: These(&["permission"]),
        why: "the permission check asks planning (plan mode, read-only commands); the shell \
              grammar both use is the leaf `shell`",
    },
    Rule {
        from: These(&["agents"]),
        never: These(&["tools"]),
        why: "agents and tools meet in the engine; ToolKind and TASK_TOOL live in schema",
    },
    Rule {
        from: These(&["tools"]),
        never: These(&["agents"]),
        why: "agents and tools meet in the engine: the task tool is given the agents' names",
    },
];

/// Arrows forbidden only when direct: these front ends reach storage, and everything below the
/// session core, through the session core, which itself may import them.
const DIRECT_RULES: &[Rule] = &[
    Rule {
        from: These(&[
            "acp",
            "eval",
            "exec",
            "memory_cmd",
            "serve",
            "sessions_cmd",
            "worktree_cmd",
        ]),
        never: These(&["memory"]),
        why: "a front end reaches storage only through the session core (session::Catalogue and \
              the session's requests), never the store itself",
    },
    Rule {
        from: These(&["tui"]),
        never: AllBut(&[&["tui", "session", "engine", "images"], LEAVES]),
        why: "the TUI is a client of the session core: it sends Requests and shows Updates, whose \
              payloads are the session's view types (session::views), the data model (schema) \
              and the engine's Event types; what it starts with (settings, display, logs) comes \
              as session types (session::launch); never config, observe, tools or the internals \
              below the core",
    },
];

fn graph() -> Graph {
    Graph::read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"))
}

/// `path`'s arrows, one a line, each with a place that makes it.
fn arrows(graph: &Graph, path: &[String]) -> String {
    path.windows(2)
        .map(|pair| format!("    {}\n", graph.explain(&pair[0], &pair[1])))
        .collect()
}

const HOW_TO_FIX: &str = "Move the code to the module its layer says (docs/ARCHITECTURE.md), \
     or pass what the lower module needs in (a plain parameter, a callback, a trait it defines).";

#[test]
fn no_top_level_module_imports_one_that_imports_it_back() {
    let graph = graph();
    let cycles = graph.cycles();
    let report: String = cycles
        .iter()
        .map(|(group, cycle)| {
            format!(
                "these modules import each other: {}\n  one cycle: {}\n{}",
                group.join(", "),
                cycle.join(" -> "),
                arrows(&graph, cycle)
            )
        })
        .collect();
    assert!(cycles.is_empty(), "{report}{HOW_TO_FIX}");
}

#[test]
fn no_module_reaches_one_a_rule_forbids() {
    let graph = graph();
    let mut broken = String::new();
    for rule in RULES {
        for from in graph.modules.iter().filter(|m| rule.from.contains(m)) {
            let forbidden = |m: &str| m != from && rule.never.contains(m);
            if let Some(path) = graph.path_to(from, forbidden) {
                broken.push_str(&format!(
                    "{from} must never reach {} ({}), but: {}\n{}",
                    path.last().expect("a path has an end"),
                    rule.why,
                    path.join(" -> "),
                    arrows(&graph, &path)
                ));
            }
        }
    }
    assert!(broken.is_empty(), "{broken}{HOW_TO_FIX}");
}

#[test]
fn no_module_imports_one_a_direct_rule_forbids() {
    let graph = graph();
    let mut broken = String::new();
    for rule in DIRECT_RULES {
        for from in graph.modules.iter().filter(|m| rule.from.contains(m)) {
            for to in graph.targets(from).filter(|m| rule.never.contains(m)) {
                broken.push_str(&format!(
                    "{from} must never import {to} ({})\n    {}\n",
                    rule.why,
                    graph.explain(from, to)
                ));
            }
        }
    }
    assert!(broken.is_empty(), "{broken}{HOW_TO_FIX}");
}

/// A rule naming a module that is gone (renamed, merged) would pass without checking anything.
#[test]
fn the_rules_name_modules_that_exist() {
    let graph = graph();
    for rule in RULES.iter().chain(DIRECT_RULES) {
        for name in rule.from.names().into_iter().chain(rule.never.names()) {
            assert!(
                graph.modules.contains(name),
                "a rule names `{name}`, which src/lib.rs does not declare ({})",
                rule.why
            );
        }
    }
    assert!(
        graph.modules.len() > 20 && graph.arrows.len() > 20,
        "the graph was not read: {:?}",
        graph.modules
    );
}

/// The terminal is the TUI's: nothing outside `src/tui` draws or reads keys.
#[test]
fn only_the_tui_uses_the_terminal_libraries() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    graph::rust_files(&src, &mut files);
    let mut found = String::new();
    for file in files {
        let relative = file.strip_prefix(&src).expect("a file under src");
        if relative.starts_with("tui") || relative == Path::new("tui.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&file).expect("a source file is readable");
        let stripped = source::strip(&text);
        for library in ["ratatui", "crossterm"] {
            if let Some(line) = source::first_use_of(&stripped, library) {
                found.push_str(&format!(
                    "    src/{}:{line} uses {library}\n",
                    relative.display()
                ));
            }
        }
    }
    assert!(
        found.is_empty(),
        "only src/tui may use ratatui and crossterm (docs/ARCHITECTURE.md):\n{found}"
    );
}
