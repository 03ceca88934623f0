//! The reader of the module graph itself: what makes an arrow and what does not.

use super::graph::Graph;
use super::source::{first_use_of, references, strip};

/// The modules `source` names from a file `depth` deep, in order.
fn named(source: &str, depth: usize) -> Vec<String> {
    references(&strip(source), depth)
        .into_iter()
        .map(|(module, _)| module)
        .collect()
}

#[test]
fn nested_groups_name_each_first_segment() {
    let source = "use crate::{\n    tools::{Tool, ToolKind},\n    schema::{self, Message},\n    self,\n    files,\n};\n";
    assert_eq!(named(source, 1), ["tools", "schema", "files"]);
    assert_eq!(
        references(&strip(source), 1),
        [
            ("tools".into(), 2),
            ("schema".into(), 3),
            ("files".into(), 5)
        ]
    );
}

#[test]
fn paths_in_code_and_re_exports_count() {
    let source = "pub use crate::a::X;\nfn f() -> crate::b::Y { crate::c::make() }\nmacro_rules! m { () => { $crate::d::go() } }\n";
    assert_eq!(named(source, 1), ["a", "b", "c", "d"]);
}

#[test]
fn comments_and_literals_make_no_arrow() {
    let source = r####"
        // crate::a::line_comment
        /// crate::b::doc_comment
        /* crate::c /* nested crate::d */ still a comment crate::e */
        const S: &str = "crate::f::in_a_string \" crate::g still";
        const R: &str = r#"crate::h "quoted" crate::i"#;
        const B: &[u8] = br##"crate::j"# crate::k"##;
        const C: char = '"';
        fn life<'a>(text: &'a str) -> crate::kept::T { let q = '\''; crate::also_kept::f(q) }
    "####;
    assert_eq!(named(source, 1), ["kept", "also_kept"]);
}

#[test]
fn super_counts_only_when_it_climbs_to_the_crate_root() {
    // src/a/b.rs is two deep: `super` is `a`, `super::super` the crate root.
    assert_eq!(named("use super::super::root_child::X;", 2), ["root_child"]);
    assert!(named("use super::sibling::X;", 2).is_empty());
    // An inline module adds a level; `self::` never climbs.
    let source =
        "mod tests {\n    use super::super::x;\n    use super::super::super::y;\n}\nuse self::z;\n";
    assert_eq!(named(source, 2), ["y"]);
}

#[test]
fn a_cycle_and_a_forbidden_path_are_named_with_the_files_that_make_them() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    std::fs::create_dir_all(src.join("c")).unwrap();
    std::fs::write(
        src.join("lib.rs"),
        "pub mod a;\npub mod b;\npub mod c;\npub mod d;\n",
    )
    .unwrap();
    std::fs::write(src.join("a.rs"), "//! a\nuse crate::b::B;\n").unwrap();
    std::fs::write(src.join("b.rs"), "use crate::{c::C, d};\n").unwrap();
    std::fs::write(src.join("c.rs"), "mod x;\n").unwrap();
    std::fs::write(src.join("c/x.rs"), "\n\nuse super::super::a::A;\n").unwrap();
    std::fs::write(src.join("d.rs"), "// crate::a is only mentioned\n").unwrap();
    let graph = Graph::read(src);
    let cycles = graph.cycles();
    assert_eq!(cycles.len(), 1);
    assert_eq!(cycles[0].0, ["a", "b", "c"]);
    assert_eq!(cycles[0].1, ["a", "b", "c", "a"]);
    assert_eq!(graph.explain("c", "a"), "c -> a: src/c/x.rs:3");
    assert_eq!(graph.path_to("a", |m| m == "d").unwrap(), ["a", "b", "d"]);
    assert_eq!(graph.path_to("d", |_| true), None);
}

#[test]
fn a_crate_is_found_in_code_not_in_comments_or_strings() {
    let source =
        "// ratatui is the TUI's\nconst S: &str = \"ratatui::Frame\";\nuse ratatui::Frame;\n";
    assert_eq!(first_use_of(&strip(source), "ratatui"), Some(3));
    assert_eq!(first_use_of(&strip(source), "crossterm"), None);
}
