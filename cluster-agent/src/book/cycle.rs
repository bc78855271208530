//! The book and the scheduling cycle: the jobs the cycle is asked about, and what its
//! decisions do to the book. Pure: the agent builds the cluster, runs `schedule`, saves the
//! book (with the placements) and only then launches.

use std::collections::{BTreeMap, BTreeSet};

use grus_protocol::wire::{DeviceRef, State};
use grus_scheduler::cluster::NodeId;
use grus_scheduler::cycle::{replica_targets, Decision, InFlightEviction, PlacedReplica, RunningJob};
use grus_scheduler::explain::Unplaced;
use grus_scheduler::job::{Job, JobId};

use super::{Book, JobRecord, ReplicaId, Step, MOVES_WINDOW_MS};
use crate::backend::ReplicaLaunch;
use crate::convert::{self, QueueMap};

/// The replicas holding capacity on the cycle's cluster, per job, with their ids.
pub type Placed = BTreeMap<u64, Vec<(ReplicaId, PlacedReplica)>>;

/// The jobs of one cycle, from the book.
#[derive(Debug, Default)]
pub struct CycleJobs {
    pub running: Vec<RunningJob>,
    pub pending: Vec<Job>,
    pub evictions: Vec<InFlightEviction>,
    /// Nodes (by name) kept for jobs the control plane evicted work for.
    pub holds: Vec<(JobId, BTreeSet<String>)>,
    /// Some running job holds fewer replicas than its target (an elastic job below its
    /// maximum, say after a shrink): a cycle may grow it.
    pub growable: bool,
    /// Moves decided in the last hour (consolidation's rate limit).
    pub recent_moves: u32,
}

impl CycleJobs {
    /// Nothing to decide: no job waits, no eviction is in flight and no job can grow.
    pub fn is_idle(&self) -> bool {
        self.pending.is_empty() && self.evictions.is_empty() && !self.growable
    }
}

/// What the decisions of one cycle ask of the agent.
#[derive(Debug, Default, PartialEq)]
pub struct CycleOutcome {
    /// The reports of the decisions, in their order.
    pub steps: Vec<Step>,
    /// Replicas to launch once the book that records them is saved.
    pub launches: Vec<ReplicaLaunch>,
    /// Jobs placed but not launched: their placement must first be claimed (`book::claims`),
    /// so the agent saves the book and publishes the reports at once.
    pub claims: Vec<u64>,
    /// The book changed beyond placements (evictions began or were called off).
    pub dirty: bool,
}

