//! The control plane's pure model: the states of jobs, tasks, replicas and clusters with
//! their machines, the roles, and the rules by which an agent's report changes them.
//!
//! Each concept is defined here once. The database (`migrations/*.sql` CHECKs and functions),
//! the GraphQL enums (`graphql::types`, derived with async-graphql's `remote`), the CLI and the
//! portal's generated types follow from these definitions, and tests fail when a copy that
//! cannot be derived (SQL, the committed SDL) disagrees. No I/O; this module uses no other
//! module of the crate.

/// An enum whose variants are stored under fixed names: `ALL` in declaration order, `as_str`
/// (the stored name), `parse`, `Display`, `FromStr` and `TryFrom<String>` (for sqlx rows), and
/// the names clients see, derived from the variant as async-graphql and clap derive them
/// (`api_name`: `PROJECT_ADMIN`; `cli_name`: `project-admin`).
macro_rules! named_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident ($what:literal) {
            $( $(#[doc = $vdoc:literal])* $variant:ident = $text:literal, )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        $vis enum $name {
            $( $(#[doc = $vdoc])* $variant, )+
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: [$name; [$($name::$variant),+].len()] = [$($name::$variant),+];

            /// The stored (and wire) name.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)+
                }
            }

            /// The value stored as `name`.
            pub fn parse(name: &str) -> Option<$name> {
                match name {
                    $($text => Some($name::$variant),)+
                    _ => None,
                }
            }

            /// The value's doc comment as one line (`None` without one): help text for clients.
            pub fn description(self) -> Option<String> {
                let lines: &[&str] = match self {
                    $($name::$variant => &[$($vdoc),*],)+
                };
                let text = lines.iter().map(|l| l.trim()).collect::<Vec<_>>().join(" ");
                (!text.is_empty()).then_some(text)
            }

            /// The variant's name in Rust (`ProjectAdmin`).
            pub const fn variant_name(self) -> &'static str {
                match self {
                    $($name::$variant => stringify!($variant),)+
                }
            }

            /// The value as the GraphQL API names it (`PROJECT_ADMIN`).
            pub fn api_name(self) -> String {
                $crate::domain::words(self.variant_name()).join("_").to_ascii_uppercase()
            }

            /// The value as the CLI's flags take it (`project-admin`).
            pub fn cli_name(self) -> String {
                $crate::domain::words(self.variant_name()).join("-").to_ascii_lowercase()
            }

            /// The value whose [`Self::api_name`] is `name`.
            pub fn from_api_name(name: &str) -> Option<$name> {
                Self::ALL.into_iter().find(|v| v.api_name() == name)
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl std::str::FromStr for $name {
            type Err = $crate::domain::UnknownName;

            fn from_str(s: &str) -> Result<Self, Self::Err> {
                $name::parse(s).ok_or_else(|| $crate::domain::UnknownName { what: $what, name: s.to_owned() })
            }
        }

        impl TryFrom<String> for $name {
            type Error = $crate::domain::UnknownName;

            fn try_from(s: String) -> Result<Self, Self::Error> {
                s.parse()
            }
        }
    };
}

mod audit_action;
mod budget_unit;
mod class_of_service;
mod cluster_health;
mod export_format;
mod job_state;
pub mod node_fit;
mod priority;
mod quota_key;
pub mod reports;
mod role;
pub mod service;
mod token_scope;
mod workload;

pub use audit_action::AuditAction;
pub use budget_unit::BudgetUnit;
pub use class_of_service::{
    aged_class, aging_ceiling, gpus_to_milli, ClassOfService, SuspendWindow, DAY_MIN, MAX_DURATION_S,
    MAX_INTERACTIVE_RESERVE_MILLI, MIN_MAX_WAIT_S,
};
pub use cluster_health::{current_health, health, Health, Heartbeat, HEARTBEAT_STALE_S};
pub use export_format::ExportFormat;
pub use job_state::{JobState, UnitState};
pub use priority::{PriorityClass, TenantRights};
pub use quota_key::{QuotaKey, QuotaLevel, GPU, INTERACTIVE};
pub use role::Role;
pub use token_scope::{token_allows, TokenScope};
pub use workload::{
    grace as idle_grace, idle_verdict, IdleVerdict, IdleWarning, WorkloadType, ACTIVE_BUSY_PCT, MAX_IDLE_AFTER_S,
    MIN_IDLE_AFTER_S,
};

/// The words of a CamelCase name (`FocusCsv` -> `Focus`, `Csv`).
#[doc(hidden)]
pub fn words(camel: &str) -> Vec<&str> {
    let mut words = Vec::new();
    let mut start = 0;
    for (i, c) in camel.char_indices().skip(1) {
        if c.is_ascii_uppercase() {
            words.push(&camel[start..i]);
            start = i;
        }
    }
    words.push(&camel[start..]);
    words
}

/// A stored name that is not one of its enum's values.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} `{name}`")]
pub struct UnknownName {
    pub what: &'static str,
    pub name: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_names_follow_the_variant_as_the_derives_do() {
        assert_eq!(words("FocusCsv"), ["Focus", "Csv"]);
        assert_eq!(Role::ProjectAdmin.api_name(), "PROJECT_ADMIN");
        assert_eq!(Role::ProjectAdmin.cli_name(), "project-admin");
        assert_eq!(ExportFormat::FocusJsonl.api_name(), "FOCUS_JSONL");
        assert_eq!(ExportFormat::FocusJsonl.as_str(), "jsonl");
        assert_eq!(JobState::from_api_name("PREEMPTING"), Some(JobState::Preempting));
        assert_eq!(JobState::from_api_name("preempting"), None);
        assert_eq!(ExportFormat::FocusCsv.description().as_deref(), Some("FOCUS 1.2 as CSV."));
        assert_eq!(JobState::Running.description(), None);
    }
}
