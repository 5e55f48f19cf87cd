//! Reading pages: nova.perceive and nova.read_text in real Chromium.

use anyhow::Context as _;
use nova_e2e::agent::Agent;
use nova_e2e::{Nova, pixels, sight};
use serde_json::{Value, json};

fn lines(v: &Value, key: &str) -> Vec<String> {
    v[key]
        .as_array()
        .map(|a| a.iter().filter_map(|l| l.as_str().map(str::to_owned)).collect())
        .unwrap_or_default()
}

/// The element lines of the fixture `page`, without their refs, as a reader agent gets them.
async fn element_lines(page: &str) -> anyhow::Result<Vec<String>> {
    let nova = Nova::start().await?;
    let mut a = Agent::new(&nova, "reader").await?;
    a.ready().await?;
    let read = a.visit(&nova.url(page)).await?;
    Ok(lines(&read, "elements")
        .iter()
        .map(|l| l.split_once(' ').map_or(l.clone(), |(_, rest)| rest.to_owned()))
        .collect())
}

#[tokio::test(flavor = "multi_thread")]
async fn perceive_lists_addressable_elements_and_only_visible_text() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    c.structured("nova.navigate", json!({"url": nova.url("basic.html")})).await?;
    let page = c.structured("nova.perceive", json!({})).await?;
    assert_eq!(page["ok"], true);
    assert_eq!(page["status"], "ok");
    assert_eq!(page["title"], "Basic fixture");
    assert!(page["url"].as_str().unwrap_or_default().ends_with("/basic.html"));
    assert_eq!(page["pageState"], "ok", "a signup form is not a login wall");

    let text = page["text"].as_str().unwrap_or_default();
    for visible in ["Visible paragraph with bold words inside.", "Shadow text", "Inside the frame"] {
        assert!(text.contains(visible), "missing {visible:?} in {text:?}");
    }
    for hidden in ["Hidden by display none", "Hidden by visibility", "Screen reader only", "Off screen text"]
    {
        assert!(!text.contains(hidden), "{hidden:?} leaked into {text:?}");
    }

    let elements = lines(&page, "elements");
    let find = |needle: &str| elements.iter().find(|l| l.contains(needle)).cloned();
    let counter = find("\"Clicked 0\"").expect("counter button listed");
    assert!(counter.starts_with('e') && counter.contains(" button "), "{counter}");
    assert!(find("\"Disabled button\"").is_some_and(|l| l.ends_with("disabled")));
    assert!(find("\"Add to cart\"").is_some(), "shadow DOM button listed: {elements:?}");
    // A custom element in the tab order around the button its shadow root draws: listed once.
    let refresh: Vec<_> = elements.iter().filter(|l| l.contains("\"Refresh list\"")).collect();
    assert!(matches!(refresh[..], [l] if l.contains(" button ")), "{refresh:?}");
    assert!(find("\"Frame button\"").is_some(), "iframe button listed: {elements:?}");
    assert!(find("\"Email in frame\"").is_some(), "iframe input listed");
    assert!(find("link \"Second page\" -> page2.html").is_some());
    assert!(lines(&page, "landmarks").iter().any(|l| l == "navigation \"Primary\""));
    assert!(lines(&page, "forms").iter().any(|l| l.starts_with("form \"Signup\": e")));
    assert_eq!(page["truncated"]["any"], false);

    // A ref works as a selector.
    let counter_ref = counter.split(' ').next().unwrap_or_default().to_owned();
    let click = c.structured("nova.click_selector", json!({"selector": counter_ref})).await?;
    assert_eq!(click["actionDispatched"], true);
    let again = c.structured("nova.perceive", json!({})).await?;
    assert!(
        lines(&again, "elements")
            .iter()
            .any(|l| l.starts_with(&format!("{counter_ref} button \"Clicked 1\""))),
        "the same element keeps its ref across perceives"
    );
    Ok(())
}

/// What a person sees of `invisible.html`, and what only a machine would read.
const SEEN: &[&str] = &[
    "Plain visible sentence.",
    "White on dark is visible.",
    "Hero text over a gradient is visible.",
    "Half transparent is visible.",
    "Small print is visible.",
    "Partly clipped is visible.",
    "Decorative but visible.",
    "Visible tail after a hidden span.",
    "Indented paragraph is visible.",
    "Hanging indent is visible.",
    "Thirty percent opaque is visible.",
    "Gradient text is visible.",
    "Outlined text is visible.",
    "Shadowed white text is visible.",
    "Softly filtered text is visible.",
    "Clipped to a triangle is visible.",
    "Faded out by a mask is visible.",
    "Tiny type scaled up is visible.",
    "Shown in a small window is visible.",
    "Shown in a clipping window is visible.",
    "Shown at a window's left is visible.",
    "Shown on a window's first line is visible.",
    "Shown before a break is visible.",
    "Shown on a clamped paragraph's first line is visible.",
    "Shown on a line-clamped paragraph's first line is visible.",
    "Shown on a clamped line of café 😀 text is visible.",
    "Shown after a window scrolled its first line away is visible.",
    "Shown in a scrolling window is visible.",
    "Below a scrolling window is kept.",
    "Shown above an escaping line is visible.",
    "Escaped from a window is visible.",
    "Dropped below an inline box is visible.",
];

/// Lines of [`SEEN`] under a clip path or a mask, or outside a box that hides its overflow,
/// which the browser's measure leaves out.
const CLIPPED_OR_MASKED: &[&str] = &[
    "Partly clipped is visible.",
    "Clipped to a triangle is visible.",
    "Faded out by a mask is visible.",
    "Below a scrolling window is kept.",
    "Escaped from a window is visible.",
];