impl Book {
    /// The cycle's view of the book: waiting jobs, jobs holding capacity (`placed`: their
    /// replicas as the cluster holds them), and the local preemptions and shrinks still in
    /// flight (those whose preemptor no longer waits are dropped from the book: a shrink not
    /// carried out yet is called off).
    pub fn cycle_jobs(&mut self, queues: &QueueMap, placed: &Placed, now_ms: i64) -> CycleJobs {
        let mut out = CycleJobs::default();
        // A hold ends when it expires or its job runs here (placed, or finished).
        let jobs = &self.jobs;
        self.holds.retain(|job, h| {
            h.until_ms > now_ms && jobs.get(job).is_none_or(|j| j.is_pending() && !placed.contains_key(job))
        });
        out.holds = self.holds.iter().map(|(job, h)| (JobId(*job), h.nodes.clone())).collect();
        let siblings = service_nodes((&self.jobs).into_iter().map(|(_, rec)| rec));
        for (&id, rec) in &self.jobs {
            if !rec.is_pending() && !placed.contains_key(&id) {
                // Ended (and kept a while for Snapshots), or holding nothing: not the cycle's.
                continue;
            }
            let Ok(mut job) = convert::job_of(&rec.spec, queues.id(&rec.spec.project, &rec.spec.queue)) else {
                continue;
            };
            if rec.is_pending() {
                if let (Some(s), Some(spread)) = (&rec.spec.service, job.spread.as_mut()) {
                    let key = (rec.spec.project.as_str(), s.name.as_str());
                    spread.from =
                        siblings.get(&key).map(|n| n.iter().map(|n| (*n).to_owned()).collect()).unwrap_or_default();
                }
                out.pending.push(job);
            } else if let Some(replicas) = placed.get(&id) {
                let replicas: Vec<PlacedReplica> = replicas.iter().map(|(_, p)| p.clone()).collect();
                let job = if rec.replicas.values().any(|r| r.state == State::Succeeded) {
                    finishing(job, &replicas)
                } else {
                    job
                };
                let target: u32 = replica_targets(&job).iter().map(|(_, t)| t).sum();
                out.growable |= (replicas.len() as u32) < target;
                out.running.push(RunningJob {
                    job,
                    replicas,
                    started_at: (rec.started_at_ms.unwrap_or(rec.received_at_ms) / 1000) as u64,
                    privileged: rec.privileged,
                });
            }
        }
        let jobs = &self.jobs;
        let over: Vec<u64> = self
            .evictions
            .iter()
            .filter(|(_, (preemptor, _))| !jobs.get(preemptor).is_some_and(|p| p.is_pending()))
            .map(|(victim, _)| *victim)
            .collect();
        self.end_preemptions(&over);
        let evictions = &self.evictions;
        self.moves.retain(|(victim, at)| {
            now_ms - at < MOVES_WINDOW_MS || evictions.get(victim).is_some_and(|(_, since)| since == at)
        });
        out.recent_moves = self.moves.iter().filter(|(_, at)| now_ms - at < MOVES_WINDOW_MS).count() as u32;
        for (&victim, &(preemptor, since_ms)) in &self.evictions {
            let rec = self.jobs.get(&victim);
            let shrink = rec.and_then(|r| r.shrink.as_ref());
            let replicas = match (shrink, placed.get(&victim)) {
                (Some(s), Some(held)) => {
                    held.iter().filter(|(id, _)| s.replicas.contains(id)).map(|(_, p)| p.clone()).collect()
                }
                _ => Vec::new(),
            };
            out.evictions.push(InFlightEviction {
                victim: JobId(victim),
                preemptor: JobId(preemptor),
                since: (since_ms / 1000).max(0) as u64,
                victim_left: match shrink {
                    Some(_) => rec.is_some_and(|r| r.shrink_done()),
                    None => rec.is_none_or(|v| v.live_replicas().is_empty()),
                },
                replicas,
                shrink: shrink.is_some(),
                moved: self.moves.contains(&(victim, since_ms)),
            });
        }
        out
    }

    /// The whole GPUs held by jobs the scheduler's consolidation may move (running, preemptible
    /// or checkpointing, neither privileged nor being evicted or shrunk), for the capacity
    /// summary: the allocator sends a gang here that fits only once they move.
    pub fn movable_gpus(&self, placed: &Placed) -> convert::MovableGpus {
        let mut out = convert::MovableGpus::new();
        for (id, replicas) in placed {
            let Some(rec) = self.jobs.get(id) else { continue };
            let movable = rec.state == State::Running
                && !rec.privileged
                && rec.eviction.is_none()
                && rec.shrink.is_none()
                && (rec.spec.preemptible || rec.spec.checkpoint.is_some());
            if !movable {
                continue;
            }
            for (_, p) in replicas {
                let whole = |d: &&grus_scheduler::cluster::DeviceShare| {
                    d.mig.is_none() && d.milli >= grus_scheduler::resources::MILLI_PER_GPU
                };
                for d in p.allocation.devices.iter().filter(whole) {
                    out.entry(p.allocation.node).or_default().push((d.gpu, rec.spec.priority));
                }
            }
        }
        out
    }

    /// The local preemptions of `victims` are over (their preemptor started or is gone): a
    /// shrink is called off, or forgotten once carried out. The replicas it gave back are
    /// forgotten too, so that the job grows back under their indexes (the control plane knows
    /// a job's replicas by index, up to its elastic maximum).
    fn end_preemptions(&mut self, victims: &[u64]) {
        for victim in victims {
            self.evictions.remove(victim);
            let Some(rec) = self.jobs.get_mut(victim) else { continue };
            if let Some(shrink) = rec.shrink.take() {
                rec.replicas.retain(|id, r| !(shrink.replicas.contains(id) && r.state.is_terminal()));
            }
        }
    }

