//! What an operator did, as the audit log records it. `audit_events.action` stores
//! [`AuditAction::as_str`]; a test checks that column's CHECK against [`AuditAction::ALL`].

named_enum! {
    /// An operation on the fleet or the tenancy that is recorded in the audit log.
    pub enum AuditAction("audit action") {
        /// A cluster stopped taking new work.
        ClusterCordon = "cluster_cordon",
        /// A cluster stopped taking new work and its preemptible work was sent elsewhere.
        ClusterDrain = "cluster_drain",
        /// A cluster takes new work again.
        ClusterUncordon = "cluster_uncordon",
        /// An empty cluster was retired: its agent token stops working.
        ClusterRetire = "cluster_retire",
        /// A node stopped taking new work.
        NodeCordon = "node_cordon",
        /// A node stopped taking new work and its preemptible work was sent elsewhere.
        NodeDrain = "node_drain",
        /// A node takes new work again.
        NodeUncordon = "node_uncordon",
        /// A cluster's agent token was replaced.
        AgentTokenRotate = "agent_token_rotate",
        /// An empty queue was deleted.
        QueueDelete = "queue_delete",
        /// An empty project was deleted.
        ProjectDelete = "project_delete",
        /// A monthly budget was set or changed.
        BudgetSet = "budget_set",
        /// A monthly budget was removed.
        BudgetRemove = "budget_remove",
    }
}
