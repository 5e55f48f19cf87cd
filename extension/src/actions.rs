//! Page-side actions: click and type, each checked before anything is dispatched.
//!
//! A click is dispatched only when the element is visible, enabled and is what sits at its own
//! click point (nothing covers it). Typing uses the browser's editing commands
//! (`insertText`), which fire real `beforeinput`/`input` events that framework-controlled
//! inputs and rich editors react to; a value-setter fallback covers inputs that refuse them.

use js_sys::{Object, Reflect};
use nova_shared::page::{ActionReport, TruncationWarning};
use nova_shared::protocol::{ClickParams, TypeParams};
use nova_shared::reason;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{
    Document, Element, Event, EventInit, FocusEvent, FocusEventInit, HtmlDocument, HtmlElement,
    HtmlInputElement, HtmlTextAreaElement, InputEvent, InputEventInit, MouseEvent, MouseEventInit,
    PointerEvent, PointerEventInit,
};

use crate::aware;
use crate::dom::{self, Failure, fail};
use crate::leaving::Leaving;
use crate::taken::Announced;

fn scroll_into_view(el: &Element) {
    let opts = web_sys::ScrollIntoViewOptions::new();
    opts.set_block(web_sys::ScrollLogicalPosition::Center);
    opts.set_inline(web_sys::ScrollLogicalPosition::Center);
    opts.set_behavior(web_sys::ScrollBehavior::Instant);
    el.scroll_into_view_with_scroll_into_view_options(&opts);
}

/// Checks the element can be acted on; returns its click point.
pub(crate) fn actionable(el: &Element) -> Result<(f32, f32), Failure> {
    actionable_as(el, false)
}

/// How far above a text field its own editor widget may start: code editors (CodeMirror 5, Ace,
/// Monaco) draw their text over the textarea that takes the keys, a level or two up.
const OWN_WIDGET_LEVELS: usize = 3;

/// What takes the person's click or keys itself.
const INTERACTIVE: &str = "a[href], button, input, select, textarea, [contenteditable]:not([contenteditable=\"false\"]), \
                           [role=button], [role=link], [tabindex]:not([tabindex=\"-1\"])";

/// Whether `hit`, which sits at a text field's click point, is the field's own editor drawing
/// over it: inside an ancestor at most [`OWN_WIDGET_LEVELS`] above the field, below the
/// document's body, and no control of its own. A click there is how a person puts the keys into
/// the field. The body holds everything, a modal's backdrop over the field included.
fn own_widget(field: &Element, hit: &Element) -> bool {
    let control = hit.closest(INTERACTIVE).ok().flatten();
    if control.is_some_and(|c| !c.contains(Some(field))) {
        return false;
    }
    std::iter::successors(field.parent_element(), |a| a.parent_element())
        .take(OWN_WIDGET_LEVELS)
        .take_while(|a| !matches!(a.local_name().as_str(), "body" | "html"))
        .any(|a| a.contains(Some(hit)))
}