    /// Applies a cycle's decisions at `now_ms`: placements are recorded (with what to launch),
    /// evictions begin or are called off. `node_name` names the cycle's nodes.
    pub fn apply_decisions(
        &mut self,
        decisions: Vec<Decision>,
        node_name: &impl Fn(NodeId) -> String,
        now_ms: i64,
    ) -> CycleOutcome {
        let mut out = CycleOutcome::default();
        for d in decisions {
            match d {
                Decision::Start { job, replicas, .. } | Decision::Grow { job, replicas } => {
                    self.place(job.0, replicas, node_name, now_ms, &mut out);
                }
                Decision::Evict { job, preemptor, grace_s } | Decision::Move { job, preemptor, grace_s } => {
                    let moved = matches!(d, Decision::Move { .. });
                    if let Some(rec) = self.jobs.get_mut(&job.0) {
                        let why = if moved {
                            tracing::info!(job = job.0, gang = preemptor.0, "moving a job to make room for a gang");
                            format!(
                                "moved to make room for job {}, a gang that waits only because free GPUs are \
                                 scattered (consolidation): it fits again at once; grace {grace_s}s",
                                preemptor.0
                            )
                        } else {
                            format!("preempted for job {}; grace {grace_s}s", preemptor.0)
                        };
                        let transitions = rec.begin_eviction(now_ms, grace_s, Some(preemptor.0), why);
                        out.steps.extend(Step::report(job.0, rec.epoch, transitions, now_ms));
                    }
                    if moved {
                        self.moves.push((job.0, now_ms));
                    }
                    if let Some(p) = self.jobs.get_mut(&preemptor.0) {
                        p.privileged = true;
                    }
                    self.evictions.insert(job.0, (preemptor.0, now_ms));
                    out.dirty = true;
                }
                Decision::Shrink { job, replicas, preemptor, grace_s } => {
                    let Some(rec) = self.jobs.get_mut(&job.0) else { continue };
                    let ids = replica_ids(rec, &replicas, node_name);
                    if ids.is_empty() {
                        continue;
                    }
                    let transitions = rec.begin_shrink(ids, now_ms, grace_s, preemptor.0);
                    out.steps.extend(Step::report(job.0, rec.epoch, transitions, now_ms));
                    if let Some(p) = self.jobs.get_mut(&preemptor.0) {
                        p.privileged = true;
                    }
                    self.evictions.insert(job.0, (preemptor.0, now_ms));
                    out.dirty = true;
                }
                Decision::CancelEviction { job, .. } => {
                    self.evictions.remove(&job.0);
                    if let Some(rec) = self.jobs.get_mut(&job.0) {
                        let transitions = rec.cancel_eviction();
                        out.dirty |= !transitions.is_empty() || rec.shrink.is_some();
                        rec.shrink = None;
                        out.steps.extend(Step::report(job.0, rec.epoch, transitions, now_ms));
                    }
                }
            }
        }
        out
    }

    /// Records the placement of a job's replicas; a preemptor that starts, or a requeued
    /// victim that starts again, ends its preemption.
    fn place(
        &mut self,
        job: u64,
        replicas: Vec<PlacedReplica>,
        node_name: &impl Fn(NodeId) -> String,
        now_ms: i64,
        out: &mut CycleOutcome,
    ) {
        let over: Vec<u64> = self
            .evictions
            .iter()
            .filter(|(&victim, (preemptor, _))| *preemptor == job || victim == job)
            .map(|(victim, _)| *victim)
            .collect();
        self.end_preemptions(&over);
        self.holds.remove(&job);
        let Some(rec) = self.jobs.get_mut(&job) else { return };
        rec.privileged = false;
        let mut transitions = Vec::new();
        for p in replicas {
            let devices: Vec<DeviceRef> = p.allocation.devices.iter().map(crate::convert::device_ref_of).collect();
            let node = node_name(p.allocation.node);
            let (id, placed) = rec.place(p.task, node.clone(), devices.clone(), now_ms);
            transitions.extend(placed);
            if rec.claimed {
                out.launches.push(rec.launch(&id, node, devices));
            }
        }
        if !rec.claimed {
            out.claims.push(job);
        }
        out.steps.extend(Step::report(job, rec.epoch, transitions, now_ms));
    }

    /// Why each waiting job waits, reported when it changed.
    pub fn note_unplaced(&mut self, unplaced: BTreeMap<JobId, Unplaced>, now_ms: i64) -> Vec<Step> {
        let mut steps = Vec::new();
        for (job, why) in unplaced {
            if let Some(rec) = self.jobs.get_mut(&job.0) {
                let transitions = rec.note_unplaced(why.to_string());
                steps.extend(Step::report(job.0, rec.epoch, transitions, now_ms));
            }
        }
        steps
    }
}