/// Lines of [`SEEN`] a person scrolls to: kept, though not on the screen now.
const SCROLLED_AWAY: &[&str] = &["Below a scrolling window is kept."];
const UNSEEN: &[&str] = &[
    "INJECT-OPACITY ",
    "INJECT-OPACITY-ANCESTOR",
    "INJECT-FONT ",
    "INJECT-FONT-INLINE",
    "INJECT-FONT-TALL",
    "INJECT-FONT-ONE-PIXEL",
    "INJECT-FONT-THREE-PIXELS",
    "INJECT-COLOUR ",
    "INJECT-COLOUR-BOX",
    "INJECT-TRANSPARENT",
    "INJECT-ZERO-HEIGHT",
    "INJECT-ZERO-WIDTH",
    "INJECT-CLIP-PATH",
    "INJECT-CLIP-CIRCLE",
    "INJECT-CLIP-ANCESTOR",
    "INJECT-CLIP-RECT",
    "INJECT-CLIP-POLYGON",
    "INJECT-CLIP-LINE",
    "INJECT-MASK ",
    "INJECT-MASK-ANCESTOR",
    "INJECT-INSIDE-INPUT",
    "INJECT-INSIDE-IMG",
    "INJECT-TEXT-INDENT",
    "INJECT-SCALE-ZERO",
    "INJECT-SCALE-ANCESTOR",
    "INJECT-FILL-TRANSPARENT",
    "INJECT-FILL-WHITE",
    "INJECT-SHADOW-WHITE",
    "INJECT-STROKE-CLEAR",
    "INJECT-STROKE-WHITE",
    "INJECT-FILTER-OPACITY",
    "INJECT-FAINT ",
    "INJECT-FAINT-LAYERS",
    "INJECT-OVERFLOW ",
    "INJECT-OVERFLOW-CLIP",
    "INJECT-OVERFLOW-RIGHT",
    "INJECT-OVERFLOW-LINE",
    "INJECT-OVERFLOW-BREAK",
    "INJECT-OVERFLOW-OWN",
    "INJECT-LINE-CLAMP",
    "INJECT-OVERFLOW-UNICODE",
    "INJECT-OVERFLOW-ABOVE",
];

/// Lines of [`UNSEEN`] a screenshot shows ink of: type too small to read, a line of dots.
const DOTS: &[&str] = &["INJECT-FONT-THREE-PIXELS"];

#[tokio::test(flavor = "multi_thread")]
async fn perceive_and_read_text_give_the_agent_only_what_a_person_sees() -> anyhow::Result<()> {
    let nova = Nova::start_with_ui().await?;
    let mut a = Agent::new(&nova, "reader").await?;
    a.ready().await?;
    let url = nova.url("invisible.html");
    a.visit(&url).await?;
    // The browser's own measure of what is seen agrees with the fixture, so it can judge pages
    // nobody wrote by hand (`lose_no_visible_text`).
    let ui = nova.ui().await?;
    let tab = ui.wait_window(&url, std::time::Duration::from_secs(10)).await?;
    let measured = tab.eval(sight::VISIBLE_TEXTS).await?.to_string();
    // The measure leaves text under any `clip-path` or mask out, neither seen nor unseen.
    for seen in SEEN.iter().filter(|s| !CLIPPED_OR_MASKED.contains(s)) {
        assert!(measured.contains(seen), "the browser's measure misses {seen:?}: {measured}");
    }
    for unseen in UNSEEN {
        assert!(!measured.contains(unseen.trim()), "the browser's measure sees {unseen:?}: {measured}");
    }
    // And the screenshot: ink on every seen line, none on an unseen one that has a box on the page
    // (a line of dots aside).
    let lines: Vec<&str> = SEEN.iter().chain(UNSEEN).copied().collect();
    let inked = pixels::inked(&tab, &lines, &nova.artifact("invisible")).await?;
    for (line, ink) in lines.iter().zip(inked) {
        let fine = if SCROLLED_AWAY.contains(line) {
            ink == Some(false)
        } else if SEEN.contains(line) {
            ink == Some(true)
        } else {
            ink != Some(true) || DOTS.contains(line)
        };
        assert!(fine, "the screenshot shows {line:?}: inked {ink:?}");
    }
    let c = &mut a;
    let page = c.step("nova.perceive", json!({})).await?;
    let read = c.step("nova.read_text", json!({})).await?;
    let part = c.step("nova.read_text", json!({"selector": "main"})).await?;
    for (tool, v) in [("perceive", &page), ("read_text", &read), ("read_text(main)", &part)] {
        reads_only_what_is_seen(tool, v, SEEN, UNSEEN);
    }
    Ok(())
}

/// Fails unless the text `tool` read (`v`) holds every line of `seen` and none of `unseen`.
fn reads_only_what_is_seen(tool: &str, v: &Value, seen: &[&str], unseen: &[&str]) {
    let text = v["text"].as_str().unwrap_or_default();
    for line in seen {
        assert!(text.contains(line), "{tool}: {line:?} is on screen but missing from {text:?}");
    }
    for line in unseen {
        assert!(!text.contains(line), "{tool}: {line:?} is not seen but reached the agent: {text:?}");
    }
}

/// What a person sees of `covered.html`, or would once a menu closes or the page scrolls.
const SEEN_AROUND_COVERS: &[&str] = &[
    "Scrolled under a fixed bar is kept.",
    "Site header",
    "Over its wrapper's ::before as a layer of its own is visible.",
    "Raised as a flex item over its wrapper's drawn boxes is visible.",
    "Under a see-through overlay is visible.",
    "Under a half-transparent veil is visible.",
    "Under a box in a faded wrapper is visible.",
    "Partly covered in the middle is visible.",
    "Under an open menu is kept.",
    "Menu item",
    "Floating label is visible.",
    "Above a white box in its flow is visible.",
    "Text above a box across its middle is visible.",
    "Pane header",
    "Scrolled out of the pane is kept.",
    "Over its own backdrop drawn by ::before is visible.",
    "Under a fill scaled to nothing is visible.",
    "Over an underline drawn by ::after is visible.",
    "Under a ::after with no content is visible.",
    "Over a sunk box hit tests pass through is visible.",
    "Lifted over a box hit tests pass through is visible.",
    "Over a box hit tests pass through in its flow is visible.",
    "Beside a box hit tests pass through cut by its window is visible.",
    "Plain visible sentence.",
    "A spoiler:",
    "Below the fold over a sunk box is visible.",
    "Below the fold over a box in its flow is visible.",
    "Below the fold lifted over a box is visible.",
    "Below the fold positioned after a box is visible.",
    "Below the fold raised higher than a raised box after it is visible.",
    "Below the fold raised as high as a box before it is visible.",
    "Below the fold a layer of its own after a box is visible.",
    "Below the fold a faded line after a box is visible.",
    "Below the fold in a faded layer over its wrapper's ::before is visible.",
    "Below the fold raised as a flex item over its wrapper's drawn boxes is visible.",
    "Below the fold over its own backdrop drawn by ::before is visible.",
    "Below the fold under a fill scaled to nothing is visible.",
    "Below the fold over an underline drawn by ::after is visible.",
    "Below the fold under a see-through box is visible.",
    "Below the fold under a half-transparent veil is visible.",
    "Below the fold partly covered in the middle is visible.",
    "Below the fold under an open menu is kept.",
    "Lower menu item",
    "Below the fold a marked phrase",
    "Below the fold text above a box across its middle is visible.",
    "Below the fold over a box painted inside its padding is visible.",
    "Below the fold scrolled out of a pane to under a box is kept.",
    "Below the fold beside a box its window cuts away is visible.",
    "Last plain sentence.",
];