/// [`actionable`]; for typing (`typing`), a field its own editor widget draws over counts as
/// reachable ([`own_widget`]).
fn actionable_as(el: &Element, typing: bool) -> Result<(f32, f32), Failure> {
    let what = dom::describe(el);
    if !dom::is_visible(el) {
        return Err(fail(reason::ELEMENT_NOT_VISIBLE, format!("{what} is not visible")));
    }
    if dom::is_disabled(el) {
        return Err(fail(reason::ELEMENT_DISABLED, format!("{what} is disabled")));
    }
    if let Some(bar) = crate::modal::barred(el) {
        let (how, until) = if bar.matches("dialog").unwrap_or(false) {
            ("behind the modal", "until it closes")
        } else {
            ("inside the inert", "while it is inert")
        };
        return Err(fail(
            reason::ELEMENT_COVERED,
            format!("{what} is {how} {}: a person cannot reach it {until}", dom::describe(&bar)),
        ));
    }
    scroll_into_view(el);
    let r = el.get_bounding_client_rect();
    let root = dom::Root::of(el)
        .ok_or_else(|| fail(reason::ELEMENT_NOT_FOUND, format!("{what} is not in a document")))?;
    let reaches = |hit: &Element| *hit == *el || el.contains(Some(hit)) || (typing && own_widget(el, hit));
    let at = |fx: f64, fy: f64| ((r.left() + r.width() * fx) as f32, (r.top() + r.height() * fy) as f32);
    let (x, y) = at(0.5, 0.5);
    let hit = root.element_from_point(x, y);
    match hit {
        Some(hit) if reaches(&hit) => Ok((x, y)),
        // Partly covered (a tooltip, a sticky bar over its edge): a person takes the part that
        // shows, and so does the click.
        Some(hit) => REACH_POINTS
            .iter()
            .map(|&(fx, fy)| at(fx, fy))
            .find(|&(px, py)| root.element_from_point(px, py).is_some_and(|h| reaches(&h)))
            .ok_or_else(|| {
                fail(
                    reason::ELEMENT_COVERED,
                    format!(
                        "{what} is covered by {} at its click point ({x:.0}, {y:.0}) and wherever else it was tried",
                        dom::describe(&hit)
                    ),
                )
            }),
        None => Err(fail(reason::ELEMENT_NOT_VISIBLE, format!("{what} is outside the viewport"))),
    }
}

/// Where else in its box an element whose centre is covered is tried, as fractions of its width
/// and height: the middles of its edges' bands, then its corners' (inset, so a rounded corner or
/// a border still belongs to it).
const REACH_POINTS: [(f64, f64); 8] =
    [(0.5, 0.2), (0.5, 0.8), (0.2, 0.5), (0.8, 0.5), (0.2, 0.2), (0.8, 0.2), (0.2, 0.8), (0.8, 0.8)];

fn mouse_init(x: f32, y: f32, buttons: u16, detail: i32) -> MouseEventInit {
    let init = MouseEventInit::new();
    init.set_detail(detail);
    init.set_bubbles(true);
    init.set_cancelable(true);
    init.set_composed(true);
    init.set_client_x(x as i32);
    init.set_client_y(y as i32);
    init.set_button(0);
    init.set_buttons(buttons);
    if let Some(w) = web_sys::window() {
        init.set_view(Some(&w));
    }
    init
}

fn pointer(el: &Element, kind: &str, x: f32, y: f32, buttons: u16) -> bool {
    let init = PointerEventInit::new();
    init.set_bubbles(true);
    init.set_cancelable(true);
    init.set_composed(true);
    init.set_client_x(x as i32);
    init.set_client_y(y as i32);
    init.set_buttons(buttons);
    init.set_pointer_id(1);
    init.set_pointer_type("mouse");
    init.set_is_primary(true);
    PointerEvent::new_with_event_init_dict(kind, &init)
        .map(|e| el.dispatch_event(&e).unwrap_or(true))
        .unwrap_or(true)
}

/// What a person's mouse sends pressing `el` at (`x`, `y`): it comes over the element and moves
/// onto it (menus and list boxes tell a press from a pointer that has not moved by these), goes
/// down (the focus moves unless the page cancels the mousedown), up, and clicks, each mouse
/// event counting one press in its `detail`. Answers whether the click was not cancelled.
pub(crate) fn press(el: &Element, x: f32, y: f32) -> bool {
    pointer(el, "pointerover", x, y, 0);
    mouse(el, "mouseover", x, y, 0, 0);
    pointer(el, "pointermove", x, y, 0);
    mouse(el, "mousemove", x, y, 0, 0);
    down_up(el, x, y, 1)
}

/// The second press of a double-click, where the first was, the pointer not moved: down, up
/// and click counting two presses, then `dblclick`.
fn press_again(el: &Element, x: f32, y: f32) {
    down_up(el, x, y, 2);
    mouse(el, "dblclick", x, y, 0, 2);
}

