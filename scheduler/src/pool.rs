//! Node pools: named sets of a cluster's nodes, chosen by label selectors (Run:ai's node pools,
//! Kueue's resource flavors). Every node belongs to at most one pool: the first whose selector
//! matches its labels, in the order the pools are configured; when pools are configured, a node
//! no selector matches belongs to [`DEFAULT_POOL`]. Quotas name pools as resources
//! ([`crate::queue::ResourceKey::Pool`]); jobs name the pools they may use, in order of
//! preference ([`crate::job::Job::pools`]).

use std::collections::BTreeMap;
use std::fmt;

/// The pool of nodes that match no configured pool's selector.
pub const DEFAULT_POOL: &str = "default";

/// One requirement of a selector.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Requirement {
    Equals(String, String),
    NotEquals(String, String),
    Exists(String),
    NotExists(String),
}

/// An equality-based Kubernetes label selector: `k=v`, `k==v`, `k!=v`, `k` (exists), `!k`
/// (does not exist), joined by commas; every requirement must hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LabelSelector(Vec<Requirement>);

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PoolError {
    #[error("node pool name `{0}` must be a DNS label (lowercase letters, digits and '-', at most 63)")]
    BadName(String),
    #[error("node pool `{0}` is defined twice")]
    Duplicate(String),
    #[error("`{0}` is the pool of unmatched nodes and cannot be given a selector")]
    Reserved(String),
    #[error("label selector `{selector}`: {why}")]
    BadSelector { selector: String, why: &'static str },
    #[error("node pool `{0}`: expected NAME=SELECTOR (e.g. a100-train=pool=a100-train)")]
    BadDefinition(String),
}

fn valid_label_part(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 253
        && s.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'))
}

/// Whether `name` may name a pool: a DNS label, as queue and cluster names are.
pub fn valid_pool_name(name: &str) -> bool {
    let b = name.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && b.iter().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        && b[0] != b'-'
        && b[b.len() - 1] != b'-'
}

impl LabelSelector {
    pub fn parse(text: &str) -> Result<LabelSelector, PoolError> {
        let bad = |why| PoolError::BadSelector { selector: text.to_string(), why };
        let mut reqs = Vec::new();
        for part in text.split(',').map(str::trim) {
            if part.is_empty() {
                return Err(bad("an empty requirement"));
            }
            let req = if let Some((k, v)) = part.split_once("!=") {
                Requirement::NotEquals(k.trim().to_string(), v.trim().to_string())
            } else if let Some((k, v)) = part.split_once("==").or_else(|| part.split_once('=')) {
                Requirement::Equals(k.trim().to_string(), v.trim().to_string())
            } else if let Some(k) = part.strip_prefix('!') {
                Requirement::NotExists(k.trim().to_string())
            } else {
                Requirement::Exists(part.to_string())
            };
            let (key, value) = match &req {
                Requirement::Equals(k, v) | Requirement::NotEquals(k, v) => (k, Some(v)),
                Requirement::Exists(k) | Requirement::NotExists(k) => (k, None),
            };
            if !valid_label_part(key) {
                return Err(bad("a label key must be 1..=253 of letters, digits, '-', '_', '.', '/'"));
            }
            if value.is_some_and(|v| !v.is_empty() && !valid_label_part(v)) {
                return Err(bad("a label value must be letters, digits, '-', '_', '.'"));
            }
            reqs.push(req);
        }
        Ok(LabelSelector(reqs))
    }

    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.0.iter().all(|r| match r {
            Requirement::Equals(k, v) => labels.get(k) == Some(v),
            Requirement::NotEquals(k, v) => labels.get(k) != Some(v),
            Requirement::Exists(k) => labels.contains_key(k),
            Requirement::NotExists(k) => !labels.contains_key(k),
        })
    }
}

impl fmt::Display for LabelSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self
            .0
            .iter()
            .map(|r| match r {
                Requirement::Equals(k, v) => format!("{k}={v}"),
                Requirement::NotEquals(k, v) => format!("{k}!={v}"),
                Requirement::Exists(k) => k.clone(),
                Requirement::NotExists(k) => format!("!{k}"),
            })
            .collect();
        f.write_str(&parts.join(","))
    }
}

