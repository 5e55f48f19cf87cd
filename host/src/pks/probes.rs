//! What of a fingerprint the page can be asked about (docs/pks.md, "Applying"): `dom` signals
//! are selectors that must be visible, `text` signals text the page shows, `vendor` signals the
//! script tags and root elements of a known consent platform, `layout` signals a locked scroll
//! (`scroll_locked`) or a layer over the page (`overlay`). `interaction` signals describe what
//! happened, not what is there, and are left out of a live check.

use nova_shared::protocol::pks::Probe;

use super::model::{Fingerprint, Signal, SignalKind};

/// The page question for one signal, when it has one.
pub fn probe(s: &Signal) -> Option<Probe> {
    let m = s.matches.trim();
    match s.kind {
        SignalKind::Dom => Some(Probe::Dom { selector: m.to_owned() }),
        SignalKind::Text => Some(Probe::Text { text: m.to_owned() }),
        SignalKind::Vendor => super::platforms::find(m)
            .map(|p| Probe::Present { selectors: p.markers.iter().map(|s| (*s).to_owned()).collect() }),
        SignalKind::Layout => match m.to_ascii_lowercase().replace(['-', ' '], "_").as_str() {
            "scroll_locked" | "scroll_lock" | "no_scroll" => Some(Probe::ScrollLocked),
            "overlay" | "backdrop" | "fullscreen_overlay" => Some(Probe::Overlay),
            _ => None,
        },
        SignalKind::Interaction => None,
    }
}

/// The signals of `fp` the page can be asked about, with their questions.
pub fn checkable(fp: &Fingerprint) -> Vec<(&Signal, Probe)> {
    fp.signals.iter().filter_map(|s| probe(s).map(|p| (s, p))).collect()
}

/// What a look at the page found of `fp`: the checkable signals that were there, and the
/// weighted share of the checkable ones that is (with those missing). `present` answers
/// [`checkable`]'s questions in order.
pub fn measure(fp: &Fingerprint, present: &[bool]) -> (Vec<Signal>, f64, Vec<Signal>) {
    let checkable = checkable(fp);
    let live: Vec<Signal> =
        checkable.iter().zip(present).filter(|(_, there)| **there).map(|((s, _), _)| (*s).clone()).collect();
    let asked = Fingerprint {
        signals: checkable.iter().map(|(s, _)| (*s).clone()).collect(),
        min_confidence: fp.min_confidence,
    };
    let (confidence, _, missing) = super::matching::confidence(&asked, &live);
    let missing = missing.into_iter().cloned().collect();
    (live, confidence, missing)
}

/// The surface a phenomenon's actions are held to: its first `dom` signal (the banner, the
/// dialog).
pub fn surface(fp: &Fingerprint) -> Option<&str> {
    fp.signals.iter().find(|s| s.kind == SignalKind::Dom).map(|s| s.matches.trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(kind: SignalKind, m: &str) -> Signal {
        Signal { kind, matches: m.into(), locale: None }
    }

    #[test]
    fn each_kind_becomes_its_page_question() {
        assert_eq!(probe(&s(SignalKind::Dom, " #b ")), Some(Probe::Dom { selector: "#b".into() }));
        assert_eq!(probe(&s(SignalKind::Text, "cookies")), Some(Probe::Text { text: "cookies".into() }));
        assert!(matches!(probe(&s(SignalKind::Vendor, "OneTrust")), Some(Probe::Present { .. })));
        assert_eq!(probe(&s(SignalKind::Vendor, "acme-cmp")), None);
        assert_eq!(probe(&s(SignalKind::Layout, "scroll-locked")), Some(Probe::ScrollLocked));
        assert_eq!(probe(&s(SignalKind::Interaction, "click")), None);
        let fp = Fingerprint {
            signals: vec![
                s(SignalKind::Text, "x"),
                s(SignalKind::Dom, "#root"),
                s(SignalKind::Dom, "#other"),
            ],
            min_confidence: 0.6,
        };
        assert_eq!(surface(&fp), Some("#root"));
        assert_eq!(checkable(&fp).len(), 3);
    }
}
