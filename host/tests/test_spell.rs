//! The spell checker with the real Hunspell dictionaries Nova ships (dist/dictionaries, built by
//! `cargo xtask build`). Fails loudly when they are missing.

use std::path::PathBuf;

use nova_host::tuc::spell;

fn dictionaries() -> PathBuf {
    let dist = std::env::var("NOVA_DIST")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../dist"));
    let dir = dist.join("dictionaries");
    assert!(
        dir.join("en.dic").is_file() && dir.join("de.dic").is_file(),
        "no dictionaries in {}: run `cargo xtask build`",
        dir.display()
    );
    dir
}

#[test]
fn english_and_german_misspellings_are_found_and_correct_text_passes() {
    install_next_to_test_binary(dictionaries());
    let en = spell::check(
        "en-US",
        "The quick brown fox jumps over the lazy dog. Recieve the definately good news.",
    );
    assert!(en.dictionary);
    let bad: Vec<&str> = en.misspellings.iter().map(|m| m.word.as_str()).collect();
    assert_eq!(bad, ["Recieve", "definately"], "{en:?}");
    assert!(en.misspellings[0].suggestions.iter().any(|s| s == "Receive"), "{en:?}");

    let de =
        spell::check("de", "Das Haus ist groß und die Straße ist lang. Wir habne einen Fehlre gefunden.");
    let bad: Vec<&str> = de.misspellings.iter().map(|m| m.word.as_str()).collect();
    assert_eq!(bad, ["Fehlre", "habne"], "{de:?}");

    let none = spell::check("xx", "whatever");
    assert!(!none.dictionary && none.misspellings.is_empty());
}

/// The host looks for dictionaries next to its binary (`<exe dir>/dictionaries`); put them next
/// to the test binary rather than changing the process environment.
fn install_next_to_test_binary(dir: PathBuf) {
    let exe = std::env::current_exe().expect("exe");
    let target = exe.parent().expect("dir").join("dictionaries");
    std::fs::create_dir_all(&target).expect("mkdir");
    for f in ["en.aff", "en.dic", "de.aff", "de.dic"] {
        std::fs::copy(dir.join(f), target.join(f)).expect("copy dictionary");
    }
}
