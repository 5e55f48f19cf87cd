//! The compact page model (`nova.perceive`) and visible-text reads (`nova.read_text`).
//!
//! One walk over the flat tree (light DOM, open shadow roots, slots, same-origin iframes) that
//! skips what a person cannot see: `display: none`, `visibility: hidden`, opacity 0, boxes of
//! zero width or height that hide their overflow (screen-reader-only, collapsed panels), boxes
//! placed off the page (negative coordinates), and text [`crate::seen`] judges unseen (zero-size
//! font, transparent or background-coloured text, clipped away by `clip-path`).

use nova_shared::page::{PageModel, TextRead, Truncation, Viewport};
use nova_shared::protocol::{PerceiveParams, ReadTextParams};
use nova_shared::selector::format_ref;
use wasm_bindgen::JsCast;
use web_sys::{Element, Node};

use crate::attrs::Attrs;
use crate::aware;
use crate::dom::{self, Failure, clip};
use crate::drawing::{self, Step, Within};
use crate::hint;
use crate::proxied;
use crate::select2;
use crate::selectize;

const INTERACTIVE_ROLES: &[&str] = &[
    "button",
    "link",
    "checkbox",
    "radio",
    "tab",
    "menuitem",
    "menuitemcheckbox",
    "menuitemradio",
    "switch",
    "option",
    "combobox",
    "textbox",
    "searchbox",
    "slider",
    "spinbutton",
    "treeitem",
];
const LANDMARK_ROLES: &[&str] = &[
    "banner",
    "navigation",
    "main",
    "complementary",
    "contentinfo",
    "search",
    "region",
    "dialog",
    "alertdialog",
];
/// Tags whose text starts on a new line (their default display is not inline).
const BLOCK_TAGS: &[&str] = &[
    "address",
    "article",
    "aside",
    "blockquote",
    "body",
    "dd",
    "details",
    "dialog",
    "div",
    "dl",
    "dt",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "hr",
    "legend",
    "li",
    "main",
    "nav",
    "ol",
    "p",
    "pre",
    "section",
    "summary",
    "table",
    "tr",
    "ul",
    "caption",
    "search",
    "option",
];
/// Elements drawn as boxes of their own in a line by default (table cells, buttons, form
/// controls, images and other replaced elements): a word never runs across their edge, so the
/// walk does not measure whether the texts on either side touch ([`crate::glued`]). A table's
/// row of cells (`Task 1`, `2026-12-02`, `Ann`) would otherwise cost two measurements a cell.
const BOXED_TAGS: &[&str] = &[
    "td", "th", "button", "input", "select", "textarea", "img", "iframe", "video", "audio", "object",
    "embed", "meter", "progress", "svg",
];
const SKIP_TAGS: &[&str] =
    &["script", "style", "noscript", "template", "head", "meta", "link", "title", "canvas"];

/// Visible text kept for recognising challenge and geo-block pages, whatever `maxTextChars` is.
const HEAD_CHARS: usize = 3000;

#[derive(Default)]
struct Walk {
    text: String,
    text_total: usize,
    /// Characters of hidden text taken out of the text ([`nova_shared::invisible`]).
    hidden_chars: usize,
    /// The start of the visible text (about [`HEAD_CHARS`] bytes), kept whatever `text_max` is.
    head: String,
    text_max: usize,
    elements: Vec<String>,
    elements_total: usize,
    elements_max: usize,
    landmarks: Vec<String>,
    forms: Vec<(Element, String, Vec<String>)>,
    password_visible: bool,
    collect_elements: bool,
    scroll: (f64, f64),
    /// The elements the walk is inside, for judging whether their text is seen.
    layers: crate::seen::Layers,
    /// Where the text of elements found seen went: taken out again when a cover the walk noted
    /// turns out to be painted over it ([`Walk::drop_covered`]).
    pieces: Vec<Piece>,
    /// The open shadow roots entered in the page's own document (not in its frames), at most
    /// [`crate::shadows::MAX_ROOTS`]: the read's page type is looked for in them too.
    shadows: Vec<web_sys::ShadowRoot>,
    /// How many frames deep the walk is.
    frames: u32,
    /// The text node read last, when it ended inside a word with nothing read after it on its
    /// line ([`crate::glued`]).
    open: Option<crate::glued::End>,
    /// Whether the walk is in a page, a drawing's graphics or a drawing's text ([`drawing`]).
    within: Within,
}

