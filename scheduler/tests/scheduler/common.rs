//! Test fixtures for the scheduling cycle: builders for clusters, queues and jobs, and `Sim`,
//! a minimal shell that applies decisions the way an agent would (allocations, in-flight
//! evictions, requeue of preempted jobs, jobs finishing).

use std::collections::{BTreeMap, BTreeSet};

use grus_scheduler::cluster::{Cluster, DeviceShare, NodeId, NodeSpec, ReplicaAllocation};
use grus_scheduler::cycle::{
    schedule, Decision, Decisions, InFlightEviction, PlacedReplica, RunningJob, SchedulerConfig, SchedulerInput,
};
use grus_scheduler::job::{Elastic, Job, JobId, Resources};
use grus_scheduler::queue::{Queue, Queues, ResourceVector};
use grus_scheduler::resources::MILLI_PER_GPU;

/// A cluster of `n` nodes with `gpus` GPUs of `model` each (plenty of CPU and memory).
pub fn cluster(n: usize, gpus: usize, model: &str) -> Cluster {
    Cluster::new((0..n).map(|i| NodeSpec::new(&format!("{model}-{i}"), 256_000, 1 << 21, gpus, model)).collect())
        .unwrap()
}

pub fn gpus(n: u64) -> ResourceVector {
    ResourceVector::new().with_gpus(n)
}

/// A queue with a guarantee of `guarantee` GPUs (any model).
pub fn queue(id: u32, name: &str, guarantee: u64) -> Queue {
    let mut q = Queue::new(id, 0, name);
    q.guarantee = gpus(guarantee);
    q
}

/// A job of `replicas` replicas of `gpus_each` whole GPUs, all required (a gang).
pub fn job(id: u64, queue: u32, replicas: u32, gpus_each: u32) -> Job {
    Job::single(id, queue, replicas, Resources::whole_gpus(gpus_each, 1000, 1024))
}

pub fn prio(mut j: Job, priority: i32) -> Job {
    j.priority = priority;
    j
}

pub fn elastic(mut j: Job, min: u32, max: u32) -> Job {
    j.elastic = Some(Elastic { min, max });
    j.tasks[0].replicas = min;
    j
}

pub fn runtime(mut j: Job, max_runtime_s: u64) -> Job {
    j.max_runtime_s = Some(max_runtime_s);
    j
}

/// The shell: holds the state the cycle reads and applies what it decides.
pub struct Sim {
    pub input: SchedulerInput,
    pub config: SchedulerConfig,
    /// Drop an eviction as soon as its victim has left (a shell that does not keep them until
    /// the preemptor starts): the cycle must still converge.
    pub forget_left_evictions: bool,
    /// When each move was decided (the rate limit's window is the last hour).
    pub moves: Vec<u64>,
}

impl Sim {
    pub fn new(cluster: Cluster, queues: Vec<Queue>, pending: Vec<Job>) -> Sim {
        Sim {
            input: SchedulerInput {
                cluster,
                queues: Queues::flat(queues).unwrap(),
                running: Vec::new(),
                pending,
                evictions: Vec::new(),
                holds: Vec::new(),
                past_usage: BTreeMap::new(),
                recent_moves: 0,
                now: 0,
            },
            config: SchedulerConfig::default(),
            forget_left_evictions: false,
            moves: Vec::new(),
        }
    }

    pub fn schedule(&self) -> Decisions {
        assert_eq!(self.input.validate(), Ok(()), "the shell keeps a consistent snapshot");
        schedule(&self.input, &self.config)
    }

    /// One cycle, applied.
    pub fn step(&mut self) -> Decisions {
        let d = self.schedule();
        self.apply(&d);
        d
    }

    pub fn running(&self, id: u64) -> Option<&RunningJob> {
        self.input.running.iter().find(|r| r.job.id == JobId(id))
    }

    pub fn is_running(&self, id: u64) -> bool {
        self.running(id).is_some()
    }

    /// `j` (one replica of whole GPUs) runs on node `node`, GPUs `first_gpu..`, since `now`.
    pub fn run_on(&mut self, j: Job, node: u32, first_gpu: u8) {
        let r = &j.tasks[0].resources;
        let allocation = ReplicaAllocation {
            node: NodeId(node),
            cpu_milli: r.cpu_milli,
            memory_mib: r.memory_mib,
            devices: (0..r.gpus as u8).map(|i| DeviceShare::plain(first_gpu + i, MILLI_PER_GPU, 0)).collect(),
        };
        self.input.cluster.allocate(&allocation).expect("room where the test puts it");
        let started_at = self.input.now;
        self.input.running.push(RunningJob {
            job: j,
            replicas: vec![PlacedReplica { task: 0, allocation }],
            started_at,
            privileged: false,
        });
    }

