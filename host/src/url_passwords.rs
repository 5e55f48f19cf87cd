//! Passwords in addresses (`http://user:password@host/`): a person may give an agent an address
//! with a sign-in in it, and the browser needs it to open the page; nothing Nova keeps, logs or
//! reports holds it. Every answer and event from the browser (tab addresses, where an action
//! landed, page text) passes through [`drop_passwords`] as it arrives, and the arguments a call
//! records through [`without_passwords`]; the support exports redact them again.

use std::borrow::Cow;

use serde_json::Value;

/// What replaces the password.
pub const MARK: &str = "[redacted]";

/// Where an address's authority ends.
fn ends_authority(c: char) -> bool {
    matches!(c, '/' | '?' | '#' | '"' | '\'' | '<' | '>' | '\\' | '`') || c.is_whitespace()
}

/// `text` with the password of every address in it replaced by [`MARK`] (the user name stays:
/// it says whose sign-in it was).
pub fn without_passwords(text: &str) -> Cow<'_, str> {
    if !text.contains("://") || !text.contains('@') {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut changed = false;
    while let Some(at) = rest.find("://") {
        let (before, after) = rest.split_at(at + 3);
        out.push_str(before);
        let end = after.find(ends_authority).unwrap_or(after.len());
        let authority = &after[..end];
        match authority
            .rfind('@')
            .and_then(|sign| authority[..sign].split_once(':').map(|(u, p)| (u, p, sign)))
        {
            Some((user, password, sign)) if !password.is_empty() && password != MARK => {
                out.push_str(user);
                out.push(':');
                out.push_str(MARK);
                out.push_str(&authority[sign..]);
                changed = true;
            }
            _ => out.push_str(authority),
        }
        rest = &after[end..];
    }
    out.push_str(rest);
    if changed { Cow::Owned(out) } else { Cow::Borrowed(text) }
}

/// Every string in `v` (object keys included) with its addresses' passwords replaced.
pub fn drop_passwords(v: &mut Value) {
    match v {
        Value::String(s) => {
            if let Cow::Owned(clean) = without_passwords(s) {
                *s = clean;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(drop_passwords),
        Value::Object(map) => {
            if map.keys().any(|k| matches!(without_passwords(k), Cow::Owned(_))) {
                let taken = std::mem::take(map);
                *map = taken.into_iter().map(|(k, v)| (without_passwords(&k).into_owned(), v)).collect();
            }
            map.values_mut().for_each(drop_passwords);
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_password_in_an_address_is_replaced_and_the_rest_kept() {
        let cases = [
            ("http://ada:fixture-key-77@127.0.0.1:5/private", "http://ada:[redacted]@127.0.0.1:5/private"),
            ("see https://u:p%40ss@x.example?q=1#f now", "see https://u:[redacted]@x.example?q=1#f now"),
            ("{\"url\":\"http://a:b@h\"}", "{\"url\":\"http://a:[redacted]@h\"}"),
            ("ftp://a:b@h and http://c:d@i/", "ftp://a:[redacted]@h and http://c:[redacted]@i/"),
        ];
        for (text, clean) in cases {
            assert_eq!(without_passwords(text), clean, "{text}");
        }
        for kept in [
            "http://ada@host/ (a user name alone)",
            "http://host/path?mail=ada@example.com",
            "mailto:ada@example.com",
            "http://ada:[redacted]@host/",
            "no address here",
        ] {
            assert!(matches!(without_passwords(kept), Cow::Borrowed(_)), "{kept}");
        }
    }

    #[test]
    fn every_string_of_an_answer_is_cleaned() {
        let mut v = json!({"url": "http://a:b@h/", "tabs": [{"url": "https://c:d@i"}],
                           "http://e:f@j/": 1, "n": 3});
        drop_passwords(&mut v);
        assert_eq!(
            v,
            json!({"url": "http://a:[redacted]@h/", "tabs": [{"url": "https://c:[redacted]@i"}],
                   "http://e:[redacted]@j/": 1, "n": 3})
        );
    }
}