/// A job some of whose replicas succeeded is finishing: what it holds now is its target (no
/// replica that ended is replaced, so an elastic job, or one with replicas beyond its gang,
/// does not grow again while the rest finish), and it has nothing to give back in a shrink.
fn finishing(mut job: Job, replicas: &[PlacedReplica]) -> Job {
    for (i, t) in job.tasks.iter_mut().enumerate() {
        t.replicas = replicas.iter().filter(|p| p.task == i).count() as u32;
    }
    job.elastic = None;
    job.min_members = 0;
    job
}

/// The ids of a job's live replicas that the cycle names by placement (task, node, devices),
/// each matched once.
fn replica_ids(rec: &JobRecord, replicas: &[PlacedReplica], node_name: &impl Fn(NodeId) -> String) -> Vec<ReplicaId> {
    let mut ids: Vec<ReplicaId> = Vec::new();
    for p in replicas {
        let Some(task) = rec.spec.tasks.get(p.task) else { continue };
        let node = node_name(p.allocation.node);
        let found = rec.replicas.iter().find(|(id, r)| {
            id.0 == task.name
                && !r.state.is_terminal()
                && r.node == node
                && r.devices.len() == p.allocation.devices.len()
                && r.devices.iter().zip(&p.allocation.devices).all(|(a, b)| *a == crate::convert::device_ref_of(b))
                && !ids.contains(id)
        });
        if let Some((id, _)) = found {
            ids.push(id.clone());
        }
    }
    ids
}

/// The nodes each inference service's replicas hold here, by (project, service name): where
/// its next replica should not go when it can go elsewhere.
fn service_nodes<'a>(jobs: impl Iterator<Item = &'a JobRecord>) -> BTreeMap<(&'a str, &'a str), BTreeSet<&'a str>> {
    let mut out: BTreeMap<(&str, &str), BTreeSet<&str>> = BTreeMap::new();
    for rec in jobs {
        let Some(s) = &rec.spec.service else { continue };
        let nodes = rec.replicas.values().filter(|r| r.holds_capacity()).map(|r| r.node.as_str());
        out.entry((rec.spec.project.as_str(), s.name.as_str())).or_default().extend(nodes);
    }
    out
}

#[cfg(test)]
mod tests {
    use grus_protocol::wire::JobSpec;
    use grus_scheduler::cluster::{DeviceShare, ReplicaAllocation};

    use super::*;
    use crate::book::record::tests::spec;
    use crate::book::{JobRecord, Transition};

    const NOW: i64 = 2_000_000;

    fn book_with(jobs: &[(u64, u32)]) -> Book {
        let mut book = Book::default();
        for &(id, replicas) in jobs {
            let spec = JobSpec { id, ..spec(&[("main", replicas)], vec![]) };
            book.jobs.insert(id, JobRecord::new(spec, 1, 0));
        }
        book
    }

    fn on(node: u32, gpu: u8) -> PlacedReplica {
        PlacedReplica {
            task: 0,
            allocation: ReplicaAllocation {
                node: NodeId(node),
                cpu_milli: 1000,
                memory_mib: 1024,
                devices: vec![DeviceShare::plain(gpu, 1000, 0)],
            },
        }
    }

    fn name(n: NodeId) -> String {
        format!("node-{}", n.0)
    }