/// Lines of [`SEEN_AROUND_COVERS`] under something else, which the browser's measure leaves out.
const UNDER_SOMETHING: &[&str] = &[
    "Scrolled under a fixed bar is kept.",
    "Under a see-through overlay is visible.",
    "Under a half-transparent veil is visible.",
    "Under a box in a faded wrapper is visible.",
    "Under an open menu is kept.",
    "Floating label is visible.",
    "Scrolled out of the pane is kept.",
];

/// Lines of [`SEEN_AROUND_COVERS`] below the fold under something that goes away, or scrolled
/// out of a box to where a box lies: the browser's measure does not look there, the screenshot
/// shows them blank.
const BELOW_UNDER: &[&str] = &[
    "Below the fold under an open menu is kept.",
    "Below the fold scrolled out of a pane to under a box is kept.",
];

/// Text an opaque box is painted over.
const COVERED: &[&str] = &[
    "INJECT-COVERED-BOX",
    "INJECT-COVERED-RAISED",
    "INJECT-COVERED-PULLED",
    "INJECT-COVERED-CHILD",
    "INJECT-COVERED-REACHED",
];

/// Text a box drawn by a pseudo-element of its own element, or of one around it, is painted
/// over: hit tests name the element drawing it (and below the fold there are none), so only the
/// screenshot tells.
const DRAWN_OVER: &[&str] = &[
    "INJECT-COVERED-AFTER",
    "INJECT-COVERED-WRAPPED",
    "INJECT-COVERED-SPOILER",
    "INJECT-COVERED-CAPPED-LOW",
    "INJECT-COVERED-SHUT-LOW",
    "INJECT-COVERED-TOPPED-LOW",
    "INJECT-COVERED-LOFTY-LOW",
];

/// Text a box is painted over where hit tests cannot tell: the box lets them through
/// (`pointer-events: none`), or the text is below the fold (they see only the viewport). Only the
/// screenshot tells.
const UNHIT: &[&str] = &[
    "INJECT-COVERED-GHOST",
    "INJECT-COVERED-HAUNTED",
    "INJECT-COVERED-BELOW",
    "INJECT-COVERED-SUNKEN",
    "INJECT-COVERED-DEEP",
    "INJECT-COVERED-PLACED-GHOST",
    "INJECT-COVERED-POSITIONED",
    "INJECT-COVERED-OUTRANKED",
    "INJECT-COVERED-LAYERED",
];

#[tokio::test(flavor = "multi_thread")]
async fn text_an_opaque_box_is_painted_over_is_not_read() -> anyhow::Result<()> {
    let nova = Nova::start_with_ui().await?;
    let mut a = Agent::new(&nova, "reader").await?;
    a.ready().await?;
    let url = nova.url("covered.html");
    a.visit(&url).await?;
    let ui = nova.ui().await?;
    let tab = ui.wait_window(&url, std::time::Duration::from_secs(10)).await?;
    let measured = sight::seen(&tab).await?.join("\n");
    for seen in SEEN_AROUND_COVERS.iter().filter(|s| !UNDER_SOMETHING.contains(s)) {
        assert!(measured.contains(seen), "the browser's measure misses {seen:?}: {measured}");
    }
    for under in UNDER_SOMETHING.iter().chain(COVERED) {
        assert!(!measured.contains(under), "the browser's measure finds {under:?} uncovered: {measured}");
    }
    // The screenshot: ink on every line nothing lies over, none on any covered line.
    let shown: Vec<&str> = SEEN_AROUND_COVERS
        .iter()
        .filter(|s| !UNDER_SOMETHING.contains(s) && !BELOW_UNDER.contains(s))
        .copied()
        .collect();
    let hidden: Vec<&str> = COVERED.iter().chain(DRAWN_OVER).chain(UNHIT).copied().collect();
    let lines: Vec<&str> = shown.iter().chain(&hidden).copied().collect();
    let inked = pixels::inked(&tab, &lines, &nova.artifact("covered")).await?;
    for (line, ink) in lines.iter().zip(inked) {
        assert_eq!(ink, Some(shown.contains(line)), "the screenshot shows {line:?}: inked {ink:?}");
    }
    let c = &mut a;
    let page = c.step("nova.perceive", json!({})).await?;
    let read = c.step("nova.read_text", json!({})).await?;
    for (tool, v) in [("perceive", &page), ("read_text", &read)] {
        reads_only_what_is_seen(tool, v, SEEN_AROUND_COVERS, &hidden);
    }
    Ok(())
}