/// A press and release of the main button counted `presses` in a row: the focus moves on the
/// mousedown unless the page cancels it. Answers whether the click was not cancelled.
fn down_up(el: &Element, x: f32, y: f32, presses: i32) -> bool {
    pointer(el, "pointerdown", x, y, 1);
    if mouse(el, "mousedown", x, y, 1, presses)
        && let Some(target) = focusable_around(el)
    {
        focus(&target);
    }
    pointer(el, "pointerup", x, y, 0);
    mouse(el, "mouseup", x, y, 0, presses);
    mouse(el, "click", x, y, 0, presses)
}

fn mouse(el: &Element, kind: &str, x: f32, y: f32, buttons: u16, detail: i32) -> bool {
    MouseEvent::new_with_mouse_event_init_dict(kind, &mouse_init(x, y, buttons, detail))
        .map(|e| el.dispatch_event(&e).unwrap_or(true))
        .unwrap_or(true)
}

/// What a mouse press on `el` gives the focus to, as the browser does: `el` when it can take
/// the focus, else the nearest element around it that can (through shadow roots), such as a
/// field's box with `tabindex="-1"` around the text it shows (Quasar's select opens only once
/// that box has announced the focus).
fn focusable_around(el: &Element) -> Option<Element> {
    const FOCUSABLE: &str = "a[href], area[href], button, input, select, textarea, iframe, summary, \
                             [tabindex], [contenteditable]:not([contenteditable=\"false\"])";
    let mut at = Some(el.clone());
    while let Some(e) = at {
        if e.matches(FOCUSABLE).unwrap_or(false) {
            return (!dom::is_disabled(&e)).then_some(e);
        }
        at = dom::around(&e);
    }
    None
}

/// Moves the keyboard focus to `el`. A page whose window does not have the focus (a background
/// window, a headless browser) moves it without announcing it, and editors that wait for the
/// announcement (CodeMirror 5) would ignore the keys: there the move is announced as the browser
/// does when the person clicks into the window: `blur` and `focusout` on the field the focus
/// leaves (a field that keeps what was typed only once it is left, as Svelte's and many
/// comboboxes' do, would drop it), then `focus` and `focusin` on `el`.
fn focus(el: &Element) {
    let Some(h) = dom::as_html(el) else { return };
    let doc = el.owner_document();
    let left = doc.as_ref().and_then(Document::active_element).filter(|a| a != el && !is_page(a));
    let _ = h.focus();
    let unannounced = doc.as_ref().is_some_and(|d| !d.has_focus().unwrap_or(true));
    let focused = doc.as_ref().and_then(Document::active_element).is_some_and(|a| a == *el);
    if unannounced && focused {
        if let Some(left) = &left {
            announce(left, [("blur", false), ("focusout", true)], Some(el));
        }
        announce(el, [("focus", false), ("focusin", true)], left.as_ref());
    }
}

/// Whether `el` is the page itself (its `<body>` or root), which holds the focus when no field
/// does and hears nothing when the focus moves on.
fn is_page(el: &Element) -> bool {
    matches!(el.tag_name().to_ascii_lowercase().as_str(), "body" | "html")
}

/// Dispatches focus events of `kinds` (name, bubbles) at `el`, naming `related` the element the
/// focus comes from or goes to.
fn announce(el: &Element, kinds: [(&str, bool); 2], related: Option<&Element>) {
    for (kind, bubbles) in kinds {
        let init = FocusEventInit::new();
        init.set_bubbles(bubbles);
        init.set_composed(true);
        init.set_related_target(related.map(AsRef::as_ref));
        if let Ok(e) = FocusEvent::new_with_focus_event_init_dict(kind, &init) {
            let _ = el.dispatch_event(&e);
        }
    }
}

/// Words that make a control a commit point: acting on it sends, submits, logs in, pays,
/// deletes, confirms or deploys something.
const COMMIT_WORDS: &[&str] = &[
    "send",
    "submit",
    "log in",
    "login",
    "sign in",
    "signin",
    "pay",
    "purchase",
    "buy",
    "checkout",
    "place order",
    "delete",
    "remove",
    "confirm",
    "post",
    "publish",
    "deploy",
];

