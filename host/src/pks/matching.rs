//! How well a stored phenomenon fits what is on the page now (docs/pks.md, "Matching"): the
//! weighted share of its fingerprint's signals seen, whether its context (routes, device, locale,
//! sign-in) fits, and a rank that also weighs its health, the site's trust and how specific the
//! context is: `0.65·confidence + 0.20·health + 0.10·trust + 0.05·specificity`.

use super::model::{Context, Fingerprint, Signal};

/// A context a match is asked for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Asked {
    /// `desktop`, `mobile`, `tablet`.
    pub device: Option<String>,
    /// Locale.
    pub locale: Option<String>,
    /// `anonymous`, `logged_in`, `unknown`.
    pub auth: Option<String>,
    /// The page's path (`/feed/123`).
    pub route: Option<String>,
}

/// The weighted share of `fp`'s signals among `seen`, with the signals seen and those missing.
pub fn confidence<'a>(fp: &'a Fingerprint, seen: &[Signal]) -> (f64, Vec<&'a Signal>, Vec<&'a Signal>) {
    let (mut got, mut all) = (0.0, 0.0);
    let (mut matched, mut missing) = (Vec::new(), Vec::new());
    for s in &fp.signals {
        all += s.kind.weight();
        let there = seen.iter().any(|o| {
            o.kind == s.kind
                && o.matches == s.matches
                && (s.locale.is_none() || o.locale.is_none() || o.locale == s.locale)
        });
        if there {
            got += s.kind.weight();
            matched.push(s);
        } else {
            missing.push(s);
        }
    }
    (if all > 0.0 { got / all } else { 0.0 }, matched, missing)
}

/// Whether `path` is on one of `routes`: `feed` (the first path segment), `in/*` (a prefix),
/// `_root` (`/`), `*` (any).
pub fn route_fits(routes: &[String], path: &str) -> bool {
    let path = path.split(['?', '#']).next().unwrap_or_default().trim_start_matches('/');
    routes.iter().any(|r| {
        let r = r.trim_start_matches('/');
        match r {
            "*" => true,
            "_root" => path.is_empty(),
            _ => match r.strip_suffix('*') {
                Some(prefix) => path.starts_with(prefix),
                None => path.split('/').next() == Some(r),
            },
        }
    })
}

/// Whether `ctx` fits `asked`: how specific the fit is (0 to 1: the share of the four context
/// keys the entry names and the ask agrees with), or why it does not fit.
pub fn context_fit(ctx: &Context, asked: &Asked) -> Result<f64, String> {
    let mut named = 0.0;
    if let (Some(routes), Some(route)) = (&ctx.routes, &asked.route) {
        if !route_fits(routes, route) {
            return Err(format!("the route {route} is not on {}", routes.join(", ")));
        }
        if !routes.iter().any(|r| r == "*") {
            named += 1.0;
        }
    }
    let word = |v: serde_json::Value| v.as_str().map(str::to_owned);
    let pairs = [
        ("device", ctx.device.and_then(|d| serde_json::to_value(d).ok()).and_then(word), &asked.device),
        ("auth", ctx.auth.and_then(|a| serde_json::to_value(a).ok()).and_then(word), &asked.auth),
        ("locale", ctx.locale.clone(), &asked.locale),
    ];
    for (key, have, want) in pairs {
        let (Some(have), Some(want)) = (have, want) else { continue };
        if have == "unknown" || want == "unknown" {
            continue;
        }
        let fits = have == *want || (key == "locale" && want.starts_with(&format!("{have}-")));
        if !fits {
            return Err(format!("{key} is {have}, not {want}"));
        }
        named += 1.0;
    }
    Ok(named / 4.0)
}

/// Health, 0 to 1: the 30-day success rate (0.5 without attempts), less a staleness penalty (up to
/// 0.20 as the last attempt ages over 90 days; 0.10 when never tried) and a penalty for failures
/// in a row (0.10 each, up to 0.30).
pub fn health(rate: Option<f64>, failures_in_a_row: i64, last_attempt: Option<i64>, now: i64) -> f64 {
    let stale = match last_attempt {
        None => 0.10,
        Some(at) => {
            let days = ((now - at).max(0) / 86_400_000) as f64;
            (days / 90.0 * 0.20).min(0.20)
        }
    };
    let failing = (0.10 * failures_in_a_row.max(0) as f64).min(0.30);
    (rate.unwrap_or(0.5) - stale - failing).clamp(0.0, 1.0)
}

