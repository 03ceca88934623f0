//! Skills: `SKILL.md` files with YAML front matter (`name`, `description`) and a body of
//! instructions. The prompt lists only names and descriptions; `use_skill` returns a body on
//! demand (progressive disclosure). Project skills win over the user's on a name clash.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::front_matter::FrontMatterError;

/// One discovered skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    pub name: String,
    pub description: String,
    pub path: PathBuf,
}

/// The skills of a run, by name.
#[derive(Debug, Clone, Default)]
pub struct SkillIndex {
    skills: BTreeMap<String, Skill>,
    /// Files that could not be read as skills, with why (shown once as warnings).
    pub problems: Vec<String>,
}

impl SkillIndex {
    /// Discovers `<workdir>/.harness9/skills/*/SKILL.md` and `<home>/skills/*/SKILL.md`.
    pub fn discover(workdir: &Path, home: &Path) -> Self {
        let mut index = SkillIndex::default();
        // The user's first, so that the project's replace them on a clash.
        index.scan(&home.join("skills"));
        index.scan(&workdir.join(".harness9").join("skills"));
        for problem in &index.problems {
            tracing::warn!("[skills] skipped | {problem}");
        }
        index
    }

    fn scan(&mut self, dir: &Path) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut paths: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path().join("SKILL.md"))
            .filter(|p| p.is_file())
            .collect();
        paths.sort();
        for path in paths {
            match read_skill(&path) {
                Ok(skill) => {
                    self.skills.insert(skill.name.clone(), skill);
                }
                Err(problem) => self.problems.push(format!("{}: {problem}", path.display())),
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.skills.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = &Skill> {
        self.skills.values()
    }

    pub fn get(&self, name: &str) -> Option<&Skill> {
        self.skills.get(name)
    }

    /// The index for the system prompt: one line per skill.
    pub fn summary(&self) -> String {
        self.skills
            .values()
            .map(|s| format!("- {}: {}", s.name, s.description))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// A skill's whole body, read from disk now (it may have been edited since discovery).
    pub fn body(&self, name: &str) -> Result<String, SkillError> {
        let skill = self
            .skills
            .get(name)
            .ok_or_else(|| SkillError::NoSuchSkill {
                name: name.to_owned(),
                available: self.skills.keys().cloned().collect(),
            })?;
        let text = std::fs::read_to_string(&skill.path).map_err(|source| SkillError::Read {
            path: skill.path.clone(),
            source,
        })?;
        Ok(super::front_matter::split(&text)
            .map(|(_, body)| body)
            .unwrap_or(&text)
            .trim()
            .to_owned())
    }
}

/// A skill that cannot be used or read.
#[derive(Debug, thiserror::Error)]
pub enum SkillError {
    /// `available`: the installed skills' names, in order.
    #[error(
        "there is no skill named `{name}`; {}",
        if .available.is_empty() {
            "no skills are installed".to_owned()
        } else {
            format!("available: {}", .available.join(", "))
        }
    )]
    NoSuchSkill {
        name: String,
        available: Vec<String>,
    },
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Discovery: the file (whose path the notice names) could not be read.
    #[error(transparent)]
    Unreadable(std::io::Error),
    #[error(transparent)]
    FrontMatter(#[from] FrontMatterError),
    #[error("`{name}` is not a usable skill name (one word, no spaces)")]
    BadName { name: String },
}

fn read_skill(path: &Path) -> Result<Skill, SkillError> {
    let text = std::fs::read_to_string(path).map_err(SkillError::Unreadable)?;
    let (front, _) = super::front_matter::split(&text).ok_or(FrontMatterError::Missing)?;
    let fields = parse_front_matter(front);
    let name = fields
        .get("name")
        .cloned()
        .ok_or(FrontMatterError::NoField { key: "name" })?;
    let description = fields
        .get("description")
        .cloned()
        .ok_or(FrontMatterError::NoField { key: "description" })?;
    if name.is_empty() || name.chars().any(char::is_whitespace) {
        return Err(SkillError::BadName { name });
    }
    Ok(Skill {
        name,
        description,
        path: path.to_path_buf(),
    })
}

/// `key: value` lines of the front matter (the subset SKILL.md uses): quoted values, and
/// indented continuation lines (YAML `>` / `|` blocks) folded into one line. Lenient where
/// `front_matter::parse` is strict: a line it cannot read is skipped, never an error, as skills
/// always were.
fn parse_front_matter(front: &str) -> BTreeMap<String, String> {
    let mut fields = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in front.lines() {
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        if line.starts_with([' ', '\t']) {
            if let Some(key) = &current {
                let value: &mut String = fields.entry(key.clone()).or_default();
                if !value.is_empty() {
                    value.push(' ');
                }
                value.push_str(line.trim());
            }
            continue;
        }
        let Some((key, value)) = line.split_once(':') else {
            current = None;
            continue;
        };
        let mut value = value.trim();
        if matches!(value, ">" | "|" | ">-" | "|-") {
            value = "";
        }
        let value = super::front_matter::unquote(value);
        fields.insert(key.trim().to_owned(), value.to_owned());
        current = Some(key.trim().to_owned());
    }
    fields
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skill(dir: &Path, folder: &str, text: &str) {
        std::fs::create_dir_all(dir.join(folder)).unwrap();
        std::fs::write(dir.join(folder).join("SKILL.md"), text).unwrap();
    }

    #[test]
    fn discovers_parses_and_lets_the_project_win() {
        let root = tempfile::tempdir().unwrap();
        let (work, home) = (root.path().join("work"), root.path().join("home"));
        skill(
            &home.join("skills"),
            "release",
            "---\nname: release\ndescription: the user's release steps\n---\nuser body\n",
        );
        skill(
            &home.join("skills"),
            "review",
            "---\nname: review\ndescription: >\n  Review a change\n  carefully.\n---\n\nReview body.\n",
        );
        skill(
            &work.join(".harness9/skills"),
            "release",
            "---\nname: release\ndescription: \"the project's release steps\"\n---\nproject body\n",
        );
        skill(
            &work.join(".harness9/skills"),
            "broken",
            "no front matter here",
        );
        skill(
            &work.join(".harness9/skills"),
            "nameless",
            "---\ndescription: x\n---\n",
        );

        let index = SkillIndex::discover(&work, &home);
        assert_eq!(
            index.summary(),
            "- release: the project's release steps\n- review: Review a change carefully."
        );
        assert_eq!(index.body("release").unwrap(), "project body");
        assert_eq!(index.body("review").unwrap(), "Review body.");
        assert!(
            index
                .body("deploy")
                .unwrap_err()
                .to_string()
                .contains("available: release, review")
        );
        assert_eq!(index.problems.len(), 2, "{:?}", index.problems);
    }
}
