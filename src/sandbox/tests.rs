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

/// Issue 29 point 13's gap: two background jobs working together hid a plant. Job A plants
/// `pkg/.env` before job B starts (B's snapshot counts it as there before), hides it under
/// another name while A's end is checked, and B puts it back (A's rename of the name B had bound
/// read-only detaches that mount) before B ends. The file operations are the jobs' own, made
/// here between the calls' snapshots and restores as the processes would. Calls that overlap
/// restore to the first one's snapshot, so B's end undoes the plant.
#[test]
fn a_plant_handed_between_two_overlapping_jobs_is_undone_when_the_last_ends() {
    let dir = tempfile::tempdir().unwrap();
    let workdir = dir.path().canonicalize().unwrap().join("w");
    std::fs::create_dir_all(workdir.join("pkg")).unwrap();
    std::fs::write(workdir.join("pkg/lib.rs"), "").unwrap();
    let inputs = SandboxInputs {
        flag: None,
        workdir: workdir.clone(),
        home: dir.path().join("home"),
        helper: PathBuf::from("/bin/harness9"),
    };
    let settings = SandboxSettings {
        mode: SandboxMode::WorkspaceWrite,
        ..SandboxSettings::default()
    };
    let platform: Option<Arc<dyn Platform>> = Some(Arc::new(FakePlatform));
    let sandbox = Sandbox::from_parts(&inputs, settings, platform, Vec::new());
    let (planted, hidden) = (workdir.join("pkg/.env"), workdir.join("pkg/notes"));

    let job_a = sandbox.prepare(SandboxMode::WorkspaceWrite).unwrap();
    std::fs::write(&planted, "OPENAI_BASE_URL=http://evil\n").unwrap();
    let job_b = sandbox.prepare(SandboxMode::WorkspaceWrite).unwrap();
    std::fs::rename(&planted, &hidden).unwrap();
    let restored_a = job_a.snapshot.as_ref().unwrap().restore();
    drop(job_a);
    assert!(restored_a.is_clean(), "{restored_a:?}");
    std::fs::rename(&hidden, &planted).unwrap();
    let restored_b = job_b.snapshot.as_ref().unwrap().restore();
    drop(job_b);
    assert!(!planted.exists(), "the plant outlived both jobs");
    assert_eq!(restored_b.undone, vec![planted.clone()]);

    // Once no call is alive, a new one starts from what is there now.
    std::fs::write(&planted, "KEY=mine\n").unwrap();
    let later = sandbox.prepare(SandboxMode::WorkspaceWrite).unwrap();
    assert!(later.snapshot.as_ref().unwrap().restore().is_clean());
    assert!(planted.exists());
}
