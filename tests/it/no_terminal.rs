//! Issue 29, point 1: nothing harness9 starts keeps its controlling terminal. The real binary
//! runs in a pseudo-terminal; `bash` calls (sandboxed and not), a hook and a stdio MCP server try
//! to open `/dev/tty` and to type into the terminal with `ioctl(TIOCSTI)`; the sandbox refuses
//! `TIOCSTI` even with garbage in the upper half of the request number (CVE-2019-10063).

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::exec::Run;
use crate::support::{MockLlm, Reply, Split, openai_text_sse, openai_tool_sse};
use crate::tui::{Pty, env, harness9};

/// Tries `TIOCSTI` on fds 0, 1, 2 and on `/dev/tty` opened for writing and for reading (which
/// the sandbox's Landlock allows, so the open reaches the terminal driver), typing
/// `!touch injected-TAG` (no Enter: the test then reads the TUI's input line); prints one
/// `RESULT` line.
const INJECT: &str = r#"
import errno, fcntl, os, sys, termios
tag = sys.argv[1]
def inject(fd):
    try:
        for byte in ("!touch injected-" + tag).encode():
            fcntl.ioctl(fd, termios.TIOCSTI, bytes([byte]))
        return "injected"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
parts = ["fd%d=%s" % (fd, inject(fd)) for fd in (0, 1, 2)]
for name, flags in (("rw", os.O_RDWR), ("ro", os.O_RDONLY)):
    try:
        tty = os.open("/dev/tty", flags)
        parts.append("tty-%s=open" % name)
        parts.append("tty-%s-inject=%s" % (name, inject(tty)))
    except OSError as e:
        parts.append("tty-%s=%s" % (name, errno.errorcode.get(e.errno, str(e.errno))))
print("RESULT-" + tag, " ".join(parts))
"#;

/// Opens `/dev/tty` for reading (which the sandbox's Landlock allows), printing how it went.
const OPEN_TTY: &str = r#"
import errno, os
try:
    os.close(os.open("/dev/tty", os.O_RDONLY))
    print("TTY-OPENED")
except OSError as e:
    print("TTY-" + errno.errorcode.get(e.errno, str(e.errno)))
"#;

/// The Python interpreter's real path (a pyenv shim would look for its root under the test's
/// `$HOME`), or `None` when there is none.
fn python() -> Option<PathBuf> {
    let out = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .ok()?;
    let path = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    (out.status.success() && path.is_file()).then_some(path)
}

/// Whether this kernel lets `TIOCSTI` through at all (`dev.tty.legacy_tiocsti`, Linux 6.2+;
/// older kernels have no switch and always allow it).
fn kernel_allows_tiocsti() -> bool {
    std::fs::read_to_string("/proc/sys/dev/tty/legacy_tiocsti")
        .map(|value| value.trim() != "0")
        .unwrap_or(true)
}

