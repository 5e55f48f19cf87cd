//! `frameworkHints[]`: front-end frameworks recognised by DOM markers a content script can see
//! (it runs in an isolated world: page JavaScript and its expandos are invisible to it).

use nova_shared::page::FrameworkHint;
use web_sys::{Document, Element};

/// Elements scanned for attribute-name markers (`data-v-*`, `_ngcontent-*`).
const ATTRIBUTE_SCAN: u32 = 120;

fn framework_hint(framework: &str, evidence: String) -> FrameworkHint {
    let name = match framework {
        "react" => "React",
        "next" => "Next.js (React)",
        "vue" => "Vue",
        "nuxt" => "Nuxt (Vue)",
        "angular" => "Angular",
        _ => "Svelte",
    };
    FrameworkHint {
        framework: framework.into(),
        evidence,
        hint: format!(
            "{name} renders this page and controls its inputs: type with nova.type_selector (it sets the value through the native setter and fires input events), do not rely on setting value attributes, and re-read the field after typing; a value the framework did not see is reset on its next render."
        ),
    }
}

/// `frameworkHints[]` from DOM markers a content script can see.
pub fn frameworks(doc: &Document) -> Vec<FrameworkHint> {
    let mut out: Vec<FrameworkHint> = Vec::new();
    let first = |css: &str| doc.query_selector(css).ok().flatten();
    let add = |out: &mut Vec<FrameworkHint>, framework: &str, evidence: String| {
        if !out.iter().any(|h| h.framework == framework) {
            out.push(framework_hint(framework, evidence));
        }
    };
    let simple: &[(&str, &str)] = &[
        ("#__next", "next"),
        ("script#__NEXT_DATA__", "next"),
        ("#__nuxt", "nuxt"),
        ("script#__NUXT_DATA__", "nuxt"),
        ("[data-reactroot]", "react"),
        ("[data-reactid]", "react"),
        ("[data-v-app]", "vue"),
        ("[data-server-rendered]", "vue"),
        ("[ng-app], [data-ng-app], .ng-scope", "angular"),
        ("[data-svelte-h]", "svelte"),
        ("[data-sveltekit-preload-data], [data-sveltekit-hydrate]", "svelte"),
    ];
    const NG_VERSION: &str = "[ng-version]";
    const SVELTE_CLASS: &str = "[class*=\"svelte-\"]";
    // One probe for the common case of none.
    let mut any: Vec<&str> = simple.iter().map(|(css, _)| *css).collect();
    any.extend([NG_VERSION, SVELTE_CLASS]);
    if first(&any.join(", ")).is_some() {
        for (css, framework) in simple {
            if first(css).is_some() {
                add(&mut out, framework, (*css).to_owned());
            }
        }
        if let Some(el) = first(NG_VERSION) {
            let version = el.get_attribute("ng-version").unwrap_or_default();
            add(&mut out, "angular", format!("[ng-version={version}]"));
        }
        if let Some(el) = first(SVELTE_CLASS) {
            let class = el.get_attribute("class").unwrap_or_default();
            let token = class.split_whitespace().find(|c| c.starts_with("svelte-")).unwrap_or("svelte-");
            add(&mut out, "svelte", format!("class {token}"));
        }
    }
    // Scoped-style attributes have per-component names; no selector matches a name prefix.
    let want_vue = !out.iter().any(|h| h.framework == "vue" || h.framework == "nuxt");
    let want_ng = !out.iter().any(|h| h.framework == "angular");
    if (want_vue || want_ng)
        && let Some(body) = doc.body()
    {
        let list = body.get_elements_by_tag_name("*");
        'scan: for i in 0..list.length().min(ATTRIBUTE_SCAN) {
            let Some(el) = list.item(i).filter(Element::has_attributes) else { continue };
            for name in el.get_attribute_names().iter().filter_map(|n| n.as_string()) {
                if want_vue && name.starts_with("data-v-") && name.len() > 7 {
                    add(&mut out, "vue", format!("{name} attribute"));
                    break 'scan;
                }
                if want_ng && (name.starts_with("_ngcontent-") || name.starts_with("_nghost-")) {
                    add(&mut out, "angular", format!("{name} attribute"));
                    break 'scan;
                }
            }
        }
    }
    out
}
