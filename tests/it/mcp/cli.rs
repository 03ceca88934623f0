//! `harness9 mcp add|list|remove`: round trips that keep what the files hold besides, and a
//! list that connects to each server.

use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use super::server::stdio_definition;

struct Home {
    _dir: tempfile::TempDir,
    workdir: std::path::PathBuf,
    home: std::path::PathBuf,
}

impl Home {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let workdir = dir.path().join("repo");
        let home = dir.path().join("home");
        std::fs::create_dir_all(&workdir).unwrap();
        Home {
            _dir: dir,
            workdir,
            home,
        }
    }

    fn mcp(&self, args: &[&str]) -> Output {
        Command::new(assert_cmd::cargo::cargo_bin!("harness9"))
            .arg("mcp")
            .args(args)
            .current_dir(&self.workdir)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("HARNESS9_HOME", &self.home)
            .stdin(Stdio::null())
            .output()
            .expect("harness9 runs")
    }

    fn read(&self, path: &std::path::Path) -> Value {
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    }
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn add_list_and_remove_round_trip_keeping_unknown_fields() {
    let h = Home::new();
    let user_file = h.home.join("mcp.json");
    std::fs::create_dir_all(&h.home).unwrap();
    let before = json!({
        "$comment": "written by hand",
        "mcpServers": {"kept": {"command": "true", "x-vendor": {"a": 1}}}
    });
    std::fs::write(&user_file, before.to_string()).unwrap();

    // A stdio server, pointing at the suite's own MCP server.
    let definition = stdio_definition("modern");
    let exe = definition["command"].as_str().unwrap().to_owned();
    let mut args = vec!["add", "t", "--env", "HARNESS9_TEST_MCP_SERVER=modern", "--"];
    let server_args: Vec<String> = definition["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_owned())
        .collect();
    args.push(&exe);
    args.extend(server_args.iter().map(String::as_str));
    ok(&h.mcp(&args));
    // An HTTP server in the project's file, with a header.
    ok(&h.mcp(&[
        "add",
        "web",
        "--scope",
        "project",
        "--url",
        "http://127.0.0.1:9/mcp",
        "--header",
        "Authorization: Bearer ${TOKEN:-none}",
    ]));
    let user = h.read(&user_file);
    assert_eq!(user["$comment"], "written by hand");
    assert_eq!(user["mcpServers"]["kept"], before["mcpServers"]["kept"]);
    assert_eq!(
        user["mcpServers"]["t"]["env"]["HARNESS9_TEST_MCP_SERVER"],
        "modern"
    );
    assert_eq!(
        h.read(&h.workdir.join(".mcp.json"))["mcpServers"]["web"],
        json!({"type": "http", "url": "http://127.0.0.1:9/mcp",
               "headers": {"Authorization": "Bearer ${TOKEN:-none}"}})
    );

    // list connects: the suite's server is connected with its tools; `kept` (the command
    // `true`) fails; the project's server is not started in this untrusted folder.
    let listed: Value = serde_json::from_str(&ok(&h.mcp(&["list", "--json"]))).unwrap();
    let row = |name: &str| {
        listed
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == name)
            .unwrap_or_else(|| panic!("{name} in {listed}"))
            .clone()
    };
    assert_eq!(row("t")["status"], "connected", "{listed}");
    assert!(
        row("t")["tools"]
            .as_array()
            .unwrap()
            .contains(&json!("mcp__t__echo"))
    );
    assert_eq!(row("kept")["status"], "failed");
    assert_eq!(row("web")["status"], "not_started");
    let text = ok(&h.mcp(&["list"]));
    assert!(
        text.contains("t  (user) connected") && text.contains("mcp__t__echo"),
        "{text}"
    );

    // remove finds the file that defines it and leaves the rest as it was.
    ok(&h.mcp(&["remove", "t"]));
    ok(&h.mcp(&["remove", "web"]));
    assert_eq!(h.read(&user_file), before);
    assert_eq!(
        h.read(&h.workdir.join(".mcp.json")),
        json!({"mcpServers": {}})
    );
    let missing = h.mcp(&["remove", "t"]);
    assert_eq!(missing.status.code(), Some(2));
}

#[test]
fn add_refuses_to_rewrite_a_file_it_cannot_parse_and_bad_usage_exits_2() {
    let h = Home::new();
    std::fs::create_dir_all(&h.home).unwrap();
    std::fs::write(h.home.join("mcp.json"), "{oops").unwrap();
    let out = h.mcp(&["add", "x", "--", "srv"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        std::fs::read_to_string(h.home.join("mcp.json")).unwrap(),
        "{oops"
    );
    assert_eq!(h.mcp(&["add", "x"]).status.code(), Some(2));
    assert_eq!(
        h.mcp(&["add", "x", "--env", "NOEQUALS", "--", "srv"])
            .status
            .code(),
        Some(2)
    );
}