    /// The control plane's tenants and projects reach the cycle (issue 20): with tenant acme
    /// weighing 3 and beta 1, four free GPUs go three to acme's project and one to beta's,
    /// however many jobs each has waiting.
    #[test]
    fn the_cycle_shares_by_the_tenants_and_projects_set_queues_names() {
        use grus_protocol::wire::{ProjectShare, ShareHierarchy};
        let mut book = Book::default();
        for id in 1..=8 {
            let project = if id % 2 == 0 { "vision" } else { "nlp" };
            let spec = JobSpec { id, project: project.into(), queue: "default".into(), ..spec(&[("main", 1)], vec![]) };
            book.jobs.insert(id, JobRecord::new(spec, 1, 0));
        }
        let key = ShareHierarchy::queue_key;
        let weights = BTreeMap::from([(key("vision", "default"), 1.0), (key("nlp", "default"), 1.0)]);
        let hierarchy = ShareHierarchy {
            tenants: BTreeMap::from([("acme".into(), 3.0), ("beta".into(), 1.0)]),
            projects: BTreeMap::from([
                ("vision".into(), ProjectShare { tenant: "acme".into(), weight: 1.0 }),
                ("nlp".into(), ProjectShare { tenant: "beta".into(), weight: 1.0 }),
            ]),
        };
        let queues = crate::convert::queues_of(&weights, &BTreeMap::new(), &BTreeMap::new(), Some(&hierarchy)).unwrap();
        let jobs = book.cycle_jobs(&queues, &BTreeMap::new(), NOW);
        let nodes = crate::backend::sim::spec::parse_compact("1x4xA100-80GB").unwrap();
        let input = grus_scheduler::cycle::SchedulerInput {
            cluster: crate::convert::cluster_of(&nodes).unwrap(),
            queues: queues.queues.clone(),
            running: jobs.running,
            pending: jobs.pending,
            evictions: jobs.evictions,
            holds: Vec::new(),
            past_usage: BTreeMap::new(),
            recent_moves: 0,
            now: (NOW / 1000) as u64,
        };
        let out = grus_scheduler::cycle::schedule(&input, &grus_scheduler::cycle::SchedulerConfig::default());
        let started: Vec<&str> = out
            .decisions
            .iter()
            .filter_map(|d| match d {
                Decision::Start { job, .. } => Some(book.jobs[&job.0].spec.project.as_str()),
                _ => None,
            })
            .collect();
        let count = |p: &str| started.iter().filter(|s| **s == p).count();
        assert_eq!((count("vision"), count("nlp")), (3, 1), "{started:?}");
    }

    #[test]
    fn a_start_records_the_gang_before_anything_launches() {
        let mut book = book_with(&[(1, 2)]);
        let out = book.apply_decisions(
            vec![Decision::Start { job: JobId(1), replicas: vec![on(0, 0), on(0, 1)], borrowed: false }],
            &name,
            NOW,
        );
        let Step::Report { transitions, epoch: 1, at: NOW, .. } = &out.steps[0] else { panic!("{out:?}") };
        let states: Vec<(Option<u32>, State)> = transitions.iter().map(|t| (t.replica, t.state)).collect();
        assert_eq!(states, [(Some(0), State::Placed), (None, State::Scheduled), (Some(1), State::Placed)]);
        assert_eq!(out.launches.len(), 2);
        assert_eq!((out.launches[1].key.replica, out.launches[1].node.as_str()), (1, "node-0"));
        assert_eq!(out.launches[0].gang.as_ref().map(|g| g.min_members), Some(2));
        assert_eq!(book.jobs[&1].replicas.len(), 2, "in the book before the launch");
        assert!(!out.dirty);
    }

    #[test]
    fn growth_continues_past_existing_replicas_and_reports_no_scheduled() {
        let mut book = book_with(&[(1, 3)]);
        book.apply_decisions(
            vec![Decision::Start { job: JobId(1), replicas: vec![on(0, 0)], borrowed: false }],
            &name,
            NOW,
        );
        let out = book.apply_decisions(vec![Decision::Grow { job: JobId(1), replicas: vec![on(1, 0)] }], &name, NOW);
        let Step::Report { transitions, .. } = &out.steps[0] else { panic!("{out:?}") };
        assert_eq!(transitions.len(), 1);
        assert_eq!((transitions[0].replica, transitions[0].state), (Some(1), State::Placed));
    }

    #[test]
    fn an_eviction_makes_its_preemptor_privileged_and_a_start_ends_it() {
        let mut book = book_with(&[(1, 1), (2, 1)]);
        book.apply_decisions(
            vec![Decision::Start { job: JobId(1), replicas: vec![on(0, 0)], borrowed: true }],
            &name,
            NOW,
        );
        let out =
            book.apply_decisions(vec![Decision::Evict { job: JobId(1), preemptor: JobId(2), grace_s: 5 }], &name, NOW);
        assert!(out.dirty);
        let Step::Report { transitions, .. } = &out.steps[0] else { panic!("{out:?}") };
        assert_eq!(transitions, &[Transition::job(State::Preempting, Some("preempted for job 2; grace 5s".into()))]);
        assert_eq!(book.jobs[&1].eviction.as_ref().unwrap().preemptor, Some(2));
        assert!(book.jobs[&2].privileged);
        assert_eq!(book.evictions[&1], (2, NOW));
        book.apply_decisions(
            vec![Decision::Start { job: JobId(2), replicas: vec![on(0, 0)], borrowed: false }],
            &name,
            NOW,
        );
        assert!(!book.jobs[&2].privileged && book.evictions.is_empty());
    }

