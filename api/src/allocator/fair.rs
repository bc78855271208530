//! Fleet-wide hierarchical fair share: the order in which a round serves waiting jobs.
//!
//! The tenant → project → queue tree with weights and guarantees (DESIGN.md, "Fair share is
//! hierarchical") shares the fleet's GPUs by grus-scheduler's hierarchical fill
//! ([`hierarchical_fair_shares`]), over each queue's GPUs held now plus those its waiting jobs
//! ask for. A round then serves, as the agent's cycle does, first the jobs admitted within
//! their queue's guarantee, then the borrowed ones by priority; inside each pass, turns go to
//! the tenant furthest below its fair share, inside it to the project furthest below, inside
//! that to the queue, and a queue's jobs by priority, then age. Each job taken counts as held
//! by its queue for the turns after it (a job that then fits nowhere costs its queue its place
//! for this round only).
//!
//! With `--fair-share-half-life`, what a level holds now is blended with its decayed past
//! share ([`roll_history`], stored per queue; a project's and a tenant's past is their queues'
//! together), so that a tenant that used the fleet lately waits behind one that did not.
//!
//! GPUs are the one resource at this level: the agents' schedulers share CPU and memory.

use std::collections::{BTreeMap, BinaryHeap, VecDeque};

use grus_scheduler::fairshare::{
    effective_share, hierarchical_fair_shares, FairShareConfig, PastUsage, QueueDemand, TreeShares,
};
use grus_scheduler::job::QueueId;
use grus_scheduler::queue::{
    Project, ProjectId, Queue, QueueError, Queues, ResourceKey, ResourceVector, Tenant, TenantId, WeightScale,
};

use super::fit::demand_of;
use super::PendingJob;

/// One level of the tree as stored: its id, its parent's id (none for a tenant), its weight,
/// guarantees and limits (quota keys, as admission names them).
#[derive(Clone, Debug, PartialEq)]
pub struct ShareNode {
    pub id: i64,
    pub parent: i64,
    pub name: String,
    pub weight: f64,
    pub guarantees: ResourceVector,
    /// Empty: unlimited.
    pub limits: ResourceVector,
}

/// The tree and what each queue holds, as the shell loads them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ShareTree {
    pub tenants: Vec<ShareNode>,
    /// `name`: the project's slug; `parent`: its tenant.
    pub projects: Vec<ShareNode>,
    /// `name`: the queue's name; `parent`: its project.
    pub queues: Vec<ShareNode>,
    /// GPU milli held now by each queue's running work, by queue id.
    pub held: BTreeMap<i64, u64>,
    /// GPU milli each queue's admitted jobs waiting for a cluster ask for, by queue id (the
    /// allocator passes its waiting jobs instead).
    pub wanted: BTreeMap<i64, u64>,
    /// GPUs of every cluster together, in milli.
    pub capacity_milli: u64,
    /// Each queue's weight per node pool where it differs from its weight, by queue id (the
    /// agents share pools by them; the fleet's GPUs are shared as one).
    pub pool_weights: BTreeMap<i64, BTreeMap<String, f64>>,
    /// Each queue's decayed past GPU usage (milli-seconds, key `Gpus`), by queue id.
    pub past: BTreeMap<i64, PastUsage>,
    /// How that history counts in the order (default: it does not), and when, in seconds since
    /// the Unix epoch, the order is taken.
    pub history: FairShareConfig,
    pub now_s: u64,
}

/// Each queue's decayed past GPU usage once what `held` says (GPU milli by queue id) has been
/// held since its last roll, rolled to `now_s`. A queue whose history decayed below a GPU-second
/// and that holds nothing is left out.
pub fn roll_history(
    past: &BTreeMap<i64, PastUsage>,
    held: &BTreeMap<i64, u64>,
    now_s: u64,
    half_life_s: u64,
) -> BTreeMap<i64, PastUsage> {
    let mut out = BTreeMap::new();
    let queues: std::collections::BTreeSet<i64> = past.keys().chain(held.keys()).copied().collect();
    for q in queues {
        let milli = held.get(&q).copied().unwrap_or(0);
        let usage = ResourceVector::new().with(ResourceKey::Gpus, milli);
        let after = PastUsage::rolled(past.get(&q), &usage, now_s, half_life_s);
        let left = after.amounts.get(&ResourceKey::Gpus).copied().unwrap_or(0.0);
        if milli > 0 || left >= f64::from(grus_scheduler::resources::MILLI_PER_GPU) {
            out.insert(q, after);
        }
    }
    out
}

