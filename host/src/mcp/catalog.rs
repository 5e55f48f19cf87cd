//! The tool catalog (`tools/list`), made from the tool registry ([`crate::registry`]): names,
//! descriptions and input schemas generated from the argument types (so `deny_unknown_fields`
//! shows as `additionalProperties: false` and bounds as `minimum`/`maximum`), made lean for the
//! agent's context: shared parts once per schema (`$defs`), a choice of strings as one `enum`
//! with its values explained in the description, one type for a property that may be left
//! out (not also `null`), and nothing that says nothing to an agent (`"default": null`, integer
//! `format`s next to their bounds, "`nova.x` arguments.", pointers into the project's docs,
//! `openWorldHint: true`, which is the protocol's default).

use std::sync::{Arc, OnceLock};

use rmcp::model::{Tool, ToolAnnotations};
use serde_json::{Map, Value};

use crate::registry::{ToolDef, all};

fn tool(def: &ToolDef) -> Tool {
    let mut annotations = ToolAnnotations::default();
    annotations.read_only_hint = Some(def.read_only);
    let mut schema = (def.schema)();
    if schema.get("description").and_then(Value::as_str) == Some(&format!("`{}` arguments.", def.name)) {
        schema.remove("description");
    }
    lean_object(&mut schema);
    Tool::new(def.name, def.description, Arc::new(schema)).with_annotations(annotations)
}

/// Integer formats schemars adds; the bounds beside them say what an agent needs.
const INTEGER_FORMATS: [&str; 10] =
    ["int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64", "int"];

/// Makes one schema node (and everything under it) lean, meaning unchanged.
fn lean(v: &mut Value) {
    match v {
        Value::Object(o) => lean_object(o),
        Value::Array(a) => a.iter_mut().for_each(lean),
        _ => {}
    }
}

fn lean_object(o: &mut Map<String, Value>) {
    if o.get("default") == Some(&Value::Null) {
        o.remove("default");
    }
    if o.get("format").and_then(Value::as_str).is_some_and(|f| INTEGER_FORMATS.contains(&f)) {
        o.remove("format");
    }
    fold_string_choice(o);
    optional_not_null(o);
    if let Some(Value::String(d)) = o.get_mut("description") {
        drop_doc_pointers(d);
    }
    for child in o.values_mut() {
        lean(child);
    }
}

/// A property an agent may leave out gets one type: `type: [T, "null"]` becomes `T`, and
/// `anyOf: [X, {type: null}]` becomes `X`. Leaving it out and sending `null` mean the same to
/// every tool (both are accepted); the schema just stops offering the second way.
fn optional_not_null(o: &mut Map<String, Value>) {
    let required: Vec<Value> = o.get("required").and_then(Value::as_array).cloned().unwrap_or_default();
    let Some(Value::Object(properties)) = o.get_mut("properties") else { return };
    let null = Value::String("null".into());
    for (name, property) in properties.iter_mut() {
        let Value::Object(p) = property else { continue };
        if required.iter().any(|r| r.as_str() == Some(name)) {
            continue;
        }
        if let Some(Value::Array(types)) = p.get("type") {
            let kept: Vec<Value> = types.iter().filter(|t| **t != null).cloned().collect();
            if kept.len() == 1 && types.len() == 2 {
                p.insert("type".into(), kept[0].clone());
            }
        }
        let Some(Value::Array(any)) = p.get("anyOf") else { continue };
        let null_only = serde_json::json!({"type": "null"});
        let mut kept = any.iter().filter(|s| **s != null_only);
        if let (Some(Value::Object(only)), None, 2) = (kept.next(), kept.next(), any.len()) {
            let only = only.clone();
            p.remove("anyOf");
            for (k, v) in only {
                p.entry(k).or_insert(v);
            }
        }
    }
}

/// Removes pointers into the project's docs (`(docs/cls.md, "Contract")`): an agent cannot
/// open them, and the description says what it needs without them.
fn drop_doc_pointers(d: &mut String) {
    while let Some(start) = d.find("(docs/") {
        let Some(len) = d[start..].find(')') else { return };
        let from = if d[..start].ends_with(' ') { start - 1 } else { start };
        d.replace_range(from..start + len + 1, "");
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
            op["description"].as_str().is_some_and(|d| d.contains("`gte`: `>=`") && !d.contains("docs/")),
            "{op}"
        );
        assert_eq!(schema["$defs"]["TransitionContract"]["properties"]["stabilityMs"]["maximum"], 5000);
        assert!(schema.get("description").is_none(), "{schema}");
        // May be left out: one type, no `null`; a required field keeps what it has.
        assert_eq!(schema["properties"]["frameId"]["type"], "string");
        let contract = &schema["properties"]["transitionContract"];
        assert_eq!(contract["$ref"], "#/$defs/TransitionContract", "{contract}");
        assert!(
            contract.get("anyOf").is_none()
                && !contract["description"].as_str().unwrap_or("docs/").contains("docs/")
        );
        assert_eq!(click.annotations.as_ref().and_then(|a| a.open_world_hint), None);
    }

    #[test]
    fn a_template_names_the_contract_schema_and_still_checks_its_contract() {
        let send = tools().iter().find(|t| t.name == "nova.guarded_send_message").expect("send");
        let schema = serde_json::Value::Object((*send.input_schema).clone());
        let contract = &schema["properties"]["transitionContract"];
        assert_eq!(contract["type"], "object", "{contract}");
        assert!(contract["description"].as_str().is_some_and(|d| d.contains("`nova.click_selector`")));
        assert!(schema.get("$defs").is_none(), "{schema}");
        let click = tools().iter().find(|t| t.name == "nova.click_selector").expect("click");
        assert!(click.input_schema.get("$defs").is_some_and(|d| d.get("TransitionContract").is_some()));
        let args = |contract| {
            serde_json::from_value::<crate::cls::macros::SendMessageArgs>(
                serde_json::json!({"text": "hi", "transitionContract": contract}),
            )
        };
        let refined = serde_json::json!({"postconditions": {"success": {"all": [
            {"factKey": "dom.visible(#sent)", "operator": "exists"}]}}});
        assert!(args(refined).is_ok());
        let err = args(serde_json::json!({"postcondition": {}})).expect_err("unknown field");
        assert!(err.to_string().contains("postcondition"), "{err}");
    }

    #[test]
    fn only_optional_properties_lose_null() {
        let mut o = serde_json::json!({
            "required": ["a"],
            "properties": {
                "a": {"type": ["string", "null"]},
                "b": {"type": ["string", "null"]},
                "c": {"anyOf": [{"$ref": "#/$defs/X"}, {"type": "null"}], "description": "C."},
                "d": {"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]},
            }
        });
        optional_not_null(o.as_object_mut().expect("object"));
        assert_eq!(o["properties"]["a"]["type"], serde_json::json!(["string", "null"]));
        assert_eq!(o["properties"]["b"]["type"], "string");
        assert_eq!(o["properties"]["c"], serde_json::json!({"$ref": "#/$defs/X", "description": "C."}));
        assert_eq!(o["properties"]["d"]["anyOf"].as_array().map(Vec::len), Some(3));
        let mut d = String::from("Operators (docs/cls.md, \"Contract\"): `eq`; see (docs/x.md).");
        drop_doc_pointers(&mut d);
        assert_eq!(d, "Operators: `eq`; see.");
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
