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
fn no_key_names_the_variables_and_env_example() {
    let err = resolve_with(&[], &[], &[]).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("ANTHROPIC_API_KEY") && text.contains("OPENAI_API_KEY"));
    assert!(text.contains(".env.example"));
}

#[test]
fn environment_wins_over_dotenv() {
    let settings = resolve_with(
        &[],
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
