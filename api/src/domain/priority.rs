//! Priority classes and a tenant's rights over them. `jobs.priority_class` and
//! `tenants.max_priority_class` store [`PriorityClass::as_str`]; a test checks the latter's CHECK
//! against [`PriorityClass::ALL`].

named_enum! {
    /// A job's priority class: its value orders allocator rounds and decides who may preempt
    /// whom (DESIGN.md defaults).
    pub enum PriorityClass("priority class") {
        /// Runs when nothing else wants the room.
        Low = "low",
        /// The default.
        Normal = "normal",
        High = "high",
        /// Reserved for work a tenant is allowed to put ahead of everything else.
        Critical = "critical",
    }
}

impl PriorityClass {
    /// The numeric priority jobs of this class carry.
    pub const fn value(self) -> i32 {
        match self {
            PriorityClass::Low => 0,
            PriorityClass::Normal => 100,
            PriorityClass::High => 1000,
            PriorityClass::Critical => 10000,
        }
    }

    /// The names, lowest first, for messages.
    pub fn names() -> String {
        PriorityClass::ALL.map(PriorityClass::as_str).join(", ")
    }
}

/// What a tenant's members may do to others' work, inherited by every project of the tenant
/// (the OpenI-Octopus requirement: tenants with different priority and preemption rights).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TenantRights {
    /// The highest class its members may submit at or raise a job to.
    pub max_priority_class: PriorityClass,
    /// Whether its jobs may have others' work evicted to make room.
    pub may_preempt: bool,
    /// Whose borrowed work its jobs may reclaim: every tenant's (`None`), or only these
    /// tenants' (its own always).
    pub reclaim_from: Option<std::collections::BTreeSet<u64>>,
}

impl Default for TenantRights {
    /// A new tenant's: up to `high`, may preempt, from anyone (what every tenant could do
    /// before rights existed, except `critical`).
    fn default() -> Self {
        TenantRights { max_priority_class: PriorityClass::High, may_preempt: true, reclaim_from: None }
    }
}

impl TenantRights {
    /// Whether a job of class `class` is allowed; the refusal names the limit.
    pub fn allows_class(&self, class: PriorityClass, tenant: &str) -> Result<(), String> {
        if class.value() <= self.max_priority_class.value() {
            return Ok(());
        }
        Err(format!(
            "tenant {tenant} allows priority classes up to {} (a platform admin can change the tenant's rights)",
            self.max_priority_class
        ))
    }

    /// Whether a job of tenant `own` may have work of tenant `victim` evicted.
    pub fn may_reclaim_from(&self, own: u64, victim: u64) -> bool {
        self.may_preempt && (own == victim || self.reclaim_from.as_ref().is_none_or(|from| from.contains(&victim)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_are_ordered_by_value_and_rights_cap_them() {
        let values: Vec<i32> = PriorityClass::ALL.map(PriorityClass::value).to_vec();
        assert!(values.windows(2).all(|w| w[0] < w[1]), "{values:?}");
        let rights = TenantRights::default();
        assert!(rights.allows_class(PriorityClass::High, "acme").is_ok());
        let refused = rights.allows_class(PriorityClass::Critical, "acme").unwrap_err();
        assert!(refused.contains("acme") && refused.contains("up to high"), "{refused}");
    }

    #[test]
    fn reclaim_rights_name_the_tenants_and_always_include_ones_own() {
        let any = TenantRights::default();
        assert!(any.may_reclaim_from(1, 2));
        let only_3 = TenantRights { reclaim_from: Some([3].into()), ..TenantRights::default() };
        assert!(only_3.may_reclaim_from(1, 3) && only_3.may_reclaim_from(1, 1) && !only_3.may_reclaim_from(1, 2));
        let none = TenantRights { may_preempt: false, ..TenantRights::default() };
        assert!(!none.may_reclaim_from(1, 1) && !none.may_reclaim_from(1, 2));
    }
}
