//! The job state machine of DESIGN.md (plus `rejected`: an agent refused the dispatch, and
//! `unknown`: its cluster went silent) and the task/replica machine.
//!
//! Copies that cannot be derived from these definitions are checked by tests: the CHECK
//! constraints of `jobs.state`, `tasks.state` and `replicas.state` and the SQL function
//! `job_state_holds_quota` (`api/tests`, against the migrated schema), and the GraphQL enum
//! `JobState` in the committed SDL.

named_enum! {
    /// A job's state.
    pub enum JobState("job state") {
        Pending = "pending",
        Admitted = "admitted",
        Dispatched = "dispatched",
        Rejected = "rejected",
        Scheduled = "scheduled",
        Running = "running",
        Preempting = "preempting",
        Preempted = "preempted",
        Succeeded = "succeeded",
        Failed = "failed",
        Cancelled = "cancelled",
        /// Was running (or scheduled) in a cluster that stopped answering for longer than the loss
        /// timeout: it may still run there, so it is neither re-dispatched nor trusted as running
        /// until the agent reports it again.
        Unknown = "unknown",
        /// Suspended by a user (`suspendJob`): holds no capacity and no quota, keeps its history,
        /// and waits for `resumeJob`, which admits it again.
        Suspended = "suspended",
    }
}

impl JobState {
    /// Final: nothing moves a job out of these.
    pub fn is_terminal(self) -> bool {
        matches!(self, JobState::Succeeded | JobState::Failed | JobState::Cancelled)
    }

    /// Whether a job in this state holds its queue's quota: admitted and not yet ended or
    /// preempted. A preempted job gives its quota back; requeueing it goes through admission
    /// again. (The database's usage trigger asks `job_state_holds_quota`, checked against this.)
    pub fn holds_quota(self) -> bool {
        use JobState::*;
        matches!(self, Admitted | Dispatched | Rejected | Scheduled | Running | Preempting | Unknown)
    }

    /// Whether a cluster holds (or may hold) capacity for the job: dispatched and not yet
    /// ended, preempted or suspended. Fair share counts these as the queue's work.
    pub fn holds_capacity(self) -> bool {
        use JobState::*;
        matches!(self, Dispatched | Scheduled | Running | Preempting | Unknown)
    }

    /// Waiting for a cluster: no cluster holds the job under its current epoch (not dispatched
    /// yet, or its last dispatch was rejected, timed out or ended by preemption). Reports about
    /// such a job come from a fenced-off dispatch: they may close that dispatch, never move the
    /// job (a Cancel answered after a timeout would otherwise cancel a job nobody cancelled).
    pub fn awaits_dispatch(self) -> bool {
        use JobState::*;
        matches!(self, Pending | Admitted | Rejected | Preempted | Suspended)
    }

    /// Whether it waits to start: submitted, not running, not ended, and not held back by a
    /// person (a suspended job waits for `resumeJob`, not its turn). These jobs form a queue's
    /// line (`db::queue_position`).
    pub fn waits_to_start(self) -> bool {
        use JobState::*;
        matches!(self, Pending | Admitted | Dispatched | Rejected | Scheduled | Preempted)
    }

    /// Whether `suspendJob` may stop it: admitted, not ended and not suspended already.
    pub fn may_suspend(self) -> bool {
        !self.is_terminal() && !matches!(self, JobState::Suspended | JobState::Pending)
    }

    /// Whether the state machine allows `self -> to`. Terminal states are final; any live
    /// state may be cancelled or fail.
    pub fn can_become(self, to: JobState) -> bool {
        use JobState::*;
        if self.is_terminal() || self == to {
            return false;
        }
        if matches!(to, Cancelled | Failed) {
            return true;
        }
        matches!(
            (self, to),
            (Pending, Admitted)
                | (Admitted, Dispatched)
                | (Dispatched, Scheduled | Running | Rejected)
                | (Rejected, Dispatched | Admitted | Pending)
                | (Scheduled, Running | Preempting | Succeeded)
                // Placed but given back before anything ran: the agent learnt that its placement
                // reached the control plane after the dispatch's answer deadline.
                | (Scheduled, Rejected)
                | (Running, Succeeded | Preempting)
                // The preemptor no longer needs the room: eviction is called off.
                | (Preempting, Preempted | Running | Scheduled | Succeeded)
                | (Preempted, Admitted | Pending)
                // Suspended once admitted where no cluster holds it (after its eviction, if one
                // did), and resumed through admission again.
                | (Admitted | Rejected | Preempted, Suspended)
                | (Suspended, Admitted)
                // Its cluster went silent past the loss timeout ...
                | (Scheduled | Running | Preempting, Unknown)
                // ... and came back reporting it (or its end).
                | (Unknown, Scheduled | Running | Preempting | Preempted | Succeeded)
        )
    }
}

