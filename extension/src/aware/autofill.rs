//! `autofillWarning` on perceive and `autofillPopupWarning` / `autofillFieldRole` on click and
//! type: fields the browser's password manager or autofill may fill or decorate with suggestion
//! popups that page scripts, and so MCP tools, cannot see.

use nova_shared::page::{AutofillField, AutofillWarning};
use web_sys::{Document, Element};

use super::query::{PASSWORD, all, first_in, ref_of};
use crate::dom;

/// Autocomplete tokens that only qualify the field name.
const AUTOCOMPLETE_QUALIFIERS: &[&str] =
    &["shipping", "billing", "home", "work", "mobile", "fax", "pager", "webauthn"];

/// The autofill role of a field, from its `autocomplete` attribute, type and name/id:
/// `login_identifier`, `password`, `new_password`, `one_time_code`, `cc_number`, `cc_exp`,
/// `cc_csc` or `address`. `with_password` says whether a password field shares its form, which
/// makes an e-mail or user-name field a login identifier.
pub fn autofill_role(
    autocomplete: &str,
    input_type: &str,
    name: &str,
    with_password: bool,
) -> Option<&'static str> {
    let ac = autocomplete.to_ascii_lowercase();
    let field = ac
        .split_whitespace()
        .rfind(|t| !t.starts_with("section-") && !AUTOCOMPLETE_QUALIFIERS.contains(t))
        .unwrap_or("");
    let by_autocomplete = match field {
        "current-password" => Some("password"),
        "new-password" => Some("new_password"),
        "username" => Some("login_identifier"),
        "email" | "tel" if with_password => Some("login_identifier"),
        "one-time-code" => Some("one_time_code"),
        "cc-number" => Some("cc_number"),
        "cc-exp" | "cc-exp-month" | "cc-exp-year" => Some("cc_exp"),
        "cc-csc" => Some("cc_csc"),
        "street-address" | "address-line1" | "address-line2" | "address-line3" | "address-level1"
        | "address-level2" | "address-level3" | "address-level4" | "postal-code" | "country"
        | "country-name" => Some("address"),
        _ => None,
    };
    if by_autocomplete.is_some() {
        return by_autocomplete;
    }
    let name = name.to_ascii_lowercase();
    let tokens: Vec<&str> =
        name.split(|c: char| !c.is_ascii_alphanumeric()).filter(|t| !t.is_empty()).collect();
    let joined: String = tokens.concat();
    let has = |words: &[&str]| words.iter().any(|w| joined.contains(w));
    let token = |words: &[&str]| tokens.iter().any(|t| words.contains(t));
    let ty = input_type.to_ascii_lowercase();
    if ty == "password" {
        return Some(if has(&["new", "confirm", "repeat", "retype"]) { "new_password" } else { "password" });
    }
    if !matches!(ty.as_str(), "text" | "email" | "tel" | "number" | "") {
        return None;
    }
    if has(&["cardnumber", "ccnumber", "ccnum", "cardnum", "creditcard"]) {
        Some("cc_number")
    } else if has(&["cvc", "cvv", "securitycode"]) || token(&["csc"]) {
        Some("cc_csc")
    } else if has(&["ccexp", "cardexp", "expiry", "expdate", "expiration"]) {
        Some("cc_exp")
    } else if has(&["onetimecode", "totp", "verificationcode", "mfacode", "2facode"]) || token(&["otp"]) {
        Some("one_time_code")
    } else if with_password
        && (ty == "email"
            || token(&["user", "username", "login", "email", "mail", "userid", "account", "identifier"]))
    {
        Some("login_identifier")
    } else {
        None
    }
}

/// Inputs that can take typed text (other types never get autofill suggestions).
const TEXT_INPUTS: &str = "input:not([type=\"hidden\" i]):not([type=\"submit\" i]):not([type=\"button\" i]):not([type=\"checkbox\" i]):not([type=\"radio\" i]):not([type=\"file\" i]):not([type=\"image\" i]):not([type=\"reset\" i]):not([type=\"range\" i]):not([type=\"color\" i])";
/// Most fields listed in `autofillWarning`.
const MAX_AUTOFILL_FIELDS: usize = 20;

