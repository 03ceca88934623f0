//! Metadata outside the writable roots (issue 29 point 8): Landlock's rights do not cover
//! `chmod`, `chown` or `utimensat`, so the sandbox mounts everything but the writable roots
//! read-only; a command changes no mode or time of the user's files there, and `chmod +x`
//! inside the workdir still works.

use std::os::unix::fs::PermissionsExt;

use super::{Place, text};

#[test]
fn modes_and_times_outside_the_writable_roots_stay_as_they_were() {
    let place = Place::new();
    let outside = place.workdir.parent().unwrap().join("outside.txt");
    std::fs::write(&outside, "the user's file").unwrap();
    std::fs::set_permissions(&outside, std::fs::Permissions::from_mode(0o600)).unwrap();
    let before = std::fs::metadata(&outside).unwrap();
    let path = outside.display();
    for script in [
        format!("chmod 666 {path}"),
        format!("touch -d 2000-01-01 {path}"),
        format!("chmod 777 {}", place.user_home.display()),
    ] {
        let output = place.sandboxed(&[], &script);
        assert!(!output.status.success(), "`{script}`: {}", text(&output));
        assert!(
            String::from_utf8_lossy(&output.stderr).contains("Read-only file system"),
            "`{script}`: {}",
            text(&output)
        );
    }
    let after = std::fs::metadata(&outside).unwrap();
    assert_eq!(after.permissions().mode(), before.permissions().mode());
    assert_eq!(after.modified().unwrap(), before.modified().unwrap());

    // Inside the workdir a script is still made executable and run.
    let output = place.sandboxed(
        &[],
        "printf '#!/bin/sh\\necho ran\\n' > run.sh && chmod +x run.sh && ./run.sh && \
         touch -d 2000-01-01 run.sh",
    );
    assert!(output.status.success(), "{}", text(&output));
    assert!(String::from_utf8_lossy(&output.stdout).contains("ran"));
    let mode = std::fs::metadata(place.workdir.join("run.sh"))
        .unwrap()
        .permissions()
        .mode();
    assert!(mode & 0o100 != 0, "{mode:o}");
}