named_enum! {
    /// A task's or replica's state (DESIGN.md: Pending -> Placed -> Running -> Succeeded |
    /// Failed | Evicted; `cancelled` when its job is cancelled before it ends).
    pub enum UnitState("task or replica state") {
        Pending = "pending",
        Placed = "placed",
        Running = "running",
        Succeeded = "succeeded",
        Failed = "failed",
        Evicted = "evicted",
        Cancelled = "cancelled",
    }
}

impl UnitState {
    /// Still to run or running: pending, placed, running.
    pub fn is_live(self) -> bool {
        matches!(self, UnitState::Pending | UnitState::Placed | UnitState::Running)
    }

    /// Whether `self -> to` is allowed. A failed or evicted unit may go back to `pending`
    /// (a restart policy, or a requeued job), and an evicted replica may be placed or run again
    /// (an elastic job that gave it back in a shrink grows back into it); succeeded and
    /// cancelled are final.
    pub fn can_become(self, to: UnitState) -> bool {
        use UnitState::*;
        match (self, to) {
            (a, b) if a == b => false,
            (Succeeded | Cancelled, _) => false,
            (Failed | Evicted, Pending) | (Evicted, Placed | Running) => true,
            (Failed | Evicted, _) => false,
            (_, Failed | Evicted | Cancelled) => true,
            (Pending, Placed | Running) | (Placed, Running | Pending) | (Running, Succeeded) => true,
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_are_refused() {
        for s in JobState::ALL {
            assert_eq!(s.as_str().parse::<JobState>(), Ok(s));
        }
        for s in UnitState::ALL {
            assert_eq!(UnitState::parse(s.as_str()), Some(s));
        }
        let e = "queued".parse::<JobState>().unwrap_err();
        assert_eq!(e.to_string(), "unknown job state `queued`");
        assert_eq!(JobState::Preempting.api_name(), "PREEMPTING");
    }

    #[test]
    fn a_suspended_job_holds_nothing_and_leaves_only_through_admission_or_cancel() {
        use JobState::*;
        assert!(!Suspended.holds_quota() && Suspended.awaits_dispatch());
        let out: Vec<JobState> = JobState::ALL.into_iter().filter(|to| Suspended.can_become(*to)).collect();
        assert_eq!(out, [Admitted, Failed, Cancelled]);
        // A cluster never holds a suspended job: only states without one lead into it.
        for from in JobState::ALL.into_iter().filter(|s| s.can_become(Suspended)) {
            assert!(from.awaits_dispatch(), "{from}");
        }
        assert!(Running.may_suspend() && Admitted.may_suspend());
        assert!(!Suspended.may_suspend() && !Succeeded.may_suspend() && !Pending.may_suspend());
    }

    #[test]
    fn a_replica_given_back_by_a_shrink_may_be_placed_again_and_a_finished_one_may_not() {
        use UnitState::*;
        assert!(Evicted.can_become(Placed) && Evicted.can_become(Running));
        assert!(!Failed.can_become(Placed) && !Succeeded.can_become(Placed) && !Cancelled.can_become(Running));
    }

    #[test]
    fn terminal_states_are_final_and_hold_no_quota() {
        for from in JobState::ALL.into_iter().filter(|s| s.is_terminal()) {
            assert!(!from.holds_quota(), "{from}");
            assert!(JobState::ALL.into_iter().all(|to| !from.can_become(to)), "{from}");
        }
    }

    #[test]
    fn a_job_holds_quota_from_admission_until_it_ends_or_is_preempted() {
        use JobState::*;
        assert!(!Pending.holds_quota());
        assert!(Admitted.holds_quota());
        assert!(!Preempted.holds_quota());
        // Every way into admission starts holding quota (a resumed job is admitted again
        // against current usage: `admission::resume`).
        for from in JobState::ALL.into_iter().filter(|s| !s.holds_quota() && s.can_become(Admitted)) {
            assert!(matches!(from, Pending | Preempted | Suspended), "{from}");
        }
    }
}