    #[test]
    fn a_move_is_an_eviction_that_says_why_and_counts_toward_the_hourly_limit() {
        let mut book = book_with(&[(1, 1), (2, 1)]);
        book.apply_decisions(
            vec![Decision::Start { job: JobId(1), replicas: vec![on(0, 0)], borrowed: false }],
            &name,
            NOW,
        );
        let out =
            book.apply_decisions(vec![Decision::Move { job: JobId(1), preemptor: JobId(2), grace_s: 5 }], &name, NOW);
        let Step::Report { transitions, .. } = &out.steps[0] else { panic!("{out:?}") };
        assert_eq!(transitions[0].state, State::Preempting);
        let why = transitions[0].reason.as_deref().unwrap_or_default();
        assert!(why.starts_with("moved to make room for job 2") && why.contains("consolidation"), "{why}");
        assert!(book.jobs[&2].privileged && book.moves == [(1, NOW)]);
        let queues = crate::convert::queues_of(&BTreeMap::new(), &BTreeMap::new(), &BTreeMap::new(), None).unwrap();
        let jobs = book.cycle_jobs(&queues, &placed_of(&book), NOW + 1_000);
        assert!(jobs.evictions[0].moved && !jobs.evictions[0].shrink);
        assert_eq!(jobs.recent_moves, 1);
        // An hour later the move no longer counts toward the limit.
        let jobs = book.cycle_jobs(&queues, &placed_of(&book), NOW + MOVES_WINDOW_MS);
        assert_eq!(jobs.recent_moves, 0);
        assert!(jobs.evictions[0].moved, "still a move while in flight");
    }

    #[test]
    fn a_cancelled_eviction_restores_the_state_it_interrupted() {
        let mut book = book_with(&[(1, 1)]);
        book.apply_decisions(
            vec![Decision::Start { job: JobId(1), replicas: vec![on(0, 0)], borrowed: true }],
            &name,
            NOW,
        );
        book.apply_decisions(vec![Decision::Evict { job: JobId(1), preemptor: JobId(2), grace_s: 5 }], &name, NOW);
        let cancel = || vec![Decision::CancelEviction { job: JobId(1), preemptor: JobId(2) }];
        let out = book.apply_decisions(cancel(), &name, NOW);
        let Step::Report { transitions, .. } = &out.steps[0] else { panic!("{out:?}") };
        assert_eq!(transitions, &[Transition::job(State::Scheduled, Some("eviction no longer needed".into()))]);
        assert!(out.dirty && book.jobs[&1].eviction.is_none());
        // Not under eviction any more: nothing happens.
        let again = book.apply_decisions(cancel(), &name, NOW);
        assert!(again.steps.is_empty() && !again.dirty);
    }

    /// An elastic job of three replicas on node-0 GPUs 0..3, started and running, and a
    /// preemptor (job 2) waiting.
    fn elastic_running() -> Book {
        let mut book = book_with(&[(1, 1), (2, 1)]);
        let rec = book.jobs.get_mut(&1).unwrap();
        rec.spec.elastic = Some(grus_protocol::wire::ElasticSpec { min: 1, max: 3 });
        book.apply_decisions(
            vec![Decision::Start { job: JobId(1), replicas: vec![on(0, 0), on(0, 1), on(0, 2)], borrowed: false }],
            &name,
            NOW,
        );
        let rec = book.jobs.get_mut(&1).unwrap();
        for id in rec.replicas.keys().cloned().collect::<Vec<_>>() {
            rec.observe(&id, &crate::backend::ReplicaPhase::Running, NOW);
        }
        assert_eq!(rec.state, State::Running);
        book
    }

    fn placed_of(book: &Book) -> Placed {
        let rec = &book.jobs[&1];
        let replicas = rec
            .replicas
            .iter()
            .filter(|(_, r)| r.holds_capacity())
            .map(|(id, r)| (id.clone(), on(0, r.devices[0].index as u8)))
            .collect();
        BTreeMap::from([(1, replicas)])
    }