/// Where the walk put the text of one text node of an element found seen.
struct Piece {
    /// The element's place in the layers' list of those judged again ([`crate::seen::Layers::later`]).
    later: usize,
    /// Its bytes in the text, leading space included.
    text: std::ops::Range<usize>,
    /// Its bytes in the head.
    head: std::ops::Range<usize>,
    /// The characters it added to the count.
    chars: usize,
}

impl Walk {
    /// Adds the words of `s`; `goes_on`: its first word goes on the last word added.
    fn push_text(&mut self, s: &str, goes_on: bool) {
        let mut glue = goes_on;
        for word in s.split_whitespace() {
            let (word, hidden) = nova_shared::invisible::visible(word);
            self.hidden_chars += hidden;
            if word.is_empty() {
                continue;
            }
            let word = word.as_ref();
            let needs_space = !self.text.is_empty() && !self.text.ends_with(['\n', ' ']) && !glue;
            glue = false;
            let piece_len = word.chars().count() + usize::from(needs_space);
            if self.head.len() < HEAD_CHARS {
                self.head.push(' ');
                self.head.push_str(word);
            }
            self.text_total += piece_len;
            if self.text_total <= self.text_max {
                if needs_space {
                    self.text.push(' ');
                }
                self.text.push_str(word);
            }
        }
    }

    /// Whether text from here on is only counted: the returned text and the head kept for
    /// recognising challenge pages are both full.
    fn past_the_cut(&self) -> bool {
        self.text_total >= self.text_max && self.head.len() >= HEAD_CHARS
    }

    /// Once the walk is done: takes out the text a cover turns out to be painted over
    /// ([`crate::stacking`]); nothing to do when no cover lies near any text.
    fn drop_covered(&mut self) {
        let covered = self.layers.covered_later();
        if !covered.iter().any(|c| *c) {
            return;
        }
        // Last first: the ranges of the pieces before stay where they are.
        for p in self.pieces.iter().rev().filter(|p| covered.get(p.later).copied().unwrap_or(false)) {
            self.text.replace_range(p.text.clone(), "");
            self.head.replace_range(p.head.clone(), "");
            self.text_total -= p.chars;
        }
        self.pieces.clear();
        self.text = tidy(&self.text);
    }

    fn break_line(&mut self) {
        self.open = None;
        if !self.text.is_empty() && !self.text.ends_with('\n') && self.text_total < self.text_max {
            while self.text.ends_with(' ') {
                self.text.pop();
            }
            self.text.push('\n');
        }
    }

    fn node(&mut self, node: &Node) {
        match node.node_type() {
            Node::TEXT_NODE => {
                // In a drawing, text outside a `<text>` is not drawn.
                if !self.within.draws_text() {
                    return;
                }
                // Past the cut text is only counted, so it is not judged (that costs computed
                // style): `textCharsTotal` may count text nobody sees, never shows it.
                let Some(t) = node.text_content() else { return };
                if t.trim().is_empty() {
                    // White space between two texts draws them apart: nothing to measure.
                    self.open = None;
                    return;
                }
                if self.past_the_cut() || self.layers.text_seen() {
                    // Where a box that hides its overflow cuts the element, only the lines it
                    // lets show ([`crate::shown`]).
                    let shown = match self.layers.rows().filter(|_| !self.past_the_cut()) {
                        Some(rows) => crate::shown::part(node, &t, rows),
                        None => Some(0..t.len()),
                    };
                    let Some(shown) = shown else { return };
                    let (text, head, chars) = (self.text.len(), self.head.len(), self.text_total);
                    // Past the cut nothing is measured: the text is only counted.
                    let open_ok = !self.past_the_cut();
                    let open = self.open.take().filter(|_| open_ok);
                    let goes_on = open.is_some_and(|o| o.goes_on(node, &t, shown.start));
                    self.open = open_ok.then(|| crate::glued::End::of(node, &t, shown.end)).flatten();
                    self.push_text(&t[shown], goes_on);
                    if let Some(later) = self.layers.later() {
                        self.pieces.push(Piece {
                            later,
                            text: text..self.text.len(),
                            head: head..self.head.len(),
                            chars: self.text_total - chars,
                        });
                    }
                }
            }
            Node::ELEMENT_NODE => {
                if let Some(el) = dom::as_element(node) {
                    self.element(el);
                }
            }
            _ => {}
        }
    }