/// A site's trust as a number.
pub fn trust_value(trust: &str) -> f64 {
    match trust {
        "high" => 1.0,
        "medium" => 0.75,
        "low" => 0.50,
        _ => 0.25,
    }
}

/// The rank of a match.
pub fn score(confidence: f64, health: f64, trust: f64, specificity: f64) -> f64 {
    0.65 * confidence + 0.20 * health + 0.10 * trust + 0.05 * specificity
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn signals(v: serde_json::Value) -> Vec<Signal> {
        serde_json::from_value(v).expect("signals")
    }

    #[test]
    fn confidence_weighs_the_signals_seen() {
        let fp: Fingerprint = serde_json::from_value(json!({"signals": [
            {"kind": "dom", "match": "#banner"}, {"kind": "text", "match": "We use cookies", "locale": "en"}]}))
        .expect("fp");
        let (c, matched, missing) = confidence(&fp, &signals(json!([{"kind": "dom", "match": "#banner"}])));
        assert!((c - 1.0 / 1.7).abs() < 1e-9, "{c}");
        assert_eq!((matched.len(), missing.len()), (1, 1));
        let both = signals(
            json!([{"kind": "dom", "match": "#banner"}, {"kind": "text", "match": "We use cookies"}]),
        );
        assert!((confidence(&fp, &both).0 - 1.0).abs() < 1e-9, "a signal without locale matches any");
        let german = signals(
            json!([{"kind": "dom", "match": "#banner"}, {"kind": "text", "match": "We use cookies", "locale": "de"}]),
        );
        assert!(confidence(&fp, &german).0 < 1.0, "another locale is another signal");
        let wrong_kind = signals(json!([{"kind": "vendor", "match": "#banner"}]));
        assert_eq!(confidence(&fp, &wrong_kind).0, 0.0);
    }

    #[test]
    fn routes_and_context_fit_or_say_why_not() {
        let r = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert!(route_fits(&r(&["feed"]), "/feed/123"));
        assert!(!route_fits(&r(&["feed"]), "/feedback"));
        assert!(route_fits(&r(&["in/*"]), "/in/ada"));
        assert!(!route_fits(&r(&["in/*"]), "/jobs"));
        assert!(route_fits(&r(&["_root"]), "/"));
        assert!(route_fits(&r(&["_root"]), "/?q=1"));
        assert!(!route_fits(&r(&["_root"]), "/a"));
        assert!(route_fits(&r(&["*"]), "/anything"));
        let ctx: Context = serde_json::from_value(
            json!({"routes": ["feed"], "device": "desktop", "locale": "en", "auth": "anonymous"}),
        )
        .expect("ctx");
        let asked = |route: &str, locale: &str| Asked {
            device: Some("desktop".into()),
            locale: Some(locale.into()),
            auth: Some("anonymous".into()),
            route: Some(route.into()),
        };
        assert_eq!(context_fit(&ctx, &asked("/feed", "en-GB")), Ok(1.0));
        assert!(context_fit(&ctx, &asked("/jobs", "en")).expect_err("route").contains("route"));
        assert!(context_fit(&ctx, &asked("/feed", "de")).expect_err("locale").contains("locale is en"));
        assert_eq!(
            context_fit(&Context::default(), &asked("/x", "de")),
            Ok(0.0),
            "no context fits everywhere"
        );
    }

    #[test]
    fn health_and_rank() {
        let day = 86_400_000;
        assert!((health(Some(1.0), 0, Some(0), 0) - 1.0).abs() < 1e-9);
        assert!((health(None, 0, None, 0) - 0.4).abs() < 1e-9);
        assert!((health(Some(1.0), 5, Some(0), 0) - 0.7).abs() < 1e-9, "failures cost at most 0.30");
        assert!((health(Some(1.0), 0, Some(0), 365 * day) - 0.8).abs() < 1e-9, "age costs at most 0.20");
        assert!((score(1.0, 1.0, trust_value("high"), 1.0) - 1.0).abs() < 1e-9);
        assert!((score(0.0, 0.0, trust_value("unknown"), 0.0) - 0.025).abs() < 1e-9);
        assert!(score(1.0, 0.4, 0.25, 0.0) > score(0.6, 1.0, 1.0, 1.0), "what is on the page counts most");
    }
}
