//! Incremental reads (docs/perceive.md "Incremental reads"): every `nova.perceive` answer
//! carries a `perceptionId`; the session keeps its last read of each tab and frame, and a
//! perceive with `since` set to that id answers with what changed instead of the whole model:
//! elements removed, added (each after the ref it follows) and changed, by ref; lines of text
//! deleted and inserted; every other field that changed, with its new value. A read of
//! another document (the tab navigated), or `since` naming anything but the session's last read
//! of that tab and frame, is answered in full, saying why.
//!
//! Applying the changes to the earlier read gives exactly the full read (the unit tests and
//! tests/tests/test_read.rs check it in both browsers).

use std::collections::{BTreeSet, HashMap};
use std::sync::Mutex;

use serde_json::{Map, Value, json};

use nova_shared::protocol::FrameId;

/// Longest `since` accepted, in characters (ids are `p` and 16 hex digits).
pub const MAX_SINCE_CHARS: usize = 64;

/// Tabs (and frames) a session keeps its last read of; the oldest is forgotten beyond this.
const MAX_KEPT: usize = 64;

/// Keys that say when something was last seen, not what it is: a field whose only change is in
/// these is not sent again (each read observes the page anew; docs/perceive.md).
const WHEN_SEEN: [&str; 2] = ["lastObservedAt", "lastObservedAgoMs"];

/// Whether `a` and `b` differ in more than [`WHEN_SEEN`].
fn differs(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys = |o: &Map<String, Value>| -> BTreeSet<String> {
                o.keys().filter(|k| !WHEN_SEEN.contains(&k.as_str())).cloned().collect()
            };
            keys(x) != keys(y) || keys(x).iter().any(|k| differs(&x[k], &y[k]))
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() != y.len() || x.iter().zip(y).any(|(a, b)| differs(a, b))
        }
        _ => a != b,
    }
}

/// Fields that are not page content: never diffed, always sent.
const ENVELOPE: [&str; 5] = ["ok", "status", "targetId", "perceptionId", "incremental"];

/// One kept read.
struct Kept {
    id: String,
    nav_epoch: Option<u32>,
    url: String,
    body: Map<String, Value>,
    seq: u64,
}

/// The reads kept, by (tab, frame), with a counter that orders them.
type KeptReads = (u64, HashMap<(String, FrameId), Kept>);

/// A session's last read of each (tab, frame) (a session slot).
#[derive(Default)]
pub struct Reads {
    kept: Mutex<KeptReads>,
}

/// Why a read with `since` was answered in full.
fn full_reason(kept: Option<&Kept>, since: &str, nav_epoch: Option<u32>, url: &str) -> Option<&'static str> {
    let Some(k) = kept.filter(|k| k.id == since) else {
        return Some("unknown_since");
    };
    if k.nav_epoch != nav_epoch || nav_epoch.is_none() || k.url != url {
        return Some("navigated");
    }
    None
}

impl Reads {
    /// Keeps `body` (a full perceive answer) as the session's last read of `key` and answers
    /// with it, or with the changes since `since` when that is still the last read of the
    /// same document. Adds `perceptionId` (and `incremental`, `since`, `fullReason`).
    pub fn answer(
        &self,
        key: (String, FrameId),
        nav_epoch: Option<u32>,
        since: Option<&str>,
        mut body: Map<String, Value>,
    ) -> Map<String, Value> {
        let url = body.get("url").and_then(Value::as_str).unwrap_or_default().to_owned();
        let id = format!("p{:016x}", rand::random::<u64>());
        let mut guard = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        let (seq, kept) = &mut *guard;
        *seq += 1;
        let previous = kept.get(&key);
        let mut reply = match since {
            Some(since) => match full_reason(previous, since, nav_epoch, &url) {
                None => previous.map(|p| changes(&p.body, &body)),
                Some(reason) => {
                    let mut full = body.clone();
                    full.insert("incremental".into(), json!(false));
                    full.insert("fullReason".into(), json!(reason));
                    Some(full)
                }
            },
            None => None,
        }
        .unwrap_or_else(|| body.clone());
        if let Some(since) = since.filter(|_| reply.get("incremental") != Some(&json!(false))) {
            reply.insert("incremental".into(), json!(true));
            reply.insert("since".into(), json!(since));
        }
        reply.insert("perceptionId".into(), json!(id));
        for k in ENVELOPE {
            body.remove(k);
        }
        kept.insert(key, Kept { id, nav_epoch, url, body, seq: *seq });
        if kept.len() > MAX_KEPT
            && let Some(oldest) = kept.iter().min_by_key(|(_, k)| k.seq).map(|(key, _)| key.clone())
        {
            kept.remove(&oldest);
        }
        reply
    }
}