    #[test]
    fn a_shrink_stops_only_the_chosen_replicas_after_its_grace_and_the_job_runs_on() {
        let mut book = elastic_running();
        let out = book.apply_decisions(
            vec![Decision::Shrink {
                job: JobId(1),
                replicas: vec![on(0, 2), on(0, 1)],
                preemptor: JobId(2),
                grace_s: 5,
            }],
            &name,
            NOW,
        );
        assert!(out.dirty && out.steps.is_empty(), "no state changes yet: {out:?}");
        assert!(book.jobs[&2].privileged);
        let shrink = book.jobs[&1].shrink.clone().expect("a shrink in flight");
        assert_eq!(shrink.replicas, vec![("main".to_string(), 2), ("main".to_string(), 1)]);
        let queues = crate::convert::queues_of(&BTreeMap::new(), &BTreeMap::new(), &BTreeMap::new(), None).unwrap();
        let jobs = book.cycle_jobs(&queues, &placed_of(&book), NOW + 1_000);
        let e = &jobs.evictions[0];
        assert!(e.shrink && !e.victim_left && e.victim == JobId(1) && e.preemptor == JobId(2));
        assert_eq!(e.replicas.len(), 2);
        // The grace runs out: the two replicas are stopped, with no other change.
        assert!(book.deadlines(NOW + 4_999, std::time::Duration::from_secs(600)).is_empty());
        let steps = book.deadlines(NOW + 5_000, std::time::Duration::from_secs(600));
        let stopped = steps.iter().find_map(|s| match s {
            Step::Effects { job: 1, effects } => Some(effects.clone()),
            _ => None,
        });
        assert_eq!(
            stopped,
            Some(vec![crate::book::Effect::Stop {
                replicas: vec![("main".into(), 2), ("main".into(), 1)],
                grace_ms: 0
            }])
        );
        let rec = book.jobs.get_mut(&1).unwrap();
        let (ts, _) = rec.observe(&("main".into(), 2), &crate::backend::ReplicaPhase::Stopped, NOW + 5_100);
        assert_eq!(ts[0].state, State::Evicted);
        assert!(ts[0].reason.as_deref().unwrap().contains("shrank to make room for job 2"), "{ts:?}");
        rec.observe(&("main".into(), 1), &crate::backend::ReplicaPhase::Stopped, NOW + 5_100);
        assert_eq!(rec.state, State::Running, "the job runs on");
        let jobs = book.cycle_jobs(&queues, &placed_of(&book), NOW + 6_000);
        assert!(jobs.evictions[0].victim_left && jobs.evictions[0].replicas.is_empty());
        // The preemptor starts: the shrink is over, and the job may grow again.
        book.apply_decisions(
            vec![Decision::Start { job: JobId(2), replicas: vec![on(0, 1)], borrowed: false }],
            &name,
            NOW,
        );
        assert!(book.jobs[&1].shrink.is_none() && book.evictions.is_empty());
        assert_eq!(book.jobs[&1].replicas.len(), 1, "the given-back replicas are forgotten");
        // Its kept replica succeeds: so does the job, whatever it gave back.
        let rec = book.jobs.get_mut(&1).unwrap();
        let (ts, _) = rec.observe(&("main".into(), 0), &crate::backend::ReplicaPhase::Succeeded, NOW + 9_000);
        assert!(ts.iter().any(|t| t.task.is_none() && t.state == State::Succeeded), "{ts:?}");
    }

    /// A replica of an elastic job at its maximum succeeded before the others: the cycle must
    /// not grow the job back to its maximum (it would never end).
    #[test]
    fn a_finishing_elastic_job_does_not_replace_replicas_that_succeeded() {
        let mut book = elastic_running();
        let rec = book.jobs.get_mut(&1).unwrap();
        rec.observe(&("main".into(), 0), &crate::backend::ReplicaPhase::Succeeded, NOW + 100);
        let queues = crate::convert::queues_of(&BTreeMap::new(), &BTreeMap::new(), &BTreeMap::new(), None).unwrap();
        let jobs = book.cycle_jobs(&queues, &placed_of(&book), NOW + 1_000);
        let running = &jobs.running.iter().find(|r| r.job.id == JobId(1)).unwrap();
        assert_eq!(running.replicas.len(), 2);
        assert!(!jobs.growable, "nothing to grow");
        assert_eq!(grus_scheduler::cycle::replica_targets(&running.job), [(2, 2)], "its target is what it holds");
        assert!(running.job.elastic.is_none(), "nothing to give back in a shrink");
    }

