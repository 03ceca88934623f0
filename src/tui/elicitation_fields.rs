//! The fields of an MCP server's form (`elicitation/create`'s `requestedSchema`), read from its
//! schema: strings, numbers and integers typed, booleans toggled, enums chosen (plain `enum`,
//! with `enumNames`, or titled `oneOf` choices); defaults filled in, required ones marked. An
//! array of choices (multi-select) is typed as a comma-separated list. The answer is built only
//! when every required field is filled and every number reads as one.

use serde_json::{Map, Value};

/// What keeps the fields from making an answer (the label of the field it is in).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(super) enum FieldProblem {
    #[error("{0} is required")]
    Required(String),
    #[error("{0} wants a whole number")]
    NotWhole(String),
    #[error("{0} wants a number")]
    NotNumber(String),
}

/// How a field is filled in.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Kind {
    Text,
    /// Several values, typed as a comma-separated list.
    List,
    Number {
        integer: bool,
    },
    Boolean,
    /// One of these (value, label).
    Choice(Vec<(String, String)>),
}

/// One field and what the user has put in it.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Field {
    /// The key in the answer.
    pub name: String,
    /// The schema's title, else the name.
    pub label: String,
    pub description: Option<String>,
    pub kind: Kind,
    pub required: bool,
    /// What is typed (text, list and number fields).
    pub text: String,
    /// A boolean's value.
    pub on: bool,
    /// The chosen entry of a choice.
    pub chosen: Option<usize>,
}

impl Field {
    fn new(name: &str, property: &Value, required: bool) -> Self {
        let text_of = |key: &str| property.get(key).and_then(Value::as_str).map(str::to_owned);
        let kind = kind_of(property);
        let default = property.get("default");
        let mut field = Field {
            name: name.to_owned(),
            label: text_of("title").unwrap_or_else(|| name.to_owned()),
            description: text_of("description"),
            kind,
            required,
            text: String::new(),
            on: false,
            chosen: None,
        };
        match (&field.kind, default) {
            (Kind::Boolean, Some(Value::Bool(on))) => field.on = *on,
            (Kind::Choice(choices), Some(Value::String(value))) => {
                field.chosen = choices.iter().position(|(v, _)| v == value)
            }
            (Kind::List, Some(Value::Array(values))) => {
                let values: Vec<&str> = values.iter().filter_map(Value::as_str).collect();
                field.text = values.join(", ");
            }
            (_, Some(Value::String(text))) => field.text = text.clone(),
            (_, Some(Value::Number(number))) => field.text = number.to_string(),
            _ => {}
        }
        field
    }

    /// What the field shows as its value.
    pub fn shown(&self) -> String {
        match &self.kind {
            Kind::Boolean if self.on => "[x] yes".into(),
            Kind::Boolean => "[ ] no".into(),
            Kind::Choice(choices) => match self.chosen.and_then(|at| choices.get(at)) {
                Some((_, label)) => format!("‹ {label} ›"),
                None => "(←→ to choose)".into(),
            },
            _ => self.text.clone(),
        }
    }

    /// Whether the field takes typed characters.
    pub fn typed(&self) -> bool {
        matches!(self.kind, Kind::Text | Kind::List | Kind::Number { .. })
    }

    /// Left (`forward` false) or right on a boolean or a choice.
    pub fn step(&mut self, forward: bool) {
        match &self.kind {
            Kind::Boolean => self.on = !self.on,
            Kind::Choice(choices) if !choices.is_empty() => {
                let last = choices.len() - 1;
                self.chosen = Some(match (self.chosen, forward) {
                    (None, true) => 0,
                    (None, false) => last,
                    (Some(at), true) => (at + 1).min(last),
                    (Some(at), false) => at.saturating_sub(1),
                });
            }
            _ => {}
        }
    }