/// Why clicking `el` is a commit point, if it is: submit buttons, and controls named like a send,
/// login, payment, deletion or confirmation.
pub fn commit_point(el: &Element) -> Option<String> {
    let tag = dom::tag(el);
    let ty = el.get_attribute("type").map(|t| t.to_ascii_lowercase());
    let in_form = el.closest("form").ok().flatten().is_some();
    let submit = match tag.as_str() {
        "button" => ty.as_deref() == Some("submit") || (ty.is_none() && in_form),
        "input" => matches!(ty.as_deref(), Some("submit" | "image")),
        _ => false,
    };
    if submit {
        return Some(format!("{} submits a form", dom::describe(el)));
    }
    let words: Vec<String> = dom::name(el)
        .to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect();
    let padded = format!(" {} ", words.join(" "));
    let word = COMMIT_WORDS.iter().find(|w| padded.contains(&format!(" {w} ")))?;
    Some(format!("{} is a `{word}` control", dom::describe(el)))
}

fn refuse_unguarded(el: &Element, guarded: bool, why: Option<String>) -> Result<(), Failure> {
    match why {
        Some(why) if !guarded => Err(fail(
            reason::MISSING_CONTRACT,
            format!(
                "{why}: a commit point needs a transitionContract (or a nova.guarded_* tool) so the outcome can be verified; nothing was dispatched to {}",
                dom::describe(el)
            ),
        )),
        _ => Ok(()),
    }
}

/// Where a click lands: the element asked for, what is pressed and where.
struct Aim {
    el: Element,
    pressed: Element,
    x: f32,
    y: f32,
    file_risk: Option<aware::FileRisk>,
}

/// The checks before a click: the element is found, is no file input, is no commit point
/// pressed unguarded (nor twice), and can be pressed.
fn aim(p: &ClickParams) -> Result<Aim, Failure> {
    let el = dom::resolve(&p.selector)?;
    // Before visibility: file inputs are usually hidden behind a styled label, and the agent
    // needs the way to nova.file_upload, not `element_not_visible`.
    let file_risk = aware::file_input_risk(&el);
    if let Some(risk) = file_risk.as_ref().filter(|r| r.high) {
        return Err(fail(
            reason::FILE_INPUT_CLICK,
            nova_shared::page::file_input_click_message(&dom::describe(&el), &risk.reason, &risk.hint),
        ));
    }
    let commit = commit_point(&el);
    if p.double_click
        && let Some(why) = &commit
    {
        return Err(fail(
            reason::DOUBLE_CLICK_COMMIT,
            format!(
                "{why}: doubleClick would press it twice and could commit twice; click it once (with a transitionContract); nothing was dispatched to {}",
                dom::describe(&el)
            ),
        ));
    }
    refuse_unguarded(&el, p.guarded, commit)?;
    // A control not seen itself is pressed where its label shows, on what lies there.
    let label = crate::proxied::label_in_place(&el);
    let (x, y) = actionable(label.as_ref().unwrap_or(&el))?;
    let pressed = label
        .and_then(|l| {
            dom::Root::of(&l).and_then(|r| r.element_from_point(x, y)).filter(|h| l.contains(Some(h)))
        })
        .unwrap_or_else(|| el.clone());
    Ok(Aim { el, pressed, x, y, file_risk })
}

/// The first press of a double-click ([`ClickParams::double_click`]), after every check of a
/// click; [`click`] presses again [`nova_shared::protocol::DOUBLE_CLICK_GAP_MS`] later.
pub fn first_press(p: &ClickParams) -> Result<(), Failure> {
    let a = aim(p)?;
    press(&a.pressed, a.x, a.y);
    Ok(())
}

