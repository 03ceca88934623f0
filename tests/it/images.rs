//! `@shot.png` through the real binary: the image is stored once under `$HARNESS9_HOME/images/`,
//! sessions.db keeps only a reference, and each provider's request carries it as image content
//! in its own shape.

use base64::Engine as _;
use serde_json::Value;

use crate::exec::Run;
use crate::support::{MockLlm, Reply, Split, fixture, openai_text_sse};

/// A 3x2 PNG.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAMAAAACCAIAAAASFvFNAAAAEklEQVR4nGP4z8AARAwMDAwMAD/dBP2HWvdRAAAAAElFTkSuQmCC";

fn reply(provider: &str) -> Vec<u8> {
    match provider {
        "anthropic" => fixture("anthropic_text.sse"),
        "responses" => fixture("responses_text.sse"),
        _ => openai_text_sse("A tiny image."),
    }
}

/// The image parts of the request's last user message, as (media type, base64) pairs.
fn images_sent(provider: &str, body: &Value) -> Vec<(String, String)> {
    let split = |url: &str| {
        let rest = url.strip_prefix("data:").unwrap();
        let (media, data) = rest.split_once(";base64,").unwrap();
        (media.to_owned(), data.to_owned())
    };
    match provider {
        "anthropic" => body["messages"].as_array().unwrap().last().unwrap()["content"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|b| b["type"] == "image")
            .map(|b| {
                let source = &b["source"];
                assert_eq!(source["type"], "base64");
                (
                    source["media_type"].as_str().unwrap().to_owned(),
                    source["data"].as_str().unwrap().to_owned(),
                )
            })
            .collect(),
        "responses" => body["input"].as_array().unwrap().last().unwrap()["content"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["type"] == "input_image")
            .map(|p| split(p["image_url"].as_str().unwrap()))
            .collect(),
        _ => body["messages"].as_array().unwrap().last().unwrap()["content"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["type"] == "image_url")
            .map(|p| split(p["image_url"]["url"].as_str().unwrap()))
            .collect(),
    }
}

#[test]
fn a_mentioned_image_reaches_every_provider_as_image_content() {
    let png = base64::engine::general_purpose::STANDARD
        .decode(PNG)
        .unwrap();
    for provider in ["openai", "anthropic", "responses"] {
        let mock = MockLlm::start_in_background();
        mock.push(Reply::Sse {
            body: reply(provider),
            split: Split::Whole,
        });
        let run = Run::new();
        std::fs::write(run.workdir.join("shot.png"), &png).unwrap();
        // Named like an image but not one: named in the prompt, never sent as one.
        std::fs::write(run.workdir.join("fake.png"), "just text").unwrap();
        let mut command = run.command(
            &mock,
            &[
                "exec",
                "--provider",
                provider,
                "what is in @shot.png and @fake.png?",
            ],
        );
        command.env("ANTHROPIC_API_KEY", "sk-ant-test");
        command.env("ANTHROPIC_BASE_URL", &mock.base_url);
        let out = command.output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{provider}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let body = &mock.requests()[0].body;
        assert_eq!(
            images_sent(provider, body),
            [("image/png".to_owned(), PNG.to_owned())],
            "{provider}"
        );
        let text = body.to_string();
        assert!(text.contains("attached as an image, 3x2"), "{provider}");
        assert!(text.contains("not attached as an image"), "{provider}");
        // Stored once, by reference: sessions.db does not hold the image's bytes.
        let stored: Vec<_> = std::fs::read_dir(run.home.join("images"))
            .unwrap()
            .collect();
        assert_eq!(stored.len(), 1);
        let mut db = std::fs::read(run.home.join("sessions.db")).unwrap();
        if let Ok(wal) = std::fs::read(run.home.join("sessions.db-wal")) {
            db.extend(wal);
        }
        let needle = &PNG.as_bytes()[..40];
        assert!(!db.windows(needle.len()).any(|w| w == needle), "{provider}");
    }
}

/// Ctrl+V in the TUI under X11: the clipboard (a stand-in `xclip` offering a PNG, as the real one
/// answers) becomes `[image #1 3x2]` in the input, and the prompt carries the image.
#[test]
fn an_image_pasted_from_the_clipboard_is_sent_as_image_content() {
    use crate::tui::{Pty, env, harness9};
    let png = base64::engine::general_purpose::STANDARD
        .decode(PNG)
        .unwrap();
    let mock = MockLlm::start_in_background();
    mock.push(Reply::Sse {
        body: openai_text_sse("A tiny image."),
        split: Split::Whole,
    });
    let run = Run::new();
    let bin = run.home.join("fake-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let shot = run.home.join("copied.png");
    std::fs::write(&shot, &png).unwrap();
    let xclip = bin.join("xclip");
    std::fs::write(
        &xclip,
        format!(
            "#!/bin/sh\ncase \"$*\" in\n*TARGETS*) printf 'TARGETS\\ntext/plain\\nimage/png\\n' ;;\n\
             *'-t image/png'*) cat '{}' ;;\n*) exit 1 ;;\nesac\n",
            shot.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&xclip, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let mut environment = env(&run, &mock);
    environment.push((
        "PATH",
        format!(
            "{}:{}",
            bin.display(),
            std::env::var("PATH").unwrap_or_default()
        ),
    ));
    environment.push(("DISPLAY", ":0".into()));
    let mut pty = Pty::spawn(harness9(), &[], &run.workdir, &environment);
    pty.wait_for("Ask harness9 to do something");
    pty.send("what is ");
    pty.send("\x16");
    pty.wait_for("[image #1 3x2]");
    pty.send("\r");
    pty.wait_for("A tiny image.");
    mock.wait_for_requests(1);
    let body = &mock.requests()[0].body;
    assert_eq!(
        images_sent("openai", body),
        [("image/png".to_owned(), PNG.to_owned())]
    );
    // The answer can be drawn before the rest of its frame: what is asserted is waited for.
    pty.wait_for_all(&["what is [image #1 3x2]", "[image: clipboard-"]);
}