/// The fleet's fair shares, and how to find a job's queue in them.
pub struct FleetShares {
    queues: Queues,
    /// (project slug, queue name) -> the scheduler's queue id.
    ids: BTreeMap<(String, String), QueueId>,
    /// Stored queue id -> the scheduler's.
    stored: BTreeMap<i64, QueueId>,
    shares: TreeShares,
    held: BTreeMap<QueueId, u64>,
    capacity_milli: u64,
    /// Each level's decayed past share, when history counts ([`ShareTree::history`]).
    past: PastShares,
    history: FairShareConfig,
}

#[derive(Default)]
struct PastShares {
    queues: BTreeMap<QueueId, f64>,
    projects: BTreeMap<ProjectId, f64>,
    tenants: BTreeMap<TenantId, f64>,
}

/// Every stored weight of the tree compared with every other.
fn weight_scale(tree: &ShareTree) -> WeightScale {
    WeightScale::of(tree.tenants.iter().chain(&tree.projects).chain(&tree.queues).map(|n| n.weight))
}

/// GPU milli a job's gang takes (its minimum members).
pub(crate) fn gpu_milli_of(job: &PendingJob) -> u64 {
    demand_of(&job.spec).iter().map(|g| g.members as u64 * g.gpus as u64 * g.milli as u64).sum()
}