    fn children(&mut self, node: &Node) {
        // Sibling links, not `childNodes`: no NodeList per element, one call per child.
        let mut next = node.first_child();
        while let Some(k) = next {
            self.node(&k);
            next = k.next_sibling();
        }
    }

    fn element(&mut self, el: &Element) {
        let tag = dom::tag(el);
        if SKIP_TAGS.contains(&tag.as_str()) {
            return;
        }
        let outer = self.within;
        let within = match drawing::step(outer, &tag) {
            Step::Skip => return,
            Step::Shape if !drawing::acts(&Attrs::of(el)) => return,
            Step::Shape => outer,
            // A drawing with nothing to read (an icon) is passed by one query.
            Step::Enter(Within::Drawing) if outer == Within::Page && !drawing::holds_anything(el) => return,
            Step::Enter(within) => within,
        };
        // The common case costs one call: checkVisibility covers display:none ancestors,
        // visibility:hidden, content-visibility:hidden and opacity 0 (itself or an ancestor).
        // Computed style is read only for the rare boxes that need a second look, and for
        // the elements that hold text (`seen`).
        let contents = if dom::is_seen(el) {
            false
        } else if dom::computed(el, "display").as_deref() == Some("contents") {
            true
        } else {
            self.through_label(el, &tag);
            return;
        };
        let mut rect = None;
        if !contents {
            // Each read of the box is a call into the page: four, once each.
            let r = crate::covered::Rect::of(&el.get_bounding_client_rect());
            if crate::placed::away(el, &r, self.scroll, || self.layers.scrolled(), tag != "br") {
                self.through_label(el, &tag);
                return; // off the page, or screen-reader-only
            }
            rect = Some(r);
        }
        if self.collect_elements {
            self.classify(el, &tag);
        }
        if tag == "br" {
            self.break_line();
            return;
        }
        let block = !contents
            && match outer.in_drawing() {
                true => drawing::starts_label(outer, &tag),
                false => BLOCK_TAGS.contains(&tag.as_str()),
            };
        if block {
            self.break_line();
        }
        // A box of its own between two texts keeps their words apart: nothing to measure.
        let boxed = !contents
            && match outer.in_drawing() {
                true => drawing::apart(outer, &tag),
                false => BOXED_TAGS.contains(&tag.as_str()),
            };
        if boxed {
            self.open = None;
        }
        self.layers.push(el, rect, within.in_drawing());
        self.within = within;
        // The tag is known: only an `iframe` pays for the namespace check.
        if let Some(frame) = (tag == "iframe").then(|| dom::as_iframe(el)).flatten() {
            if let Some(body) = frame.content_document().and_then(|d| d.body()) {
                let view = frame.content_window();
                if let Some(v) = &view {
                    self.layers.enter_document(v.clone());
                }
                self.break_line();
                self.frames += 1;
                self.children(&body);
                self.frames -= 1;
                self.break_line();
                if view.is_some() {
                    self.layers.leave_document();
                }
            }
        } else if let Some(shadow) = can_host_shadow(&tag).then(|| el.shadow_root()).flatten() {
            if self.frames == 0 && self.shadows.len() < crate::shadows::MAX_ROOTS {
                self.shadows.push(shadow.clone());
            }
            self.children(&shadow);
        } else if tag == "slot" {
            let assigned = js_sys::Reflect::get(el, &"assignedNodes".into())
                .ok()
                .filter(|f| f.is_function())
                .map(|f| f.unchecked_into::<js_sys::Function>())
                .and_then(|f| {
                    let opts = js_sys::Object::new();
                    let _ = js_sys::Reflect::set(&opts, &"flatten".into(), &true.into());
                    f.call1(el, &opts).ok()
                })
                .map(|a| js_sys::Array::from(&a))
                .filter(|a| a.length() > 0);
            match assigned {
                Some(nodes) => {
                    for n in nodes.iter() {
                        self.node(n.unchecked_ref::<Node>());
                    }
                }
                None => self.children(el),
            }
        } else if !shows_no_children(&tag) {
            self.children(el);
        }
        self.within = outer;
        self.layers.pop(self.past_the_cut());
        if block {
            self.break_line();
        }
        if boxed {
            self.open = None;
        }
    }

