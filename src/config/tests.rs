use super::*;
use clap::Parser;

fn resolve_with(
    args: &[&str],
    process: &[(&str, &str)],
    dotenv: &[(&str, &str)],
) -> Result<Settings, ConfigError> {
    let cli = Cli::try_parse_from(std::iter::once("harness9").chain(args.iter().copied()))
        .expect("arguments parse");
    let env = Environment::from_pairs(process.iter().copied(), dotenv.iter().copied());
    resolve(&cli.options, PathBuf::from("/tmp"), &env)
}

#[test]
fn anthropic_wins_when_both_keys_are_set() {
    let settings = resolve_with(
        &[],
        &[
            ("ANTHROPIC_API_KEY", "a"),
            ("OPENAI_API_KEY", "o"),
            ("HARNESS9_HOME", "/h"),
        ],
        &[],
    )
    .unwrap();
    assert_eq!(settings.provider.kind, ProviderKind::Anthropic);
    assert_eq!(settings.provider.model, "claude-sonnet-4-20250514");
    assert_eq!(settings.context_window, 200_000);
    assert_eq!(settings.provider.base_url, "https://api.anthropic.com");
}

#[test]
fn harness9_provider_and_flag_choose() {
    let env = [
        ("ANTHROPIC_API_KEY", "a"),
        ("OPENAI_API_KEY", "o"),
        ("HARNESS9_PROVIDER", "openai"),
    ];
    let settings = resolve_with(&[], &env, &[]).unwrap();
    assert_eq!(settings.provider.kind, ProviderKind::OpenAi);
    let settings = resolve_with(&["--provider", "anthropic"], &env, &[]).unwrap();
    assert_eq!(settings.provider.kind, ProviderKind::Anthropic);
}

#[test]
fn a_base_url_without_a_key_is_a_local_openai_compatible_server() {
    let settings = resolve_with(
        &[],
        &[
            ("OPENAI_BASE_URL", "http://127.0.0.1:11434/v1"),
            ("HARNESS9_HOME", "/h"),
        ],
        &[],
    )
    .unwrap();
    assert_eq!(settings.provider.kind, ProviderKind::OpenAi);
    assert_eq!(settings.provider.base_url, "http://127.0.0.1:11434/v1");
}

#[test]
fn no_key_names_the_variables_and_how_to_set_them() {
    let err = resolve_with(&[], &[], &[]).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("ANTHROPIC_API_KEY") && text.contains("OPENAI_API_KEY"));
    // A user of the binary has no .env.example: the message says what to type instead.
    assert!(text.contains("export ANTHROPIC_API_KEY=") && !text.contains(".env.example"));
}

#[test]
fn environment_wins_over_dotenv() {
    // Trusted: the folder's base URL may receive the environment's key.
    let settings = resolve_with(
        &["--trust"],
        &[
            ("OPENAI_API_KEY", "env-key"),
            ("HARNESS9_MODEL", "from-env"),
        ],
        &[
            ("OPENAI_API_KEY", "file-key"),
            ("HARNESS9_MODEL", "from-file"),
            ("OPENAI_BASE_URL", "http://127.0.0.1:9/v1/"),
        ],
    )
    .unwrap();
    assert_eq!(settings.provider.api_key.expose(), "env-key");
    assert_eq!(settings.provider.model, "from-env");
    assert_eq!(settings.provider.base_url, "http://127.0.0.1:9/v1");
    assert_eq!(settings.context_window, FALLBACK_CONTEXT_WINDOW);
}

#[test]
fn a_local_openai_server_needs_no_key() {
    let settings = resolve_with(
        &["--provider", "openai"],
        &[("OPENAI_BASE_URL", "http://127.0.0.1:11434/v1")],
        &[],
    )
    .unwrap();
    assert_eq!(settings.provider.api_key.expose(), "");
    let err = resolve_with(&["--provider", "openai"], &[], &[]).unwrap_err();
    assert!(err.to_string().contains("OPENAI_API_KEY"));
}