/// Largest middle (after the common start and end are set aside) compared line by line, in
/// cells of the comparison table; a larger one is sent as replaced whole.
const MAX_TABLE: usize = 1_000_000;

/// One step from an earlier list to a later one.
#[derive(Debug, PartialEq, Eq)]
enum Step {
    /// `len` items the same, from `old` in the earlier list and `new` in the later one.
    Same { old: usize, new: usize, len: usize },
    /// `old_len` items at `old` replaced by `new_len` items at `new` (either may be 0).
    Change { old: usize, old_len: usize, new: usize, new_len: usize },
}

/// The steps from `a` to `b`, in order: the common start and end, and between them a longest
/// common subsequence (or, past [`MAX_TABLE`], one change).
fn steps<T: PartialEq>(a: &[T], b: &[T]) -> Vec<Step> {
    let start = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let end = a[start..].iter().rev().zip(b[start..].iter().rev()).take_while(|(x, y)| x == y).count();
    let (am, bm) = (&a[start..a.len() - end], &b[start..b.len() - end]);
    let mut out = Vec::new();
    if start > 0 {
        out.push(Step::Same { old: 0, new: 0, len: start });
    }
    if am.len().saturating_mul(bm.len()) > MAX_TABLE || am.is_empty() || bm.is_empty() {
        if !am.is_empty() || !bm.is_empty() {
            out.push(Step::Change { old: start, old_len: am.len(), new: start, new_len: bm.len() });
        }
    } else {
        // table[i][j]: longest common subsequence of am[i..] and bm[j..].
        let w = bm.len() + 1;
        let mut table = vec![0u32; (am.len() + 1) * w];
        for i in (0..am.len()).rev() {
            for j in (0..bm.len()).rev() {
                table[i * w + j] = if am[i] == bm[j] {
                    table[(i + 1) * w + j + 1] + 1
                } else {
                    table[(i + 1) * w + j].max(table[i * w + j + 1])
                };
            }
        }
        let (mut i, mut j) = (0, 0);
        let (mut ci, mut cj) = (0, 0); // where the pending change started
        let flush = |out: &mut Vec<Step>, ci: usize, cj: usize, i: usize, j: usize| {
            if i > ci || j > cj {
                out.push(Step::Change { old: start + ci, old_len: i - ci, new: start + cj, new_len: j - cj });
            }
        };
        while i < am.len() && j < bm.len() {
            if am[i] == bm[j] {
                flush(&mut out, ci, cj, i, j);
                match out.last_mut() {
                    Some(Step::Same { old, len, .. }) if *old + *len == start + i => *len += 1,
                    _ => out.push(Step::Same { old: start + i, new: start + j, len: 1 }),
                }
                i += 1;
                j += 1;
                (ci, cj) = (i, j);
            } else if table[(i + 1) * w + j] >= table[i * w + j + 1] {
                i += 1;
            } else {
                j += 1;
            }
        }
        flush(&mut out, ci, cj, am.len(), bm.len());
    }
    if end > 0 {
        out.push(Step::Same { old: a.len() - end, new: b.len() - end, len: end });
    }
    out
}

/// The ref an element line starts with (`e12 button "Send"` -> `e12`).
fn ref_of(line: &str) -> &str {
    line.split(' ').next().unwrap_or(line)
}

fn lines(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| a.iter().map(|l| l.as_str().unwrap_or_default().to_owned()).collect())
        .unwrap_or_default()
}