    /// Lists a form control not seen itself whose label shows in its place, or that lies
    /// transparent over what a person clicks ([`proxied`]).
    fn through_label(&mut self, el: &Element, tag: &str) {
        if self.collect_elements
            && matches!(tag, "input" | "select" | "textarea")
            && proxied::in_place(el).is_some()
        {
            self.classify(el, tag);
        }
    }

    fn classify(&mut self, el: &Element, tag: &str) {
        // Most elements of a page carry no attribute: then the tag says everything, and the
        // attribute reads below are skipped (each is a call into the page).
        // The others carry a few: their names are read once, and only those are asked for.
        let attrs = Attrs::of(el);
        let mut role = dom::role_with(el, tag, &attrs);
        // Selectize's text box is its picker's (it carries no role of its own).
        if tag == "input" && role == "textbox" && selectize::is_text_box(el) {
            role = "combobox".into();
        }
        if tag == "input" && dom::input_type_with(el, &attrs) == "password" {
            self.password_visible = true;
        }
        if tag == "form" {
            let label = dom::name_attr_only(el);
            self.forms.push((el.clone(), label, Vec::new()));
        }
        if LANDMARK_ROLES.contains(&role.as_str()) && (tag != "header" && tag != "footer" || role != tag) {
            let n = if attrs.is_empty() { String::new() } else { dom::name_attr_only(el) };
            self.landmarks.push(if n.is_empty() { role.clone() } else { format!("{role} \"{n}\"") });
        }
        if !is_interactive(el, tag, &role, &attrs) {
            return;
        }
        // The choice Select2 shows inside its box is read as the box's value.
        if role == "textbox" && tag == "span" && select2::is_shown_choice(el) {
            return;
        }
        self.elements_total += 1;
        let r = format_ref(dom::ref_for(el));
        for (form, _, members) in self.forms.iter_mut() {
            if form.contains(Some(el)) {
                members.push(r.clone());
            }
        }
        if self.elements.len() < self.elements_max {
            self.elements.push(element_line(el, tag, &role, &r, &attrs));
        }
    }
}

/// `text` the way the walk writes it: words one space apart, lines of at least one word, a
/// final line break only where `text` had one (what is left where a piece was taken out).
fn tidy(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split('\n') {
        let words = line.split(' ').filter(|w| !w.is_empty()).collect::<Vec<_>>().join(" ");
        if !words.is_empty() {
            out.push_str(&words);
            out.push('\n');
        }
    }
    if !text.ends_with('\n') {
        out.pop();
    }
    out
}

/// Whether an element with this tag can have a shadow root a script attached: a custom element
/// or one of the tags `attachShadow` accepts (the others are not asked, a call each saved).
fn can_host_shadow(tag: &str) -> bool {
    tag.contains('-')
        || matches!(
            tag,
            "article"
                | "aside"
                | "blockquote"
                | "body"
                | "div"
                | "footer"
                | "h1"
                | "h2"
                | "h3"
                | "h4"
                | "h5"
                | "h6"
                | "header"
                | "main"
                | "nav"
                | "p"
                | "section"
                | "span"
        )
}

/// Whether the page never shows what is inside an element with this tag: the void elements
/// (a script may still append to them, and nothing of it is drawn), and form controls whose
/// options and text are read as the control's value instead.
fn shows_no_children(tag: &str) -> bool {
    matches!(
        tag,
        "select"
            | "textarea"
            | "input"
            | "img"
            | "hr"
            | "wbr"
            | "embed"
            | "area"
            | "col"
            | "source"
            | "track"
    )
}