/// A configured pool: a name and the selector of its nodes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PoolDef {
    pub name: String,
    pub selector: LabelSelector,
}

impl PoolDef {
    /// Parses `NAME=SELECTOR`, the form of the agent's `--node-pool` flag.
    pub fn parse(text: &str) -> Result<PoolDef, PoolError> {
        let (name, selector) = text.split_once('=').ok_or_else(|| PoolError::BadDefinition(text.to_string()))?;
        let name = name.trim();
        if !valid_pool_name(name) {
            return Err(PoolError::BadName(name.to_string()));
        }
        if name == DEFAULT_POOL {
            return Err(PoolError::Reserved(name.to_string()));
        }
        Ok(PoolDef { name: name.to_string(), selector: LabelSelector::parse(selector)? })
    }
}

/// The configured pools, in order: the first match wins.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodePools(Vec<PoolDef>);

impl NodePools {
    pub fn new(defs: Vec<PoolDef>) -> Result<NodePools, PoolError> {
        for (i, d) in defs.iter().enumerate() {
            if defs[..i].iter().any(|e| e.name == d.name) {
                return Err(PoolError::Duplicate(d.name.clone()));
            }
        }
        Ok(NodePools(defs))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn defs(&self) -> &[PoolDef] {
        &self.0
    }

    /// The pool of a node with these labels: `None` when no pools are configured.
    pub fn pool_of(&self, labels: &BTreeMap<String, String>) -> Option<&str> {
        if self.0.is_empty() {
            return None;
        }
        Some(self.0.iter().find(|d| d.selector.matches(labels)).map_or(DEFAULT_POOL, |d| d.name.as_str()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn selectors_match_like_kubernetes_equality_selectors() {
        let s = LabelSelector::parse("pool=a100-train, zone!=b,gpu,!spot").unwrap();
        assert!(s.matches(&labels(&[("pool", "a100-train"), ("gpu", "yes")])));
        assert!(!s.matches(&labels(&[("pool", "a100-train"), ("gpu", "yes"), ("zone", "b")])));
        assert!(!s.matches(&labels(&[("pool", "a100-train")])), "gpu must exist");
        assert!(!s.matches(&labels(&[("pool", "a100-train"), ("gpu", ""), ("spot", "1")])));
        assert_eq!(s.to_string(), "pool=a100-train,zone!=b,gpu,!spot");
        assert!(LabelSelector::parse("a=b,,c").is_err());
        assert!(LabelSelector::parse("a b=c").is_err());
    }

    #[test]
    fn the_first_matching_pool_wins_and_unmatched_nodes_are_in_the_default_pool() {
        let pools =
            NodePools::new(vec![PoolDef::parse("train=pool=train").unwrap(), PoolDef::parse("big=gpus=8").unwrap()])
                .unwrap();
        assert_eq!(pools.pool_of(&labels(&[("pool", "train"), ("gpus", "8")])), Some("train"));
        assert_eq!(pools.pool_of(&labels(&[("gpus", "8")])), Some("big"));
        assert_eq!(pools.pool_of(&labels(&[])), Some(DEFAULT_POOL));
        assert_eq!(NodePools::default().pool_of(&labels(&[("pool", "train")])), None);
    }

    #[test]
    fn bad_definitions_are_refused_with_the_reason() {
        assert_eq!(PoolDef::parse("Train=a=b"), Err(PoolError::BadName("Train".into())));
        assert_eq!(PoolDef::parse("default=a=b"), Err(PoolError::Reserved("default".into())));
        assert!(matches!(PoolDef::parse("noselector"), Err(PoolError::BadDefinition(_))));
        let dup = vec![PoolDef::parse("a=x=1").unwrap(), PoolDef::parse("a=x=2").unwrap()];
        assert_eq!(NodePools::new(dup), Err(PoolError::Duplicate("a".into())));
    }
}
