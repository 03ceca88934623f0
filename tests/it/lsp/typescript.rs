//! typescript-language-server (with `typescript` 5, both from `.ci/cache/lsp`, which `.ci/run`
//! installs with npm) through `harness9 exec --json`: an edit that introduces a type error gets
//! it in its result, and the edit that fixes it gets none (issue 34).

use std::path::PathBuf;

use serde_json::json;

use super::{exec_calls, path_with};
use crate::exec::Run;

/// Where `.ci/run` installs typescript-language-server, when TypeScript's tsserver is beside it.
fn typescript_bin() -> Option<PathBuf> {
    let cache = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".ci/cache/lsp/node_modules");
    let bin = cache.join(".bin");
    let server = bin.join("typescript-language-server").exists();
    let tsserver = cache.join("typescript/lib/tsserver.js").exists();
    (server && tsserver).then_some(bin)
}

#[test]
fn a_typescript_edit_that_introduces_a_type_error_gets_it_and_the_fix_gets_none() {
    let Some(bin) = typescript_bin() else {
        println!(
            "lsp::typescript::a_typescript_edit_that_introduces_a_type_error_gets_it_and_the_fix_\
             gets_none DID NOT RUN: typescript-language-server and typescript@5 are not in \
             .ci/cache/lsp (.ci/run installs them with npm)"
        );
        return;
    };
    let run = Run::new();
    std::fs::write(run.workdir.join("package.json"), r#"{"name": "p"}"#).unwrap();
    std::fs::write(
        run.workdir.join("tsconfig.json"),
        r#"{"compilerOptions": {"strict": true}}"#,
    )
    .unwrap();
    std::fs::write(
        run.workdir.join("lib.ts"),
        "export function greet(name: string): string {\n  return \"hello \" + name;\n}\n",
    )
    .unwrap();
    let broken = "import { greet } from \"./lib\";\n\nconst count: number = greet(\"a\");\n";
    let fixed = "import { greet } from \"./lib\";\n\nconst count: string = greet(\"a\");\n";
    let outputs = exec_calls(
        &run,
        &path_with(&bin),
        true,
        &[
            ("write_file", json!({"path": "main.ts", "content": broken})),
            ("write_file", json!({"path": "main.ts", "content": fixed})),
        ],
    );
    super::a_new_error_then_none(&outputs, "main.ts:3:");
    assert!(outputs[0].contains("not assignable"), "{}", outputs[0]);
}
