//! Property tests of the scheduling cycle: random clusters, queues and job mixes, several
//! cycles with jobs finishing and evictions completing; every invariant is checked after
//! every cycle.

use std::collections::{BTreeMap, BTreeSet};

use crate::common::Sim;
use grus_scheduler::cluster::{Cluster, NodeSpec};
use grus_scheduler::cycle::{replica_targets, schedule, Decision, Decisions};
use grus_scheduler::job::{Elastic, Job, JobId, QueueId, Resources, TopologyScope};
use grus_scheduler::queue::{classify_borrowed, HeldUsage, Project, Queue, Queues, ResourceVector, Tenant, Usage};
use proptest::prelude::*;

const MODELS: [&str; 2] = ["A100", "T4"];
const PRIORITIES: [i32; 3] = [0, 100, 1000];

#[derive(Clone, Debug)]
struct NodeGen {
    gpus: usize,
    model: usize,
    rack: u8,
}

#[derive(Clone, Debug)]
struct QueueGen {
    guarantee: u64,
    extra_limit: Option<u64>,
    can_borrow: bool,
    weight: u32,
}

#[derive(Clone, Debug)]
struct JobGen {
    queue: usize,
    replicas: u32,
    gpus: u32,
    share: Option<u32>,
    min_members: u32,
    priority: usize,
    elastic: bool,
    max_runtime: Option<u64>,
    min_runtime: u64,
    preemptible: bool,
    scope: u8,
    model: Option<usize>,
    /// An elastic job's maximum above its replicas.
    headroom: u32,
}

fn node_gen() -> impl Strategy<Value = NodeGen> {
    (0usize..=8, 0usize..2, 0u8..2).prop_map(|(gpus, model, rack)| NodeGen { gpus, model, rack })
}

fn queue_gen() -> impl Strategy<Value = QueueGen> {
    (0u64..8, proptest::option::of(0u64..8), any::<bool>(), 1u32..4).prop_map(
        |(guarantee, extra_limit, can_borrow, weight)| QueueGen { guarantee, extra_limit, can_borrow, weight },
    )
}

fn job_gen() -> impl Strategy<Value = JobGen> {
    (
        (0usize..3, 1u32..4, 0u32..5, proptest::option::of(100u32..900), 0u32..4, 0usize..3),
        (any::<bool>(), proptest::option::of(10u64..200), prop_oneof![Just(0u64), 10u64..100], any::<bool>()),
        (0u8..6, proptest::option::of(0usize..2), 0u32..6),
    )
        .prop_map(
            |(
                (queue, replicas, gpus, share, min_members, priority),
                (elastic, max_runtime, min_runtime, preemptible),
                (scope, model, headroom),
            )| JobGen {
                queue,
                replicas,
                gpus,
                share,
                min_members: min_members.min(replicas),
                priority,
                elastic,
                max_runtime,
                min_runtime,
                preemptible: preemptible || priority == 0,
                scope,
                model,
                headroom,
            },
        )
}

fn build_job(id: u64, g: &JobGen, queues: usize) -> Job {
    let resources = match (g.gpus, g.share) {
        (0, _) => Resources { cpu_milli: 1000, memory_mib: 1024, ..Resources::default() },
        (1, Some(milli)) => Resources::gpu_share(milli, 1000, 1024),
        (n, _) => Resources::whole_gpus(n, 1000, 1024),
    };
    let mut j = Job::single(id, (g.queue % queues) as u32, g.replicas, resources);
    if let Some(m) = g.model {
        if g.gpus > 0 {
            j.tasks[0].resources.gpu_models = vec![MODELS[m].to_string()];
        }
    }
    j.priority = PRIORITIES[g.priority];
    j.preemptible = g.preemptible;
    // Some non-preemptible jobs checkpoint: consolidation may move them.
    j.checkpoints = !g.preemptible && g.headroom.is_multiple_of(2);
    j.min_runtime_s = g.min_runtime;
    j.max_runtime_s = g.max_runtime;
    j.tasks[0].topology = match g.scope {
        1 => TopologyScope::Node,
        2 => TopologyScope::NvLink,
        3 => TopologyScope::Rack,
        _ => TopologyScope::Any,
    };
    if g.elastic {
        j.elastic = Some(Elastic { min: g.min_members.max(1), max: g.replicas + 1 + g.headroom });
        j.tasks[0].replicas = g.min_members.max(1);
    } else {
        j.min_members = g.min_members;
    }
    j
}