/// Whether a password field shares the input's form (or dialog, or, outside both, the page:
/// `page_password`, computed once per perceive, else looked up).
fn with_password(el: &Element, page_password: Option<bool>) -> bool {
    match el.closest("form, [role=\"dialog\"], dialog").ok().flatten() {
        Some(scope) => first_in(&scope, PASSWORD).is_some(),
        None => page_password.unwrap_or_else(|| {
            el.owner_document().and_then(|d| d.query_selector(PASSWORD).ok().flatten()).is_some()
        }),
    }
}

/// The autofill role of an input matching [`TEXT_INPUTS`].
fn text_input_role(el: &Element, page_password: Option<bool>) -> Option<&'static str> {
    let attr = |a: &str| el.get_attribute(a).unwrap_or_default();
    let name = format!("{} {}", attr("name"), attr("id"));
    autofill_role(&attr("autocomplete"), &dom::input_type(el), &name, with_password(el, page_password))
}

/// The autofill role of an element, if it is an autofill-sensitive input.
pub fn field_role(el: &Element) -> Option<&'static str> {
    if !el.matches(TEXT_INPUTS).unwrap_or(false) {
        return None;
    }
    text_input_role(el, None)
}

/// `autofillWarning`: visible fields the browser may fill or decorate.
pub fn autofill_fields(doc: &Document) -> Option<AutofillWarning> {
    let inputs = all(doc, TEXT_INPUTS);
    if inputs.is_empty() {
        return None;
    }
    // Once per perceive: a page of many form-less inputs would otherwise search it per input.
    let page_password = Some(doc.query_selector(PASSWORD).ok().flatten().is_some());
    let fields: Vec<AutofillField> = inputs
        .iter()
        .filter_map(|el| text_input_role(el, page_password).map(|role| (el, role)))
        .filter(|(el, _)| dom::is_visible(el))
        .map(|(el, role)| AutofillField { selector: ref_of(el), autofill_field_role: role.into() })
        .take(MAX_AUTOFILL_FIELDS)
        .collect();
    (!fields.is_empty()).then(|| AutofillWarning {
        fields,
        message: "The browser's password manager or autofill may fill these fields or show suggestion popups next to them; popups are outside the page DOM and invisible to MCP tools, and autofilled values may stay unreadable to page scripts until the person interacts. Re-read fields after typing, press Escape if a popup covers the page, and never type credentials the person did not give you.".into(),
    })
}

/// `autofillPopupWarning` and `autofillFieldRole` for an input being clicked or typed into.
pub fn autofill_popup(el: &Element) -> Option<(String, &'static str)> {
    let role = field_role(el)?;
    Some((
        format!(
            "{} is a {role} field: the browser may have opened an autofill or password-manager suggestion popup next to it, outside the page DOM and invisible to MCP tools; it can cover what is below it. Press Escape or click elsewhere if the page seems covered, and re-read the value.",
            dom::describe(el)
        ),
        role,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn autofill_roles_come_from_autocomplete_then_type_and_names() {
        assert_eq!(autofill_role("section-a billing cc-number", "text", "", false), Some("cc_number"));
        assert_eq!(autofill_role("cc-exp-month", "text", "", false), Some("cc_exp"));
        assert_eq!(autofill_role("cc-csc", "text", "", false), Some("cc_csc"));
        assert_eq!(autofill_role("username", "text", "", false), Some("login_identifier"));
        assert_eq!(autofill_role("email", "email", "", true), Some("login_identifier"));
        assert_eq!(
            autofill_role("email", "email", "newsletter", false),
            None,
            "a newsletter e-mail is not a login"
        );
        assert_eq!(autofill_role("new-password", "password", "", false), Some("new_password"));
        assert_eq!(autofill_role("", "password", "confirm_password", false), Some("new_password"));
        assert_eq!(autofill_role("off", "password", "pw", false), Some("password"));
        assert_eq!(autofill_role("one-time-code", "text", "", false), Some("one_time_code"));
        assert_eq!(autofill_role("", "text", "otp", false), Some("one_time_code"));
        assert_eq!(autofill_role("", "text", "footprint", false), None, "`otp` must be a word");
        assert_eq!(autofill_role("shipping postal-code", "text", "", false), Some("address"));
        assert_eq!(autofill_role("", "text", "card-number", false), Some("cc_number"));
        assert_eq!(autofill_role("", "text", "cvv", false), Some("cc_csc"));
        assert_eq!(autofill_role("", "text", "user login", true), Some("login_identifier"));
        assert_eq!(autofill_role("", "text", "user", false), None, "no password, no login");
        assert_eq!(autofill_role("", "search", "q", true), None);
    }
}
