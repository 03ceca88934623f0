//! A tool's `structuredContent` checked against the `outputSchema` it declared, as the MCP
//! specification asks of clients. The common JSON Schema keywords are checked (`type`,
//! `properties`, `required`, `additionalProperties: false`, `items`, `enum`, `const`); a
//! keyword not checked here never fails a result: only a mismatch we can name does.

use serde_json::{Map, Value};

/// The first place where `value` does not match `schema`, worded for the model (`$.count:
/// expected integer, got string`), or `None` when it matches.
pub fn mismatch(schema: &Map<String, Value>, value: &Value) -> Option<String> {
    check(schema, value, "$")
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn is_of_type(value: &Value, wanted: &str) -> bool {
    let actual = type_name(value);
    actual == wanted
        || (wanted == "number" && actual == "integer")
        // 3.0 is an integer to JSON Schema.
        || (wanted == "integer" && value.as_f64().is_some_and(|f| f.fract() == 0.0))
}

fn check(schema: &Map<String, Value>, value: &Value, at: &str) -> Option<String> {
    if let Some(wanted) = schema.get("type") {
        let names: Vec<&str> = match wanted {
            Value::String(one) => vec![one.as_str()],
            Value::Array(many) => many.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        if !names.is_empty() && !names.iter().any(|name| is_of_type(value, name)) {
            return Some(format!(
                "{at}: expected {}, got {}",
                names.join(" or "),
                type_name(value)
            ));
        }
    }
    if let Some(Value::Array(allowed)) = schema.get("enum")
        && !allowed.contains(value)
    {
        return Some(format!(
            "{at}: {value} is not one of {}",
            Value::Array(allowed.clone())
        ));
    }
    if let Some(constant) = schema.get("const")
        && constant != value
    {
        return Some(format!("{at}: expected {constant}, got {value}"));
    }
    match value {
        Value::Object(object) => check_object(schema, object, at),
        Value::Array(items) => {
            let Some(Value::Object(item_schema)) = schema.get("items") else {
                return None;
            };
            items
                .iter()
                .enumerate()
                .find_map(|(i, item)| check(item_schema, item, &format!("{at}[{i}]")))
        }
        _ => None,
    }
}

fn check_object(
    schema: &Map<String, Value>,
    object: &Map<String, Value>,
    at: &str,
) -> Option<String> {
    if let Some(Value::Array(required)) = schema.get("required") {
        for name in required.iter().filter_map(Value::as_str) {
            if !object.contains_key(name) {
                return Some(format!("{at}: the required property `{name}` is missing"));
            }
        }
    }
    let properties = schema.get("properties").and_then(Value::as_object);
    for (name, field) in object {
        let at = format!("{at}.{name}");
        match properties.and_then(|p| p.get(name)) {
            Some(Value::Object(field_schema)) => {
                if let Some(found) = check(field_schema, field, &at) {
                    return Some(found);
                }
            }
            _ if schema.get("additionalProperties") == Some(&Value::Bool(false)) => {
                return Some(format!("{at}: no such property in the schema"));
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema(value: Value) -> Map<String, Value> {
        value.as_object().cloned().unwrap()
    }

    #[test]
    fn a_matching_result_passes_and_each_kind_of_mismatch_is_named() {
        let s = schema(
            json!({"type": "object", "required": ["count"], "properties": {
            "count": {"type": "integer"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "state": {"enum": ["open", "closed"]}}}),
        );
        assert_eq!(
            mismatch(&s, &json!({"count": 3, "tags": ["a"], "state": "open"})),
            None
        );
        assert_eq!(mismatch(&s, &json!({"count": 3.0})), None);
        assert_eq!(
            mismatch(&s, &json!({"count": "many"})).unwrap(),
            "$.count: expected integer, got string"
        );
        assert_eq!(
            mismatch(&s, &json!({})).unwrap(),
            "$: the required property `count` is missing"
        );
        assert_eq!(
            mismatch(&s, &json!({"count": 1, "tags": ["a", 2]})).unwrap(),
            "$.tags[1]: expected string, got integer"
        );
        assert!(
            mismatch(&s, &json!({"count": 1, "state": "gone"}))
                .unwrap()
                .contains("not one of")
        );
        assert_eq!(
            mismatch(&s, &json!([1])).unwrap(),
            "$: expected object, got array"
        );
        let closed = schema(json!({"type": "object", "additionalProperties": false,
                                   "properties": {"a": {}}}));
        assert_eq!(
            mismatch(&closed, &json!({"a": 1, "b": 2})).unwrap(),
            "$.b: no such property in the schema"
        );
    }
}