#[test]
fn defaults_follow_the_contract() {
    let settings = resolve_with(&[], &[("OPENAI_API_KEY", "k")], &[]).unwrap();
    assert_eq!(settings.max_turns, 50);
    assert_eq!(settings.tool_timeout, Some(Duration::from_secs(60)));
    assert_eq!(settings.max_concurrent_tools, 0);
    assert_eq!(settings.mode, Mode::Default);
    assert_eq!(settings.provider.model, "gpt-4o");
    let settings = resolve_with(
        &["--tool-timeout", "0", "--mode", "auto-edit"],
        &[("OPENAI_API_KEY", "k")],
        &[],
    )
    .unwrap();
    assert_eq!(settings.tool_timeout, None);
    assert_eq!(settings.mode, Mode::AutoEdit);
}

#[test]
fn thinking_budget_is_validated() {
    let env = [("ANTHROPIC_API_KEY", "k")];
    assert!(resolve_with(&["--thinking-budget", "512"], &env, &[]).is_err());
    assert!(resolve_with(&["--thinking-budget", "9000"], &env, &[]).is_err());
    assert!(resolve_with(&["--thinking-budget", "2048"], &env, &[]).is_ok());
}

#[test]
fn api_key_never_shows_in_debug() {
    let settings = resolve_with(&[], &[("OPENAI_API_KEY", "sk-very-secret")], &[]).unwrap();
    assert!(!format!("{settings:?}").contains("sk-very-secret"));
}

#[test]
fn command_line_surface_parses() {
    let cli = Cli::try_parse_from([
        "harness9",
        "exec",
        "--json",
        "--session",
        "abc",
        "do it",
        "-C",
        "/tmp",
    ])
    .unwrap();
    match cli.command {
        Some(Command::Exec(exec)) => {
            assert!(exec.json);
            assert_eq!(exec.session.as_deref(), Some("abc"));
            assert_eq!(exec.prompt, "do it");
        }
        other => panic!("unexpected {other:?}"),
    }
    assert_eq!(cli.options.workdir, Some(PathBuf::from("/tmp")));
    let cli = Cli::try_parse_from(["harness9", "--resume"]).unwrap();
    assert_eq!(cli.resume.as_deref(), Some(""));
    let cli = Cli::try_parse_from(["harness9", "--resume", "abc"]).unwrap();
    assert_eq!(cli.resume.as_deref(), Some("abc"));
    assert!(Cli::try_parse_from(["harness9", "--continue", "--resume"]).is_err());
    let cli =
        Cli::try_parse_from(["harness9", "sessions", "--all", "--json", "--search", "x"]).unwrap();
    assert!(matches!(
        cli.command,
        Some(Command::Sessions(SessionsArgs {
            all: true,
            json: true,
            ..
        }))
    ));
}

#[test]
fn a_folders_dotenv_sets_only_the_providers_variables() {
    let settings = resolve_with(
        &[],
        &[("OPENAI_API_KEY", "k"), ("HARNESS9_HOME", "/real-home")],
        &[
            ("HARNESS9_HOME", "/work/repo/.h9"),
            ("HARNESS9_SERVE_TOKEN", "t"),
            ("PATH", "/work/repo/bin"),
            ("HARNESS9_MODEL", "from-file"),
        ],
    )
    .unwrap();
    assert_eq!(settings.home, PathBuf::from("/real-home"));
    assert_eq!(settings.provider.model, "from-file");
    let notice = settings.notices.join("\n");
    assert!(
        notice.contains("HARNESS9_HOME, HARNESS9_SERVE_TOKEN, PATH"),
        "{notice}"
    );
    // Even with no HARNESS9_HOME in the environment, the folder's never counts.
    let env = Environment::from_pairs([], [("HARNESS9_HOME", "/work/repo/.h9")]);
    assert_ne!(
        resolve_home(&env).ok(),
        Some(PathBuf::from("/work/repo/.h9"))
    );
}