/// Whether an element is one an agent acts on.
fn is_interactive(el: &Element, tag: &str, role: &str, attrs: &Attrs) -> bool {
    match tag {
        "a" => return dom::HREFS.iter().any(|h| attrs.has(h)) || attrs.has("role"),
        "button" | "select" | "textarea" | "summary" => return true,
        "input" => return dom::input_type_with(el, attrs) != "hidden",
        _ => {}
    }
    INTERACTIVE_ROLES.contains(&role) || (is_interactive_by_attribute(el, attrs) && !stands_in(el, tag, role))
}

/// The native controls a custom element may draw in its shadow root.
const NATIVE_CONTROLS: &str = "button, input:not([type=\"hidden\"]), select, textarea, a[href]";

/// Whether `el` is a custom element with no role of its own in the tab order only as the host
/// of the control its shadow root draws (JupyterLab's toolbar buttons, FAST's `<jp-button
/// tabindex="0">` around a `<button>`): the control inside is listed, and the host, one
/// press away from it, is not listed again.
fn stands_in(el: &Element, tag: &str, role: &str) -> bool {
    role == tag
        && tag.contains('-')
        && el.shadow_root().and_then(|s| s.query_selector(NATIVE_CONTROLS).ok().flatten()).is_some()
}

/// Editable roots, click handlers in markup, and elements in the tab order.
fn is_interactive_by_attribute(el: &Element, attrs: &Attrs) -> bool {
    dom::is_editable_root_with(el, attrs)
        || attrs.has("onclick")
        || attrs.get(el, "tabindex").and_then(|t| t.trim().parse::<i32>().ok()).is_some_and(|t| t >= 0)
}

fn quote(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "'"))
}

fn element_line(el: &Element, tag: &str, role: &str, r: &str, attrs: &Attrs) -> String {
    let mut line = format!("{r} {role}");
    let name = dom::name_with(el, tag, attrs);
    if name.is_empty() {
        line.push_str(&hint::of_nameless(el, attrs));
    } else {
        line.push(' ');
        line.push_str(&quote(&name));
    }
    if tag == "input" {
        let input: &web_sys::HtmlInputElement = el.unchecked_ref();
        let t = dom::input_type_with(el, attrs);
        match t.as_str() {
            "checkbox" | "radio" => {
                if input.checked() {
                    line.push_str(" checked");
                }
            }
            "password" => {
                line.push_str(if input.value().is_empty() { " password" } else { " password filled" })
            }
            "button" | "submit" | "reset" | "image" => {}
            _ => {
                if t != "text" && role == "textbox" {
                    line.push_str(&format!(" type={t}"));
                }
                // A picker's text box shows its choice beside it (Selectize); only a combobox
                // is looked at for one, so other text boxes cost nothing more.
                let choice = if role == "combobox" { selectize::choice(el) } else { None };
                let v = choice.unwrap_or_else(|| input.value());
                if !v.is_empty() {
                    line.push_str(&format!(" value={}", quote(&clip(&v, 60))));
                }
            }
        }
        if attrs.has("required") {
            line.push_str(" required");
        }
    } else if tag == "textarea" {
        let area: &web_sys::HtmlTextAreaElement = el.unchecked_ref();
        let v = area.value();
        if !v.is_empty() {
            line.push_str(&format!(" value={}", quote(&clip(&v, 60))));
        }
    } else if tag == "select" {
        let select: &web_sys::HtmlSelectElement = el.unchecked_ref();
        if let Some(opt) = select.selected_options().item(0) {
            let text = dom::collapse(&opt.text_content().unwrap_or_default());
            line.push_str(&format!(" value={}", quote(&clip(&text, 60))));
        }
        let options: Vec<String> = (0..select.length().min(12))
            .filter_map(|i| select.item(i))
            .map(|o| dom::collapse(&o.text_content().unwrap_or_default()))
            .collect();
        line.push_str(&format!(" options=[{}]", options.join("|")));
    } else if let Some(v) = (role == "combobox").then(|| select2::value(el)).flatten() {
        // A Select2 picker holds its select's choices.
        if !v.is_empty() {
            line.push_str(&format!(" value={}", quote(&clip(&v, 60))));
        }
    } else if role == "combobox" && !dom::is_editable_root_with(el, attrs) {
        // A picker built of other elements shows its choice as its text; its name may be its
        // label's.
        let v = dom::collapse(&el.text_content().unwrap_or_default());
        if !v.is_empty() && clip(&v, 80) != name {
            line.push_str(&format!(" value={}", quote(&clip(&v, 60))));
        }
    } else if dom::is_editable_root_with(el, attrs)
        && let Some(h) = dom::as_html(el)
    {
        let v = dom::collapse(&h.inner_text());
        if !v.is_empty() {
            line.push_str(&format!(" value={}", quote(&clip(&v, 60))));
        }
    }
    if tag == "a"
        && let Some(href) = dom::HREFS.iter().find_map(|h| attrs.get(el, h))
    {
        // An empty address is the page itself (Wagtail's breadcrumb of the page shown).
        let to = if href.trim().is_empty() { "(this page)" } else { &href };
        line.push_str(&format!(" -> {}", clip(to, 80)));
    }
    if dom::is_disabled_with(el, tag, attrs) {
        line.push_str(" disabled");
    }
    if attrs.get(el, "aria-expanded").as_deref() == Some("true") {
        line.push_str(" expanded");
    }
    if attrs.get(el, "aria-selected").as_deref() == Some("true")
        || attrs.get(el, "aria-checked").as_deref() == Some("true")
    {
        line.push_str(" selected");
    }
    line
}

