//! Drops every capability of the helper's init, for good: root inside the sandbox must be as
//! powerless as any user. Invariant: after `drop_all` succeeds, the bounding, ambient,
//! effective, permitted and inheritable sets are empty, and `NOROOT` securebits stop an exec
//! by uid 0 from refilling them.

/// `_LINUX_CAPABILITY_VERSION_3`: two 32-bit words per set.
const CAPABILITY_VERSION_3: u32 = 0x2008_0522;

#[repr(C)]
struct CapHeader {
    version: u32,
    pid: i32,
}

#[repr(C)]
#[derive(Default, Clone, Copy)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

// From <linux/securebits.h>.
const SECBIT_NOROOT: libc::c_ulong = 1 << 0;
const SECBIT_NOROOT_LOCKED: libc::c_ulong = 1 << 1;
const SECBIT_NO_SETUID_FIXUP: libc::c_ulong = 1 << 2;
const SECBIT_NO_SETUID_FIXUP_LOCKED: libc::c_ulong = 1 << 3;
const SECBIT_KEEP_CAPS_LOCKED: libc::c_ulong = 1 << 5;
const SECBIT_NO_CAP_AMBIENT_RAISE: libc::c_ulong = 1 << 6;
const SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED: libc::c_ulong = 1 << 7;

use super::SetupError;

fn last_error(what: &str) -> SetupError {
    SetupError::last(what)
}

pub fn drop_all() -> Result<(), SetupError> {
    let bits = SECBIT_NOROOT
        | SECBIT_NOROOT_LOCKED
        | SECBIT_NO_SETUID_FIXUP
        | SECBIT_NO_SETUID_FIXUP_LOCKED
        | SECBIT_KEEP_CAPS_LOCKED
        | SECBIT_NO_CAP_AMBIENT_RAISE
        | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
    // SAFETY: prctl calls on this process only.
    unsafe {
        if libc::prctl(libc::PR_SET_SECUREBITS, bits, 0, 0, 0) != 0 {
            return Err(last_error("cannot set securebits"));
        }
        // Every capability the kernel knows, until it says there are no more.
        for cap in 0..64 {
            if libc::prctl(libc::PR_CAPBSET_DROP, cap as libc::c_ulong, 0, 0, 0) != 0 {
                if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINVAL) {
                    break;
                }
                return Err(last_error("cannot drop the bounding set"));
            }
        }
        if libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong,
            0,
            0,
            0,
        ) != 0
        {
            return Err(last_error("cannot clear the ambient set"));
        }
    }
    let mut header = CapHeader {
        version: CAPABILITY_VERSION_3,
        pid: 0,
    };
    let empty = [CapData::default(); 2];
    // SAFETY: capset reads a header and two data words we own.
    if unsafe { libc::syscall(libc::SYS_capset, &mut header, empty.as_ptr()) } != 0 {
        return Err(last_error("cannot clear the capability sets"));
    }
    // Checked, not assumed.
    let mut now = [CapData {
        effective: 1,
        permitted: 1,
        inheritable: 1,
    }; 2];
    // SAFETY: capget writes into our two data words.
    if unsafe { libc::syscall(libc::SYS_capget, &mut header, now.as_mut_ptr()) } != 0 {
        return Err(last_error("cannot read the capability sets"));
    }
    if now
        .iter()
        .any(|d| d.effective != 0 || d.permitted != 0 || d.inheritable != 0)
    {
        return Err(SetupError::CapabilitiesHeld);
    }
    // SAFETY: prctl query.
    if unsafe { libc::prctl(libc::PR_CAPBSET_READ, 0, 0, 0, 0) } > 0 {
        return Err(SetupError::BoundingSetHeld);
    }
    Ok(())
}