fn build_cluster(nodes: &[NodeGen]) -> Cluster {
    Cluster::new(
        nodes
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let mut spec = NodeSpec::new(&format!("n{i}"), 32_000, 1 << 18, n.gpus, MODELS[n.model]);
                spec.rack = Some(format!("r{}", n.rack));
                for (k, g) in spec.gpus.iter_mut().enumerate() {
                    g.nvlink_group = (k / 4) as u8;
                }
                spec
            })
            .collect(),
    )
    .unwrap()
}

fn build_queues(gens: &[QueueGen]) -> Vec<Queue> {
    gens.iter()
        .enumerate()
        .map(|(i, g)| {
            // Two projects, so that project-level preemption and limits both come up.
            let mut q = Queue::new(i as u32, (i % 2) as u32, &format!("q{i}"));
            q.guarantee = ResourceVector::new().with_gpus(g.guarantee);
            if let Some(extra) = g.extra_limit {
                q.limit = ResourceVector::new().with_gpus(g.guarantee + extra);
            }
            q.can_borrow = g.can_borrow;
            q.weight = g.weight;
            q
        })
        .collect()
}

fn usage(sim: &Sim) -> Usage {
    let mut u = Usage::default();
    for r in &sim.input.running {
        u.add(
            r.job.queue,
            r.job.priority,
            &ResourceVector::of_allocations(&sim.input.cluster, r.replicas.iter().map(|p| &p.allocation)),
        );
    }
    u
}

