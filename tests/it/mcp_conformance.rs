//! The official MCP conformance suite (npm `@modelcontextprotocol/conformance`, installed by
//! `.ci/run` into `.ci/cache/conformance`): each of its client scenarios starts its server and
//! runs the real `harness9 exec` against it, through a `mcp.json` naming that server and a
//! scripted model that calls the scenario's tool. The suite judges what reached its server.
//! Without node or the suite the test says it did not run and why.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::exec::Run;
use crate::support::{MockLlm, Reply, Split, openai_text_sse, openai_tool_sse};

/// The scenarios harness9 passes; a scenario that leaves this list fails the test (the report
/// printed shows every scenario, so one that starts passing can join it). `auth/resource-mismatch`
/// passes because harness9 sends no token to a resource the metadata does not vouch for.
const PASSING: &[&str] = &[
    "initialize",
    "tools_call",
    "elicitation-sep1034-client-defaults",
    "sse-retry",
    "auth/metadata-default",
    "auth/metadata-var1",
    "auth/metadata-var2",
    "auth/metadata-var3",
    "auth/basic-cimd",
    "auth/scope-from-www-authenticate",
    "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined",
    "auth/scope-retry-limit",
    "auth/token-endpoint-auth-basic",
    "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none",
    "auth/pre-registration",
    "auth/2025-03-26-oauth-metadata-backcompat",
    "auth/2025-03-26-oauth-endpoint-fallback",
    "auth/resource-mismatch",
    "auth/offline-access-scope",
    "auth/offline-access-not-supported",
    "auth/client-credentials-basic",
    "auth/client-credentials-jwt",
];

/// The suite's entry point under `.ci/cache/conformance`.
fn suite() -> Result<PathBuf, String> {
    let root = std::env::var_os("HARNESS9_MCP_CONFORMANCE")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci/cache/conformance"));
    let entry = root.join("node_modules/@modelcontextprotocol/conformance/dist/index.js");
    if !entry.exists() {
        return Err(format!(
            "{} is not installed (.ci/run installs it with npm; or set HARNESS9_MCP_CONFORMANCE)",
            entry.display()
        ));
    }
    let node = Command::new("node").arg("--version").output();
    match node {
        Ok(out) if out.status.success() => Ok(entry),
        _ => Err("node is not on PATH".into()),
    }
}

/// The suite runs on Node 20 through this loader (its bundle imports a Node 22 function at load
/// for a command we do not use).
fn node20_loader() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance/node20.mjs")
}

/// Every client scenario the suite lists.
fn client_scenarios(entry: &Path) -> Vec<String> {
    let out = Command::new("node")
        .arg("--import")
        .arg(node20_loader())
        .arg(entry)
        .arg("list")
        .output()
        .expect("node runs");
    let text = String::from_utf8_lossy(&out.stdout);
    let clients = text
        .split_once("Client scenarios")
        .map(|(_, rest)| rest)
        .unwrap_or("");
    clients
        .lines()
        .filter_map(|line| line.trim().strip_prefix("- "))
        .filter_map(|line| line.split_whitespace().next())
        .map(str::to_owned)
        .collect()
}

/// The tool the scripted model calls in a scenario, and its arguments.
fn tool_for(scenario: &str) -> Option<(&'static str, Value)> {
    match scenario {
        "initialize" => None,
        "tools_call" => Some(("add_numbers", json!({"a": 2, "b": 3}))),
        "elicitation-sep1034-client-defaults" => {
            Some(("test_client_elicitation_defaults", json!({})))
        }
        "sse-retry" => Some(("test_reconnection", json!({}))),
        _ => Some(("test-tool", json!({}))),
    }
}