/// Bot-challenge widgets and interstitials (reCAPTCHA's invisible badge is not a challenge).
const CHALLENGE: &str = "iframe[src*='recaptcha']:not([src*='size=invisible']), iframe[src*='hcaptcha'], iframe[src*='challenges.cloudflare.com'], #challenge-form, #challenge-running, #cf-challenge-running, #challenge-stage, .cf-turnstile, .h-captcha, #px-captcha";
/// Consent banners with something to answer.
const CONSENT: &str = "[id*='consent' i] button, [class*='consent' i] button, [id*='cookie' i] button, [class*='cookie-banner' i] button";

/// `pageState`, most constraining first: bot_challenge, geo_blocked, consent_required,
/// login_required, ok.
fn page_state(doc: &web_sys::Document, w: &Walk) -> &'static str {
    let has = |css: &str| {
        doc.query_selector_all(css).is_ok_and(|l| {
            (0..l.length())
                .filter_map(|i| l.item(i))
                .filter_map(|n| dom::as_element(&n).cloned())
                .any(|e| dom::is_visible(&e))
        })
    };
    let title = doc.title();
    if has(CHALLENGE) || aware::challenge_text(&title, &w.head, w.text_total) {
        "bot_challenge"
    } else if aware::geo_blocked_text(&title, &w.head) {
        "geo_blocked"
    } else if has(CONSENT) {
        "consent_required"
    } else if w.password_visible && looks_like_login(doc) {
        "login_required"
    } else {
        "ok"
    }
}

/// A password field alone is not a login wall (sign-up and settings pages have one too); the
/// page must also call itself a login page in its title, URL or main heading.
fn looks_like_login(doc: &web_sys::Document) -> bool {
    const WORDS: &[&str] =
        &["log in", "login", "log-in", "sign in", "signin", "sign-in", "anmelden", "connexion"];
    let heading = doc.query_selector("h1").ok().flatten().and_then(|h| h.text_content()).unwrap_or_default();
    let hay = format!("{} {} {heading}", doc.title(), doc.url().unwrap_or_default()).to_lowercase();
    WORDS.iter().any(|w| hay.contains(w))
}

