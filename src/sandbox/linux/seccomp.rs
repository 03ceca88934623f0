//! The helper's seccomp filters. Allowed by default; EPERM for `socket()` of every family,
//! AF_UNIX included, unless the network is on (a Unix socket outside, such as Docker's,
//! reaches a process that is not sandboxed; `socketpair()` and pipes stay), and for calls
//! that change the machine or reach beyond the sandbox; ENOSYS for `clone3`, whose flags a
//! filter cannot read (libc then falls back to `clone`, whose flags it can), and for the
//! `ioctl`s that type into or take over a terminal (`TIOCSTI`, `TIOCLINUX`). Invariant:
//! installed last, after `no_new_privs`.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

use super::SetupError;

/// Calls that change the machine, reach into other processes or escape the namespaces.
const MACHINE_CALLS: &[libc::c_long] = &[
    libc::SYS_sethostname,
    libc::SYS_setdomainname,
    libc::SYS_settimeofday,
    libc::SYS_clock_settime,
    libc::SYS_clock_adjtime,
    libc::SYS_adjtimex,
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_chroot,
    libc::SYS_reboot,
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_bpf,
    libc::SYS_swapon,
    libc::SYS_swapoff,
    libc::SYS_unshare,
    libc::SYS_setns,
    libc::SYS_acct,
    libc::SYS_quotactl,
    libc::SYS_syslog,
    libc::SYS_vhangup,
    libc::SYS_perf_event_open,
    libc::SYS_open_by_handle_at,
    libc::SYS_name_to_handle_at,
    libc::SYS_fsopen,
    libc::SYS_fsconfig,
    libc::SYS_fsmount,
    libc::SYS_fspick,
    libc::SYS_move_mount,
    libc::SYS_open_tree,
    libc::SYS_mount_setattr,
    // io_uring can open sockets and files without passing through the calls filtered here.
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_iopl,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_ioperm,
];

/// `ioctl` requests that push keystrokes into a terminal's input (`TIOCSTI`) or act on the
/// console (`TIOCLINUX`, which can also paste the selection as input).
const TERMINAL_IOCTLS: &[libc::c_ulong] = &[
    libc::TIOCSTI as libc::c_ulong,
    libc::TIOCLINUX as libc::c_ulong,
];

/// `clone` flags that create namespaces.
const NAMESPACE_FLAGS: &[libc::c_int] = &[
    libc::CLONE_NEWUSER,
    libc::CLONE_NEWNS,
    libc::CLONE_NEWPID,
    libc::CLONE_NEWNET,
    libc::CLONE_NEWUTS,
    libc::CLONE_NEWIPC,
    libc::CLONE_NEWCGROUP,
];

fn arch() -> Result<TargetArch, SetupError> {
    if cfg!(target_arch = "x86_64") {
        Ok(TargetArch::x86_64)
    } else if cfg!(target_arch = "aarch64") {
        Ok(TargetArch::aarch64)
    } else if cfg!(target_arch = "riscv64") {
        Ok(TargetArch::riscv64)
    } else {
        Err(SetupError::Architecture)
    }
}

fn condition(arg: u8, op: SeccompCmpOp, value: u64) -> Result<SeccompCondition, SetupError> {
    SeccompCondition::new(arg, SeccompCmpArgLen::Qword, op, value).map_err(unprefixed)
}

fn rule(conditions: Vec<SeccompCondition>) -> Result<SeccompRule, SetupError> {
    SeccompRule::new(conditions).map_err(unprefixed)
}

/// A rule that could not be built (its message, as it always was, does not name seccomp).
fn unprefixed(error: impl std::error::Error + Send + Sync + 'static) -> SetupError {
    SetupError::Seccomp {
        prefixed: false,
        source: Box::new(error),
    }
}

fn failed(error: impl std::error::Error + Send + Sync + 'static) -> SetupError {
    SetupError::Seccomp {
        prefixed: true,
        source: Box::new(error),
    }
}

