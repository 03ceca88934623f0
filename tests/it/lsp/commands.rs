//! Diagnostics after a `bash` command that changed source files (issue 34): the files the
//! checkpoint's walk found changed are given to their language server (pyright, from
//! `.ci/cache/lsp`), and the command's result ends with what the change introduced.

use serde_json::json;

use super::{exec_calls, path_with, pyright_bin, python_project};
use crate::exec::Run;

#[test]
fn a_command_that_breaks_a_source_file_gets_its_new_error_and_the_fix_gets_none() {
    let Some(bin) = pyright_bin() else {
        println!(
            "lsp::commands::a_command_that_breaks_a_source_file_gets_its_new_error_and_the_fix_\
             gets_none DID NOT RUN: pyright is not in .ci/cache/lsp (.ci/run installs it with npm)"
        );
        return;
    };
    let run = Run::new();
    python_project(&run);
    let write = |annotation: &str| {
        let line = format!("count: {annotation} = greet(\"a\")");
        let command = format!("printf 'from lib import greet\\n\\n{line}\\n' > main.py");
        ("bash", json!({ "command": command }))
    };
    let outputs = exec_calls(&run, &path_with(&bin), true, &[write("int"), write("str")]);
    super::a_new_error_then_none(&outputs, "main.py:3:");
}