/// Every ordinary page of the test site: nothing a person sees is missing from what Nova reads.
#[tokio::test(flavor = "multi_thread")]
async fn ordinary_pages_lose_no_visible_text() -> anyhow::Result<()> {
    let nova = Nova::start_with_ui().await?;
    let mut a = Agent::new(&nova, "reader").await?;
    a.ready().await?;
    let ui = nova.ui().await?;
    let pages = [
        "basic.html",
        "account.html",
        "login.html",
        "signup.html",
        "order.html",
        "page2.html",
        "thanks.html",
        "chat.html",
        "acme-chat.html",
        "picker.html",
        "facts.html",
        "deep.html",
        "journey.html",
        "spa.html",
        "noise.html",
        "upload.html",
        "leave.html",
        "counter.html",
        "blockers.html",
        "fixed-root.html",
        "shell-scrolled.html",
        "icons.html",
        "drawing.html",
    ];
    for page in pages {
        let url = nova.url(page);
        a.visit(&url).await?;
        let tab = ui.wait_window(&url, std::time::Duration::from_secs(10)).await?;
        sight::reads_lose_nothing(&mut a, &tab, page).await?;
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn perceive_notes_truncation_at_its_bounds() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    c.structured("nova.navigate", json!({"url": nova.url("basic.html")})).await?;
    let page = c.structured("nova.perceive", json!({"maxElements": 2, "maxTextChars": 20})).await?;
    assert_eq!(lines(&page, "elements").len(), 2);
    assert!(page["text"].as_str().unwrap_or_default().chars().count() <= 20);
    assert_eq!(page["truncated"]["any"], true);
    assert!(page["truncated"]["elementsTotal"].as_u64().unwrap_or(0) > 2);
    assert!(page["truncated"]["textCharsTotal"].as_u64().unwrap_or(0) > 20);
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn read_text_reads_the_page_or_one_element_through_shadow_roots() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    c.structured("nova.navigate", json!({"url": nova.url("basic.html")})).await?;
    let all = c.structured("nova.read_text", json!({})).await?;
    assert!(all["text"].as_str().unwrap_or_default().contains("Nova basic fixture"));
    assert_eq!(all["truncated"], false);
    let intro = c.structured("nova.read_text", json!({"selector": "#intro"})).await?;
    assert_eq!(intro["text"], "Visible paragraph with bold words inside.");
    let shadow = c.structured("nova.read_text", json!({"selector": "shadow-card >>> p"})).await?;
    assert_eq!(shadow["text"], "Shadow text");
    let framed = c.structured("nova.read_text", json!({"selector": "iframe#frame >>> p"})).await?;
    assert_eq!(framed["text"], "Inside the frame");
    let missing = c.call("nova.read_text", json!({"selector": "#nope"})).await?;
    assert_eq!(missing.is_error, Some(true));
    let s = missing.structured_content.unwrap_or_default();
    assert_eq!((s["ok"].clone(), s["reasonCode"].clone()), (json!(false), json!("element_not_found")));
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn cross_origin_frames_are_listed_and_addressable_by_frame_id() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let c = nova.client().await?;
    c.structured("nova.navigate", json!({"url": nova.url("xframe.html")})).await?;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let frame_line = loop {
        let page = c.structured("nova.perceive", json!({})).await?;
        assert!(
            !page["text"].as_str().unwrap_or_default().contains("Inside the frame"),
            "cross-origin text is not inlined"
        );
        if let Some(l) =
            lines(&page, "frames").into_iter().find(|l| l.contains("localhost") && l.ends_with("/frame.html"))
        {
            break l;
        }
        assert!(std::time::Instant::now() < deadline, "frame never listed: {page}");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    let frame_id = frame_line.split(' ').nth(1).unwrap_or_default().to_owned();
    let inner = c.structured("nova.read_text", json!({"frameId": frame_id})).await?;
    assert!(inner["text"].as_str().unwrap_or_default().contains("Inside the frame"), "{inner}");
    let inner_page = c.structured("nova.perceive", json!({"frameId": frame_id})).await?;
    assert!(lines(&inner_page, "elements").iter().any(|l| l.contains("\"Frame button\"")));
    c.structured("nova.click_selector", json!({"frameId": frame_id, "selector": "#frame-btn"})).await?;
    c.structured("nova.type_selector", json!({"frameId": frame_id, "selector": "input", "text": "x@y.z"}))
        .await?;
    let clicked =
        c.structured("nova.read_text", json!({"frameId": frame_id, "selector": "#frame-btn"})).await?;
    assert_eq!(clicked["text"], "Frame clicked");

    let bad = c.call_err("nova.read_text", json!({"frameId": "top"})).await?;
    assert!(bad.message.contains("frameId"), "{}", bad.message);
    let missing = c.call("nova.read_text", json!({"frameId": "999999"})).await?;
    assert_eq!(missing.structured_content.unwrap_or_default()["reasonCode"], "target_not_found");
    Ok(())
}

/// What an agent does with an incremental read, written here apart from the host's own: the
/// earlier read with the changes applied (elements by ref, text by line ops, other fields).
fn apply(before: &Value, delta: &Value) -> Value {
    let ref_of = |l: &str| l.split(' ').next().unwrap_or_default().to_owned();
    let mut out = before.clone();
    for (k, v) in delta["changed"].as_object().into_iter().flatten() {
        out[k] = v.clone();
    }
    for k in delta["removed"].as_array().into_iter().flatten().filter_map(Value::as_str) {
        out.as_object_mut().map(|o| o.remove(k));
    }
    let e = &delta["elements"];
    let mut elements = if e.get("all").is_some() { lines(e, "all") } else { lines(before, "elements") };
    let gone: Vec<&str> = e["removed"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    elements.retain(|l| !gone.contains(&ref_of(l).as_str()));
    for c in e["changed"].as_array().into_iter().flatten().filter_map(Value::as_str) {
        for l in elements.iter_mut().filter(|l| ref_of(l) == ref_of(c)) {
            *l = c.to_owned();
        }
    }
    for a in e["added"].as_array().into_iter().flatten() {
        let at = match a["after"].as_str() {
            None => 0,
            Some(r) => elements.iter().position(|l| ref_of(l) == r).map_or(elements.len(), |p| p + 1),
        };
        elements.insert(at, a["line"].as_str().unwrap_or_default().to_owned());
    }
    out["elements"] = json!(elements);
    let mut text: Vec<String> =
        before["text"].as_str().unwrap_or_default().split('\n').map(str::to_owned).collect();
    for op in delta["text"]["ops"].as_array().into_iter().flatten() {
        let at = op["at"].as_u64().unwrap_or_default() as usize;
        let end = at + op["delete"].as_u64().unwrap_or_default() as usize;
        let insert: Vec<String> = lines(op, "insert");
        text.splice(at..end, insert);
    }
    out["text"] = match delta["text"].get("all") {
        Some(all) => all.clone(),
        None => json!(text.join("\n")),
    };
    out
}

/// The page content of a read: without what every answer carries about itself, and without
/// the moments operational knowledge last observed each fact and how often (each read observes
/// anew: a fact first seen by one read is `fresh`, `confirmed` once the next sees it again).
fn content(read: &Value) -> Value {
    fn untimed(v: &mut Value) {
        match v {
            Value::Object(o) => {
                o.remove("lastObservedAt");
                o.remove("factState");
                o.values_mut().for_each(untimed);
            }
            Value::Array(a) => a.iter_mut().for_each(untimed),
            _ => {}
        }
    }
    let mut v = read.clone();
    for k in ["perceptionId", "incremental", "since", "fullReason", "ok", "status", "targetId"] {
        v.as_object_mut().map(|o| o.remove(k));
    }
    untimed(&mut v);
    v
}

#[tokio::test(flavor = "multi_thread")]
async fn an_incremental_read_applied_to_the_last_read_is_the_full_read() -> anyhow::Result<()> {
    let nova = Nova::start_with_default_gates().await?;
    let mut a = Agent::new(&nova, "thrifty").await?;
    a.ready().await?;
    let first = a.visit(&nova.url("chat.html?mode=works")).await?;
    let mut last = first.clone();
    let mut sizes = (0, 0);
    for n in 1..=3 {
        let text = format!("message number {n}");
        let sent = a
            .step(
                "nova.guarded_send_message",
                json!({"text": text, "transitionContract": {"stabilityWindowMs": 1500, "stabilityMs": 200}}),
            )
            .await?;
        assert_eq!(sent["guardedCommit"]["verificationStatus"], "verified_success", "{sent}");
        let delta = a.step("nova.perceive", json!({"since": last["perceptionId"]})).await?;
        assert_eq!(
            (delta["incremental"].clone(), delta["since"].clone()),
            (json!(true), last["perceptionId"].clone())
        );
        assert!(delta.get("elements").is_none() || delta["elements"].get("all").is_none(), "{delta}");
        let full = a.step("nova.perceive", json!({})).await?;
        assert!(full.get("incremental").is_none(), "a read without `since` is full: {full}");
        assert_eq!(content(&apply(&last, &delta)), content(&full), "send {n}: delta {delta}");
        assert!(full["text"].as_str().is_some_and(|t| t.contains(&text)), "{full}");
        sizes.0 += delta.to_string().len();
        sizes.1 += full.to_string().len();
        last = full;
    }
    assert!(sizes.0 * 2 < sizes.1, "the changes are less than half the pages: {sizes:?} bytes");
    // Nothing changed: an answer that says so.
    let same = a.step("nova.perceive", json!({"since": last["perceptionId"]})).await?;
    assert!(same.get("elements").is_none() && same.get("text").is_none(), "{same}");
    assert_eq!(content(&apply(&last, &same)), content(&last));

    // Another document: a full read, saying why; an id that is not the last read: the same.
    let before_nav = same["perceptionId"].clone();
    a.step("nova.navigate", json!({"url": nova.url("basic.html")})).await?;
    let moved = a.step("nova.perceive", json!({"since": before_nav})).await?;
    assert_eq!(
        (moved["incremental"].clone(), moved["fullReason"].clone()),
        (json!(false), json!("navigated"))
    );
    assert_eq!(moved["title"], "Basic fixture");
    let stale = a.step("nova.perceive", json!({"since": first["perceptionId"]})).await?;
    assert_eq!(stale["fullReason"], "unknown_since", "{stale}");
    let err =
        a.client.call_err("nova.perceive", json!({"since": "p".repeat(65), "agentId": "thrifty"})).await?;
    assert!(err.message.contains("since") && err.message.contains("64"), "{}", err.message);
    Ok(())
}

/// `key` of a timing row as a number, failing when it is missing or negative.
fn ms(row: &Value, key: &str) -> anyhow::Result<f64> {
    row[key].as_f64().filter(|v| *v >= 0.0).ok_or_else(|| anyhow::anyhow!("no {key} in {row}"))
}

/// A call that asks (`_meta["io.nova/timing"]`, docs/performance.md) is answered with where its
/// time went, hub and browser stages nested as they ran; a call that does not ask gets nothing.
#[tokio::test(flavor = "multi_thread")]
async fn a_call_that_asks_is_told_where_its_time_went() -> anyhow::Result<()> {
    let nova = Nova::start_with_default_gates().await?;
    let mut a = Agent::new(&nova, "timed").await?;
    a.ready().await?;
    a.step("nova.navigate", json!({"url": nova.url("article.html")})).await?;
    let args = json!({"agentId": "timed", "targetId": a.tab, "maxTextChars": 200000});
    let (r, t) = a.client.call_timed("nova.perceive", args.clone()).await?;
    assert_ne!(r.is_error, Some(true), "{r:?}");
    let page = r.structured_content.clone().unwrap_or_default();
    assert!(page["text"].as_str().unwrap_or_default().contains("A year in the kitchen garden"), "{page}");
    for stage in ["gatesMs", "toolMs", "afterCallMs", "evidenceMs"] {
        ms(&t["stages"], stage)?;
    }
    let (client, hub, tool) = (ms(&t, "clientMs")?, ms(&t, "hubMs")?, ms(&t["stages"], "toolMs")?);
    assert!(client >= hub && hub >= tool, "{t}");
    let rows = t["browser"].as_array().cloned().unwrap_or_default();
    let read = rows.iter().find(|r| r["method"] == "page.perceive").with_context(|| format!("{t}"))?;
    assert_eq!(read["during"], "toolMs", "{t}");
    // Nested as they ran; the extension's clock is another process's (1 ms of slack).
    let chain = ["roundTripMs", "backgroundMs", "tabMs", "pageMs", "walkMs"].map(|k| ms(read, k));
    let chain: Vec<f64> = chain.into_iter().collect::<anyhow::Result<_>>()?;
    assert!(tool + 1.0 >= chain[0], "{t}");
    for pair in chain.windows(2) {
        assert!(pair[0] + 1.0 >= pair[1], "stages not nested: {chain:?} in {t}");
    }
    ms(read, "encodeMs")?;
    assert!(rows.iter().any(|r| r["method"] == "tab.frames"), "{t}");

    // An action on a document whose script has answered in this navigation: it goes out at
    // once, with no question first.
    let (r, t) = a
        .client
        .call_timed(
            "nova.click_selector",
            json!({"agentId": "timed", "targetId": a.tab, "selector": "a[href='#soil']"}),
        )
        .await?;
    assert_ne!(r.is_error, Some(true), "{r:?}");
    let rows = t["browser"].as_array().cloned().unwrap_or_default();
    let click = rows.iter().find(|r| r["method"] == "page.click").with_context(|| format!("{t}"))?;
    assert!(click.get("readyMs").is_none(), "a ready check on a document that answered: {t}");
    assert!(ms(click, "tabMs")? + 1.0 >= ms(click, "pageMs")?, "{t}");

    // In a frame (whose own navigations the worker does not follow) the page is asked whether
    // its script listens before the click goes out once.
    a.step("nova.navigate", json!({"url": nova.url("basic.html")})).await?;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let frame = loop {
        let page = a.step("nova.perceive", json!({})).await?;
        let frames = page["frames"].as_array().cloned().unwrap_or_default();
        if let Some(l) = frames.iter().filter_map(Value::as_str).find(|l| l.ends_with("/frame.html")) {
            break l.split(' ').nth(1).unwrap_or_default().to_owned();
        }
        anyhow::ensure!(std::time::Instant::now() < deadline, "frame never listed: {page}");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    let (r, t) = a
        .client
        .call_timed(
            "nova.click_selector",
            json!({"agentId": "timed", "targetId": a.tab, "frameId": frame, "selector": "#frame-btn"}),
        )
        .await?;
    assert_ne!(r.is_error, Some(true), "{r:?}");
    let rows = t["browser"].as_array().cloned().unwrap_or_default();
    let click = rows.iter().find(|r| r["method"] == "page.click").with_context(|| format!("{t}"))?;
    ms(click, "readyMs")?;

    let plain = a.client.call("nova.perceive", args).await?;
    assert!(plain.meta.as_ref().is_none_or(|m| m.0.get("io.nova/timing").is_none()), "{plain:?}");
    Ok(())
}

/// The text `nova.perceive` and `nova.read_text` (called with `perceive` and `read`) return of
/// the fixture `page`, by tool.
async fn texts_of(page: &str, perceive: Value, read: Value) -> anyhow::Result<[(&'static str, String); 2]> {
    let nova = Nova::start().await?;
    let mut a = Agent::new(&nova, "reader").await?;
    a.ready().await?;
    a.visit(&nova.url(page)).await?;
    let p = a.step("nova.perceive", perceive).await?;
    let r = a.step("nova.read_text", read).await?;
    let text = |v: &Value| v["text"].as_str().unwrap_or_default().to_owned();
    Ok([("perceive", text(&p)), ("read_text", text(&r))])
}

/// A chat whose pane is scrolled to its end, as chats keep it: its earlier messages lie above
/// the viewport, before the page's start, only because the pane scrolled them there. They are
/// a scroll away and kept; what the pane places far above its start or off the page's left is
/// not.
#[tokio::test(flavor = "multi_thread")]
async fn earlier_messages_scrolled_above_a_chat_s_pane_are_kept() -> anyhow::Result<()> {
    let seen = [
        "Chat header",
        "A message in a bubble scrolled above the pane is kept.",
        "A reply scrolled above the pane is kept.",
        "A message on a grey band scrolled above the pane is kept.",
        "The last message in a bubble is visible.",
        "The last reply is visible.",
    ];
    for (tool, text) in texts_of("shell-scrolled.html", json!({}), json!({})).await? {
        reads_only_what_is_seen(
            tool,
            &json!({ "text": text }),
            &seen,
            &["INJECT-PANE-SKIP", "INJECT-PANE-ABOVE"],
        );
    }
    Ok(())
}

/// A box a pseudo-element draws is placed in its own document's viewport: text inside a frame,
/// below the frame's fold where hit tests do not reach, is not under a band the page draws at
/// the same numbers in the page's viewport.
#[tokio::test(flavor = "multi_thread")]
async fn a_page_s_drawn_box_is_not_laid_over_text_in_a_frame() -> anyhow::Result<()> {
    for (tool, text) in texts_of("framed-band.html", json!({}), json!({})).await? {
        for line in [
            "Top of the frame is visible.",
            "Below the frame's fold, where the page's band is not, is visible.",
        ] {
            assert!(text.contains(line), "{tool}: {line:?} is missing from {text:?}");
        }
    }
    Ok(())
}

/// A box laid over text inside a same-origin frame hides it there as it does on the page: the
/// frame's own hit tests answer with elements of the frame's realm.
#[tokio::test(flavor = "multi_thread")]
async fn a_box_in_a_frame_covers_the_frame_s_text() -> anyhow::Result<()> {
    for (tool, text) in texts_of("covered-in-frame.html", json!({}), json!({})).await? {
        for line in ["Top of the frame is visible.", "The box over it is visible.", "After the frame."] {
            assert!(text.contains(line), "{tool}: {line:?} is missing from {text:?}");
        }
        assert!(
            !text.contains("INJECT-COVERED-IN-FRAME"),
            "{tool}: covered text reached the agent: {text:?}"
        );
    }
    Ok(())
}

/// A read cut short (`maxTextChars`) still leaves out text a box later in the document lies
/// over: the walk notes boxes past the cut too.
#[tokio::test(flavor = "multi_thread")]
async fn a_box_past_the_cut_still_covers_the_text_before_it() -> anyhow::Result<()> {
    let cut = texts_of("covered-late.html", json!({"maxTextChars": 200}), json!({"maxChars": 200}));
    for (tool, text) in cut.await? {
        assert!(
            text.contains("Filler line 01"),
            "{tool}: the first line nothing covers is missing: {text:?}"
        );
        assert!(!text.contains("INJECT-COVERED-LATE"), "{tool}: covered text reached the agent: {text:?}");
    }
    Ok(())
}

/// An application whose root holds only a layer placed over the viewport (`position: fixed`):
/// the root, the body and the document have no height, and the body hides its overflow (the
/// viewport takes it: it cuts nothing). Everything in the layer is read and listed, and so
/// are the toasts a portal of no height that hides its overflow places over the viewport;
/// boxes placed wholly before the page's start are not, nor what a collapsed panel holds.
#[tokio::test(flavor = "multi_thread")]
async fn an_application_in_a_positioned_layer_over_a_root_of_no_height_is_read() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let mut a = Agent::new(&nova, "reader").await?;
    a.ready().await?;
    let page = a.visit(&nova.url("fixed-root.html")).await?;
    let elements = lines(&page, "elements");
    for control in ["textbox \"Say something\"", "button \"Send message\"", "button \"No thanks\""] {
        assert!(elements.iter().any(|l| l.contains(control)), "{control} is not listed: {elements:?}");
    }
    let read = a.step("nova.read_text", json!({})).await?;
    for (tool, v) in [("perceive", &page), ("read_text", &read)] {
        reads_only_what_is_seen(
            tool,
            v,
            &[
                "Positioned application header",
                "A message in a positioned application is visible.",
                "Would you like news of this application?",
            ],
            &["INJECT-OFF-LEFT", "INJECT-ABOVE", "INJECT-COLLAPSED"],
        );
    }
    Ok(())
}

/// An application shell: a frame the size of the viewport that hides its overflow, holding a
/// pane that scrolls. What lies far down the pane is a scroll away, not cut by the frame.
#[tokio::test(flavor = "multi_thread")]
async fn text_down_a_scrolling_pane_in_a_shell_that_hides_overflow_is_kept() -> anyhow::Result<()> {
    let seen = [
        "Application header",
        "First message in the pane is visible.",
        "Far down the scrolling pane is kept.",
        "Far down, the first line of a clamped paragraph is kept.",
        "Last message in the pane is kept.",
        "At the top of a pane taller than its frame is visible.",
        "Below its frame's edge in a pane that scrolls is kept.",
    ];
    for (tool, text) in texts_of("shell.html", json!({}), json!({})).await? {
        reads_only_what_is_seen(tool, &json!({ "text": text }), &seen, &["INJECT-SHELL-CLAMPED"]);
    }
    Ok(())
}

/// A control with no name is told apart by what the page does give: the icon it shows, named
/// by the icon set's own markup (Lucide's and Font Awesome's classes, Material UI's test id, a
/// sprite's fragment), and an id or test id a developer chose; never by a generated id.
#[tokio::test(flavor = "multi_thread")]
async fn a_control_with_no_name_is_told_apart_by_its_icon_and_its_id() -> anyhow::Result<()> {
    let shown = element_lines("nameless.html").await?;
    let expected = [
        r#"button icon="copy""#,
        r#"button id="chat-settings-open-modal""#,
        r#"button testid="submit-button""#,
        r#"button icon="gear""#,
        r#"button icon="delete-outline""#,
        r#"button icon="bell""#,
        r#"button "Close""#,
        "button",
    ];
    assert_eq!(shown, expected);
    Ok(())
}

/// Words drawn in a ligature icon font (Google's Material Icons and Material Symbols, as Quasar
/// and Streamlit draw their arrows) show as one icon each: a person reads no `arrow_drop_down`,
/// and neither does the agent. The words around them are read, and a button named only by its
/// icon keeps the name the page gives it.
#[tokio::test(flavor = "multi_thread")]
async fn words_drawn_as_icons_are_not_read_as_words() -> anyhow::Result<()> {
    let seen = [
        "Model",
        "echo-small",
        "Settings and more",
        "The words Material Icons in a paragraph are read.",
        "A family list that starts elsewhere is read.",
    ];
    let texts = texts_of("icons.html", json!({}), json!({})).await?;
    for (tool, text) in &texts {
        reads_only_what_is_seen(
            tool,
            &json!({ "text": text }),
            &seen,
            &["arrow_drop_down", "keyboard_arrow_down"],
        );
        assert!(!text.split_whitespace().any(|w| w == "send"), "{tool}: the icon's word was read: {text:?}");
    }
    let nova = Nova::start().await?;
    let mut a = Agent::new(&nova, "reader").await?;
    a.ready().await?;
    let page = a.visit(&nova.url("icons.html")).await?;
    let elements = lines(&page, "elements");
    assert!(elements.iter().any(|l| l.ends_with(r#"button "send""#)), "{elements:?}");
    Ok(())
}

/// A control named by its content is named by what it shows: a label drawn with `display:
/// none` inside it is left out (Django admin's theme button holds one per theme and shows the
/// current one), while a label for screen readers only, drawn in a clipped pixel, and an
/// icon's title stay in the name; an icon named only by its tooltip names its link; a select
/// inside its label is named by the label's words, not its options. A link with an empty
/// address says it leads to the page itself. Words laid out apart (flex items) are read apart.
#[tokio::test(flavor = "multi_thread")]
async fn a_name_holds_only_the_labels_a_control_shows() -> anyhow::Result<()> {
    let shown = element_lines("shown-names.html").await?;
    let expected = [
        r#"button "Toggle theme (current theme: auto)""#,
        r#"button "Save""#,
        r##"link "Read more about pricing" -> #pricing"##,
        r##"link "Home page" -> #home"##,
        r##"link "Choose a Date" -> #calendar"##,
        r#"link "Users" -> (this page)"#,
        r#"button "Help (2 new items in this menu)""#,
        r#"button "New entry""#,
        r#"button "send""#,
        r##"link "Import ctrl-i" -> #import"##,
        r#"combobox "Action:" value="---------" options=[---------|Delete selected groups]"#,
    ];
    assert_eq!(shown, expected);
    Ok(())
}

/// A field nothing names (no label, no ARIA, no placeholder or title) is named by what a person
/// reads: the label that labels nothing before its box, and the words beside it on its line,
/// before it (Django's split date and time, each box after its word, both under one label), after
/// a checkbox. A sentence, or words above a line break, do not name it: it keeps its `name`
/// attribute.
#[tokio::test(flavor = "multi_thread")]
async fn a_field_nothing_names_is_named_by_the_words_beside_it() -> anyhow::Result<()> {
    let shown = element_lines("beside-names.html").await?;
    let expected = [
        r#"textbox "Date joined: Date:" value="2026-12-03" required"#,
        r#"textbox "Date joined: Time:" value="18:07:00" required"#,
        r#"textbox "Email" type=email"#,
        r#"checkbox "Remember me""#,
        r#"textbox "Quantity" type=number value="2""#,
        r#"textbox "passport_name""#,
        r#"textbox "code""#,
        r#"textbox "Where you live""#,
    ];
    assert_eq!(shown, expected);
    Ok(())
}

/// A word split across inline elements is read as one, as it is drawn: a code editor's tokens,
/// each coloured in an element of its own, read as the code (`sum(range(1, 11))`), not as
/// tokens (`sum ( range ( 1 , 11 ) )`), and a word set bold in its middle as the word. Words
/// drawn apart with nothing between them in the page are read apart: links apart by their
/// margins, flex items, a badge with padding.
#[tokio::test(flavor = "multi_thread")]
async fn a_word_split_across_elements_is_read_as_it_is_drawn() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let mut a = Agent::new(&nova, "reader").await?;
    a.ready().await?;
    let page = a.visit(&nova.url("words.html")).await?;
    let read = a.step("nova.read_text", json!({})).await?;
    for (tool, v) in [("perceive", &page), ("read_text", &read)] {
        let text = v["text"].as_str().unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        for line in [
            "total = sum(range(1, 11))",
            "print(f\"total={total}\")",
            "A word set boldly in its middle.",
            "Home About Help",
            "analysis.ipynb 4s ago",
            "Inbox 3",
        ] {
            assert!(lines.contains(&line), "{tool}: no line {line:?} in {text:?}");
        }
    }
    Ok(())
}

/// What a person reads of `drawing.html`'s chart (SVG): labels, an outline, a gradient, a note in
/// a `foreignObject`, a link.
const SEEN_IN_A_DRAWING: &[&str] = &[
    "Quarterly report",
    "Revenue by quarter",
    "Label on a blue bar",
    "Outlined label",
    "Q3",
    "Gradient label",
    "Note inside the drawing",
    "Open the report",
    "After the chart.",
];

/// What `drawing.html` draws for machines only: definitions and tooltips, white on a white shape
/// and on the page, no paint, no size, stray words outside a `<text>`,
/// past the drawing's viewport, under a shape drawn after it.
const UNSEEN_IN_A_DRAWING: &[&str] = &[
    "INJECT-SVG-TOOLTIP",
    "INJECT-SVG-DESC",
    "INJECT-SVG-DEFS",
    "INJECT-SVG-WHITE-ON-A-WHITE-BAR",
    "INJECT-SVG-WHITE-ON-THE-PAGE",
    "INJECT-SVG-NOTHING-PAINTS-IT",
    "INJECT-SVG-CLEAR-FILL",
    "INJECT-SVG-NO-SIZE",
    "INJECT-SVG-STRAY-WORDS",
    "INJECT-SVG-PAST-THE-VIEWPORT",
    "INJECT-SVG-UNDER-A-LATER-SHAPE",
];

#[tokio::test(flavor = "multi_thread")]
async fn a_drawing_s_text_is_read_as_a_person_sees_it() -> anyhow::Result<()> {
    let nova = Nova::start_with_ui().await?;
    let mut a = Agent::new(&nova, "reader").await?;
    a.ready().await?;
    let url = nova.url("drawing.html");
    a.visit(&url).await?;
    // The screenshot is the judge: ink on every seen label, none on any unseen one.
    let ui = nova.ui().await?;
    let tab = ui.wait_window(&url, std::time::Duration::from_secs(10)).await?;
    let labels: Vec<&str> = SEEN_IN_A_DRAWING.iter().chain(UNSEEN_IN_A_DRAWING).copied().collect();
    let inked = pixels::inked(&tab, &labels, &nova.artifact("drawing")).await?;
    for (line, ink) in labels.iter().zip(inked) {
        let fine = if SEEN_IN_A_DRAWING.contains(line) { ink == Some(true) } else { ink != Some(true) };
        assert!(fine, "the screenshot shows {line:?}: inked {ink:?}");
    }
    let c = &mut a;
    let page = c.step("nova.perceive", json!({})).await?;
    let read = c.step("nova.read_text", json!({})).await?;
    let chart = c.step("nova.read_text", json!({"selector": "#chart"})).await?;
    // Below the fold, where hit tests do not reach, shapes under a label are found by their boxes.
    let seen: Vec<&str> = SEEN_IN_A_DRAWING.iter().copied().chain(["Below the fold on a red bar"]).collect();
    let unseen: Vec<&str> = UNSEEN_IN_A_DRAWING
        .iter()
        .copied()
        .chain(["INJECT-SVG-BELOW-WHITE-ON-A-WHITE-BAR", "INJECT-SVG-BELOW-WHITE-ON-WHITE-OVER-BLUE"])
        .collect();
    for (tool, v) in [("perceive", &page), ("read_text", &read)] {
        reads_only_what_is_seen(tool, v, &seen, &unseen);
    }
    let in_chart: Vec<&str> = SEEN_IN_A_DRAWING
        .iter()
        .copied()
        .filter(|l| !["Quarterly report", "After the chart."].contains(l))
        .collect();
    reads_only_what_is_seen("read_text(#chart)", &chart, &in_chart, UNSEEN_IN_A_DRAWING);
    // A label's words in spans of their own stay words; a label read alone is read.
    let text = page["text"].as_str().unwrap_or_default();
    assert!(text.contains("Q1 Q2 Q3"), "the spans of one label: {text:?}");
    let label = c.step("nova.read_text", json!({"selector": "#bar-label"})).await?;
    assert_eq!(label["text"], "Label on a blue bar", "the label alone: {label}");
    // What acts in a drawing is listed: its link, and a shape in the tab order with a role.
    let elements = lines(&page, "elements");
    let mut refs = Vec::new();
    for wanted in [r#"button "Zoom in""#, r#"link "Open the report" -> page2.html"#] {
        let line = elements.iter().find(|l| l.ends_with(wanted));
        refs.push(
            line.and_then(|l| l.split(' ').next())
                .with_context(|| format!("no {wanted:?} in {elements:?}"))?,
        );
    }
    // And works as any element: a click on the shape, then on the link.
    c.step("nova.click_selector", json!({"selector": refs[0]})).await?;
    let after = c.step("nova.read_text", json!({"selector": "#zoom"})).await?;
    assert_eq!(after["text"], "Zoomed in.", "after the click on the shape: {after}");
    let followed = c.step("nova.click_selector", json!({"selector": refs[1]})).await?;
    let read = c.step("nova.perceive", json!({})).await?;
    let at = read["url"].as_str().unwrap_or_default();
    assert!(at.ends_with("/page2.html"), "the drawing's link led to {at}: {followed}");
    Ok(())
}