    /// The field's value for the answer: `Ok(None)` when it is left empty (and may be), an
    /// error naming what is wrong.
    fn value(&self) -> Result<Option<Value>, FieldProblem> {
        let text = self.text.trim();
        let missing = match &self.kind {
            Kind::Boolean => false,
            Kind::Choice(_) => self.chosen.is_none(),
            _ => text.is_empty(),
        };
        if missing {
            return match self.required {
                true => Err(FieldProblem::Required(self.label.clone())),
                false => Ok(None),
            };
        }
        let value = match &self.kind {
            Kind::Text => Value::String(text.to_owned()),
            Kind::List => Value::Array(
                text.split(',')
                    .map(str::trim)
                    .filter(|item| !item.is_empty())
                    .map(|item| Value::String(item.to_owned()))
                    .collect(),
            ),
            Kind::Number { integer: true } => match text.parse::<i64>() {
                Ok(number) => Value::from(number),
                Err(_) => return Err(FieldProblem::NotWhole(self.label.clone())),
            },
            Kind::Number { integer: false } => match text
                .parse::<f64>()
                .ok()
                .and_then(serde_json::Number::from_f64)
            {
                Some(number) => Value::Number(number),
                None => return Err(FieldProblem::NotNumber(self.label.clone())),
            },
            Kind::Boolean => Value::Bool(self.on),
            Kind::Choice(choices) => {
                let chosen = self.chosen.and_then(|at| choices.get(at));
                Value::String(chosen.map(|(v, _)| v.clone()).unwrap_or_default())
            }
        };
        Ok(Some(value))
    }
}

/// How `property` is filled in.
fn kind_of(property: &Value) -> Kind {
    let text_of =
        |value: &Value, key: &str| value.get(key).and_then(Value::as_str).map(str::to_owned);
    if let Some(values) = property.get("enum").and_then(Value::as_array) {
        let names = property.get("enumNames").and_then(Value::as_array);
        let choices = values
            .iter()
            .enumerate()
            .filter_map(|(at, value)| {
                let value = value.as_str()?.to_owned();
                let label = names
                    .and_then(|names| names.get(at))
                    .and_then(Value::as_str)
                    .map_or_else(|| value.clone(), str::to_owned);
                Some((value, label))
            })
            .collect();
        return Kind::Choice(choices);
    }
    if let Some(options) = property.get("oneOf").and_then(Value::as_array) {
        let choices = options
            .iter()
            .filter_map(|option| {
                let value = text_of(option, "const")?;
                let label = text_of(option, "title").unwrap_or_else(|| value.clone());
                Some((value, label))
            })
            .collect();
        return Kind::Choice(choices);
    }
    match property.get("type").and_then(Value::as_str) {
        Some("boolean") => Kind::Boolean,
        Some("integer") => Kind::Number { integer: true },
        Some("number") => Kind::Number { integer: false },
        Some("array") => Kind::List,
        _ => Kind::Text,
    }
}

/// The form's fields, in the schema's order.
pub(super) fn fields(schema: &Value) -> Vec<Field> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    properties
        .iter()
        .map(|(name, property)| Field::new(name, property, required.contains(&name.as_str())))
        .collect()
}

/// The answer the fields make, or the first thing wrong with them.
pub(super) fn answer(fields: &[Field]) -> Result<Map<String, Value>, FieldProblem> {
    let mut values = Map::new();
    for field in fields {
        if let Some(value) = field.value()? {
            values.insert(field.name.clone(), value);
        }
    }
    Ok(values)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn every_kind_is_read_with_its_default_and_answered_typed() {
        let schema = json!({"type": "object", "required": ["name", "age"], "properties": {
            "name": {"type": "string", "title": "Your name", "default": "Ada"},
            "age": {"type": "integer"},
            "ratio": {"type": "number", "default": 0.5},
            "news": {"type": "boolean", "default": true},
            "color": {"type": "string", "enum": ["r", "g"], "enumNames": ["Red", "Green"],
                      "default": "g"},
            "size": {"type": "string", "oneOf": [{"const": "s", "title": "Small"}]},
            "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}}}});
        let mut fields = fields(&schema);
        let kinds: Vec<&Kind> = fields.iter().map(|f| &f.kind).collect();
        assert!(kinds.contains(&&Kind::Boolean) && kinds.contains(&&Kind::List));
        let at = |fields: &[Field], name: &str| fields.iter().position(|f| f.name == name);
        let age = at(&fields, "age").unwrap();
        assert_eq!(answer(&fields), Err(FieldProblem::Required("age".into())));
        fields[age].text = "3x".into();
        assert_eq!(answer(&fields), Err(FieldProblem::NotWhole("age".into())));
        fields[age].text = "36".into();
        let tags = at(&fields, "tags").unwrap();
        fields[tags].text = "a, b,".into();
        let color = at(&fields, "color").unwrap();
        assert_eq!(fields[color].shown(), "‹ Green ›");
        fields[color].step(false);
        assert_eq!(
            answer(&fields).unwrap(),
            json!({"name": "Ada", "age": 36, "ratio": 0.5, "news": true, "color": "r",
                   "tags": ["a", "b"]})
            .as_object()
            .unwrap()
            .clone()
        );
    }
}