impl FleetShares {
    /// Fair shares of `tree` given the `waiting` jobs' demand.
    pub fn new<'a>(tree: &ShareTree, waiting: impl IntoIterator<Item = &'a PendingJob>) -> Result<Self, QueueError> {
        let scale = weight_scale(tree);
        let index = |v: &[ShareNode]| v.iter().enumerate().map(|(i, n)| (n.id, i as u32)).collect::<BTreeMap<_, _>>();
        let (tenant_ix, project_ix) = (index(&tree.tenants), index(&tree.projects));
        let tenants = tree
            .tenants
            .iter()
            .map(|t| Tenant {
                weight: scale.weight(t.weight),
                guarantee: t.guarantees.clone(),
                limit: t.limits.clone(),
                ..Tenant::new(tenant_ix[&t.id], &t.name)
            })
            .collect();
        let projects: Vec<Project> = tree
            .projects
            .iter()
            .filter_map(|p| {
                let tenant = *tenant_ix.get(&p.parent)?;
                Some(Project {
                    weight: scale.weight(p.weight),
                    guarantee: p.guarantees.clone(),
                    limit: p.limits.clone(),
                    ..Project::new(project_ix[&p.id], tenant, &p.name)
                })
            })
            .collect();
        let mut ids = BTreeMap::new();
        let mut by_stored_id = BTreeMap::new();
        let mut queues = Vec::new();
        for (i, q) in tree.queues.iter().enumerate() {
            let Some(&project) = project_ix.get(&q.parent) else { continue };
            let id = QueueId(i as u32);
            let slug = tree.projects[project as usize].name.clone();
            ids.insert((slug, q.name.clone()), id);
            by_stored_id.insert(q.id, id);
            let mut queue = Queue::new(id.0, project, &q.name);
            queue.weight = scale.weight(q.weight);
            queue.guarantee = q.guarantees.clone();
            queue.limit = q.limits.clone();
            queues.push(queue);
        }
        let queues = Queues::new(tenants, projects, queues)?;
        let held: BTreeMap<QueueId, u64> =
            tree.held.iter().filter_map(|(stored, m)| Some((*by_stored_id.get(stored)?, *m))).collect();
        let mut wanted: BTreeMap<QueueId, u64> =
            tree.wanted.iter().filter_map(|(stored, m)| Some((*by_stored_id.get(stored)?, *m))).collect();
        for job in waiting {
            if let Some(q) = ids.get(&(job.spec.project.clone(), job.spec.queue.clone())) {
                *wanted.entry(*q).or_default() += gpu_milli_of(job);
            }
        }
        let gpus = |milli: u64| ResourceVector::new().with(ResourceKey::Gpus, milli);
        let demands: Vec<QueueDemand> = queues
            .queues()
            .map(|q| {
                let now = held.get(&q.id).copied().unwrap_or(0);
                QueueDemand {
                    queue: q.id,
                    weight: q.weight,
                    usage: gpus(now),
                    demand: gpus(now + wanted.get(&q.id).copied().unwrap_or(0)),
                    past: None,
                }
            })
            .collect();
        let shares =
            hierarchical_fair_shares(&gpus(tree.capacity_milli), &queues, &demands, &FairShareConfig::default(), 0);
        let mut past = PastShares::default();
        if let Some(half_life_s) = tree.history.half_life_s {
            for (stored, usage) in &tree.past {
                let Some(&q) = by_stored_id.get(stored) else { continue };
                // One resource: a level's past share is its queues' shares summed.
                let share = usage.dominant_share(&gpus(tree.capacity_milli), tree.now_s, half_life_s);
                let project = queues.project_of(q).expect("every queue is under a project");
                past.queues.insert(q, share);
                *past.projects.entry(project).or_default() += share;
                *past.tenants.entry(queues.project(project).tenant).or_default() += share;
            }
        }
        Ok(FleetShares {
            queues,
            ids,
            stored: by_stored_id,
            shares,
            held,
            capacity_milli: tree.capacity_milli,
            past,
            history: tree.history,
        })
    }

    /// A queue's fair share in GPU milli, and what it holds now (for display).
    pub fn of_queue(&self, project: &str, queue: &str) -> Option<(u64, u64)> {
        self.of(*self.ids.get(&(project.to_owned(), queue.to_owned()))?)
    }

    /// [`FleetShares::of_queue`] by the queue's stored id.
    pub fn of_stored_queue(&self, queue: i64) -> Option<(u64, u64)> {
        self.of(*self.stored.get(&queue)?)
    }

    fn of(&self, id: QueueId) -> Option<(u64, u64)> {
        let fair = self.shares.queues.get(&id).map_or(0.0, |s| s.fair);
        Some(((fair * self.capacity_milli as f64).round() as u64, self.held.get(&id).copied().unwrap_or(0)))
    }

    /// The waiting jobs in the order a round serves them, each once (see the module doc).
    pub fn serving_order<'a>(&self, waiting: impl IntoIterator<Item = &'a PendingJob>) -> Vec<&'a PendingJob> {
        let mut jobs: Vec<&PendingJob> = waiting.into_iter().collect();
        jobs.sort_by_key(|j| j.order_key());
        jobs.dedup_by_key(|j| j.id());
        let (within, borrowed): (Vec<&PendingJob>, Vec<&PendingJob>) = jobs.into_iter().partition(|j| !j.borrowed);
        let mut levels: BTreeMap<std::cmp::Reverse<i32>, Vec<&PendingJob>> = BTreeMap::new();
        for j in borrowed {
            levels.entry(std::cmp::Reverse(j.spec.priority)).or_default().push(j);
        }
        let mut held = Held::new(self);
        let mut order = held.turns(within);
        for (_, level) in levels {
            order.extend(held.turns(level));
        }
        order
    }
}

/// GPU milli held per queue, project and tenant as the order is built.
struct Held<'s> {
    fleet: &'s FleetShares,
    queues: BTreeMap<QueueId, u64>,
    projects: BTreeMap<ProjectId, u64>,
    tenants: BTreeMap<TenantId, u64>,
}

