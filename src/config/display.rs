//! How the TUI looks and where it draws: the colour theme (dark or light) and whether it uses
//! the terminal's alternate screen. The command line (`--theme`, `--no-alt-screen`) wins over
//! the `"tui"` section of the user's own `$HARNESS9_HOME/settings.json`; a project's settings
//! never change them (they are the user's terminal, not the project's).

use std::path::Path;

/// The colours the TUI draws with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Theme {
    /// Light text on a dark background.
    Dark,
    /// Dark text on a light background.
    Light,
}

/// The TUI's display settings as resolved.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Display {
    /// `None`: ask the terminal (its background colour, `COLORFGBG`), else dark.
    pub theme: Option<Theme>,
    /// Draw on the alternate screen (the default); without it the TUI runs in the terminal's
    /// main screen and leaves the transcript in its scrollback on exit.
    pub alt_screen: bool,
    /// Ring the bell when an approval waits or a run ends unseen (`tui::notify`).
    pub bell: bool,
    /// Send an OSC 9 notification then.
    pub notify: bool,
    /// What in the settings file was ignored, for the front end to show.
    pub notices: Vec<String>,
}

#[derive(Debug, Default, serde::Deserialize)]
struct File {
    #[serde(default)]
    tui: Option<Section>,
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Section {
    theme: Option<Theme>,
    alt_screen: Option<bool>,
    bell: Option<bool>,
    notify: Option<bool>,
}

/// The display settings: the flags, then `home/settings.json`'s `"tui"` section. A file that
/// is missing is no setting; one that cannot be read is reported and ignored.
pub fn resolve(home: &Path, theme: Option<Theme>, no_alt_screen: bool) -> Display {
    let path = home.join("settings.json");
    let mut notices = Vec::new();
    let section = match std::fs::read_to_string(&path) {
        Ok(text) => match serde_json::from_str::<File>(&text) {
            Ok(file) => file.tui.unwrap_or_default(),
            Err(error) => {
                notices.push(format!(
                    "{}: its \"tui\" settings were ignored: {error}",
                    path.display()
                ));
                Section::default()
            }
        },
        Err(_) => Section::default(),
    };
    Display {
        theme: theme.or(section.theme),
        alt_screen: !no_alt_screen && section.alt_screen.unwrap_or(true),
        bell: section.bell.unwrap_or(true),
        notify: section.notify.unwrap_or(true),
        notices,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_win_over_the_users_settings_file() {
        let home = tempfile::tempdir().unwrap();
        assert!(resolve(home.path(), None, false).alt_screen);
        std::fs::write(
            home.path().join("settings.json"),
            r#"{"permissions": {}, "tui": {"theme": "light", "alt_screen": false}}"#,
        )
        .unwrap();
        let display = resolve(home.path(), None, false);
        assert_eq!(display.theme, Some(Theme::Light));
        assert!(!display.alt_screen);
        assert_eq!(
            resolve(home.path(), Some(Theme::Dark), true).theme,
            Some(Theme::Dark)
        );
        std::fs::write(home.path().join("settings.json"), r#"{"tui": {"them": 1}}"#).unwrap();
        let display = resolve(home.path(), None, false);
        assert!(display.alt_screen && display.theme.is_none());
        assert_eq!(display.notices.len(), 1, "{:?}", display.notices);
    }

    #[test]
    fn the_bell_and_osc9_notifications_are_on_unless_the_settings_turn_them_off() {
        let home = tempfile::tempdir().unwrap();
        let display = resolve(home.path(), None, false);
        assert!(display.bell && display.notify);
        std::fs::write(
            home.path().join("settings.json"),
            r#"{"tui": {"bell": false, "notify": false}}"#,
        )
        .unwrap();
        let display = resolve(home.path(), None, false);
        assert!(!display.bell && !display.notify);
    }
}
