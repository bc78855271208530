//! The roles a caller can have. `memberships.role` stores all but `platform_admin`, which is
//! a flag on the user; a test checks the table's CHECK against [`Role::MEMBERSHIP`].

named_enum! {
    /// A caller's effective role in a project, weakest first: `Ord` answers "at least".
    #[derive(PartialOrd, Ord)]
    pub enum Role("role") {
        Viewer = "viewer",
        Member = "member",
        ProjectAdmin = "project_admin",
        TenantAdmin = "tenant_admin",
        PlatformAdmin = "platform_admin",
    }
}

impl Role {
    /// The roles a membership row can hold.
    pub const MEMBERSHIP: [Role; 4] = [Role::Viewer, Role::Member, Role::ProjectAdmin, Role::TenantAdmin];
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_are_ordered_weakest_first() {
        assert!(Role::ALL.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(Role::parse("project_admin"), Some(Role::ProjectAdmin));
        assert_eq!(Role::ProjectAdmin.api_name(), "PROJECT_ADMIN");
        assert!(!Role::MEMBERSHIP.contains(&Role::PlatformAdmin));
    }
}