/// A queue's rank: (tenant deficit, tenant), (project deficit, project), queue deficit, then the
/// lower queue id; `None` for jobs of queues the tree does not know, served after the rest.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Rank {
    tenant: (f64, TenantId),
    project: (f64, ProjectId),
    queue: (f64, QueueId),
}

impl Eq for Rank {}

impl Ord for Rank {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.tenant
            .0
            .total_cmp(&o.tenant.0)
            .then_with(|| o.tenant.1.cmp(&self.tenant.1))
            .then_with(|| self.project.0.total_cmp(&o.project.0))
            .then_with(|| o.project.1.cmp(&self.project.1))
            .then_with(|| self.queue.0.total_cmp(&o.queue.0))
            .then_with(|| o.queue.1.cmp(&self.queue.1))
    }
}

impl PartialOrd for Rank {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}

impl<'s> Held<'s> {
    fn new(fleet: &'s FleetShares) -> Self {
        let mut h = Held { fleet, queues: BTreeMap::new(), projects: BTreeMap::new(), tenants: BTreeMap::new() };
        for (q, m) in &fleet.held {
            h.charge(*q, *m);
        }
        h
    }

    fn charge(&mut self, q: QueueId, milli: u64) {
        *self.queues.entry(q).or_default() += milli;
        if let Some(p) = self.fleet.queues.project_of(q) {
            *self.projects.entry(p).or_default() += milli;
            *self.tenants.entry(self.fleet.queues.project(p).tenant).or_default() += milli;
        }
    }

    fn rank(&self, q: QueueId) -> Rank {
        let fleet = self.fleet;
        let cap = fleet.capacity_milli.max(1) as f64;
        // What a level holds now, blended with its decayed past share when history counts.
        let share = |held: Option<&u64>, past: Option<&f64>| {
            let current = held.copied().unwrap_or(0) as f64 / cap;
            effective_share(current, past.copied().unwrap_or(0.0), &fleet.history)
        };
        let tree = &fleet.shares;
        let project = fleet.queues.project_of(q).expect("ranked queues are in the tree");
        let tenant = fleet.queues.project(project).tenant;
        let past = &fleet.past;
        Rank {
            tenant: (
                tree.tenants.get(&tenant).copied().unwrap_or(0.0)
                    - share(self.tenants.get(&tenant), past.tenants.get(&tenant)),
                tenant,
            ),
            project: (
                tree.projects.get(&project).copied().unwrap_or(0.0)
                    - share(self.projects.get(&project), past.projects.get(&project)),
                project,
            ),
            queue: (tree.queues.get(&q).map_or(0.0, |s| s.fair) - share(self.queues.get(&q), past.queues.get(&q)), q),
        }
    }