/// `page.perceive`: the page read, and the open shadow roots the walk entered in the page's own
/// document (where the read's page type is looked for too: [`crate::collect::signals`]).
pub fn perceive(p: &PerceiveParams) -> Result<(PageModel, Vec<web_sys::ShadowRoot>), Failure> {
    dom::intern_names();
    let doc = dom::document()?;
    let win = dom::window()?;
    let mut w = Walk {
        text_max: p.max_text_chars as usize,
        elements_max: p.max_elements as usize,
        collect_elements: true,
        scroll: crate::placed::scroll(),
        ..Default::default()
    };
    let (vw, vh) = w.layers.enter_document(win.clone());
    if let Some(body) = doc.body() {
        w.element(&body);
    }
    w.drop_covered();
    let text = w.text.trim().to_owned();
    let doc_height = doc.document_element().map(|e| e.scroll_height().max(0) as u32).unwrap_or(0);
    let truncated_elements = w.elements_total > w.elements.len();
    let truncated_text = w.text_total > w.text_max;
    let (vw, vh) = (vw.max(0.0) as u32, vh.max(0.0) as u32);
    let page = PageModel {
        url: doc.url().unwrap_or_default(),
        title: doc.title(),
        ready_state: doc.ready_state(),
        page_state: page_state(&doc, &w).to_owned(),
        identity_overlay_warning: aware::identity_overlays(&doc, f64::from(vw), f64::from(vh)),
        autofill_warning: aware::autofill_fields(&doc),
        native_dialog_warning: aware::native_dialogs(&doc),
        framework_hints: aware::frameworks(&doc),
        // The page cannot see the browser's sign-in dialog: the background adds it.
        http_sign_in: None,
        signals: std::collections::BTreeMap::new(),
        viewport: Viewport {
            width: vw,
            height: vh,
            scroll_y: w.scroll.1.max(0.0) as u32,
            document_height: doc_height,
        },
        landmarks: std::mem::take(&mut w.landmarks),
        forms: w
            .forms
            .iter()
            .map(|(_, name, members)| {
                let label = if name.is_empty() { String::new() } else { format!(" {}", quote(name)) };
                format!("form{label}: {}", members.join(" "))
            })
            .collect(),
        elements: std::mem::take(&mut w.elements),
        text,
        truncated: Truncation {
            any: truncated_elements || truncated_text,
            elements_total: u32::try_from(w.elements_total).unwrap_or(u32::MAX),
            text_chars_total: u32::try_from(w.text_total).unwrap_or(u32::MAX),
        },
        hidden_chars: u32::try_from(w.hidden_chars).unwrap_or(u32::MAX),
    };
    Ok((page, w.shadows))
}

/// `page.readText`.
pub fn read_text(p: &ReadTextParams) -> Result<TextRead, Failure> {
    dom::intern_names();
    let doc = dom::document()?;
    let root = match &p.selector {
        Some(sel) => Some(dom::resolve(sel)?),
        None => doc.body().map(Element::from),
    };
    let mut w =
        Walk { text_max: p.max_chars as usize, scroll: crate::placed::scroll(), ..Default::default() };
    if let Some(root) = root {
        w.within = Within::of_root(&root, &dom::tag(&root));
        if let Some(view) = root.owner_document().and_then(|d| d.default_view()) {
            w.layers.enter_document(view);
        }
        w.element(&root);
    }
    w.drop_covered();
    Ok(TextRead {
        url: doc.url().unwrap_or_default(),
        title: doc.title(),
        text: w.text.trim().to_owned(),
        truncated: w.text_total > w.text_max,
        total_chars: u32::try_from(w.text_total).unwrap_or(u32::MAX),
        hidden_chars: u32::try_from(w.hidden_chars).unwrap_or(u32::MAX),
    })
}

#[cfg(test)]
mod tests {
    use super::tidy;

    #[test]
    fn what_is_left_where_text_was_taken_out_is_written_as_the_walk_writes() {
        // A piece taken out of a line's middle, a whole line, a line's start, the last line.
        assert_eq!(tidy("Before  after\n"), "Before after\n");
        assert_eq!(tidy("One\n\nThree\n"), "One\nThree\n");
        assert_eq!(tidy("Heading\n kept words"), "Heading\nkept words");
        assert_eq!(tidy("Only line\n"), "Only line\n");
        assert_eq!(tidy("Kept\n "), "Kept");
        assert_eq!(tidy("Untouched text\nstays as it was"), "Untouched text\nstays as it was");
        assert_eq!(tidy(""), "");
    }
}
