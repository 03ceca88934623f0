//! The `---`-fenced front matter of a Markdown file (agent files, `SKILL.md`): the small part of
//! YAML those files use (`key: value` lines, quoted values, folded `>`/`|` blocks, and lists
//! written `[a, b]` or as `- item` lines). Anything else in it is a problem the caller reports.

use std::collections::BTreeMap;

/// One front-matter value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    Text(String),
    List(Vec<String>),
}

impl Value {
    /// The value as a list: a list as it is, a text as its comma-separated parts.
    pub fn items(&self) -> Vec<String> {
        match self {
            Value::List(items) => items.clone(),
            Value::Text(text) => text
                .split(',')
                .map(|part| unquote(part.trim()).to_owned())
                .filter(|part| !part.is_empty())
                .collect(),
        }
    }

    pub fn text(&self) -> Option<&str> {
        match self {
            Value::Text(text) => Some(text),
            Value::List(_) => None,
        }
    }
}

/// The front matter and the body of a `---`-fenced document; `None` without front matter.
pub fn split(text: &str) -> Option<(&str, &str)> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let rest = text.strip_prefix("---")?.trim_start_matches([' ', '\t']);
    let rest = rest
        .strip_prefix('\n')
        .or_else(|| rest.strip_prefix("\r\n"))?;
    // The closing fence may be the first line (an empty front matter).
    let (front, after) = if let Some(after) = rest.strip_prefix("---") {
        ("", after)
    } else {
        let end = rest.find("\n---")?;
        (&rest[..end], &rest[end + 4..])
    };
    let body = after.split_once('\n').map(|(_, b)| b).unwrap_or("");
    Some((front, body))
}

/// A file whose front matter cannot be read, or lacks a field it needs. `line` counts from 1
/// within the front matter.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrontMatterError {
    #[error("no front matter (a block between --- lines)")]
    Missing,
    #[error("line {line}: an indented line with no key")]
    NoKey { line: usize },
    #[error("line {line}: a list item must start with `-`")]
    NoDash { line: usize },
    #[error("line {line}: expected `key: value`")]
    NoColon { line: usize },
    #[error("the front matter has no `{key}`")]
    NoField { key: &'static str },
}

/// The fields of a front matter, by key.
pub fn parse(front: &str) -> Result<BTreeMap<String, Value>, FrontMatterError> {
    let mut fields: BTreeMap<String, Value> = BTreeMap::new();
    let mut current: Option<String> = None;
    for (number, line) in front.lines().enumerate() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        if line.starts_with([' ', '\t']) || trimmed.starts_with("- ") || trimmed == "-" {
            let Some(key) = &current else {
                return Err(FrontMatterError::NoKey { line: number + 1 });
            };
            let entry = fields
                .entry(key.clone())
                .or_insert_with(|| Value::Text(String::new()));
            match (trimmed.strip_prefix('-'), &mut *entry) {
                (Some(item), Value::List(items)) => items.push(unquote(item.trim()).to_owned()),
                (Some(item), Value::Text(text)) if text.is_empty() => {
                    *entry = Value::List(vec![unquote(item.trim()).to_owned()]);
                }
                (_, Value::Text(text)) => {
                    if !text.is_empty() {
                        text.push(' ');
                    }
                    text.push_str(trimmed);
                }
                (None, Value::List(_)) => {
                    return Err(FrontMatterError::NoDash { line: number + 1 });
                }
            }
            continue;
        }
        let Some((key, value)) = line.split_once(':') else {
            return Err(FrontMatterError::NoColon { line: number + 1 });
        };
        let key = key.trim().to_owned();
        let value = value.trim();
        let value = if matches!(value, ">" | "|" | ">-" | "|-" | "") {
            Value::Text(String::new())
        } else if let Some(inner) = value.strip_prefix('[').and_then(|v| v.strip_suffix(']')) {
            Value::List(
                inner
                    .split(',')
                    .map(|item| unquote(item.trim()).to_owned())
                    .filter(|item| !item.is_empty())
                    .collect(),
            )
        } else {
            Value::Text(unquote(value).to_owned())
        };
        fields.insert(key.clone(), value);
        current = Some(key);
    }
    Ok(fields)
}

pub fn unquote(value: &str) -> &str {
    value
        .strip_prefix('"')
        .and_then(|v| v.strip_suffix('"'))
        .or_else(|| value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
        .unwrap_or(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_claude_code_shapes() {
        let text = "---\nname: code-reviewer\ndescription: >\n  Reviews code\n  carefully.\n\
                    tools: Read, Grep, \"Glob\"\nmodel: inherit\ndisallowedTools:\n  - Bash\n  - 'Write'\n\
                    color: [blue]\n---\nYou review.\n";
        let (front, body) = split(text).unwrap();
        assert_eq!(body, "You review.\n");
        let fields = parse(front).unwrap();
        assert_eq!(fields["name"].text(), Some("code-reviewer"));
        assert_eq!(
            fields["description"].text(),
            Some("Reviews code carefully.")
        );
        assert_eq!(fields["tools"].items(), ["Read", "Grep", "Glob"]);
        assert_eq!(fields["disallowedTools"].items(), ["Bash", "Write"]);
        assert_eq!(fields["color"].items(), ["blue"]);
    }

    #[test]
    fn a_line_that_is_not_a_field_is_a_problem() {
        assert!(parse("name: x\njust words").is_err());
        assert!(parse("  - orphan").is_err());
        assert!(split("no front matter").is_none());
        assert!(split("---\nname: x\n").is_none());
    }
}