    /// One pass: `jobs` (in priority, age order) taken turn by turn.
    fn turns<'a>(&mut self, jobs: Vec<&'a PendingJob>) -> Vec<&'a PendingJob> {
        let mut per_queue: BTreeMap<QueueId, VecDeque<&'a PendingJob>> = BTreeMap::new();
        let mut unknown = Vec::new();
        for j in jobs {
            match self.fleet.ids.get(&(j.spec.project.clone(), j.spec.queue.clone())) {
                Some(q) => per_queue.entry(*q).or_default().push_back(j),
                None => unknown.push(j),
            }
        }
        let mut heap: BinaryHeap<Rank> = per_queue.keys().map(|q| self.rank(*q)).collect();
        let mut order = Vec::new();
        while let Some(top) = heap.pop() {
            let q = top.queue.1;
            // Another queue's job lowers this one's tenant and project deficits without
            // touching its entry; ranks only fall, so a stale entry is re-ranked when it comes
            // up and served only if it still comes first.
            let fresh = self.rank(q);
            if fresh != top && heap.peek().is_some_and(|next| *next > fresh) {
                heap.push(fresh);
                continue;
            }
            let queue = per_queue.get_mut(&q).expect("ranked above");
            let Some(job) = queue.pop_front() else { continue };
            self.charge(q, gpu_milli_of(job));
            order.push(job);
            if !queue.is_empty() {
                heap.push(self.rank(q));
            }
        }
        order.extend(unknown);
        order
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use grus_protocol::wire::{JobSpec, ResourcesSpec, TaskSpec};

    fn node(id: i64, parent: i64, name: &str, weight: f64) -> ShareNode {
        ShareNode {
            id,
            parent,
            name: name.into(),
            weight,
            guarantees: ResourceVector::new(),
            limits: ResourceVector::new(),
        }
    }

    fn job(id: u64, project: &str, queue: &str, gpus: u32, priority: i32, borrowed: bool) -> PendingJob {
        let spec = JobSpec {
            id,
            name: format!("j{id}"),
            project: project.into(),
            queue: queue.into(),
            priority,
            preemptible: true,
            may_preempt: true,
            tasks: vec![TaskSpec {
                name: "main".into(),
                replicas: 1,
                image: "img".into(),
                command: vec![],
                env: BTreeMap::new(),
                resources: ResourcesSpec { gpus, cpu_milli: 1000, memory_mib: 1024, ..ResourcesSpec::default() },
                topology: None,
            }],
            gang: None,
            elastic: None,
            policies: vec![],
            max_runtime_s: None,
            min_runtime_s: None,
            predicted_runtime_s: None,
            labels: BTreeMap::new(),
            node_selector: BTreeMap::new(),
            pools: Vec::new(),
            submitted_by: "u".into(),
            submitted_at_ms: id as i64,
            checkpoint: None,
            workspace: None,
            service: None,
        };
        PendingJob { spec, cluster_selector: BTreeMap::new(), attempts: Vec::new(), epoch: 0, borrowed }
    }

    /// Tenants 1 (projects `a`, `b`) and 2 (project `c`); one queue `q` per project.
    fn tree(held: &[(i64, u64)]) -> ShareTree {
        ShareTree {
            tenants: vec![node(1, 0, "t1", 1.0), node(2, 0, "t2", 1.0)],
            projects: vec![node(10, 1, "a", 1.0), node(11, 1, "b", 1.0), node(12, 2, "c", 1.0)],
            queues: vec![node(100, 10, "q", 1.0), node(101, 11, "q", 1.0), node(102, 12, "q", 1.0)],
            held: held.iter().copied().collect(),
            capacity_milli: 16_000,
            ..ShareTree::default()
        }
    }

    fn ids(order: &[&PendingJob]) -> Vec<u64> {
        order.iter().map(|j| j.id()).collect()
    }

    /// Fair share with decayed usage (issue 20): of two tenants holding nothing now, the one
    /// whose queue used the fleet lately is served after the other, and only while history
    /// counts; its past fades by half every half-life.
    #[test]
    fn a_tenant_that_used_the_fleet_lately_is_served_after_one_that_did_not() {
        const HOUR: u64 = 3600;
        let waiting = vec![job(1, "a", "q", 4, 0, false), job(2, "c", "q", 4, 0, false)];
        let now = 1_700_000_000;
        // Queue 100 (tenant 1) held 8 of 16 GPUs for the last two hours.
        let past = roll_history(&BTreeMap::new(), &[(100, 8_000)].into(), now - 2 * HOUR, HOUR);
        let past = roll_history(&past, &[(100, 8_000)].into(), now, HOUR);
        let with_history =
            |history: FairShareConfig| ShareTree { past: past.clone(), history, now_s: now, ..tree(&[]) };
        let ignored = FleetShares::new(&with_history(FairShareConfig::default()), &waiting).unwrap();
        assert_eq!(ids(&ignored.serving_order(&waiting)), vec![1, 2], "the lower tenant id first on a tie");
        let counted = FairShareConfig { half_life_s: Some(HOUR), history_weight: 0.5 };
        let fleet = FleetShares::new(&with_history(counted), &waiting).unwrap();
        assert_eq!(ids(&fleet.serving_order(&waiting)), vec![2, 1]);

        // Holding nothing, the history halves every half-life, and is dropped once negligible.
        let gpus = |p: &BTreeMap<i64, PastUsage>| p[&100].amounts[&ResourceKey::Gpus];
        let later = roll_history(&past, &BTreeMap::new(), now + HOUR, HOUR);
        assert!((gpus(&later) - gpus(&past) / 2.0).abs() < 1e-6 * gpus(&past));
        assert!(roll_history(&past, &BTreeMap::new(), now + 40 * HOUR, HOUR).is_empty());
        // A queue seen for the first time starts with nothing behind it.
        let first = roll_history(&BTreeMap::new(), &[(101, 1_000)].into(), now, HOUR);
        assert_eq!((gpus_of(&first, 101), first[&101].as_of), (0.0, now));
    }

    fn gpus_of(p: &BTreeMap<i64, PastUsage>, q: i64) -> f64 {
        p[&q].amounts.get(&ResourceKey::Gpus).copied().unwrap_or(0.0)
    }

    #[test]
    fn turns_alternate_between_tenants_not_between_projects() {
        // Tenant 1's two projects each wait with 4 jobs, tenant 2's one project with 4: tenant 2
        // gets every other turn, although it has one project of three.
        let mut waiting = Vec::new();
        for (p, base) in [("a", 10), ("b", 20), ("c", 30)] {
            for i in 0..4 {
                waiting.push(job(base + i, p, "q", 2, 0, false));
            }
        }
        let fleet = FleetShares::new(&tree(&[]), &waiting).unwrap();
        let order = ids(&fleet.serving_order(&waiting));
        let tenant2: Vec<usize> = order.iter().enumerate().filter(|(_, j)| **j >= 30).map(|(i, _)| i).collect();
        assert_eq!(&tenant2[..3], &[1, 3, 5], "{order:?}");
    }

    #[test]
    fn a_tenant_holding_more_than_its_share_waits_behind_older_jobs_of_others_and_priority_orders_a_queue() {
        // Tenant 1 holds 12 of 16 GPUs: tenant 2's jobs go first though they are younger; inside
        // tenant 2's queue the higher priority first.
        let waiting = vec![
            job(1, "a", "q", 2, 0, false),
            job(5, "c", "q", 2, 0, false),
            job(6, "c", "q", 2, 5, false),
            job(7, "c", "q", 4, 0, false),
        ];
        let fleet = FleetShares::new(&tree(&[(100, 12_000)]), &waiting).unwrap();
        assert_eq!(ids(&fleet.serving_order(&waiting)), vec![6, 5, 7, 1]);
        assert_eq!(fleet.of_queue("a", "q").map(|(_, held)| held), Some(12_000));
    }

    #[test]
    fn borrowed_jobs_come_after_jobs_within_their_guarantee_and_by_priority() {
        let waiting = vec![job(1, "c", "q", 1, 0, true), job(2, "a", "q", 1, 9, true), job(3, "b", "q", 1, 0, false)];
        let fleet = FleetShares::new(&tree(&[]), &waiting).unwrap();
        assert_eq!(ids(&fleet.serving_order(&waiting)), vec![3, 2, 1]);
    }

    #[test]
    fn weights_and_guarantees_shape_the_fair_shares() {
        let mut t = tree(&[]);
        t.tenants[1].weight = 3.0;
        t.projects[0].guarantees = ResourceVector::new().with_gpus(6);
        let waiting: Vec<PendingJob> =
            [("a", 1), ("b", 2), ("c", 3)].iter().map(|(p, i)| job(*i, p, "q", 16, 0, false)).collect();
        let fleet = FleetShares::new(&t, &waiting).unwrap();
        let fair = |p| fleet.of_queue(p, "q").unwrap().0;
        // Project a's guarantee of 6 first; the other 10 then go 1 : 3 between the tenants
        // (2.5 and 7.5), tenant 1's half and half between its projects.
        for (p, want) in [("a", 7_250), ("b", 1_250), ("c", 7_500)] {
            assert!(fair(p).abs_diff(want) <= 1, "{p}: {}", fair(p));
        }
    }
}
