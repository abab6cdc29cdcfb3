//! The tools' input and output schemas as standard JSON Schema. schemars writes Rust's integer
//! and float widths as `format` (`uint`, `uint32`, `int64`, `double`, …), which JSON Schema does
//! not define: the official TypeScript SDK's validator (Ajv) logs `unknown format "uint"
//! ignored in schema` on every call. The bounds those formats stood for are kept as
//! `minimum` / `maximum` (schemars writes `minimum: 0` for unsigned types; added here when a
//! schema lacks it), so a client validates what the format meant.

use serde_json::{Map, Value};

/// The formats JSON Schema (2020-12) defines; any other is dropped.
const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// Rewrite `schema` (a tool's input or output schema, and every subschema in it) in place.
pub fn standardise(schema: &mut Map<String, Value>) {
    if let Some(Value::String(format)) = schema.get("format")
        && !STANDARD_FORMATS.contains(&format.as_str())
    {
        let unsigned = format.starts_with("uint");
        schema.remove("format");
        if unsigned && !schema.contains_key("minimum") {
            schema.insert("minimum".into(), Value::from(0));
        }
    }
    for value in schema.values_mut() {
        walk(value);
    }
}

fn walk(value: &mut Value) {
    match value {
        Value::Object(map) => standardise(map),
        Value::Array(items) => items.iter_mut().for_each(walk),
        _ => {}
    }
}

/// Every `format` in `schema` that JSON Schema does not define, with its path.
pub fn nonstandard_formats(schema: &Value) -> Vec<String> {
    fn visit(value: &Value, path: &str, found: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                if let Some(Value::String(format)) = map.get("format")
                    && !STANDARD_FORMATS.contains(&format.as_str())
                {
                    found.push(format!("{path}: {format}"));
                }
                for (key, v) in map {
                    visit(v, &format!("{path}/{key}"), found);
                }
            }
            Value::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    visit(v, &format!("{path}/{i}"), found);
                }
            }
            _ => {}
        }
    }
    let mut found = Vec::new();
    visit(schema, "", &mut found);
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn widths_go_and_their_bounds_stay() {
        let mut schema = json!({
            "type": "object",
            "properties": {
                "count": {"type": "integer", "format": "uint", "minimum": 0},
                "top": {"type": "integer", "format": "uint32"},
                "score": {"type": "number", "format": "double"},
                "at": {"type": "string", "format": "date-time"},
                "items": {"type": "array", "items": {"type": "integer", "format": "int64"}},
                "either": {"anyOf": [{"type": "integer", "format": "uint8"}, {"type": "null"}]}
            }
        });
        assert_eq!(nonstandard_formats(&schema).len(), 5);
        standardise(schema.as_object_mut().unwrap());
        assert_eq!(nonstandard_formats(&schema), Vec::<String>::new());
        let p = &schema["properties"];
        assert_eq!(p["count"], json!({"type": "integer", "minimum": 0}));
        assert_eq!(p["top"], json!({"type": "integer", "minimum": 0}));
        assert_eq!(p["score"], json!({"type": "number"}));
        assert_eq!(p["at"]["format"], "date-time");
        assert_eq!(p["items"]["items"], json!({"type": "integer"}));
        assert_eq!(
            p["either"]["anyOf"][0],
            json!({"type": "integer", "minimum": 0})
        );
    }
}