    #[test]
    fn an_elastic_job_grows_back_under_the_indexes_it_gave_back() {
        let mut book = elastic_running();
        book.apply_decisions(
            vec![Decision::Shrink { job: JobId(1), replicas: vec![on(0, 1)], preemptor: JobId(2), grace_s: 0 }],
            &name,
            NOW,
        );
        book.deadlines(NOW, std::time::Duration::from_secs(600));
        let rec = book.jobs.get_mut(&1).unwrap();
        rec.observe(&("main".into(), 1), &crate::backend::ReplicaPhase::Stopped, NOW + 100);
        let start = Decision::Start { job: JobId(2), replicas: vec![on(0, 1)], borrowed: false };
        book.apply_decisions(vec![start], &name, NOW);
        // Nothing waits, but the job is below its maximum: a cycle runs to grow it.
        let queues = crate::convert::queues_of(&BTreeMap::new(), &BTreeMap::new(), &BTreeMap::new(), None).unwrap();
        let jobs = book.cycle_jobs(&queues, &placed_of(&book), NOW);
        assert!(jobs.pending.is_empty() && jobs.growable && !jobs.is_idle());
        let out = book.apply_decisions(vec![Decision::Grow { job: JobId(1), replicas: vec![on(0, 3)] }], &name, NOW);
        assert_eq!(out.launches[0].key.replica, 1, "the first free index again");
        let indexes: Vec<u32> = book.jobs[&1].replicas.keys().map(|(_, i)| *i).collect();
        assert_eq!(indexes, [0, 1, 2]);
    }

    #[test]
    fn only_running_jobs_that_are_not_being_disrupted_count_as_movable() {
        let mut book = elastic_running();
        let gpus: Vec<u8> = book.movable_gpus(&placed_of(&book)).values().flatten().map(|(g, _)| *g).collect();
        assert_eq!(gpus, [0, 1, 2], "its three whole GPUs");
        book.jobs.get_mut(&1).unwrap().spec.preemptible = false;
        assert!(book.movable_gpus(&placed_of(&book)).is_empty(), "pinned");
        book.jobs.get_mut(&1).unwrap().spec.checkpoint = Some(Default::default());
        assert_eq!(book.movable_gpus(&placed_of(&book)).values().flatten().count(), 3, "it checkpoints");
        book.apply_decisions(
            vec![Decision::Shrink { job: JobId(1), replicas: vec![on(0, 2)], preemptor: JobId(2), grace_s: 5 }],
            &name,
            NOW,
        );
        assert!(book.movable_gpus(&placed_of(&book)).is_empty(), "being shrunk");
    }

    #[test]
    fn a_shrink_is_called_off_when_its_preemptor_no_longer_waits() {
        let mut book = elastic_running();
        book.apply_decisions(
            vec![Decision::Shrink { job: JobId(1), replicas: vec![on(0, 2)], preemptor: JobId(2), grace_s: 5 }],
            &name,
            NOW,
        );
        book.jobs.get_mut(&2).unwrap().cancel(0);
        let queues = crate::convert::queues_of(&BTreeMap::new(), &BTreeMap::new(), &BTreeMap::new(), None).unwrap();
        assert!(book.cycle_jobs(&queues, &placed_of(&book), NOW + 1_000).evictions.is_empty());
        assert!(book.jobs[&1].shrink.is_none());
        assert!(book.deadlines(NOW + 10_000, std::time::Duration::from_secs(600)).is_empty(), "nothing is stopped");
        // And by the scheduler: a CancelEviction ends a shrink as it ends an eviction.
        let mut book = elastic_running();
        book.apply_decisions(
            vec![Decision::Shrink { job: JobId(1), replicas: vec![on(0, 2)], preemptor: JobId(2), grace_s: 5 }],
            &name,
            NOW,
        );
        let out =
            book.apply_decisions(vec![Decision::CancelEviction { job: JobId(1), preemptor: JobId(2) }], &name, NOW);
        assert!(out.dirty && book.jobs[&1].shrink.is_none() && book.evictions.is_empty());
    }

    #[test]
    fn why_a_job_waits_is_reported_when_it_changes() {
        let mut book = book_with(&[(1, 1)]);
        let why = || BTreeMap::from([(JobId(1), Unplaced::Invalid { reason: "x".into() })]);
        assert_eq!(book.note_unplaced(why(), NOW).len(), 1);
        assert!(book.note_unplaced(why(), NOW).is_empty(), "unchanged");
        assert_eq!(
            book.jobs[&1].unplaced_reason.as_deref(),
            Some(Unplaced::Invalid { reason: "x".into() }.to_string().as_str())
        );
    }
}
