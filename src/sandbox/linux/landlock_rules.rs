//! Landlock for the helper: read and execute everywhere, every right beneath the writable
//! directories, file rights on a few devices. Invariant: a kernel that cannot enforce it is an
//! error (the command does not run), never a silent unconfined run.

use landlock::{
    ABI, Access, AccessFs, PathBeneath, PathFd, Ruleset, RulesetAttr, RulesetCreatedAttr,
    RulesetStatus,
};

use super::super::Spec;
use super::SetupError;

/// The newest file-system rights this code was written and tested against (V5: truncate and
/// device ioctls); the crate keeps older kernels working with what they have.
const ABI_USED: ABI = ABI::V5;

pub fn apply(spec: &Spec) -> Result<(), SetupError> {
    let all = AccessFs::from_all(ABI_USED);
    let read = AccessFs::from_read(ABI_USED);
    let file = AccessFs::from_file(ABI_USED);
    let mut ruleset = Ruleset::default()
        .handle_access(all)
        .map_err(fail)?
        .create()
        .map_err(fail)?;
    let root = PathFd::new("/").map_err(fail)?;
    ruleset = ruleset
        .add_rule(PathBeneath::new(root, read))
        .map_err(fail)?;
    for dir in &spec.writable {
        // A directory that vanished since the spec was built is simply not writable.
        if let Ok(fd) = PathFd::new(dir) {
            ruleset = ruleset.add_rule(PathBeneath::new(fd, all)).map_err(fail)?;
        }
    }
    for device in &spec.devices {
        if let Ok(fd) = PathFd::new(device) {
            ruleset = ruleset.add_rule(PathBeneath::new(fd, file)).map_err(fail)?;
        }
    }
    let status = ruleset.restrict_self().map_err(fail)?;
    if status.ruleset == RulesetStatus::NotEnforced {
        return Err(SetupError::LandlockNotEnforced);
    }
    Ok(())
}

fn fail(error: impl std::error::Error + Send + Sync + 'static) -> SetupError {
    SetupError::Landlock(Box::new(error))
}
