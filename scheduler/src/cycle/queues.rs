//! Phase 2: the pending jobs, queue by queue in order of hierarchical fair-share deficit
//! (tenant, then project, then queue; in the node pool the queue's next job prefers, if it
//! names one), each queue's jobs
//! by priority then age; first each queue's jobs up to the first that would borrow, then the
//! borrowers by priority.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BinaryHeap, VecDeque};

use super::gang::lower_bound;
use super::{replica_targets, Cycle, TurnRank};
use crate::explain::Unplaced;
use crate::job::{Job, JobId, QueueId};
use crate::queue::{Admission, QuotaViolation};

/// Queue order: largest deficit first (tenant, then project, then queue), then lowest queue id.
/// `at`: the cycle's [`Cycle::usage_generation`] when the rank was computed.
struct QueueTurn {
    rank: TurnRank,
    queue: QueueId,
    at: usize,
}

impl PartialEq for QueueTurn {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for QueueTurn {}

impl Ord for QueueTurn {
    fn cmp(&self, other: &Self) -> Ordering {
        self.rank.cmp(&other.rank).then_with(|| other.queue.cmp(&self.queue))
    }
}

impl PartialOrd for QueueTurn {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<'a> Cycle<'a> {
    pub(super) fn serve_pending(&mut self, pending: &BTreeMap<JobId, &'a Job>) {
        let input = self.input;
        let mut per_queue: BTreeMap<QueueId, VecDeque<&Job>> = BTreeMap::new();
        let rest: Vec<&Job> =
            pending.values().copied().filter(|j| !self.unplaced.contains_key(&j.id) && !self.started(j.id)).collect();
        for j in rest {
            if input.queues.queue(j.queue).is_none() {
                let (queue, resource) = QuotaViolation::UnknownQueue(j.queue).describe();
                self.unplaced.insert(j.id, Unplaced::QueueLimit { queue, resource });
                continue;
            }
            per_queue.entry(j.queue).or_default().push_back(j);
        }
        for jobs in per_queue.values_mut() {
            jobs.make_contiguous().sort_by_key(|j| j.queue_order());
        }
        // Two passes, as Kueue orders its queue heads: first each queue's jobs up to the first
        // that would borrow, then the rest. A job that reclaims its guarantee thus starts
        // before the borrowed job it evicted can come back, even when the shell forgot the
        // eviction; inside a queue, priority order holds.
        let mut borrowing: BTreeMap<QueueId, VecDeque<&Job>> = BTreeMap::new();
        self.serve_queues(per_queue, Some(&mut borrowing));
        // Borrowed capacity goes by priority first (then deficit): a job entitled to preempt a
        // lower-priority borrower of its project is served before that borrower can come back.
        let mut levels: BTreeMap<std::cmp::Reverse<i32>, BTreeMap<QueueId, VecDeque<&Job>>> = BTreeMap::new();
        for (q, jobs) in borrowing {
            for j in jobs {
                levels.entry(std::cmp::Reverse(j.priority)).or_default().entry(q).or_default().push_back(j);
            }
        }
        for (_, level) in levels {
            self.serve_queues(level, None);
        }
    }

    /// Serves queues by deficit, one job at a time. With `defer`, a queue stops at its first job
    /// that would borrow: that job and the rest of the queue are set aside there, in order.
    pub(super) fn serve_queues(
        &mut self,
        mut per_queue: BTreeMap<QueueId, VecDeque<&'a Job>>,
        mut defer: Option<&mut BTreeMap<QueueId, VecDeque<&'a Job>>>,
    ) {
        let turn = |c: &Self, queue: QueueId, head: Option<&Job>| QueueTurn {
            rank: c.turn_rank(queue, head),
            queue,
            at: c.usage_generation(),
        };
        let mut heap: BinaryHeap<QueueTurn> =
            per_queue.iter().map(|(&q, jobs)| turn(self, q, jobs.front().copied())).collect();
        while let Some(top) = heap.pop() {
            let queue = top.queue;
            let jobs = per_queue.get_mut(&queue).expect("queued above");
            let Some(&head) = jobs.front() else { continue };
            // A job of a sibling queue lowers this queue's tenant and project deficits without
            // touching its entry: ranks only fall during a cycle, so an entry ranked before
            // usage last changed is re-ranked when it comes up, and served only if it still
            // comes first. (With one project, only a queue's own starts move its rank.)
            if self.levels_matter && top.at != self.usage_generation() {
                let fresh = turn(self, queue, Some(head));
                if heap.peek().is_some_and(|next| *next > fresh) {
                    heap.push(fresh);
                    continue;
                }
            }
            let Some(job) = jobs.pop_front() else { continue };
            if let Some(later) = defer.as_deref_mut() {
                if self.would_borrow(job) {
                    // The queue stops here for this pass: its later (lower-ranked) jobs must not
                    // overtake the one that borrows.
                    let later = later.entry(queue).or_default();
                    later.push_back(job);
                    later.extend(jobs.drain(..));
                    continue;
                }
            }
            self.consider(job, Vec::new());
            if let Some(next) = jobs.front().copied() {
                heap.push(turn(self, queue, Some(next)));
            }
        }
    }

    /// Whether the job's gang would go above its queue's guarantee (on the model-independent
    /// part of its request); jobs the quota refuses anyway are not deferred.
    pub(super) fn would_borrow(&self, job: &Job) -> bool {
        let lb = lower_bound(job, &replica_targets(job));
        matches!(self.usage.admit(&self.input.queues, job.queue, job.priority, &lb, true), Ok(Admission::Borrowing))
    }
}
