//! Which service a page belongs to (docs/ok.md, "Services"): a site adapter that names one,
//! else a well-known service by its host, else the page's own host. Pages that are not on the
//! web (`about:`, `file:`, extension pages) belong to no service; their facts stay with the tab.

use nova_shared::adapter::Adapter;

/// Hosts of well-known services (the host itself or any subdomain of it) and their keys.
const WELL_KNOWN: &[(&str, &str)] = &[
    ("chatgpt.com", "chatgpt"),
    ("chat.openai.com", "chatgpt"),
    ("platform.openai.com", "openai-platform"),
    ("claude.ai", "claude"),
    ("console.anthropic.com", "anthropic-console"),
    ("gemini.google.com", "gemini"),
    ("aistudio.google.com", "google-ai-studio"),
    ("copilot.microsoft.com", "copilot"),
    ("perplexity.ai", "perplexity"),
    ("chat.mistral.ai", "mistral"),
    ("chat.deepseek.com", "deepseek"),
    ("grok.com", "grok"),
    ("poe.com", "poe"),
    ("huggingface.co", "huggingface"),
    ("mail.google.com", "gmail"),
    ("docs.google.com", "google-docs"),
    ("drive.google.com", "google-drive"),
    ("calendar.google.com", "google-calendar"),
    ("outlook.live.com", "outlook"),
    ("outlook.office.com", "outlook"),
    ("outlook.office365.com", "outlook"),
    ("github.com", "github"),
    ("gitlab.com", "gitlab"),
    ("bitbucket.org", "bitbucket"),
    ("atlassian.net", "atlassian"),
    ("notion.so", "notion"),
    ("slack.com", "slack"),
    ("discord.com", "discord"),
    ("linear.app", "linear"),
    ("figma.com", "figma"),
    ("x.com", "x"),
    ("twitter.com", "x"),
    ("linkedin.com", "linkedin"),
    ("facebook.com", "facebook"),
    ("instagram.com", "instagram"),
    ("reddit.com", "reddit"),
    ("youtube.com", "youtube"),
    ("amazon.com", "amazon"),
    ("stripe.com", "stripe"),
    ("vercel.com", "vercel"),
    ("netlify.com", "netlify"),
    ("cloudflare.com", "cloudflare"),
    ("console.aws.amazon.com", "aws-console"),
    ("portal.azure.com", "azure-portal"),
    ("console.cloud.google.com", "google-cloud-console"),
];

/// Where a tab showing `url` is, for OK: its service from the data dir's site adapters.
pub fn place(data: &crate::paths::DataDir, target: &str, url: &str) -> super::Place {
    super::Place {
        target: target.to_owned(),
        url: url.to_owned(),
        service: detect(url, &crate::adapters::site(data)),
    }
}

/// The service key of `url`; `None` for pages not on the web.
pub fn detect(url: &str, adapters: &[Adapter]) -> Option<String> {
    let parts = crate::url::parts(url)?;
    if let Some(named) = adapters
        .iter()
        .filter(|a| !a.url_contains.is_empty() && a.matches(url))
        .find_map(|a| a.service.clone())
    {
        return Some(named);
    }
    let host = parts.host.strip_prefix("www.").unwrap_or(&parts.host);
    let bare = host.split(':').next().unwrap_or(host);
    // The most specific well-known host wins (console.aws.amazon.com over amazon.com).
    let known = WELL_KNOWN
        .iter()
        .filter(|(h, _)| bare == *h || bare.ends_with(&format!(".{h}")))
        .max_by_key(|(h, _)| h.len());
    Some(known.map_or_else(|| host.to_owned(), |(_, key)| (*key).to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn services_come_from_adapters_then_well_known_hosts_then_the_host() {
        let acme = Adapter {
            name: "acme".into(),
            url_contains: "/acme-".into(),
            service: Some("acme".into()),
            ..Adapter::default()
        };
        let plain = Adapter { name: "plain".into(), url_contains: "127.0.0.1".into(), ..Adapter::default() };
        let site = [nova_shared::adapter::generic(), plain, acme];
        assert_eq!(detect("http://127.0.0.1:8080/acme-chat.html", &site).as_deref(), Some("acme"));
        assert_eq!(detect("http://127.0.0.1:8080/basic.html", &site).as_deref(), Some("127.0.0.1:8080"));
        assert_eq!(detect("https://chatgpt.com/c/123", &[]).as_deref(), Some("chatgpt"));
        assert_eq!(detect("https://chat.openai.com/", &[]).as_deref(), Some("chatgpt"));
        assert_eq!(detect("https://www.github.com/org/repo", &[]).as_deref(), Some("github"));
        assert_eq!(detect("https://eu-west-1.console.aws.amazon.com/", &[]).as_deref(), Some("aws-console"));
        assert_eq!(detect("https://www.amazon.com/dp/1", &[]).as_deref(), Some("amazon"));
        assert_eq!(detect("https://notgithub.com/", &[]).as_deref(), Some("notgithub.com"));
        assert_eq!(detect("https://www.example.org:8443/x", &[]).as_deref(), Some("example.org:8443"));
        for not_web in ["about:blank", "file:///tmp/a.html", "chrome-extension://abc/popup.html", "data:,x"] {
            assert_eq!(detect(not_web, &[]), None, "{not_web}");
        }
    }
}