/// The script the suite runs as the client, with the server's URL as its argument: it names
/// that server in the user's `mcp.json` and runs `harness9 exec`.
fn client_script(run: &Run, scenario: &str) -> PathBuf {
    let bin = assert_cmd::cargo::cargo_bin!("harness9");
    let script = run.home.join("client.sh");
    let events = run.home.join("events.jsonl");
    // The user's browser, for an authorization scenario: it follows the authorization server's
    // redirect back to harness9's listener on 127.0.0.1.
    let browser = run.home.join("browser.sh");
    std::fs::write(
        &browser,
        "#!/bin/sh
         next=$(curl -s -o /dev/null -w '%{redirect_url}' \"$1\")
         curl -s -o /dev/null \"$next\"\n",
    )
    .unwrap();
    let login = if scenario.starts_with("auth/") {
        format!(
            "BROWSER='{browser}' '{bin}' mcp login conf > '{log}' 2>&1\n",
            browser = browser.display(),
            bin = bin.display(),
            log = run.home.join("login.log").display(),
        )
    } else {
        String::new()
    };
    // The server's definition; a scenario that hands out client credentials
    // (`MCP_CONFORMANCE_CONTEXT`) gets them in its `oauth` entry, as a user would write them.
    let writer = run.home.join("write_config.js");
    std::fs::write(
        &writer,
        r#"const url = process.argv[2];
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT || "{}");
const server = {type: "http", url};
if (context.client_id) {
  server.oauth = {client_id: context.client_id};
  if (context.client_secret) server.oauth.client_secret = context.client_secret;
  if (context.private_key_pem) {
    const key = process.env.HARNESS9_HOME + "/client-key.pem";
    require("fs").writeFileSync(key, context.private_key_pem, {mode: 0o600});
    server.oauth.private_key_file = key;
    server.oauth.signing_algorithm = context.signing_algorithm;
  }
  if ((process.env.MCP_CONFORMANCE_SCENARIO || "").startsWith("auth/client-credentials")) {
    server.oauth.grant = "client_credentials";
  }
}
require("fs").writeFileSync(process.env.HARNESS9_HOME + "/mcp.json",
  JSON.stringify({mcpServers: {conf: server}}));
"#,
    )
    .unwrap();
    let body = format!(
        "#!/bin/sh\n\
         # Called by the conformance suite as `client.sh URL` for scenario {scenario}.\n\
         node '{writer}' \"$1\"\n\
         {login}\
         exec '{bin}' exec --json --mode yolo 'run the scenario' > '{events}'\n",
        writer = writer.display(),
        bin = bin.display(),
        events = events.display(),
    );
    for path in [&script, &browser] {
        if path == &script {
            std::fs::write(path, &body).unwrap();
        }
        let mut permissions = std::fs::metadata(path).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
        std::fs::set_permissions(path, permissions).unwrap();
    }
    script
}

/// The suite's `checks.json` under `dir` (an `auth/...` scenario's lies one folder deeper).
fn find_checks(dir: &Path) -> Option<PathBuf> {
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let path = entry.path();
        if path.file_name().is_some_and(|n| n == "checks.json") {
            return Some(path);
        }
        if path.is_dir()
            && let Some(found) = find_checks(&path)
        {
            return Some(found);
        }
    }
    None
}

/// What one scenario came to: passed, and the failed checks' descriptions.
struct Outcome {
    scenario: String,
    failures: Vec<String>,
}