    pub fn submit(&mut self, j: Job) {
        self.input.pending.push(j);
    }

    pub fn apply(&mut self, d: &Decisions) {
        let now = self.input.now;
        self.moves.retain(|t| now.saturating_sub(*t) < 3600);
        for decision in &d.decisions {
            match decision {
                Decision::Start { job, replicas, .. } => {
                    let i = self.input.pending.iter().position(|j| j.id == *job).expect("started job is pending");
                    let j = self.input.pending.remove(i);
                    for r in replicas {
                        self.input.cluster.allocate(&r.allocation).expect("a started replica fits (invariant 4)");
                    }
                    self.input.running.push(RunningJob {
                        job: j,
                        replicas: replicas.clone(),
                        started_at: now,
                        privileged: false,
                    });
                }
                Decision::Grow { job, replicas } => {
                    let r = self.input.running.iter_mut().find(|r| r.job.id == *job).expect("grown job runs");
                    for p in replicas {
                        self.input.cluster.allocate(&p.allocation).expect("a grown replica fits (invariant 4)");
                    }
                    r.replicas.extend(replicas.iter().cloned());
                }
                Decision::Move { .. } => self.moves.push(now),
                Decision::Evict { .. } | Decision::Shrink { .. } | Decision::CancelEviction { .. } => {}
            }
        }
        self.input.recent_moves = self.moves.len() as u32;
        let pending: BTreeSet<JobId> = self.input.pending.iter().map(|j| j.id).collect();
        InFlightEviction::track(&mut self.input.evictions, d, now, |j| pending.contains(&j));
    }

    /// Every victim in its grace period leaves (whole job) and is requeued; every shrunk job
    /// gives back its replicas and runs on.
    pub fn complete_evictions(&mut self) {
        let victims: Vec<JobId> = self.input.evictions.iter().filter(|e| !e.shrink).map(|e| e.victim).collect();
        for e in self.input.evictions.iter_mut().filter(|e| e.shrink) {
            let Some(r) = self.input.running.iter_mut().find(|r| r.job.id == e.victim) else { continue };
            for p in e.replicas.drain(..) {
                let i = r.replicas.iter().position(|x| *x == p).expect("a shrink gives back replicas the job holds");
                let p = r.replicas.remove(i);
                self.input.cluster.release(&p.allocation).unwrap();
            }
        }
        for e in self.input.evictions.iter_mut() {
            e.victim_left = true;
        }
        for v in victims {
            if let Some(i) = self.input.running.iter().position(|r| r.job.id == v) {
                let r = self.input.running.remove(i);
                for p in &r.replicas {
                    self.input.cluster.release(&p.allocation).unwrap();
                }
                self.input.pending.push(r.job);
            }
        }
        if self.forget_left_evictions {
            self.input.evictions.clear();
        }
    }

    /// A running job ends.
    pub fn finish(&mut self, id: u64) {
        let i = self.input.running.iter().position(|r| r.job.id == JobId(id)).expect("finished job runs");
        let r = self.input.running.remove(i);
        for p in &r.replicas {
            self.input.cluster.release(&p.allocation).unwrap();
        }
    }

    /// A pending job is cancelled.
    pub fn cancel(&mut self, id: u64) {
        self.input.pending.retain(|j| j.id != JobId(id));
    }
}

pub fn started(d: &Decisions) -> Vec<u64> {
    d.starts().map(|(j, _)| j.0).collect()
}

/// The jobs shrunk, with how many replicas each gives back.
pub fn shrunk(d: &Decisions) -> Vec<(u64, usize)> {
    d.shrinks().map(|(j, r)| (j.0, r.len())).collect()
}

/// The jobs moved (consolidation), with the gang each makes room for.
pub fn moved(d: &Decisions) -> Vec<(u64, u64)> {
    d.moves().map(|(j, p)| (j.0, p.0)).collect()
}

pub fn evicted(d: &Decisions) -> Vec<(u64, u64)> {
    d.evictions().map(|(v, p)| (v.0, p.0)).collect()
}

pub fn cancelled(d: &Decisions) -> Vec<(u64, u64)> {
    d.decisions
        .iter()
        .filter_map(|x| match x {
            Decision::CancelEviction { job, preemptor } => Some((job.0, preemptor.0)),
            _ => None,
        })
        .collect()
}