/// The changes from `before` to `after` (both full answers).
fn changes(before: &Map<String, Value>, after: &Map<String, Value>) -> Map<String, Value> {
    let mut out = Map::new();
    for k in ENVELOPE {
        if let Some(v) = after.get(k) {
            out.insert(k.into(), v.clone());
        }
    }
    let mut changed = Map::new();
    for (k, v) in after {
        if ENVELOPE.contains(&k.as_str()) || k == "elements" || k == "text" {
            continue;
        }
        if before.get(k).is_none_or(|b| differs(b, v)) {
            changed.insert(k.clone(), v.clone());
        }
    }
    let removed: Vec<&String> = before
        .keys()
        .filter(|k| {
            !ENVELOPE.contains(&k.as_str()) && *k != "elements" && *k != "text" && !after.contains_key(*k)
        })
        .collect();
    let old = lines(before.get("elements"));
    let new = lines(after.get("elements"));
    if old != new {
        // The changes, or the whole new list where that is shorter (a list rendered anew).
        let changes = element_changes(&old, &new);
        let all = json!({"all": new});
        out.insert(
            "elements".into(),
            if all.to_string().len() < changes.to_string().len() { all } else { changes },
        );
    }
    let old_text = before.get("text").and_then(Value::as_str).unwrap_or_default();
    let new_text = after.get("text").and_then(Value::as_str).unwrap_or_default();
    if old_text != new_text {
        let changes = text_changes(old_text, new_text);
        let all = json!({"all": new_text});
        out.insert(
            "text".into(),
            if all.to_string().len() < changes.to_string().len() { all } else { changes },
        );
    }
    if !changed.is_empty() {
        out.insert("changed".into(), Value::Object(changed));
    }
    if !removed.is_empty() {
        out.insert("removed".into(), json!(removed));
    }
    out
}

/// Elements by ref: `removed` (refs), `added` (`{after, line}`, in order; `after` is the ref the
/// element follows in the new list, null for the first), `changed` (new lines). With refs that
/// are not unique (never seen; refs are per document), the whole new list as `all` (which
/// [`changes`] also sends when it is the shorter).
fn element_changes(old: &[String], new: &[String]) -> Value {
    let old_refs: Vec<&str> = old.iter().map(|l| ref_of(l)).collect();
    let new_refs: Vec<&str> = new.iter().map(|l| ref_of(l)).collect();
    let unique = |refs: &[&str]| refs.iter().collect::<BTreeSet<_>>().len() == refs.len();
    if !unique(&old_refs) || !unique(&new_refs) {
        return json!({"all": new});
    }
    let mut removed = Vec::new();
    let mut added = Vec::new();
    let mut changed = Vec::new();
    for step in steps(&old_refs, &new_refs) {
        match step {
            Step::Same { old: o, new: n, len } => {
                for i in 0..len {
                    if old[o + i] != new[n + i] {
                        changed.push(json!(new[n + i]));
                    }
                }
            }
            Step::Change { old: o, old_len, new: n, new_len } => {
                removed.extend(old_refs[o..o + old_len].iter().map(|r| json!(r)));
                added.extend((n..n + new_len).map(|i| added_at(new, i)));
            }
        }
    }
    let mut out = Map::new();
    for (k, v) in [("removed", removed), ("added", added), ("changed", changed)] {
        if !v.is_empty() {
            out.insert(k.into(), Value::Array(v));
        }
    }
    Value::Object(out)
}

fn added_at(new: &[String], i: usize) -> Value {
    let after = i.checked_sub(1).map(|p| ref_of(&new[p]));
    json!({"after": after, "line": new[i]})
}

/// Text by lines: `ops`, each `{at, delete, insert}` on the earlier text's lines, applied in
/// order (`at` counts lines of the text as the earlier ops left it); [`changes`] sends the new
/// text as `all` instead when that is shorter.
fn text_changes(old: &str, new: &str) -> Value {
    let old_lines: Vec<&str> = old.split('\n').collect();
    let new_lines: Vec<&str> = new.split('\n').collect();
    let mut ops = Vec::new();
    let mut shift: isize = 0;
    for step in steps(&old_lines, &new_lines) {
        let Step::Change { old: old_index, old_len: delete, new, new_len } = step else { continue };
        let insert = &new_lines[new..new + new_len];
        let at = old_index.cast_signed() + shift;
        shift += insert.len().cast_signed() - delete.cast_signed();
        ops.push(json!({"at": at, "delete": delete, "insert": insert}));
    }
    json!({"ops": ops})
}