/// `page.click`. With `double_click`, the second press of a double-click whose first
/// [`first_press`] made: it is aimed again (the first may have moved or redrawn the element),
/// and when it cannot be, the report says the first press alone was sent.
pub fn click(p: &ClickParams) -> Result<ActionReport, Failure> {
    let a = match aim(p) {
        Ok(a) => a,
        Err((_, why)) if p.double_click => {
            return Ok(ActionReport {
                action_dispatched: true,
                url_before: dom::href(),
                url_after: dom::href(),
                element: p.selector.clone(),
                method: "click".into(),
                warnings: vec![format!("only the first press of the double-click was sent: {why}")],
                ..Default::default()
            });
        }
        Err(e) => return Err(e),
    };
    let Aim { el, pressed, x, y, file_risk } = a;
    let element = dom::describe(&el);
    let url_before = dom::href();
    // Read before dispatch: the click may navigate or remove the element.
    let autofill = aware::autofill_popup(&el);
    let dialog = aware::native_dialog_risk(&el, true);
    let leaving = Leaving::listen();
    let not_cancelled = if p.double_click {
        press_again(&pressed, x, y);
        true
    } else {
        press(&pressed, x, y)
    };
    leaving.clicked(&el, not_cancelled);
    let url_after = dom::href();
    let navigation_started = leaving.destination(&url_after);
    let (autofill_popup_warning, autofill_field_role) = split(autofill);
    Ok(ActionReport {
        action_dispatched: true,
        url_before,
        url_after,
        navigation_started,
        element,
        readback: None,
        sensitive: false,
        method: if p.double_click { "dblclick" } else { "click" }.into(),
        warnings: Vec::new(),
        autofill_popup_warning,
        autofill_field_role,
        file_input_risk: file_risk.as_ref().map(|_| "medium".to_owned()),
        file_input_risk_reason: file_risk.as_ref().map(|r| r.reason.clone()),
        file_upload_selector_hint: file_risk.map(|r| r.hint),
        native_dialog_warning: dialog,
        ..Default::default()
    })
}