#[test]
fn an_untrusted_folder_cannot_send_the_environments_key_to_its_own_server() {
    let process = [
        ("OPENAI_API_KEY", "env-key"),
        ("HARNESS9_HOME", "/nonexistent-home"),
    ];
    let dotenv = [("OPENAI_BASE_URL", "http://attacker.example/v1")];
    let settings = resolve_with(&[], &process, &dotenv).unwrap();
    assert!(!settings.trusted);
    assert_eq!(settings.provider.api_key.expose(), "env-key");
    assert_eq!(settings.provider.base_url, "https://api.openai.com/v1");
    assert!(
        settings.notices.join("\n").contains("OPENAI_BASE_URL"),
        "{:?}",
        settings.notices
    );
    // The folder's own key may go to the folder's own server.
    let settings = resolve_with(
        &[],
        &[("HARNESS9_HOME", "/nonexistent-home")],
        &[
            ("OPENAI_API_KEY", "file-key"),
            ("OPENAI_BASE_URL", "http://127.0.0.1:9/v1"),
        ],
    )
    .unwrap();
    assert_eq!(settings.provider.api_key.expose(), "file-key");
    assert_eq!(settings.provider.base_url, "http://127.0.0.1:9/v1");
    // Trusted (`--trust`), the folder's base URL is used with the environment's key.
    let settings = resolve_with(&["--trust"], &process, &dotenv).unwrap();
    assert!(settings.trusted);
    assert_eq!(settings.provider.base_url, "http://attacker.example/v1");
}

/// Issue 29 point 4: a trusted folder's `.env` rewritten to name another server (a planted file
/// that outlived a killed session) does not get the environment's key until the user approves
/// that server; an approved one is used, and a changed one is asked about again.
#[test]
fn a_trusted_folders_new_dotenv_server_gets_the_environments_key_only_once_approved() {
    let home = tempfile::tempdir().unwrap();
    let home_text = home.path().display().to_string();
    trust::remember(home.path(), Path::new("/tmp")).unwrap();
    let process = [("OPENAI_API_KEY", "env-key"), ("HARNESS9_HOME", &home_text)];
    let planted = [("OPENAI_BASE_URL", "http://planted.example/v1")];
    let settings = resolve_with(&[], &process, &planted).unwrap();
    assert!(settings.trusted);
    assert_eq!(settings.provider.base_url, "https://api.openai.com/v1");
    assert!(
        settings
            .notices
            .join("\n")
            .contains("OPENAI_BASE_URL=http://planted.example/v1"),
        "{:?}",
        settings.notices
    );
    let pending = settings
        .pending_base_url
        .clone()
        .expect("waits for approval");
    assert_eq!(pending.summary, "http://planted.example/v1");

    approved::approve(
        home.path(),
        Path::new("/tmp"),
        approved::ExtensionKind::BaseUrl,
        &pending.name,
        &pending.hash,
    )
    .unwrap();
    let settings = resolve_with(&[], &process, &planted).unwrap();
    assert_eq!(settings.provider.base_url, "http://planted.example/v1");
    assert!(settings.pending_base_url.is_none());

    let changed = [("OPENAI_BASE_URL", "http://elsewhere.example/v1")];
    let settings = resolve_with(&[], &process, &changed).unwrap();
    assert_eq!(settings.provider.base_url, "https://api.openai.com/v1");
    assert!(settings.pending_base_url.is_some());
}

/// Issue 32: in a folder with a `.env.example` (the README's setup step copies it), the no-key
/// message names it; elsewhere it says what to type instead.
#[test]
fn no_key_names_the_folders_env_example_when_there_is_one() {
    let dir = tempfile::tempdir().unwrap();
    let cli = Cli::try_parse_from(["harness9"]).unwrap();
    let env = Environment::from_pairs([], []);
    let without = resolve(&cli.options, dir.path().to_owned(), &env)
        .unwrap_err()
        .to_string();
    assert!(!without.contains(".env.example"), "{without}");
    std::fs::write(dir.path().join(".env.example"), "OPENAI_API_KEY=\n").unwrap();
    let with = resolve(&cli.options, dir.path().to_owned(), &env)
        .unwrap_err()
        .to_string();
    assert!(with.contains("cp .env.example .env"), "{with}");
    assert!(with.contains("export ANTHROPIC_API_KEY="), "{with}");
}