/// The text content of an incremental answer: what changed, in a few lines.
pub fn render(delta: &Map<String, Value>) -> String {
    let mut s = format!(
        "Changes since {} (perceptionId {}):\n",
        delta.get("since").and_then(Value::as_str).unwrap_or("?"),
        delta.get("perceptionId").and_then(Value::as_str).unwrap_or("?")
    );
    let e = delta.get("elements");
    for r in e.and_then(|e| e["removed"].as_array()).into_iter().flatten() {
        s += &format!("- {}\n", r.as_str().unwrap_or_default());
    }
    for a in e.and_then(|e| e["added"].as_array()).into_iter().flatten() {
        s += &format!("+ {}\n", a["line"].as_str().unwrap_or_default());
    }
    for c in e.and_then(|e| e["changed"].as_array()).into_iter().flatten() {
        s += &format!("~ {}\n", c.as_str().unwrap_or_default());
    }
    if let Some(all) = e.and_then(|e| e["all"].as_array()) {
        s += &format!("elements (all {}):\n", all.len());
        for l in all {
            s += &format!("  {}\n", l.as_str().unwrap_or_default());
        }
    }
    if let Some(all) = delta.get("text").and_then(|t| t["all"].as_str()) {
        s += &format!("text (all):\n{all}\n");
    }
    for op in delta.get("text").and_then(|t| t["ops"].as_array()).into_iter().flatten() {
        for l in op["insert"].as_array().into_iter().flatten() {
            s += &format!("text+ {}\n", l.as_str().unwrap_or_default());
        }
        if op["delete"].as_u64().unwrap_or_default() > 0 {
            s += &format!("text- {} line(s) at {}\n", op["delete"], op["at"]);
        }
    }
    if let Some(changed) = delta.get("changed").and_then(Value::as_object) {
        for (k, v) in changed {
            s += &format!("{k}: {v}\n");
        }
    }
    for k in delta.get("removed").and_then(Value::as_array).into_iter().flatten() {
        s += &format!("{} gone\n", k.as_str().unwrap_or_default());
    }
    if s.lines().count() == 1 {
        s += "nothing changed\n";
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A page with `elements` and `text` followed by ten elements and lines that never change
    /// (so that changes are shorter than the whole).
    fn model(elements: &[&str], text: &str, extra: Value) -> Map<String, Value> {
        let mut elements: Vec<String> = elements.iter().map(|e| (*e).to_owned()).collect();
        elements.extend((101..111).map(|n| format!("e{n} link \"Footer link number {n}\"")));
        let text =
            format!("{text}\n{}", (1..11).map(|n| format!("Footer line {n}")).collect::<Vec<_>>().join("\n"));
        let mut m = json!({"ok": true, "status": "ok", "targetId": "1", "url": "http://x/", "title": "T",
            "elements": elements, "text": text});
        if let (Some(m), Some(extra)) = (m.as_object_mut(), extra.as_object()) {
            m.extend(extra.clone());
        }
        m.as_object().cloned().unwrap_or_default()
    }

    /// Applies `delta` (an incremental answer) to `before` (a full answer): the full answer it
    /// stands for, but for the envelope: what an agent does with an incremental read (here for
    /// the tests; tests/tests/test_read.rs has one of its own).
    fn apply(before: &Map<String, Value>, delta: &Map<String, Value>) -> Map<String, Value> {
        let mut out = before.clone();
        for k in ENVELOPE.iter().chain(&["since", "fullReason"]) {
            out.remove(*k);
        }
        if let Some(changed) = delta.get("changed").and_then(Value::as_object) {
            for (k, v) in changed {
                out.insert(k.clone(), v.clone());
            }
        }
        for k in delta.get("removed").and_then(Value::as_array).into_iter().flatten() {
            out.remove(k.as_str().unwrap_or_default());
        }
        if let Some(e) = delta.get("elements") {
            let mut list = lines(before.get("elements"));
            if let Some(all) = e.get("all") {
                list = lines(Some(all));
            } else {
                let removed: BTreeSet<&str> =
                    e["removed"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
                list.retain(|l| !removed.contains(ref_of(l)));
                for c in e["changed"].as_array().into_iter().flatten().filter_map(Value::as_str) {
                    if let Some(slot) = list.iter_mut().find(|l| ref_of(l) == ref_of(c)) {
                        c.clone_into(slot);
                    }
                }
                for a in e["added"].as_array().into_iter().flatten() {
                    let line = a["line"].as_str().unwrap_or_default().to_owned();
                    let at = match a["after"].as_str() {
                        Some(r) => list.iter().position(|l| ref_of(l) == r).map_or(list.len(), |p| p + 1),
                        None => 0,
                    };
                    list.insert(at, line);
                }
            }
            out.insert("elements".into(), json!(list));
        }
        if let Some(all) = delta.get("text").and_then(|t| t.get("all")) {
            out.insert("text".into(), all.clone());
        } else if let Some(t) = delta.get("text") {
            let text = before.get("text").and_then(Value::as_str).unwrap_or_default();
            let mut text_lines: Vec<String> = text.split('\n').map(str::to_owned).collect();
            for op in t["ops"].as_array().into_iter().flatten() {
                let at = usize::try_from(op["at"].as_u64().unwrap_or_default())
                    .unwrap_or_default()
                    .min(text_lines.len());
                let delete = usize::try_from(op["delete"].as_u64().unwrap_or_default()).unwrap_or_default();
                let end = (at + delete).min(text_lines.len());
                let insert = op["insert"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|l| l.as_str().unwrap_or_default().to_owned());
                text_lines.splice(at..end, insert);
            }
            out.insert("text".into(), json!(text_lines.join("\n")));
        }
        out
    }

    fn content(m: &Map<String, Value>) -> Map<String, Value> {
        let mut m = m.clone();
        for k in ENVELOPE.iter().chain(&["since", "fullReason"]) {
            m.remove(*k);
        }
        m
    }

    fn roundtrip(a: &Map<String, Value>, b: &Map<String, Value>) -> Map<String, Value> {
        let reads = Reads::default();
        let key = ("1".to_owned(), 0);
        let first = reads.answer(key.clone(), Some(1), None, a.clone());
        let since = first["perceptionId"].as_str().map(str::to_owned);
        let delta = reads.answer(key, Some(1), since.as_deref(), b.clone());
        assert_eq!(delta["incremental"], true, "{delta:?}");
        assert_eq!(content(&apply(a, &delta)), content(b), "delta {delta:?}");
        delta
    }

    #[test]
    fn applying_the_changes_gives_the_full_read() {
        let a = model(
            &["e1 link \"Home\"", "e2 textbox \"Name\"", "e3 button \"Send\""],
            "Chat\nhello",
            json!({}),
        );
        let b = model(
            &[
                "e4 link \"Skip\"",
                "e1 link \"Home\"",
                "e2 textbox \"Name\" value=\"Ann\"",
                "e5 button \"Undo\"",
                "e3 button \"Send\"",
            ],
            "Chat\nhello\nyou said hello",
            json!({"autofillWarning": {"fields": 1}}),
        );
        let d = roundtrip(&a, &b);
        assert_eq!(d["elements"]["removed"], Value::Null);
        assert_eq!(d["elements"]["changed"], json!(["e2 textbox \"Name\" value=\"Ann\""]));
        assert_eq!(d["elements"]["added"][0], json!({"after": null, "line": "e4 link \"Skip\""}));
        assert_eq!(d["text"]["ops"], json!([{"at": 2, "delete": 0, "insert": ["you said hello"]}]));
        assert!(d.get("title").is_none() && d["changed"]["autofillWarning"]["fields"] == 1, "{d:?}");
        // And back: removals, a field gone, text deleted and replaced.
        let d = roundtrip(&b, &a);
        assert_eq!(d["elements"]["removed"], json!(["e4", "e5"]));
        assert_eq!(d["removed"], json!(["autofillWarning"]));
        // A page turned: everything replaced.
        let c = model(
            &["e9 link \"Next\"", "e10 link \"Prev\""],
            "Page 2\nitem 21\nitem 22",
            json!({"title": "T2"}),
        );
        roundtrip(&a, &c);
        roundtrip(&c, &c);
        let same = roundtrip(&b, &b);
        assert!(
            same.get("elements").is_none() && same.get("text").is_none() && same.get("changed").is_none()
        );
        assert!(render(&same).contains("nothing changed"));
    }

    /// A page of up to 30 elements (refs from a pool of 40, each once, in any order, with one
    /// of three labels) and up to 20 lines of text from a small vocabulary.
    fn page() -> impl proptest::strategy::Strategy<Value = Map<String, Value>> {
        use proptest::prelude::*;
        let elements = proptest::sample::subsequence((1..=40).collect::<Vec<u32>>(), 0..30)
            .prop_shuffle()
            .prop_flat_map(|refs| {
                let n = refs.len();
                (Just(refs), proptest::collection::vec(0..3u8, n))
            })
            .prop_map(|(refs, labels)| {
                refs.iter().zip(labels).map(|(r, l)| format!("e{r} button \"b{l}\"")).collect::<Vec<_>>()
            });
        let text = proptest::collection::vec(proptest::sample::select(vec!["a", "b", "c", "", "d e"]), 0..20);
        (elements, text, any::<bool>()).prop_map(|(elements, text, warn)| {
            let refs: Vec<&str> = elements.iter().map(String::as_str).collect();
            let extra = if warn { json!({"autofillWarning": {"n": 1}}) } else { json!({}) };
            model(&refs, &text.join("\n"), extra)
        })
    }

    proptest::proptest! {
        #[test]
        fn any_two_reads_round_trip(a in page(), b in page()) {
            roundtrip(&a, &b);
        }
    }

    #[test]
    fn steps_keep_what_both_share_in_order() {
        assert_eq!(
            steps(&["d e", "b"], &["b", "b", "", "d e", ""]),
            vec![
                Step::Change { old: 0, old_len: 1, new: 0, new_len: 0 },
                Step::Same { old: 1, new: 0, len: 1 },
                Step::Change { old: 2, old_len: 0, new: 1, new_len: 4 },
            ]
        );
        assert_eq!(steps::<u8>(&[], &[]), vec![]);
        assert_eq!(
            steps(&[1, 2, 3], &[1, 9, 3]),
            vec![
                Step::Same { old: 0, new: 0, len: 1 },
                Step::Change { old: 1, old_len: 1, new: 1, new_len: 1 },
                Step::Same { old: 2, new: 2, len: 1 },
            ]
        );
    }

    #[test]
    fn a_field_that_changed_only_in_when_it_was_seen_is_not_sent() {
        let a = model(&[], "x", json!({"okHints": {"facts": [{"v": 1, "lastObservedAt": "t1"}]}}));
        let b = model(&[], "x", json!({"okHints": {"facts": [{"v": 1, "lastObservedAt": "t2"}]}}));
        let c = model(&[], "x", json!({"okHints": {"facts": [{"v": 2, "lastObservedAt": "t2"}]}}));
        let reads = Reads::default();
        let key = ("1".to_owned(), 0);
        let first = reads.answer(key.clone(), Some(1), None, a);
        let same = reads.answer(key.clone(), Some(1), first["perceptionId"].as_str(), b);
        assert!(same.get("changed").is_none(), "{same:?}");
        let other = reads.answer(key, Some(1), same["perceptionId"].as_str(), c);
        assert_eq!(other["changed"]["okHints"]["facts"][0]["v"], 2, "{other:?}");
    }

    #[test]
    fn another_document_or_an_old_id_gets_a_full_read_saying_why() {
        let reads = Reads::default();
        let key = ("1".to_owned(), 0);
        let a = model(&["e1 link \"Home\""], "x", json!({}));
        let first = reads.answer(key.clone(), Some(1), None, a.clone());
        let id = first["perceptionId"].as_str().unwrap_or_default().to_owned();
        let moved = reads.answer(key.clone(), Some(2), Some(&id), a.clone());
        assert_eq!(
            (moved["incremental"].clone(), moved["fullReason"].clone()),
            (json!(false), json!("navigated"))
        );
        assert_eq!(moved["elements"][0], "e1 link \"Home\"");
        let stale = reads.answer(key.clone(), Some(2), Some(&id), a.clone());
        assert_eq!(stale["fullReason"], "unknown_since", "only the last read counts");
        let other_tab = reads.answer(("2".to_owned(), 0), Some(2), stale["perceptionId"].as_str(), a);
        assert_eq!(other_tab["fullReason"], "unknown_since");
    }
}
