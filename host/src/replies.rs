//! What the replies of page tools share: the body of a successful call on a tab, the awareness
//! fields of an action report, the note of a refused file-input click, the native-dialog warning,
//! and `frameId` parsing.

use nova_shared::page::ActionReport;
use serde_json::{Value, json};

use crate::call::CallError;

/// `nativeDialogWarning` on a click or type that timed out.
pub const NATIVE_DIALOG_TIMEOUT: &str = "the page stopped answering after the action; a native dialog (alert, confirm, beforeunload) may be waiting for the person";

/// `frameId` is a string holding a frame id (`"0"` is the top frame).
/// The largest integer a JS number holds exactly (frame ids cross into the extension as numbers).
const MAX_SAFE_INTEGER: i64 = (1 << 53) - 1;

/// Parses `frameId`, naming the field when it is no frame id.
pub fn parse_frame(frame_id: Option<&str>) -> Result<Option<nova_shared::protocol::FrameId>, CallError> {
    frame_id
        .map(|f| {
            f.trim()
                .parse::<nova_shared::protocol::FrameId>()
                .ok()
                .filter(|n| (0..=MAX_SAFE_INTEGER).contains(n))
                .ok_or_else(|| {
                    CallError::invalid(
                        "frameId",
                        format!("`frameId` must be a frame id such as \"0\" or \"12\", got {f:?}"),
                    )
                })
        })
        .transpose()
}

/// `fileInputRisk: high`, its reason and the `nova.file_upload` selector of a click refused with
/// `file_input_click`.
pub fn note_file_input_refusal(structured: &mut Value, message: &str) {
    structured["fileInputRisk"] = json!("high");
    structured["fileInputRiskReason"] = json!(message);
    structured["fileUploadSelectorHint"] = json!(nova_shared::page::file_upload_hint(message));
}

/// The awareness fields of an action report (autofill, truncation, file input, native
/// dialog), for replies that do not carry the whole report.
pub fn awareness_fields(report: &ActionReport) -> serde_json::Map<String, Value> {
    const KEYS: &[&str] = &[
        "autofillPopupWarning",
        "autofillFieldRole",
        "truncationWarning",
        "fileInputRisk",
        "fileInputRiskReason",
        "fileUploadSelectorHint",
        "nativeDialogWarning",
        "httpSignIn",
        "warnings",
    ];
    match serde_json::to_value(report) {
        Ok(Value::Object(mut all)) => {
            all.retain(|k, _| KEYS.contains(&k.as_str()));
            all
        }
        _ => serde_json::Map::new(),
    }
}

/// The body of a successful call on a tab.
pub fn ok_body(target_id: &str) -> Value {
    json!({"ok": true, "status": "ok", "targetId": target_id})
}

/// Adds the fields of the object `from` to the object `into`.
pub fn merge(into: &mut Value, from: Value) {
    if let (Some(a), Value::Object(b)) = (into.as_object_mut(), from) {
        a.extend(b);
    }
}
