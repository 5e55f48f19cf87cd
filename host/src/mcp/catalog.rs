//! The tool catalog (`tools/list`), made from the tool registry ([`crate::registry`]): names,
//! descriptions and input schemas generated from the argument types (so `deny_unknown_fields`
//! shows as `additionalProperties: false` and bounds as `minimum`/`maximum`).

use std::sync::{Arc, OnceLock};

use rmcp::model::{Tool, ToolAnnotations};

use crate::registry::{ToolDef, all};

fn tool(def: &ToolDef) -> Tool {
    let mut annotations = ToolAnnotations::default();
    annotations.read_only_hint = Some(def.read_only);
    annotations.open_world_hint = Some(true);
    Tool::new(def.name, def.description, Arc::new((def.schema)())).with_annotations(annotations)
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
    fn names_are_unique_and_namespaced() {
        let mut names: Vec<_> = tools().iter().map(|t| t.name.to_string()).collect();
        assert!(names.iter().all(|n| n.starts_with("nova.")));
        names.sort();
        names.dedup();
        assert_eq!(names.len(), tools().len());
    }
}
