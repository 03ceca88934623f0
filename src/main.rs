//! The `harness9` binary: parse the command line, hand over to the library, map the outcome to
//! an exit status (CONTRACT.md: 0 ok, 1 runtime failure, 2 usage or configuration, 130 interrupted).

use std::process::ExitCode;

use clap::Parser;
use harness9::assemble::SessionChoice;
use harness9::config::{self, Cli, Command, Environment};
use harness9::{exec, memory_cmd, sessions_cmd, tui, worktree_cmd};

fn main() -> ExitCode {
    // The sandbox helper and the reaper must start before any thread exists (see
    // `harness9::sandbox`, `harness9::tools::reaper`).
    let args: Vec<_> = std::env::args_os().collect();
    if let Some(code) = harness9::sandbox::dispatch_helper(&args)
        .or_else(|| harness9::tools::reaper::dispatch(&args))
    {
        return ExitCode::from(code.clamp(0, 255) as u8);
    }
    // First, while the process has one thread: nothing may copy the keys before they are taken
    // out of the environment, and no thread may read the environment while it changes.
    let hardened = harness9::hardening::harden();
    harness9::heap::configure();
    let cli = Cli::parse();
    for problem in &hardened.problems {
        eprintln!("harness9: {problem}");
    }
    // Generated from the command line alone: no folder, settings or provider needed.
    let generated = match &cli.command {
        Some(Command::Completions { shell }) => Some(Ok(config::cli_docs::completions(*shell))),
        Some(Command::Man) => Some(config::cli_docs::man_page()),
        Some(Command::Help { topic }) => match config::cli_docs::help(topic.as_deref()) {
            Ok(text) => Some(Ok(text)),
            Err(e) => return usage_error(&e),
        },
        _ => None,
    };
    if let Some(generated) = generated {
        return match generated.and_then(|bytes| config::cli_docs::print(&bytes)) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("harness9: cannot write it: {e}");
                ExitCode::from(1)
            }
        };
    }
    let mut workdir = match config::resolve_workdir(&cli.options) {
        Ok(dir) => dir,
        Err(e) => return usage_error(&e),
    };
    let secrets = hardened.secrets.clone();
    let mut env = Environment::load(&workdir.join(".env"), hardened.secrets);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("harness9: cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    // Neither does running one command in the sandbox.
    if let Some(Command::Sandbox(args)) = &cli.command {
        let home = match config::resolve_home(&env) {
            Ok(home) => home,
            Err(e) => return usage_error(&e),
        };
        return ExitCode::from(harness9::sandbox::run_one(
            cli.options.sandbox,
            &workdir,
            &home,
            &args.command,
        ));
    }
    // Listing sessions needs no provider.
    if let Some(Command::Sessions(args)) = cli.command {
        let home = match config::resolve_home(&env) {
            Ok(home) => home,
            Err(e) => return usage_error(&e),
        };
        return ExitCode::from(runtime.block_on(sessions_cmd::run(&home, &workdir, args)));
    }
    if let Some(Command::Memory(args)) = cli.command {
        let home = match config::resolve_home(&env) {
            Ok(home) => home,
            Err(e) => return usage_error(&e),
        };
        return ExitCode::from(runtime.block_on(memory_cmd::run(&home, &workdir, args)));
    }
    // Attaching to a server needs no provider either: the server has it.
    if let Some(Command::Attach(args)) = &cli.command {
        let home = match config::resolve_home(&env) {
            Ok(home) => home,
            Err(e) => return usage_error(&e),
        };
        let token = env.process_var("HARNESS9_SERVE_TOKEN");
        let display = config::display::resolve(
            &home,
            args.display.theme.or(cli.display.theme),
            args.display.no_alt_screen || cli.display.no_alt_screen,
        );
        let result = runtime.block_on(tui::attach(
            &home,
            token,
            &args.url,
            args.session.as_deref(),
            display.into(),
        ));
        runtime.shutdown_timeout(std::time::Duration::from_millis(200));
        return ExitCode::from(tui::exit_code(result));
    }
    // Managing MCP servers needs no provider either.
    if let Some(Command::Mcp(args)) = cli.command {
        let home = match config::resolve_home(&env) {
            Ok(home) => home,
            Err(e) => return usage_error(&e),
        };
        let _logs = harness9::observe::init_stderr_logging();
        let trusted = cli.options.trust || config::trust::is_trusted(&home, &workdir);
        let code = runtime.block_on(harness9::mcp::command::run(
            args,
            &workdir,
            &home,
            trusted,
            cli.options.trust,
        ));
        runtime.shutdown_timeout(std::time::Duration::from_millis(200));
        return ExitCode::from(code);
    }
    // Listing the language servers needs no provider either.
    if let Some(Command::Lsp(_)) = &cli.command {
        let home = match config::resolve_home(&env) {
            Ok(home) => home,
            Err(e) => return usage_error(&e),
        };
        let trusted = cli.options.trust || config::trust::is_trusted(&home, &workdir);
        print!(
            "{}",
            harness9::lsp::list::list_text(&workdir, &home, trusted)
        );
        return ExitCode::SUCCESS;
    }
    // An editor's agent starts without a key too: `initialize` tells the editor how to set one.
    if let Some(Command::Acp) = &cli.command {
        let home = match config::resolve_home(&env) {
            Ok(home) => home,
            Err(e) => return usage_error(&e),
        };
        let context = harness9::acp::AcpContext {
            options: cli.options.clone(),
            workdir,
            home,
            secrets,
        };
        let code = runtime.block_on(harness9::acp::run(context));
        runtime.shutdown_timeout(std::time::Duration::from_millis(200));
        return ExitCode::from(code);
    }
    if let Some(Command::Worktree(args)) = cli.command {
        let home = match config::resolve_home(&env) {
            Ok(home) => home,
            Err(e) => return usage_error(&e),
        };
        return ExitCode::from(runtime.block_on(worktree_cmd::run(&home, &workdir, args)));
    }
    // A run in a git worktree works in its folder, with its `.env`.
    let entering = match &cli.command {
        Some(Command::Exec(args)) => Some((args.worktree.as_deref(), args.session.as_deref())),
        None => Some((cli.worktree.as_deref(), cli.resume.as_deref())),
        _ => None,
    };
    let mut worktree = None;
    if let Some((name, resume)) = entering {
        let home = match config::resolve_home(&env) {
            Ok(home) => home,
            Err(e) => return usage_error(&e),
        };
        let resume = resume.filter(|key| !key.is_empty());
        let trust = cli.options.trust;
        match runtime.block_on(worktree_cmd::enter_for_run(
            &workdir, &home, name, resume, trust,
        )) {
            Ok(Some(entered)) => {
                workdir = entered.path.clone();
                env = Environment::load(&workdir.join(".env"), secrets.clone());
                worktree = Some(entered);
            }
            Ok(None) => {}
            Err(e) => {
                eprintln!("harness9: {e}");
                return ExitCode::from(worktree_cmd::exit_code(&e));
            }
        }
    }
    // Configuration problems are reported before anything else happens (and before a TUI
    // would take over the terminal).
    let mut settings = match config::resolve(&cli.options, workdir.clone(), &env) {
        Ok(settings) => settings,
        Err(e) => return usage_error(&e),
    };
    if let Some(entered) = worktree {
        settings.worktree = Some(entered.name);
        settings.notices.extend(entered.notices);
    }
    match cli.command {
        Some(Command::Exec(args)) => {
            let mut settings = settings;
            // Refused here, before anything runs; the permission layer parses them again when
            // the session is assembled (config keeps them raw).
            if let Err(e) =
                harness9::permission::rules::RuleSet::from_lists(&args.allow, &args.deny)
            {
                return usage_error(&format!("a rule given with --allow/--deny: {e}"));
            }
            settings.run_rules = harness9::config::RunRules {
                allow: args.allow.clone(),
                deny: args.deny.clone(),
            };
            // Both modes say what matters themselves; the engine's log with -v or RUST_LOG.
            let level = if args.verbose {
                harness9::observe::LogLevel::Info
            } else {
                harness9::observe::LogLevel::Errors
            };
            let _logs = harness9::observe::init_stderr_logging_from(level);
            let outcome = runtime.block_on(exec::run(settings, args));
            // Tools may still be winding down; never wait on them past the answer.
            runtime.shutdown_timeout(std::time::Duration::from_millis(200));
            ExitCode::from(outcome as u8)
        }
        Some(Command::Serve(args)) => {
            let _logs = harness9::observe::init_stderr_logging();
            let context = harness9::serve::ServeContext {
                token: env.process_var("HARNESS9_SERVE_TOKEN").map(str::to_owned),
                settings,
                options: cli.options.clone(),
                secrets,
            };
            let code = runtime.block_on(serve(context, args));
            runtime.shutdown_timeout(std::time::Duration::from_millis(200));
            ExitCode::from(code)
        }
        Some(Command::Eval(args)) => {
            let _logs = harness9::observe::init_stderr_logging();
            let code = runtime.block_on(harness9::eval::run(settings, args));
            runtime.shutdown_timeout(std::time::Duration::from_millis(200));
            ExitCode::from(code)
        }
        Some(
            Command::Sessions(_)
            | Command::Sandbox(_)
            | Command::Attach(_)
            | Command::Mcp(_)
            | Command::Lsp(_)
            | Command::Memory(_)
            | Command::Acp
            | Command::Worktree(_)
            | Command::Completions { .. }
            | Command::Man
            | Command::Help { .. },
        ) => ExitCode::SUCCESS,
        None => {
            let (choice, picker) = match (cli.continue_session, cli.resume.as_deref()) {
                (true, _) => (SessionChoice::Continue, false),
                (false, Some("")) => (SessionChoice::New, true),
                (false, Some(key)) => (SessionChoice::Resume(key.to_owned()), false),
                (false, None) => (SessionChoice::New, false),
            };
            // Once the user trusts the folder, its settings are resolved again as trusted.
            let options = cli.options.clone();
            let worktree = settings.worktree.clone();
            let trusted = move || {
                let mut settings = config::resolve_trusted(&options, workdir, &env, true)?;
                settings.worktree = worktree;
                Ok(settings)
            };
            let display = config::display::resolve(
                &settings.home,
                cli.display.theme,
                cli.display.no_alt_screen,
            );
            let launch = harness9::session::launch::Launch::new(settings, Box::new(trusted));
            let result = runtime.block_on(tui::run(launch, choice, picker, display.into()));
            runtime.shutdown_timeout(std::time::Duration::from_millis(200));
            ExitCode::from(tui::exit_code(result))
        }
    }
}

/// Runs `serve` until SIGINT or SIGTERM; every session is closed (and stored) before it returns.
async fn serve(context: harness9::serve::ServeContext, args: config::ServeArgs) -> u8 {
    let shutdown = tokio_util::sync::CancellationToken::new();
    let stop = shutdown.clone();
    tokio::spawn(async move {
        use tokio::signal::unix::{SignalKind, signal};
        let (Ok(mut int), Ok(mut term)) = (
            signal(SignalKind::interrupt()),
            signal(SignalKind::terminate()),
        ) else {
            return;
        };
        tokio::select! {
            _ = int.recv() => {}
            _ = term.recv() => {}
        }
        stop.cancel();
    });
    match harness9::serve::run(context, args, shutdown).await {
        Ok(()) => 130,
        Err(error) => {
            eprintln!("harness9 serve: {error}");
            error.exit_code()
        }
    }
}

fn usage_error(error: &dyn std::fmt::Display) -> ExitCode {
    eprintln!("harness9: {error}");
    ExitCode::from(2)
}