/// Checks a cycle's decisions against the state they were made on.
fn check_decisions(sim: &Sim, d: &Decisions) {
    let input = &sim.input;
    let job_of = |id: JobId| input.running.iter().find(|r| r.job.id == id).map(|r| &r.job);
    let pending_of = |id: JobId| input.pending.iter().find(|j| j.id == id);
    // Borrowed status as it stands once this cycle's starts run (a started higher-priority job
    // takes the guarantee before older lower-priority work).
    let mut held: Vec<HeldUsage> = input
        .running
        .iter()
        .map(|r| HeldUsage {
            job: r.job.id,
            queue: r.job.queue,
            priority: r.job.priority,
            started_at: r.started_at,
            usage: ResourceVector::of_allocations(&input.cluster, r.replicas.iter().map(|p| &p.allocation)),
        })
        .collect();
    for (id, replicas) in d.starts() {
        let j = pending_of(id).expect("only pending jobs start");
        held.push(HeldUsage {
            job: id,
            queue: j.queue,
            priority: j.priority,
            started_at: input.now,
            usage: ResourceVector::of_allocations(&input.cluster, replicas.iter().map(|p| &p.allocation)),
        });
    }
    let borrowed = classify_borrowed(&input.queues, &held);
    let running: BTreeSet<JobId> = input.running.iter().map(|r| r.job.id).collect();
    let mut in_flight: BTreeSet<JobId> =
        input.evictions.iter().map(|e| e.victim).filter(|v| running.contains(v)).collect();
    let mut evicted_now = BTreeSet::new();
    // A shrink in flight may become an eviction (it no longer suffices).
    let shrinking: BTreeSet<JobId> = input.evictions.iter().filter(|e| e.shrink).map(|e| e.victim).collect();
    for decision in &d.decisions {
        match decision {
            Decision::Start { job, replicas, .. } => {
                let j = pending_of(*job).expect("only pending jobs start");
                // Gangs are all-or-nothing: every task has at least its required replicas.
                for (i, &(required, target)) in replica_targets(j).iter().enumerate() {
                    let n = replicas.iter().filter(|p| p.task == i).count() as u32;
                    assert!(n >= required && n <= target, "job {job:?} task {i}: {n} of {required}..={target}");
                }
            }
            Decision::Grow { job, .. } => {
                assert!(job_of(*job).is_some(), "only running jobs grow");
            }
            Decision::Evict { job, preemptor, .. } => {
                let victim = job_of(*job).expect("a victim is a running job (whole job, never a replica)");
                let r = input.running.iter().find(|r| r.job.id == *job).unwrap();
                assert!(!r.privileged, "a privileged job is never a victim");
                assert!(victim.preemptible, "a non-preemptible job is never a victim");
                assert!(
                    (in_flight.insert(*job) || shrinking.contains(job)) && evicted_now.insert(*job),
                    "job {job:?} is evicted twice: in flight {:?}; {}",
                    input.evictions,
                    summary(sim, d)
                );
                let p = pending_of(*preemptor).expect("the preemptor is pending");
                assert!(victim.priority <= p.priority, "never a higher-priority victim for a lower-priority job");
                if victim.queue == p.queue {
                    assert!(victim.priority < p.priority, "same queue: strictly lower priority");
                } else {
                    assert!(
                        borrowed.contains(job),
                        "guaranteed usage of queue {:?} preempted for queue {:?}",
                        victim.queue,
                        p.queue
                    );
                }
                assert!(input.now.saturating_sub(r.started_at) >= victim.min_runtime_s, "minimum runtime respected");
            }
            Decision::Shrink { job, replicas, preemptor, .. } => {
                let r = input.running.iter().find(|r| r.job.id == *job).expect("only running jobs shrink");
                let e = r.job.elastic.expect("only elastic jobs shrink");
                assert!(!replicas.is_empty(), "a shrink gives back something");
                for p in replicas {
                    assert!(r.replicas.contains(p), "a shrink gives back replicas the job holds");
                }
                assert!(
                    r.replicas.len() - replicas.len() >= e.min as usize,
                    "job {job:?} shrunk below its minimum {}: {} of {} given back",
                    e.min,
                    replicas.len(),
                    r.replicas.len()
                );
                assert!(!r.privileged && r.job.preemptible, "only preemptible, unprivileged jobs shrink");
                let p = pending_of(*preemptor).expect("the preemptor is pending");
                assert!(r.job.priority <= p.priority, "never shrunk for a lower-priority job");
                if r.job.queue == p.queue {
                    assert!(r.job.priority < p.priority, "same queue: strictly lower priority");
                } else {
                    assert!(borrowed.contains(job), "guaranteed usage shrunk for another queue");
                }
                in_flight.insert(*job);
            }
            Decision::Move { job, preemptor, .. } => {
                let r = input.running.iter().find(|r| r.job.id == *job).expect("only running jobs move, whole");
                assert!(!r.privileged, "a privileged job is never moved");
                assert!(r.job.preemptible || r.job.checkpoints, "only preemptible or checkpointing jobs move");
                assert!(
                    (in_flight.insert(*job) || shrinking.contains(job)) && evicted_now.insert(*job),
                    "job {job:?} is moved twice: in flight {:?}; {}",
                    input.evictions,
                    summary(sim, d)
                );
                let p = pending_of(*preemptor).expect("the gang a move makes room for is pending");
                assert!(r.job.priority <= p.priority, "never moved for a less important gang");
                assert!(input.now.saturating_sub(r.started_at) >= r.job.min_runtime_s, "minimum runtime respected");
            }
            Decision::CancelEviction { job, .. } => {
                assert!(in_flight.remove(job), "only in-flight evictions are cancelled");
            }
        }
    }
    // Consolidation's bounds: the rate limit over the last hour, and the disruption budget of
    // jobs of one queue being moved at once.
    let limits = sim.config.consolidation;
    let moved_now = d.moves().count() as u32;
    assert!(moved_now == 0 || input.recent_moves + moved_now <= limits.max_moves_per_hour, "rate limit exceeded");
    let mut moving: BTreeMap<QueueId, u32> = BTreeMap::new();
    let cancelled: BTreeSet<JobId> = d
        .decisions
        .iter()
        .filter_map(|x| match x {
            Decision::CancelEviction { job, .. } => Some(*job),
            _ => None,
        })
        .collect();
    let in_flight_moves = input.evictions.iter().filter(|e| e.moved && running.contains(&e.victim)).map(|e| e.victim);
    for v in in_flight_moves.filter(|v| !cancelled.contains(v)).chain(d.moves().map(|(j, _)| j)) {
        *moving.entry(job_of(v).expect("a moved job runs").queue).or_default() += 1;
    }
    for (q, n) in moving {
        assert!(n <= limits.max_moves_per_queue, "queue {q:?}: {n} jobs moved at once");
    }
    for j in &input.pending {
        let start = d.starts().any(|(id, _)| id == j.id);
        assert!(start || d.unplaced.contains_key(&j.id), "job {:?} neither started nor explained", j.id);
    }
}