fn run_scenario(entry: &Path, scenario: &str) -> Outcome {
    let run = Run::new();
    let mock = MockLlm::start_in_background();
    if let Some((tool, arguments)) = tool_for(scenario) {
        mock.push(Reply::Sse {
            body: openai_tool_sse(
                "call_1",
                &format!("mcp__conf__{tool}"),
                &arguments.to_string(),
            ),
            split: Split::Whole,
        });
    }
    mock.set_fallback(Reply::Sse {
        body: openai_text_sse("Done."),
        split: Split::Whole,
    });
    let script = client_script(&run, scenario);
    let results = run.home.join("results");
    let suite_run = Command::new("node")
        .arg("--import")
        .arg(node20_loader())
        .arg(entry)
        .args([
            "client",
            "--timeout",
            "20000",
            "--scenario",
            scenario,
            "--command",
        ])
        .arg(&script)
        .arg("-o")
        .arg(&results)
        .current_dir(&run.workdir)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", &run.home)
        .env("HARNESS9_HOME", &run.home)
        .env("OPENAI_API_KEY", "sk-conformance-test")
        .env("OPENAI_BASE_URL", mock.openai_base())
        .stdin(Stdio::null())
        .output()
        .expect("the conformance suite runs");
    let checks = find_checks(&results)
        .and_then(|path| std::fs::read_to_string(path).ok())
        .and_then(|text| serde_json::from_str::<Vec<Value>>(&text).ok());
    let failures = match checks {
        Some(checks) if !checks.is_empty() => checks
            .iter()
            .filter(|c| c["status"] == "FAILURE")
            .map(|c| {
                format!(
                    "{}: {}",
                    c["id"].as_str().unwrap_or("?"),
                    c["errorMessage"]
                        .as_str()
                        .or(c["description"].as_str())
                        .unwrap_or("")
                )
            })
            .collect(),
        _ => vec![format!(
            "no checks came back; the suite said: {}{}; harness9's events: {}",
            String::from_utf8_lossy(&suite_run.stdout),
            String::from_utf8_lossy(&suite_run.stderr),
            std::fs::read_to_string(run.home.join("events.jsonl")).unwrap_or_default()
        )],
    };
    if scenario == "auth/metadata-default" && failures.is_empty() {
        tokens_stay_private(&run);
    }
    Outcome {
        scenario: scenario.to_owned(),
        failures,
    }
}

/// After a login: the token file is its owner's alone, and the access token is in no event nor
/// the log (and so never reached the model, whose requests are events' sources).
fn tokens_stay_private(run: &Run) {
    use std::os::unix::fs::PermissionsExt;
    let dir = run.home.join("mcp-oauth");
    let files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let mode = std::fs::metadata(&files[0]).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let kept: Value = serde_json::from_slice(&std::fs::read(&files[0]).unwrap()).unwrap();
    let token = kept["token_response"]["access_token"].as_str().unwrap();
    assert!(token.len() > 8, "{kept}");
    let mut seen = std::fs::read_to_string(run.home.join("events.jsonl")).unwrap();
    for log in std::fs::read_dir(run.home.join("logs"))
        .into_iter()
        .flatten()
    {
        seen.push_str(&std::fs::read_to_string(log.unwrap().path()).unwrap_or_default());
    }
    seen.push_str(&std::fs::read_to_string(run.home.join("login.log")).unwrap_or_default());
    assert!(!seen.contains(token), "the access token leaked");
}

#[test]
fn the_official_conformance_suites_client_scenarios() {
    let entry = match suite() {
        Ok(entry) => entry,
        Err(why) => {
            println!("mcp_conformance DID NOT RUN: {why}");
            return;
        }
    };
    let scenarios = client_scenarios(&entry);
    assert!(!scenarios.is_empty(), "the suite lists no client scenario");
    // A few at a time: each is a node process, a server and a harness9.
    let mut outcomes = Vec::new();
    for batch in scenarios.chunks(4) {
        let handles: Vec<_> = batch
            .iter()
            .map(|scenario| {
                let entry = entry.clone();
                let scenario = scenario.clone();
                std::thread::spawn(move || run_scenario(&entry, &scenario))
            })
            .collect();
        outcomes.extend(handles.into_iter().map(|h| h.join().unwrap()));
    }
    let mut report = String::new();
    for outcome in &outcomes {
        let verdict = if outcome.failures.is_empty() {
            "pass".to_owned()
        } else {
            format!("FAIL {}", outcome.failures.join("; "))
        };
        report.push_str(&format!("{:45} {verdict}\n", outcome.scenario));
    }
    println!("{report}");
    let regressed: Vec<&str> = PASSING
        .iter()
        .copied()
        .filter(|name| {
            outcomes
                .iter()
                .any(|o| o.scenario == *name && !o.failures.is_empty())
        })
        .collect();
    assert!(
        regressed.is_empty(),
        "no longer pass: {regressed:?}\n{report}"
    );
}