fn split(autofill: Option<(String, &'static str)>) -> (Option<String>, Option<String>) {
    autofill.map(|(w, role)| (Some(w), Some(role.to_owned()))).unwrap_or_default()
}

enum Field {
    Input(HtmlInputElement),
    Area(HtmlTextAreaElement),
    Editable(HtmlElement),
}

/// Runs an editing command in the element's own document (which may be an iframe's).
fn exec(el: &Element, command: &str, value: &str) -> bool {
    el.owner_document()
        .map(|d| d.unchecked_into::<HtmlDocument>())
        .and_then(|d| d.exec_command_with_show_ui_and_value(command, false, value).ok())
        .unwrap_or(false)
}

fn selection_of(el: &Element) -> Option<web_sys::Selection> {
    el.owner_document().and_then(|d| d.get_selection().ok().flatten())
}

/// Dispatches a bubbling event of `kind` on `el`.
pub fn fire(el: &Element, kind: &str) {
    let init = EventInit::new();
    init.set_bubbles(true);
    if let Ok(e) = Event::new_with_event_init_dict(kind, &init) {
        let _ = el.dispatch_event(&e);
    }
}

fn fire_input(el: &Element, data: &str) {
    let init = InputEventInit::new();
    init.set_bubbles(true);
    init.set_composed(true);
    init.set_input_type("insertText");
    init.set_data(Some(data));
    if let Ok(e) = InputEvent::new_with_event_init_dict("input", &init) {
        let _ = el.dispatch_event(&e);
    }
}

fn select_end_of(el: &Element) {
    let Some(doc) = el.owner_document() else {
        return;
    };
    let (Ok(range), Some(sel)) = (doc.create_range(), selection_of(el)) else {
        return;
    };
    let _ = range.select_node_contents(el);
    range.collapse_with_to_start(false);
    let _ = sel.remove_all_ranges();
    let _ = sel.add_range(&range);
}

fn value_of(f: &Field) -> String {
    match f {
        Field::Input(i) => i.value(),
        Field::Area(a) => a.value(),
        Field::Editable(e) => e.inner_text(),
    }
}

/// Sets a form control's value through the element's own prototype setter and announces it,
/// for controls that refuse editing commands.
fn set_value_fallback(f: &Field, el: &Element, value: &str, inserted: &str) {
    match f {
        Field::Input(i) => i.set_value(value),
        Field::Area(a) => a.set_value(value),
        Field::Editable(e) => e.set_inner_text(value),
    }
    fire_input(el, inserted);
}

/// Types `text` into the editable region `el` (`field`; its selection placed: at the end, or around
/// everything when `clear`), announced first as a person's keys announce it ([`crate::taken`]),
/// then with the browser's `insertText` when neither the page nor the browser took the
/// announcement. A line break is typed as part of the text, never as a key: Enter sends a
/// chat's message, and Shift+Enter runs a notebook's cell. Answers whether the editing command
/// ran (or was not needed), and whether the page took the text itself.
fn type_editable(field: &Field, el: &Element, text: &str) -> (bool, bool) {
    let before = value_of(field);
    match crate::taken::announce(el, text, || value_of(field) != before) {
        Announced::Taken => (true, true),
        Announced::Inserted => (true, false),
        Announced::Nothing => (exec(el, "insertText", text), false),
    }
}

/// `page.type`.
pub fn type_text(p: &TypeParams) -> Result<ActionReport, Failure> {
    let el = dom::resolve(&p.selector)?;
    let what = dom::describe(&el);
    // Typing into a `<select>` chooses the option it names, as a person's keys pick one.
    if let Some(select) = dom::as_select(&el) {
        if p.press_enter {
            return Err(fail(
                reason::ELEMENT_NOT_EDITABLE,
                format!(
                    "{what} takes a choice, not Enter: choose the option, then click its form's submit control"
                ),
            ));
        }
        return choose(select, &el, &p.text, what, dom::href());
    }
    let field = if let Some(i) = dom::as_input(&el) {
        let t = dom::input_type(&el);
        if matches!(
            t.as_str(),
            "checkbox"
                | "radio"
                | "file"
                | "submit"
                | "button"
                | "reset"
                | "image"
                | "range"
                | "color"
                | "hidden"
        ) {
            return Err(fail(
                reason::ELEMENT_NOT_EDITABLE,
                format!("{what} (type={t}) does not take typed text"),
            ));
        }
        if i.read_only() {
            return Err(fail(reason::ELEMENT_READONLY, format!("{what} is read-only")));
        }
        Field::Input(i.clone())
    } else if let Some(a) = dom::as_textarea(&el) {
        if a.read_only() {
            return Err(fail(reason::ELEMENT_READONLY, format!("{what} is read-only")));
        }
        Field::Area(a.clone())
    } else if let Some(h) = dom::as_html(&el).filter(|h| h.is_content_editable()) {
        Field::Editable(h.clone())
    } else if matches!(dom::role(&el).as_str(), "combobox" | "listbox") {
        // A picker drawn of other elements (Select2's box, a Radix trigger) is typed into only
        // through the search box it may show once open.
        return Err(fail(
            reason::ELEMENT_NOT_EDITABLE,
            format!(
                "{what} is a picker and takes no typed text: click it to open its list, then click an option \
                 (or type into the search box it shows)"
            ),
        ));
    } else {
        return Err(fail(
            reason::ELEMENT_NOT_EDITABLE,
            format!("{what} is not an input, textarea or contenteditable element"),
        ));
    };
    if p.press_enter {
        let composer = matches!(field, Field::Area(_) | Field::Editable(_));
        let why = if composer {
            Some(format!("Enter in {what} sends it"))
        } else if el.closest("form").ok().flatten().is_some() {
            Some(format!("Enter in {what} submits its form"))
        } else {
            None
        };
        refuse_unguarded(&el, p.guarded, why)?;
    }
    actionable_as(&el, true)?;
    let sensitive = matches!(&field, Field::Input(_)) && dom::input_type(&el) == "password";
    let url_before = dom::href();
    let autofill = aware::autofill_popup(&el);
    let dialog = aware::native_dialog_risk(&el, false);
    let leaving = Leaving::listen();
    focus(&el);
    let before = value_of(&field);
    match &field {
        Field::Input(i) if p.clear => i.select(),
        Field::Area(a) if p.clear => a.select(),
        Field::Input(i) => {
            let end = u32::try_from(i.value().encode_utf16().count()).unwrap_or(0);
            let _ = i.set_selection_range(end, end);
        }
        Field::Area(a) => {
            let end = u32::try_from(a.value().encode_utf16().count()).unwrap_or(0);
            let _ = a.set_selection_range(end, end);
        }
        Field::Editable(_) if p.clear => {
            if let Some(sel) = selection_of(&el) {
                let _ = sel.select_all_children(&el);
            }
        }
        Field::Editable(_) => select_end_of(&el),
    }
    let expected = if p.clear { p.text.clone() } else { format!("{before}{}", p.text) };
    let mut method = if matches!(field, Field::Editable(_)) { "contenteditable" } else { "native_input" };
    // Nothing to insert and nothing to clear (a bare Enter): leave the content alone.
    let keep = p.text.is_empty() && !p.clear;
    // An editor reading an EditContext (CodeMirror 6 in Chromium) hears neither editing
    // commands nor the element's text changing: it is typed into through its context.
    let context = matches!(field, Field::Editable(_)).then(|| crate::edit_context::of(&el)).flatten();
    // An editor with a model of its own may cancel the input and apply it a moment later.
    let mut taken = false;
    let inserted = if keep {
        true
    } else if let Some(ctx) = &context {
        method = "edit_context";
        crate::edit_context::type_into(ctx, &p.text, p.clear)
    } else if p.text.is_empty() {
        exec(&el, "delete", "")
    } else if matches!(field, Field::Editable(_)) {
        let (ran, by_page) = type_editable(&field, &el, &p.text);
        taken = by_page;
        ran
    } else {
        exec(&el, "insertText", &p.text)
    };
    // The editing command succeeded when the content changed towards what was typed; the
    // browser may legitimately keep less (maxlength), which is reported, not overridden.
    let now = value_of(&field);
    let landed = match &field {
        Field::Editable(e) => crate::readback::shows(e, &p.text),
        _ => {
            now == expected
                || (now != before && expected.starts_with(&now))
                || (p.text.is_empty() && now.is_empty())
        }
    };
    if !keep && context.is_none() && !taken && (!inserted || !landed) {
        set_value_fallback(&field, &el, &expected, &p.text);
        method = "value_setter";
    }
    if !keep {
        crate::keys::released(&el, &p.text);
    }
    if !keep && !matches!(field, Field::Editable(_)) {
        fire(&el, "change");
    }
    if !keep {
        crate::settle::typed(&el);
    }
    // What the field kept, before Enter may submit and clear it.
    let stored = value_of(&field).chars().count();
    if p.press_enter {
        let proceed = crate::keys::enter(&el, "keydown");
        crate::keys::enter(&el, "keypress");
        if proceed {
            match &field {
                Field::Input(i) => {
                    if let Some(form) = i.form() {
                        let _ = Reflect::get(&form, &"requestSubmit".into())
                            .ok()
                            .filter(|f| f.is_function())
                            .map(|f| f.unchecked_into::<js_sys::Function>())
                            .map(|f| f.call0(&form));
                    }
                }
                Field::Area(_) => {
                    exec(&el, "insertText", "\n");
                }
                Field::Editable(_) => {
                    exec(&el, "insertParagraph", "");
                }
            }
        }
        crate::keys::enter(&el, "keyup");
    }
    let after = value_of(&field);
    let mut warnings = Vec::new();
    if taken && !landed {
        warnings.push(crate::readback::NOT_DRAWN_YET.to_owned());
    }
    let requested = expected.chars().count();
    // Password fields are left out: their lengths are not reported either.
    let truncation_warning =
        (!sensitive && !p.text.is_empty() && stored < requested && !matches!(field, Field::Editable(_)))
            .then(|| {
                warnings.push(format!(
                    "value is {stored} characters, shorter than the {requested} typed (maxlength?)"
                ));
                let max = match &field {
                    Field::Input(i) => i.max_length(),
                    Field::Area(a) => a.max_length(),
                    Field::Editable(_) => -1,
                };
                TruncationWarning {
                    requested: u32::try_from(requested).unwrap_or(u32::MAX),
                    stored: u32::try_from(stored).unwrap_or(u32::MAX),
                    max_length: u32::try_from(max).ok(),
                }
            });
    let url_after = dom::href();
    let navigation_started = leaving.destination(&url_after);
    let (autofill_popup_warning, autofill_field_role) = split(autofill);
    Ok(ActionReport {
        action_dispatched: true,
        url_before,
        url_after,
        navigation_started,
        element: what,
        readback: if sensitive { None } else { Some(after) },
        sensitive,
        method: method.into(),
        warnings,
        autofill_popup_warning,
        autofill_field_role,
        truncation_warning,
        native_dialog_warning: dialog,
        ..Default::default()
    })
}

pub(crate) fn pick<'a>(
    candidates: impl Iterator<Item = (usize, String)> + 'a,
    wanted: &str,
) -> Option<usize> {
    let wanted = wanted.trim().to_lowercase();
    let all: Vec<(usize, String)> = candidates.map(|(i, t)| (i, dom::collapse(&t).to_lowercase())).collect();
    all.iter()
        .find(|(_, t)| *t == wanted)
        .or_else(|| all.iter().find(|(_, t)| t.contains(&wanted)))
        .map(|(i, _)| *i)
}

