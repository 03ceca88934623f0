//! The sandbox's decisions without a kernel: which mode a call runs in, and the permission
//! engine's two inputs.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::json;

use super::*;

#[derive(Debug)]
struct FakePlatform;

impl Platform for FakePlatform {
    fn wrap(
        &self,
        _spec: &Spec,
        program: &OsStr,
        args: &[OsString],
    ) -> Result<(PathBuf, Vec<OsString>), SandboxError> {
        Ok((PathBuf::from(program), args.to_vec()))
    }
}

fn sandbox(mode: SandboxMode, supported: bool) -> Sandbox {
    let inputs = SandboxInputs {
        flag: None,
        workdir: PathBuf::from("/w"),
        home: PathBuf::from("/h"),
        helper: PathBuf::from("/bin/harness9"),
    };
    let settings = SandboxSettings {
        mode,
        ..SandboxSettings::default()
    };
    let platform: Option<Arc<dyn Platform>> = supported.then(|| Arc::new(FakePlatform) as _);
    Sandbox::from_parts(&inputs, settings, platform, Vec::new())
}

#[test]
fn plan_mode_is_read_only_whatever_the_call_or_the_configuration_says() {
    let leave = json!({"command": "touch x", "sandbox": false});
    for configured in [SandboxMode::Off, SandboxMode::WorkspaceWrite] {
        let s = sandbox(configured, true);
        assert_eq!(s.mode_for(Mode::Plan, &leave), SandboxMode::ReadOnly);
    }
    // Without kernel support nothing can be enforced, and nothing pretends to be.
    let s = sandbox(SandboxMode::WorkspaceWrite, false);
    assert_eq!(s.mode_for(Mode::Plan, &leave), SandboxMode::Off);
    assert!(!s.is_active());
    assert_eq!(s.label(), "sandbox: off (unsupported)");
}

#[test]
fn leaving_the_sandbox_is_asked_for_by_the_call_and_reported_to_the_permission_engine() {
    let s = sandbox(SandboxMode::WorkspaceWrite, true);
    let plain = json!({"command": "make"});
    let leave = json!({"command": "make", "sandbox": false});
    assert_eq!(
        s.request(Mode::AutoEdit, &plain),
        SandboxRequest {
            sandboxed: true,
            leave_requested: false
        }
    );
    assert_eq!(
        s.request(Mode::AutoEdit, &leave),
        SandboxRequest {
            sandboxed: false,
            leave_requested: true
        }
    );
    // `"sandbox": true` or a non-boolean is not a request to leave.
    assert!(!leave_requested(&json!({"command": "x", "sandbox": true})));
    assert!(!leave_requested(
        &json!({"command": "x", "sandbox": "false"})
    ));
}

#[test]
fn a_project_can_only_make_the_mode_stricter() {
    use SandboxMode::*;
    assert_eq!(WorkspaceWrite.stricter(ReadOnly), ReadOnly);
    assert_eq!(WorkspaceWrite.stricter(Off), WorkspaceWrite);
    assert_eq!(Off.stricter(WorkspaceWrite), WorkspaceWrite);
    assert_eq!(ReadOnly.stricter(Off), ReadOnly);
}