/// One line per decision, for failure messages.
fn summary(sim: &Sim, d: &Decisions) -> String {
    let name = |id: JobId| {
        let j = sim.input.running.iter().map(|r| &r.job).chain(&sim.input.pending).find(|j| j.id == id).unwrap();
        format!("job {} (q{} p{} {}x{}g)", id.0, j.queue.0, j.priority, j.total_replicas(), j.tasks[0].resources.gpus)
    };
    let mut out = Vec::new();
    for x in &d.decisions {
        out.push(match x {
            Decision::Start { job, replicas, borrowed } => {
                format!("start {} x{} borrowed={borrowed}", name(*job), replicas.len())
            }
            Decision::Grow { job, replicas } => format!("grow {} +{}", name(*job), replicas.len()),
            Decision::Evict { job, preemptor, .. } => format!("evict {} for {}", name(*job), name(*preemptor)),
            Decision::Move { job, preemptor, .. } => format!("move {} for {}", name(*job), name(*preemptor)),
            Decision::Shrink { job, replicas, preemptor, .. } => {
                format!("shrink {} -{} for {}", name(*job), replicas.len(), name(*preemptor))
            }
            Decision::CancelEviction { job, preemptor } => format!("cancel {} for {}", name(*job), name(*preemptor)),
        });
    }
    format!("[{}] unplaced: {:?}", out.join("; "), d.unplaced.keys().map(|j| j.0).collect::<Vec<_>>())
}

/// Checks the state after decisions were applied.
fn check_state(sim: &Sim) {
    let c = &sim.input.cluster;
    // Invariant 4: shares sum to at most 1000 per device; a whole GPU is exclusive.
    let mut shares: BTreeMap<(u32, u8), Vec<u32>> = BTreeMap::new();
    for r in &sim.input.running {
        for p in &r.replicas {
            for d in &p.allocation.devices {
                shares.entry((p.allocation.node.0, d.gpu)).or_default().push(d.milli);
            }
        }
    }
    for ((node, gpu), s) in &shares {
        assert!(s.iter().sum::<u32>() <= 1000, "device {node}/{gpu} over 1000 milli: {s:?}");
        assert!(!s.contains(&1000) || s.len() == 1, "whole GPU {node}/{gpu} shared: {s:?}");
        assert_eq!(
            c.node(grus_scheduler::cluster::NodeId(*node)).gpus[*gpu as usize].used_milli,
            s.iter().sum::<u32>()
        );
    }
    // Invariant 3: every running job holds at least its gang.
    for r in &sim.input.running {
        for (i, &(required, _)) in replica_targets(&r.job).iter().enumerate() {
            assert!(r.replicas.iter().filter(|p| p.task == i).count() as u32 >= required);
        }
    }
    // Invariant 5: no queue above its limit.
    let u = usage(sim);
    for q in sim.input.queues.queues() {
        assert_eq!(u.queue(q.id).first_over_limit(&q.limit), None, "queue {} over its limit", q.name);
    }
    for p in sim.input.queues.projects() {
        assert_eq!(
            u.project(&sim.input.queues, p.id).first_over_limit(&p.limit),
            None,
            "project {} over its limit",
            p.name
        );
    }
    for t in sim.input.queues.tenants() {
        assert_eq!(
            u.tenant(&sim.input.queues, t.id).first_over_limit(&t.limit),
            None,
            "tenant {} over its limit",
            t.name
        );
    }
}

fn gpus(n: u64) -> ResourceVector {
    ResourceVector::new().with_gpus(n)
}

