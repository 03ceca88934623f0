//! The reaper run directly, as `shell_process` runs it: its stdin is the control pipe.

use std::io::{BufRead, BufReader, PipeWriter, Write};
use std::os::fd::AsRawFd;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Command, Stdio};

use super::{Escaped, binary, escaping, fifo, read_pid};
use crate::support::process_ended;

/// Starts `sh -c script` under the reaper; returns it and the write end of its control pipe.
fn reaper(until: &str, script: &str) -> (Child, PipeWriter) {
    let (read, write) = std::io::pipe().unwrap();
    let child = Command::new(binary())
        .args(["__reap", until, "--", "/bin/sh", "-c", script])
        // As harness9 starts it: a process group of its own.
        .process_group(0)
        .stdin(read)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    (child, write)
}

/// The command's first line: its shell's pid (so the test can wait for the shell's end).
fn first_line_pid(child: &mut Child) -> i32 {
    let mut line = String::new();
    BufReader::new(child.stdout.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    line.trim()
        .parse()
        .unwrap_or_else(|_| panic!("no pid: {line:?}"))
}

#[test]
fn the_commands_output_and_exit_status_come_through() {
    let (child, _control) = reaper("command", "echo out; echo err >&2; exit 3");
    let out = child.wait_with_output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "out\n");
    assert_eq!(String::from_utf8_lossy(&out.stderr), "err\n");
    assert_eq!(out.status.code(), Some(3));

    // A command killed by a signal: the reaper dies by the same signal.
    let (child, _control) = reaper("descendants", "kill -TERM $$");
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.signal(), Some(libc::SIGTERM), "{:?}", out.status);
}

#[test]
fn a_double_fork_keeps_the_job_running_until_the_pipe_closes() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = fifo(dir.path());
    // The subshell forks the escaping process and exits: the orphan is the reaper's now.
    let script = format!("echo $$; ({}); exit 0", escaping(&fifo));
    let (mut child, control) = reaper("descendants", &script);
    let shell = first_line_pid(&mut child);
    let escaped = Escaped(read_pid(&fifo));
    // The command has ended, what it started has not: the reaper (the job) still runs.
    assert!(process_ended(shell));
    assert!(child.try_wait().unwrap().is_none());
    drop(control);
    assert!(
        escaped.ended(),
        "the double-forked process outlived the stop"
    );
    // The job's status is the command's.
    assert_eq!(child.wait().unwrap().code(), Some(0));
}

#[test]
fn a_killed_harness9_takes_the_escaped_processes_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = fifo(dir.path());
    let (read, write) = std::io::pipe().unwrap();
    // The holder stands for harness9: the only process with the pipe's write end.
    let mut holder = Command::new("sleep")
        .arg("1000")
        .stdout(write)
        .spawn()
        .unwrap();
    let mut child = Command::new(binary())
        .args(["__reap", "descendants", "--", "/bin/sh", "-c"])
        .arg(format!("echo $$; {}", escaping(&fifo)))
        .process_group(0)
        .stdin(read)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let shell = first_line_pid(&mut child);
    let escaped = Escaped(read_pid(&fifo));
    assert!(process_ended(shell));
    assert!(child.try_wait().unwrap().is_none());
    holder.kill().unwrap();
    holder.wait().unwrap();
    assert!(escaped.ended(), "the escaped process outlived harness9");
    assert_eq!(child.wait().unwrap().code(), Some(0));
}

#[test]
fn in_the_foreground_what_escaped_ends_with_the_command() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = fifo(dir.path());
    let go = dir.path().join("go.fifo");
    let name = std::ffi::CString::new(go.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: mkfifo on a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
    // The command waits for the test's word, so the escaped process has started first.
    let script = format!(
        "{} read word < {}; echo $word",
        escaping(&fifo),
        go.display()
    );
    let (child, _control) = reaper("command", &script);
    let escaped = Escaped(read_pid(&fifo));
    std::fs::File::options()
        .write(true)
        .open(&go)
        .unwrap()
        .write_all(b"done\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "done\n");
    assert_eq!(out.status.code(), Some(0));
    assert!(
        escaped.ended(),
        "a foreground command's escaped child outlived it"
    );
}

#[test]
fn the_control_pipe_does_not_reach_the_command() {
    let (read, write) = std::io::pipe().unwrap();
    let mut stat: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fstat into a local on a descriptor this test owns.
    assert_eq!(unsafe { libc::fstat(write.as_raw_fd(), &mut stat) }, 0);
    let pipe = format!("pipe:[{}]", stat.st_ino);
    let out = Command::new(binary())
        .args(["__reap", "command", "--", "/bin/sh", "-c"])
        // The command's descriptors, then the reaper's (its parent), which does hold the pipe.
        .arg(
            "for f in /proc/$$/fd/*; do echo \"$f $(readlink $f)\"; done; echo reaper; \
              for f in /proc/$PPID/fd/*; do echo \"$f $(readlink $f)\"; done",
        )
        .stdin(read)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let (command, reaper) = text.split_once("reaper\n").unwrap();
    assert!(command.contains("/fd/0 /dev/null"), "{text}");
    assert!(
        !command.contains(&pipe),
        "the command holds the control pipe: {text}"
    );
    assert!(reaper.contains(&pipe), "{text}");
    drop(write);
}

#[test]
fn a_command_signalling_its_group_does_not_end_the_reaper() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = fifo(dir.path());
    let script = format!("echo $$; {} kill -TERM 0", escaping(&fifo));
    let (mut child, control) = reaper("descendants", &script);
    let shell = first_line_pid(&mut child);
    let escaped = Escaped(read_pid(&fifo));
    assert!(process_ended(shell));
    // The shell's `kill 0` reached its own group only: the reaper still holds the escaped one.
    assert!(child.try_wait().unwrap().is_none());
    drop(control);
    assert!(escaped.ended(), "the escaped process outlived the stop");
    assert_eq!(child.wait().unwrap().signal(), Some(libc::SIGTERM));
}
