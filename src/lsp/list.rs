//! `harness9 lsp list`: every language server harness9 knows for this folder and where each
//! stands (ready, not on PATH, off), and whether the folder's trust lets any start.

use std::path::Path;

use super::spec::{self, Availability};

/// The listing, one server a line.
pub fn list_text(workdir: &Path, home: &Path, trusted: bool) -> String {
    let mut notices = Vec::new();
    let path = std::env::var_os("PATH");
    let candidates = spec::candidates(workdir, home, path.as_ref(), &mut notices);
    let mut out = String::new();
    for candidate in &candidates {
        let state = match &candidate.availability {
            Availability::Ready(spec) => {
                let command = std::iter::once(spec.program.display().to_string())
                    .chain(spec.args.iter().cloned())
                    .collect::<Vec<_>>()
                    .join(" ");
                let detected = candidate
                    .markers
                    .iter()
                    .find(|marker| workdir.join(marker).is_file());
                match (candidate.markers.is_empty(), detected) {
                    (true, _) => format!("ready: {command}"),
                    (false, Some(marker)) => format!("ready ({marker}): {command}"),
                    (false, None) => format!(
                        "ready for folders with {}: {command}",
                        candidate.markers.join(" or ")
                    ),
                }
            }
            Availability::NotOnPath(programs) => {
                format!("not on PATH ({})", programs.join(", "))
            }
            Availability::Off => "off in the settings".to_owned(),
            Availability::Broken(reason) => format!("ignored: {reason}"),
        };
        out.push_str(&format!(
            "{:<14} {:<28} {state}\n",
            candidate.name,
            candidate.files.join(" ")
        ));
    }
    if !trusted {
        out.push_str(
            "this folder is not trusted: no language server starts here (some run the \
             project's code)\n",
        );
    }
    for notice in notices {
        out.push_str(&format!("note: {notice}\n"));
    }
    out
}
