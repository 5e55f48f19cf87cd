//! The tool catalog (`tools/list`), made from the tool registry ([`crate::registry`]): names,
//! descriptions and input schemas generated from the argument types (so `deny_unknown_fields`
//! shows as `additionalProperties: false` and bounds as `minimum`/`maximum`), made lean for the
//! agent's context: shared parts once per schema (`$defs`), a choice of strings as one `enum`
//! with its values explained in the description, and nothing that says nothing (`"default":
//! null`, integer `format`s next to their bounds, "`nova.x` arguments.").

use std::sync::{Arc, OnceLock};

use rmcp::model::{Tool, ToolAnnotations};
use serde_json::{Map, Value};

use crate::registry::{ToolDef, all};

fn tool(def: &ToolDef) -> Tool {
    let mut annotations = ToolAnnotations::default();
    annotations.read_only_hint = Some(def.read_only);
    annotations.open_world_hint = Some(true);
    let mut schema = (def.schema)();
    if schema.get("description").and_then(Value::as_str) == Some(&format!("`{}` arguments.", def.name)) {
        schema.remove("description");
    }
    for v in schema.values_mut() {
        lean(v);
    }
    Tool::new(def.name, def.description, Arc::new(schema)).with_annotations(annotations)
}

/// Integer formats schemars adds; the bounds beside them say what an agent needs.
const INTEGER_FORMATS: [&str; 10] =
    ["int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64", "int"];

/// Makes one schema node (and everything under it) lean, meaning unchanged.
fn lean(v: &mut Value) {
    match v {
        Value::Object(o) => {
            if o.get("default") == Some(&Value::Null) {
                o.remove("default");
            }
            if o.get("format").and_then(Value::as_str).is_some_and(|f| INTEGER_FORMATS.contains(&f)) {
                o.remove("format");
            }
            fold_string_choice(o);
            for child in o.values_mut() {
                lean(child);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(lean),
        _ => {}
    }
}

/// `oneOf: [{const: "a", description: "…", type: string}, …]` (a documented Rust enum) becomes
/// `type: string, enum: ["a", …]` with "`a`: …" appended to the description.
fn fold_string_choice(o: &mut Map<String, Value>) {
    let Some(Value::Array(choices)) = o.get("oneOf") else { return };
    let mut values = Vec::new();
    let mut notes = Vec::new();
    for c in choices {
        let Some(Value::String(value)) = c.get("const") else { return };
        if c.as_object()
            .is_some_and(|c| c.keys().any(|k| !matches!(k.as_str(), "const" | "description" | "type")))
        {
            return;
        }
        if let Some(d) = c.get("description").and_then(Value::as_str) {
            notes.push(format!("`{value}`: {}", d.trim_end_matches('.')));
        }
        values.push(Value::String(value.clone()));
    }
    o.remove("oneOf");
    o.insert("type".into(), Value::String("string".into()));
    o.insert("enum".into(), Value::Array(values));
    if !notes.is_empty() {
        let head =
            o.get("description").and_then(Value::as_str).unwrap_or_default().trim_end_matches('.').to_owned();
        let text = if head.is_empty() { notes.join("; ") } else { format!("{head}: {}", notes.join("; ")) };
        o.insert("description".into(), Value::String(format!("{text}.")));
    }
}

/// Every tool Nova offers, in the registry's order.
pub fn tools() -> &'static [Tool] {
    static LIST: OnceLock<Vec<Tool>> = OnceLock::new();
    LIST.get_or_init(|| all().iter().map(|d| tool(d)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemas_forbid_unknown_fields_and_carry_bounds() {
        let perceive = tools().iter().find(|t| t.name == "nova.perceive").expect("perceive");
        let schema = serde_json::Value::Object((*perceive.input_schema).clone());
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["additionalProperties"], false);
        assert_eq!(schema["properties"]["maxElements"]["maximum"], 5000);
        let claim = tools().iter().find(|t| t.name == "nova.tab_claim").expect("claim");
        let schema = serde_json::Value::Object((*claim.input_schema).clone());
        assert_eq!(schema["properties"]["ttlMs"]["minimum"], 5000);
        assert_eq!(schema["required"], serde_json::json!(["targetId"]));
    }

    #[test]
    fn schemas_are_lean_and_keep_their_meaning() {
        let click = tools().iter().find(|t| t.name == "nova.click_selector").expect("click");
        let schema = serde_json::Value::Object((*click.input_schema).clone());
        let text = schema.to_string();
        assert!(
            !text.contains("\"oneOf\"") && !text.contains("uint32") && !text.contains("\"default\":null"),
            "{text}"
        );
        let op = &schema["$defs"]["Operator"];
        assert_eq!(op["type"], "string");
        assert!(op["enum"].as_array().is_some_and(|e| e.contains(&serde_json::json!("not_exists"))), "{op}");
        assert!(
            op["description"].as_str().is_some_and(|d| d.contains("`gte`: Greater than or equal")),
            "{op}"
        );
        assert_eq!(schema["$defs"]["TransitionContract"]["properties"]["stabilityMs"]["maximum"], 5000);
        assert!(schema.get("description").is_none(), "{schema}");
    }

    #[test]
    fn names_are_unique_and_namespaced() {
        let mut names: Vec<_> = tools().iter().map(|t| t.name.to_string()).collect();
        assert!(names.iter().all(|n| n.starts_with("nova.")));
        names.sort();
        names.dedup();
        assert_eq!(names.len(), tools().len());
    }
}