fn write_script(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// The tool results the model was sent, in order.
fn tool_results(mock: &MockLlm) -> Vec<String> {
    let requests = mock.requests();
    let Some(last) = requests.last() else {
        return Vec::new();
    };
    last.body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[test]
fn a_bash_call_in_or_out_of_the_sandbox_cannot_type_into_the_terminal() {
    let Some(python) = python() else {
        eprintln!("did not run: no python3 to make the ioctl with");
        return;
    };
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    let script = write_script(&run.workdir, "inject.py", INJECT);
    let command = |tag: &str| format!("{} {} {tag}", python.display(), script.display());
    mock.push(Reply::Sse {
        body: openai_tool_sse(
            "call_in",
            "bash",
            &json!({ "command": command("sandboxed") }).to_string(),
        ),
        split: Split::Whole,
    });
    mock.push(Reply::Sse {
        body: openai_tool_sse(
            "call_out",
            "bash",
            &json!({ "command": command("outside"), "sandbox": false }).to_string(),
        ),
        split: Split::Whole,
    });
    mock.push(Reply::Sse {
        body: openai_text_sse("Both probes ran."),
        split: Split::Whole,
    });
    let mut pty = Pty::spawn(
        harness9(),
        &["--mode", "yolo", "--sandbox", "workspace-write"],
        &run.workdir,
        &env(&run, &mock),
    );
    pty.wait_for("Ask harness9 to do something");
    pty.send("probe the terminal\r");
    pty.wait_for("Both probes ran.");
    pty.wait_idle();
    // Keys reach the input line in the order the terminal queued them: once this marker shows,
    // anything injected before it would show too.
    pty.send("zz-end-marker");
    let screen = pty.wait_for("zz-end-marker");

    let results = tool_results(&mock);
    assert_eq!(results.len(), 2, "{results:?}");
    for (result, tag) in results.iter().zip(["sandboxed", "outside"]) {
        assert!(result.contains(&format!("RESULT-{tag}")), "{result}");
        // ENXIO: no controlling terminal. Writing, the sandbox refuses earlier (EACCES).
        assert!(
            result.contains("tty-ro=ENXIO") && !result.contains("=open"),
            "a {tag} command opened the terminal: {result}"
        );
        assert!(!result.contains("injected"), "{result}");
    }
    if kernel_allows_tiocsti() {
        assert!(
            !screen.contains("touch injected"),
            "keys were typed into the TUI: {screen}"
        );
    } else {
        eprintln!(
            "this kernel refuses TIOCSTI (dev.tty.legacy_tiocsti=0): only the no-terminal \
             property was checked"
        );
    }
    let planted: Vec<_> = std::fs::read_dir(&run.workdir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("injected-"))
        .collect();
    assert!(planted.is_empty(), "{planted:?}");
}

#[test]
fn a_hook_and_a_stdio_mcp_server_cannot_open_the_terminal() {
    let Some(python) = python() else {
        eprintln!("did not run: no python3 to open /dev/tty with");
        return;
    };
    let mock = MockLlm::start_in_background();
    let run = Run::new();
    let probe = write_script(&run.workdir, "open_tty.py", OPEN_TTY);
    let from_server = run.workdir.join("server-tty.txt");
    std::fs::create_dir_all(&run.home).unwrap();
    std::fs::write(
        run.home.join("settings.json"),
        json!({"hooks": {"SessionStart": [{"matcher": "", "hooks": [{"type": "command",
            "command": format!("{} {}", python.display(), probe.display())}]}]}})
        .to_string(),
    )
    .unwrap();
    // It writes what it found and exits: a server that never answers is enough to be started.
    std::fs::write(
        run.home.join("mcp.json"),
        json!({"mcpServers": {"probe": {"command": "/bin/sh", "args": ["-c",
            format!("{} {} > {}", python.display(), probe.display(), from_server.display())]}}})
        .to_string(),
    )
    .unwrap();
    mock.push(Reply::Sse {
        body: openai_text_sse("Probed."),
        split: Split::Whole,
    });
    let pty = Pty::spawn(
        harness9(),
        &["exec", "hello"],
        &run.workdir,
        &env(&run, &mock),
    );
    pty.wait_for("Probed.");

    // The hook's stdout is context for the model.
    let sent = mock.requests()[0].body["messages"].to_string();
    assert!(sent.contains("TTY-"), "the hook did not run: {sent}");
    assert!(
        sent.contains("TTY-ENXIO"),
        "a hook opened the terminal: {sent}"
    );
    // `exec` waits for MCP servers before its first request, so the file is there.
    let server = std::fs::read_to_string(&from_server).unwrap_or_default();
    assert_eq!(
        server.trim(),
        "TTY-ENXIO",
        "an MCP server opened the terminal"
    );
}

/// `ioctl(0, TIOCSTI | garbage << 32)` in the sandbox: the kernel only reads the low 32 bits
/// (`unsigned int cmd`), so a filter comparing all 64 would let it through (CVE-2019-10063). On
/// `/dev/null` an ioctl that passes the filter fails with ENOTTY; the filter's refusal is EPERM.
#[test]
fn the_sandbox_refuses_tiocsti_whatever_the_upper_half_of_the_request() {
    let Some(python) = python() else {
        eprintln!("did not run: no python3 to make the system call with");
        return;
    };
    let nr = match std::env::consts::ARCH {
        "x86_64" => 16,
        "aarch64" | "riscv64" => 29,
        other => {
            eprintln!("did not run: no ioctl number written for {other}");
            return;
        }
    };
    let script = format!(
        r#"
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
fd = os.open("/dev/null", os.O_RDONLY)
for name, request in (("TIOCSTI", 0x5412), ("TIOCLINUX", 0x541C)):
    for high in (0, 0xDEADBEEF):
        r = libc.syscall({nr}, fd, ctypes.c_ulong((high << 32) | request), ctypes.c_char_p(b"x"))
        e = ctypes.get_errno() if r < 0 else 0
        print(name, hex(high), errno.errorcode.get(e, str(e)))
"#
    );
    let run = Run::new();
    let mock = MockLlm::start_in_background();
    let output = run
        .command(
            &mock,
            &["sandbox", "--", python.to_str().unwrap(), "-c", &script],
        )
        .output()
        .expect("harness9 runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 4, "{stdout}{stderr}");
    for line in lines {
        assert!(line.ends_with("EPERM"), "not refused: {line}\n{stdout}");
    }
}