fn run_scenario(
    nodes: Vec<NodeGen>,
    queues: Vec<QueueGen>,
    jobs: Vec<JobGen>,
    finishes: Vec<u8>,
    forget: bool,
    (project_limit, tenant_limit): (Option<u64>, Option<u64>),
) {
    let qs = build_queues(&queues);
    let all: Vec<Job> = jobs.iter().enumerate().map(|(i, g)| build_job(i as u64 + 1, g, qs.len())).collect();
    let (first, later) = all.split_at(all.len() / 2);
    let mut sim = Sim::new(build_cluster(&nodes), vec![], first.to_vec());
    let tenant = Tenant { limit: tenant_limit.map_or_else(ResourceVector::new, gpus), ..Tenant::new(0, "t") };
    let projects = (0..2)
        .map(|p| Project {
            limit: if p == 0 { project_limit.map_or_else(ResourceVector::new, gpus) } else { ResourceVector::new() },
            ..Project::new(p, 0, &format!("p{p}"))
        })
        .collect();
    sim.input.queues = Queues::new(vec![tenant], projects, qs).unwrap();
    sim.forget_left_evictions = forget;
    let mut arrivals = later.to_vec();
    for (cycle, finish) in finishes.iter().enumerate() {
        let d = sim.schedule();
        assert_eq!(d, sim.schedule(), "determinism");
        let mut shuffled = sim.input.clone();
        shuffled.pending.reverse();
        shuffled.running.reverse();
        shuffled.evictions.reverse();
        assert_eq!(d, schedule(&shuffled, &sim.config), "the order of the input lists does not matter");
        check_decisions(&sim, &d);
        sim.apply(&d);
        check_state(&sim);
        // Time passes; some evictions complete, some jobs end, some arrive.
        sim.input.now += 20;
        if cycle % 2 == 1 {
            sim.complete_evictions();
        }
        let ids: Vec<u64> = sim.input.running.iter().map(|r| r.job.id.0).collect();
        for (k, id) in ids.into_iter().enumerate() {
            if finish & (1 << (k % 8)) != 0 && k % 3 == 0 {
                sim.finish(id);
            }
        }
        if let Some(j) = arrivals.pop() {
            sim.submit(j);
        }
    }
    for j in arrivals {
        sim.submit(j);
    }
    // Settle: with nothing ending, cycles must reach a state where nothing changes (no
    // livelock of evictions and restarts), and re-running on it changes nothing. This holds for
    // a shell that keeps evictions until their preemptor starts (the documented contract); one
    // that forgets them is only held to the safety checks above.
    sim.forget_left_evictions = false;
    let limit = 3 * (jobs.len() + 2);
    let mut settled = false;
    let mut log: Vec<String> = Vec::new();
    for _ in 0..limit {
        let d = sim.schedule();
        check_decisions(&sim, &d);
        if d.decisions.is_empty() {
            settled = true;
            break;
        }
        log.push(summary(&sim, &d));
        sim.apply(&d);
        check_state(&sim);
        sim.complete_evictions();
        sim.input.now += 1;
    }
    assert!(
        settled,
        "no fixpoint after {limit} cycles; last cycles:\n{}",
        log[log.len().saturating_sub(4)..].join("\n")
    );
    let d = sim.schedule();
    assert!(d.decisions.is_empty(), "a settled state changes nothing");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn cycles_keep_every_invariant(
        nodes in proptest::collection::vec(node_gen(), 1..5),
        queues in proptest::collection::vec(queue_gen(), 1..4),
        jobs in proptest::collection::vec(job_gen(), 1..14),
        finishes in proptest::collection::vec(any::<u8>(), 2..6),
        forget_left_evictions in any::<bool>(),
        limits in (proptest::option::of(2u64..12), proptest::option::of(4u64..16)),
    ) {
        run_scenario(nodes, queues, jobs, finishes, forget_left_evictions, limits);
    }

    /// Mostly elastic work under higher-priority arrivals: shrinks happen often, and each keeps
    /// its job at or above its minimum (`check_decisions`) while every other invariant holds.
    #[test]
    fn elastic_shrinks_keep_every_invariant(
        nodes in proptest::collection::vec(node_gen(), 1..4),
        queues in proptest::collection::vec(queue_gen(), 1..3),
        jobs in proptest::collection::vec(job_gen().prop_map(|mut g| {
            // Whole GPUs, one queue, any topology: the arrivals contend with the elastic work.
            g.elastic = g.elastic || g.priority == 0;
            g.min_runtime = 0;
            g.gpus = g.gpus.clamp(1, 2);
            g.share = None;
            g.queue = 0;
            g.scope = 0;
            g.preemptible = true;
            g
        }), 2..12),
        finishes in proptest::collection::vec(any::<u8>(), 2..6),
    ) {
        run_scenario(nodes, queues, jobs, finishes, false, (None, None));
    }
}