/// The EPERM filter's rules.
fn denied(network: bool) -> Result<BTreeMap<i64, Vec<SeccompRule>>, SetupError> {
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = MACHINE_CALLS
        .iter()
        .map(|call| (*call, Vec::new()))
        .collect();
    let clone_rules = NAMESPACE_FLAGS
        .iter()
        .map(|flag| {
            let flag = *flag as u64;
            rule(vec![condition(0, SeccompCmpOp::MaskedEq(flag), flag)?])
        })
        .collect::<Result<Vec<_>, _>>()?;
    rules.insert(libc::SYS_clone, clone_rules);
    // The kernel reads the request as `unsigned int`: only its low 32 bits are compared, or
    // garbage in the upper half would slip past the filter (CVE-2019-10063).
    let ioctl_rules = TERMINAL_IOCTLS
        .iter()
        .map(|request| {
            let low = SeccompCondition::new(
                1,
                SeccompCmpArgLen::Dword,
                SeccompCmpOp::Eq,
                u64::from(*request as u32),
            )
            .map_err(unprefixed)?;
            rule(vec![low])
        })
        .collect::<Result<Vec<_>, _>>()?;
    rules.insert(libc::SYS_ioctl, ioctl_rules);
    if !network {
        // No rule: every call matches, whatever the family.
        rules.insert(libc::SYS_socket, Vec::new());
    }
    Ok(rules)
}

fn compile(
    rules: BTreeMap<i64, Vec<SeccompRule>>,
    errno: libc::c_int,
) -> Result<BpfProgram, SetupError> {
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(errno as u32),
        arch()?,
    )
    .map_err(failed)?;
    filter
        .try_into()
        .map_err(|e: seccompiler::BackendError| failed(e))
}

/// The bit that marks an x32 system call on x86_64 (`__X32_SYSCALL_BIT`).
#[cfg(target_arch = "x86_64")]
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

/// A filter refusing every x32 system call (EPERM). On a kernel built with the x32 ABI the same
/// calls arrive with the x86_64 architecture tag but other numbers (`nr | X32_SYSCALL_BIT`),
/// which the rules above, written with x86_64 numbers, would never match. No program harness9
/// runs needs x32, so all of it is refused rather than each call mapped.
#[cfg(target_arch = "x86_64")]
fn no_x32() -> BpfProgram {
    use seccompiler::sock_filter;
    const LOAD_NR: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS, offset 0: seccomp_data.nr
    const JUMP_GE: u16 = 0x35; // BPF_JMP | BPF_JGE | BPF_K
    const RETURN: u16 = 0x06; // BPF_RET | BPF_K
    const RET_ERRNO: u32 = 0x0005_0000;
    const RET_ALLOW: u32 = 0x7fff_0000;
    vec![
        sock_filter {
            code: LOAD_NR,
            jt: 0,
            jf: 0,
            k: 0,
        },
        sock_filter {
            code: JUMP_GE,
            jt: 0,
            jf: 1,
            k: X32_SYSCALL_BIT,
        },
        sock_filter {
            code: RETURN,
            jt: 0,
            jf: 0,
            k: RET_ERRNO | libc::EPERM as u32,
        },
        sock_filter {
            code: RETURN,
            jt: 0,
            jf: 0,
            k: RET_ALLOW,
        },
    ]
}

pub fn apply(network: bool) -> Result<(), SetupError> {
    #[cfg(target_arch = "x86_64")]
    seccompiler::apply_filter(&no_x32()).map_err(failed)?;
    let clone3 = compile(
        BTreeMap::from([(libc::SYS_clone3, Vec::new())]),
        libc::ENOSYS,
    )?;
    let denied = compile(denied(network)?, libc::EPERM)?;
    for program in [&clone3, &denied] {
        seccompiler::apply_filter(program).map_err(failed)?;
    }
    Ok(())
}