/// Chooses the option of a `<select>` whose text is `wanted` (else the first that contains it,
/// ignoring case), as a person's choice does: `input` and `change` fire. The readback is the
/// chosen option's text, as a read shows it.
pub(crate) fn choose(
    select: &web_sys::HtmlSelectElement,
    el: &Element,
    wanted: &str,
    what: String,
    url_before: String,
) -> Result<ActionReport, Failure> {
    actionable(el)?;
    let texts = (0..select.length())
        .filter_map(|i| select.item(i).map(|o| (i as usize, o.text_content().unwrap_or_default())));
    let found = pick(texts, wanted)
        .ok_or_else(|| fail(reason::ELEMENT_NOT_FOUND, format!("{what} has no option \"{wanted}\"")))?;
    let option =
        select.item(found as u32).ok_or_else(|| fail(reason::ELEMENT_NOT_FOUND, "option vanished"))?;
    if dom::is_disabled(&option) {
        return Err(fail(reason::ELEMENT_DISABLED, format!("option \"{wanted}\" of {what} is disabled")));
    }
    let leaving = Leaving::listen();
    focus(el);
    select.set_selected_index(found as i32);
    fire(el, "input");
    fire(el, "change");
    // A choice may submit its form or follow a link (a language or a page-size picker).
    let url_after = dom::href();
    Ok(ActionReport {
        action_dispatched: true,
        navigation_started: leaving.destination(&url_after),
        url_before,
        url_after,
        element: what,
        readback: Some(dom::collapse(&option.text_content().unwrap_or_default())),
        sensitive: false,
        method: "select".into(),
        warnings: Vec::new(),
        ..Default::default()
    })
}

/// Wraps a reply for the content-script message channel: `{ok: value}` or `{err: {code, message}}`.
pub fn envelope(result: Result<JsValue, Failure>) -> JsValue {
    let o = Object::new();
    match result {
        Ok(v) => {
            let _ = Reflect::set(&o, &"ok".into(), &v);
        }
        Err((code, message)) => {
            let e = Object::new();
            let _ = Reflect::set(&e, &"code".into(), &code.into());
            let _ = Reflect::set(&e, &"message".into(), &message.into());
            let _ = Reflect::set(&o, &"err".into(), &e);
        }
    }
    o.into()
}
