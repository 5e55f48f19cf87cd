//! What `tools/list` shows one session (README, "What `tools/list` shows"). By default
//! (`core`) an agent first sees the setup tools only (the `system_tools` bundle:
//! `nova.get_instructions`, `nova.tools_bundle`, …) and each bundle it loads with
//! `nova.tools_bundle` adds that bundle's tools, announced with
//! `notifications/tools/list_changed`; `all` lists every tool at once, and a list of bundle
//! names lists those from the start. The choice comes from `nova mcp --tools`, `?tools=` on
//! the HTTP endpoint's URL, or the `io.nova/tools` experimental capability at `initialize`.
//! Every tool is callable by name whatever is listed.

use std::collections::BTreeSet;
use std::str::FromStr;

use rmcp::model::Tool;

use crate::registry::Bundle;

/// The experimental capability a client (or `nova mcp`) names its listing with:
/// `{"io.nova/tools": {"list": "<what --tools takes>"}}`.
pub const CAPABILITY: &str = "io.nova/tools";

/// Which tools a session lists before it loads any bundle.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Listing {
    /// The setup tools, then each bundle as it is loaded.
    #[default]
    Core,
    /// Every tool.
    All,
    /// The setup tools and these bundles from the start, then each bundle as it is loaded.
    Bundles(BTreeSet<Bundle>),
}

impl FromStr for Listing {
    type Err = String;

    /// `core`, `all`, or bundle names separated by commas (`core` may be among them).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim() {
            "core" => return Ok(Self::Core),
            "all" => return Ok(Self::All),
            _ => {}
        }
        let mut bundles = BTreeSet::new();
        for name in s.split(',').map(str::trim) {
            if name == "core" {
                continue;
            }
            let bundle = Bundle::ALL.iter().find(|b| b.as_str() == name).ok_or_else(|| {
                let names: Vec<&str> = Bundle::ALL.iter().map(|b| b.as_str()).collect();
                format!(
                    "tools: `{name}` is not `core`, `all` or a bundle ({}); separate bundles with commas",
                    names.join(", ")
                )
            })?;
            bundles.insert(*bundle);
        }
        Ok(if bundles.is_empty() { Self::Core } else { Self::Bundles(bundles) })
    }
}

impl std::fmt::Display for Listing {
    /// The form [`Listing::from_str`] reads.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Core => f.write_str("core"),
            Self::All => f.write_str("all"),
            Self::Bundles(b) => f.write_str(&b.iter().map(|b| b.as_str()).collect::<Vec<_>>().join(",")),
        }
    }
}

impl Listing {
    /// The tools to list, in catalog order, given the bundles the session has loaded (wire names;
    /// unknown ones are ignored).
    pub fn tools<'a>(&self, loaded: impl IntoIterator<Item = &'a str>) -> Vec<Tool> {
        let catalog = super::catalog::tools();
        if *self == Self::All {
            return catalog.to_vec();
        }
        let mut shown: BTreeSet<Bundle> = match self {
            Self::Bundles(b) => b.clone(),
            Self::Core | Self::All => BTreeSet::new(),
        };
        shown.insert(Bundle::SystemTools);
        let loaded: Vec<&str> = loaded.into_iter().collect();
        shown.extend(Bundle::ALL.iter().filter(|b| loaded.contains(&b.as_str())));
        let names: BTreeSet<&str> = shown.iter().flat_map(|b| b.tools()).collect();
        catalog.iter().filter(|t| names.contains(t.name.as_ref())).cloned().collect()
    }

    /// The listing a client asked for at `initialize`, from the value of its [`CAPABILITY`].
    pub fn from_capability(value: Option<&serde_json::Map<String, serde_json::Value>>) -> Option<Self> {
        value?.get("list")?.as_str()?.parse().ok()
    }

    /// The value of [`CAPABILITY`] that asks for this listing.
    pub fn capability(&self) -> serde_json::Value {
        serde_json::json!({"list": self.to_string()})
    }

    /// The listing a URL's query names (`?tools=…`), if any.
    pub fn from_query(query: &str) -> Option<Result<Self, String>> {
        query.split('&').find_map(|pair| {
            let value = pair.strip_prefix("tools=")?;
            Some(value.replace("%2C", ",").replace("%2c", ",").parse())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(tools: &[Tool]) -> BTreeSet<String> {
        tools.iter().map(|t| t.name.to_string()).collect()
    }

    #[test]
    fn core_lists_the_setup_tools_and_grows_with_each_loaded_bundle() {
        let core = names(&Listing::Core.tools([]));
        assert!(core.contains("nova.tools_bundle") && core.contains("nova.get_instructions"), "{core:?}");
        assert!(!core.contains("nova.perceive"), "{core:?}");
        let browsing = names(&Listing::Core.tools(["browser_automation"]));
        assert!(browsing.contains("nova.perceive") && browsing.contains("nova.tools_bundle"));
        assert!(!browsing.contains("nova.task_instance_create"), "{browsing:?}");
        assert!(core.is_subset(&browsing));
        assert_eq!(Listing::All.tools([]).len(), super::super::catalog::tools().len());
    }

    #[test]
    fn the_choice_is_parsed_or_refused_naming_the_values() {
        assert_eq!("core".parse(), Ok(Listing::Core));
        assert_eq!(" all ".parse(), Ok(Listing::All));
        assert_eq!(
            "browser_automation,task_memory".parse(),
            Ok(Listing::Bundles([Bundle::BrowserAutomation, Bundle::TaskMemory].into()))
        );
        assert_eq!("core,task_memory".parse(), Ok(Listing::Bundles([Bundle::TaskMemory].into())));
        for s in ["core", "all", "browser_automation,pks_learning"] {
            assert_eq!(s.parse::<Listing>().map(|l| l.to_string()), Ok(s.to_owned()));
        }
        let err = "browser".parse::<Listing>().expect_err("not a bundle");
        assert!(err.contains("`browser`") && err.contains("browser_automation"), "{err}");
        assert_eq!(Listing::from_query("x=1&tools=all"), Some(Ok(Listing::All)));
        assert_eq!(
            Listing::from_query("tools=task_memory%2Cpks_learning"),
            Some(Ok(Listing::Bundles([Bundle::TaskMemory, Bundle::PksLearning].into())))
        );
        assert!(Listing::from_query("tools=nope").is_some_and(|r| r.is_err()));
        assert_eq!(Listing::from_query(""), None);
    }
}
