//! The control plane's pure model: the states of jobs, tasks, replicas and clusters with
//! their machines, the roles, and the rules by which an agent's report changes them.
//!
//! Each concept is defined here once. The database (`migrations/*.sql` CHECKs and functions),
//! the GraphQL enums (`graphql::types`, derived with async-graphql's `remote`), the CLI and the
//! portal's generated types follow from these definitions, and tests fail when a copy that
//! cannot be derived (SQL, the committed SDL) disagrees. No I/O; this module uses no other
//! module of the crate.

/// An enum whose variants are stored and sent as fixed lower-case names: `ALL` in declaration
/// order, `as_str`, `parse`, `Display`, `FromStr` and `TryFrom<String>` (for sqlx rows).
macro_rules! named_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident ($what:literal) {
            $( $(#[$vmeta:meta])* $variant:ident = $text:literal, )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        $vis enum $name {
            $( $(#[$vmeta])* $variant, )+
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

            /// The value as the GraphQL API and the CLI's output name it (`PROJECT_ADMIN`).
            pub fn api_name(self) -> String {
                self.as_str().to_ascii_uppercase()
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

mod cluster_health;
mod job_state;
pub mod reports;
mod role;

pub use cluster_health::{health, Health};
pub use job_state::{JobState, UnitState};
pub use role::Role;

/// A stored name that is not one of its enum's values.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} `{name}`")]
pub struct UnknownName {
    pub what: &'static str,
    pub name: String,
}
