//! Checks tool arguments against the subset of JSON Schema our tools' schemas use (`type`,
//! `properties`, `required`, `enum`, `items`, `additionalProperties: false`, `minimum`), so a
//! mismatched call is answered with one precise sentence instead of reaching the tool.
//! A general validator crate would bring a large dependency for schemas we write ourselves.

use serde_json::Value;

/// The first place where arguments do not match their schema, and how.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{} {problem}", place(.path))]
pub struct SchemaMismatch {
    /// Where the value sits in the arguments (`todos[0].status`); empty at the top.
    pub path: String,
    pub problem: Mismatch,
}

/// How a value differs from its schema.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Mismatch {
    /// `found` describes the value ("the number 3", "an array").
    #[error("must be {} but is {found}", article(.expected))]
    Type { expected: String, found: String },
    /// `choices` as JSON.
    #[error("must be one of {}", .choices.join(", "))]
    NotOneOf { choices: Vec<String> },
    #[error("must be at least {minimum}")]
    BelowMinimum { minimum: f64 },
    #[error("is missing the required field `{name}`")]
    MissingField { name: String },
    #[error("has an unknown field `{name}` (known fields: {})", .known.join(", "))]
    UnknownField { name: String, known: Vec<String> },
}

fn place(path: &str) -> String {
    if path.is_empty() {
        "the arguments".to_owned()
    } else {
        format!("`{path}`")
    }
}

/// `Ok` when `value` matches `schema`; otherwise the first problem, with its location.
pub fn check(schema: &Value, value: &Value) -> Result<(), SchemaMismatch> {
    check_at(schema, value, "")
}

/// `path` is where `value` sits in the arguments (`todos[0].status`); empty at the top.
fn check_at(schema: &Value, value: &Value, path: &str) -> Result<(), SchemaMismatch> {
    let at = |problem: Mismatch| SchemaMismatch {
        path: path.to_owned(),
        problem,
    };
    let child = |name: &str| {
        if path.is_empty() {
            name.to_owned()
        } else {
            format!("{path}.{name}")
        }
    };
    if let Some(expected) = schema.get("type").and_then(Value::as_str)
        && !type_matches(expected, value)
    {
        return Err(at(Mismatch::Type {
            expected: expected.to_owned(),
            found: describe(value),
        }));
    }
    if let Some(choices) = schema.get("enum").and_then(Value::as_array)
        && !choices.contains(value)
    {
        let choices = choices.iter().map(Value::to_string).collect();
        return Err(at(Mismatch::NotOneOf { choices }));
    }
    if let (Some(minimum), Some(number)) = (
        schema.get("minimum").and_then(Value::as_f64),
        value.as_f64(),
    ) && number < minimum
    {
        return Err(at(Mismatch::BelowMinimum { minimum }));
    }
    if let Some(object) = value.as_object() {
        let properties = schema.get("properties").and_then(Value::as_object);
        for name in schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            if !object.contains_key(name) {
                return Err(at(Mismatch::MissingField {
                    name: name.to_owned(),
                }));
            }
        }
        let closed = schema.get("additionalProperties") == Some(&Value::Bool(false));
        for (name, field) in object {
            match properties.and_then(|p| p.get(name)) {
                Some(field_schema) => {
                    // An explicit null for an optional field means "not given".
                    if field.is_null() && !is_required(schema, name) {
                        continue;
                    }
                    check_at(field_schema, field, &child(name))?
                }
                None if closed => {
                    let known = properties
                        .map(|p| p.keys().cloned().collect())
                        .unwrap_or_default();
                    return Err(at(Mismatch::UnknownField {
                        name: name.clone(),
                        known,
                    }));
                }
                None => {}
            }
        }
    }
    if let (Some(items), Some(array)) = (schema.get("items"), value.as_array()) {
        for (i, item) in array.iter().enumerate() {
            check_at(items, item, &format!("{path}[{i}]"))?;
        }
    }
    Ok(())
}

fn is_required(schema: &Value, name: &str) -> bool {
    schema
        .get("required")
        .and_then(Value::as_array)
        .is_some_and(|r| r.iter().any(|v| v == name))
}

fn type_matches(expected: &str, value: &Value) -> bool {
    match expected {
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        "number" => value.is_number(),
        "integer" => {
            value.is_i64() || value.is_u64() || value.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        "null" => value.is_null(),
        _ => true,
    }
}

fn article(kind: &str) -> String {
    match kind {
        "object" | "array" | "integer" => format!("an {kind}"),
        _ => format!("a {kind}"),
    }
}

fn describe(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("the boolean {b}"),
        Value::Number(n) => format!("the number {n}"),
        Value::String(s) if s.chars().count() > 40 => "a string".into(),
        Value::String(s) => format!("the string {s:?}"),
        Value::Array(_) => "an array".into(),
        Value::Object(_) => "an object".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "limit": {"type": "integer", "minimum": 1},
                "todos": {"type": "array", "items": {"type": "object",
                    "properties": {"status": {"type": "string", "enum": ["pending", "completed"]}},
                    "required": ["status"]}},
            },
            "required": ["path"],
            "additionalProperties": false,
        })
    }

    #[test]
    fn accepts_a_matching_object() {
        assert!(check(&schema(), &json!({"path": "a", "limit": 3})).is_ok());
        assert!(check(&schema(), &json!({"path": "a", "limit": null})).is_ok());
    }

    #[test]
    fn names_each_kind_of_mismatch() {
        let cases = [
            (json!([]), "the arguments must be an object but is an array"),
            (json!({}), "missing the required field `path`"),
            (
                json!({"path": 3}),
                "`path` must be a string but is the number 3",
            ),
            (
                json!({"path": "a", "limit": 0}),
                "`limit` must be at least 1",
            ),
            (
                json!({"path": "a", "limit": 1.5}),
                "`limit` must be an integer",
            ),
            (json!({"path": "a", "colour": 1}), "unknown field `colour`"),
            (
                json!({"path": "a", "todos": [{"status": "done"}]}),
                "`todos[0].status` must be one of",
            ),
        ];
        for (value, expected) in cases {
            let problem = check(&schema(), &value).unwrap_err().to_string();
            assert!(problem.contains(expected), "{value}: {problem}");
        }
    }
}
