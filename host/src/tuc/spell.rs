//! Spell checking for `nova_i18n_spellcheck_v1`: Hunspell dictionaries (the `dictionary-en`,
//! `dictionary-de`, `dictionary-fr` packages, installed with Nova) checked with `spellbook`.
//! Dictionaries are looked up in `$NOVA_DICTIONARIES`, next to the binary
//! (`<exe>/../dictionaries`), then in `/usr/share/hunspell`; each is compiled once per hub.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use serde::Serialize;
use spellbook::Dictionary;

/// Most distinct misspellings reported per language.
pub const MAX_REPORTED: usize = 200;
/// Most misspellings that get suggestions (suggesting is slow).
pub const MAX_SUGGESTED: usize = 25;

/// Folders searched for `<lang>.aff` / `<lang>.dic` (or Hunspell's `<lang>_<REGION>` names).
pub fn search_path() -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(dir) = std::env::var("NOVA_DICTIONARIES") {
        out.push(PathBuf::from(dir));
    }
    if let Ok(exe) = std::env::current_exe()
        && let Some(bin) = exe.parent()
    {
        out.push(bin.join("../dictionaries"));
        out.push(bin.join("dictionaries"));
    }
    out.push(PathBuf::from("/usr/share/hunspell"));
    out
}

/// The primary language subtag: `de-DE` -> `de`.
pub fn primary(lang: &str) -> String {
    lang.split(['-', '_']).next().unwrap_or_default().trim().to_lowercase()
}

fn find(lang: &str) -> Option<(PathBuf, PathBuf)> {
    let region = match lang {
        "en" => "en_US",
        "de" => "de_DE",
        "fr" => "fr_FR",
        "es" => "es_ES",
        "it" => "it_IT",
        other => other,
    };
    for dir in search_path() {
        for name in [lang, region] {
            let (aff, dic) = (dir.join(format!("{name}.aff")), dir.join(format!("{name}.dic")));
            if aff.is_file() && dic.is_file() {
                return Some((aff, dic));
            }
        }
    }
    None
}

type Cache = Mutex<HashMap<String, Option<Arc<Dictionary>>>>;

fn cache() -> &'static Cache {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The dictionary for a language, compiled on first use; `None` when none is installed.
pub fn dictionary(lang: &str) -> Option<Arc<Dictionary>> {
    let lang = primary(lang);
    let mut c = cache().lock().unwrap_or_else(|p| p.into_inner());
    if let Some(d) = c.get(&lang) {
        return d.clone();
    }
    let loaded = find(&lang).and_then(|(aff, dic)| {
        let aff = std::fs::read_to_string(aff).ok()?;
        let dic = std::fs::read_to_string(dic).ok()?;
        match Dictionary::new(&aff, &dic) {
            Ok(d) => Some(Arc::new(d)),
            Err(e) => {
                tracing::error!(lang, error = %e, "cannot compile the dictionary");
                None
            }
        }
    });
    c.insert(lang, loaded.clone());
    loaded
}

/// The words of a text worth checking: letters (and inner apostrophes / hyphens), no digits,
/// not all capitals (acronyms), at least two letters.
pub fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_alphabetic() || c == '\'' || c == '’' || c == '-'))
        .map(|w| w.trim_matches(|c: char| c == '\'' || c == '’' || c == '-'))
        .filter(|w| w.chars().count() >= 2)
        .filter(|w| !w.chars().all(|c| c.is_uppercase() || !c.is_alphabetic()))
}

/// One misspelt word.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Misspelling {
    /// The word as written.
    pub word: String,
    /// How often.
    pub count: u32,
    /// Dictionary suggestions (first few).
    pub suggestions: Vec<String>,
}

/// The result for one language.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct LanguageReport {
    /// The language as the page declared it.
    pub lang: String,
    /// Whether a dictionary was found.
    pub dictionary: bool,
    /// Words checked.
    pub words_checked: u32,
    /// Distinct misspellings, most frequent first.
    pub misspellings: Vec<Misspelling>,
}

/// Checks one language's text.
pub fn check(lang: &str, text: &str) -> LanguageReport {
    let Some(dict) = dictionary(lang) else {
        return LanguageReport {
            lang: lang.to_owned(),
            dictionary: false,
            words_checked: 0,
            misspellings: Vec::new(),
        };
    };
    let mut bad: BTreeMap<&str, u32> = BTreeMap::new();
    let mut checked = 0u32;
    for w in words(text) {
        checked += 1;
        if !dict.check(w) {
            *bad.entry(w).or_default() += 1;
        }
    }
    let mut list: Vec<(&str, u32)> = bad.into_iter().collect();
    list.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let misspellings = list
        .into_iter()
        .take(MAX_REPORTED)
        .enumerate()
        .map(|(i, (word, count))| {
            let mut suggestions = Vec::new();
            if i < MAX_SUGGESTED {
                dict.suggest(word, &mut suggestions);
                suggestions.truncate(3);
            }
            Misspelling { word: word.to_owned(), count, suggestions }
        })
        .collect();
    LanguageReport { lang: lang.to_owned(), dictionary: true, words_checked: checked, misspellings }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_skip_numbers_acronyms_and_fragments() {
        let w: Vec<&str> = words("The HTML5 page's 3 WCAG rules, don't re-check x.").collect();
        assert_eq!(w, ["The", "page's", "rules", "don't", "re-check"]);
        assert_eq!(primary("de-DE"), "de");
        assert_eq!(primary("EN_us"), "en");
    }
}
