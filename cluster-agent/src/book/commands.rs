//! What a command from the control plane does to the book: fenced by its epoch (invariant 2),
//! applied once per message id, and answered with the transitions to report and the effects
//! to carry out. Pure: the agent carries the steps out, saves the book, then acknowledges.

use std::collections::BTreeSet;

use grus_protocol::wire::State;
use grus_protocol::Command;

use super::{Book, JobRecord, Step, Transition};
use crate::convert;

/// The settings commands are applied with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CommandRules {
    /// Grace given to replicas stopped by Cancel, ms.
    pub cancel_grace_ms: u64,
}

/// What applying one command asks of the agent.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Applied {
    pub steps: Vec<Step>,
    /// The scheduling cycle must run again (a job arrived or left, queues changed).
    pub needs_cycle: bool,
    /// Not applied: it came from a control plane this agent does not serve (the reason goes
    /// to the dead-letter stream).
    pub refused: Option<String>,
}

/// Applies the command of message `id` sent by control plane `from`, unless that message was
/// applied before (`None`: a redelivery, nothing changes) or the agent serves another control
/// plane ([`Book::admit_sender`]: refused). The book then records the id, so replaying the
/// stream after a crash applies nothing twice.
pub fn apply_message(
    book: &mut Book,
    id: &str,
    from: Option<&str>,
    command: Command,
    now_ms: i64,
    rules: &CommandRules,
) -> Option<Applied> {
    if let Err(reason) = book.admit_sender(from) {
        return Some(Applied { refused: Some(reason), ..Applied::default() });
    }
    if book.seen_before(id) {
        return None;
    }
    Some(apply_command(book, command, now_ms, rules))
}

/// Applies one command. A job command under an epoch older than the book's is refused (a stale
/// Dispatch is answered with `rejected` under its own epoch); otherwise its epoch becomes the
/// job's.
pub fn apply_command(book: &mut Book, command: Command, now_ms: i64, rules: &CommandRules) -> Applied {
    let mut applied = Applied::default();
    if let Some((job, epoch)) = command.job_epoch() {
        if book.is_stale(job, epoch) {
            tracing::info!(job, epoch, kind = command.kind(), "refusing a command with a stale epoch");
            if matches!(command, Command::Dispatch { .. }) {
                let reason = format!("stale epoch {epoch}; this cluster holds epoch {}", book.epochs[&job]);
                let rejected = vec![Transition::job(State::Rejected, Some(reason))];
                applied.steps.extend(Step::report(job, epoch, rejected, now_ms));
            }
            return applied;
        }
        // Cancel and Evict are about a dispatch this agent received: one newer than the job it
        // holds is bogus or misrouted, and must neither stop the job nor raise its fence.
        let held = book.jobs.get(&job).map(|r| r.epoch);
        if !matches!(command, Command::Dispatch { .. }) && held.is_some_and(|held| epoch > held) {
            tracing::warn!(
                job,
                epoch,
                held,
                kind = command.kind(),
                "refusing a command for an epoch never dispatched here"
            );
            return applied;
        }
        book.epochs.insert(job, epoch);
    }
    match command {
        Command::Dispatch { job, epoch, answer_by_ms } => {
            let id = job.id;
            if let Some(old) = book.jobs.get_mut(&id) {
                if old.epoch == epoch {
                    return applied;
                }
                // Re-dispatched here with a newer epoch: what ran under the old one stops, and
                // the old epoch's end is not reported (the control plane fenced it off).
                let (_, effects) = old.cancel(0);
                if let Some(step) = Step::effects(id, effects) {
                    applied.steps.push(step);
                    applied.needs_cycle = true;
                }
                book.forget(id);
            }
            if let Err(e) = grus_protocol::limits::check_job(&job) {
                let rejected =
                    vec![Transition::job(State::Rejected, Some(format!("job beyond this agent's limits: {e}")))];
                applied.steps.extend(Step::report(id, epoch, rejected, now_ms));
                return applied;
            }
            if let Err(e) = convert::job_of(&job, grus_scheduler::job::QueueId(0)) {
                let rejected = vec![Transition::job(State::Rejected, Some(format!("invalid job: {e}")))];
                applied.steps.extend(Step::report(id, epoch, rejected, now_ms));
                return applied;
            }
            book.jobs.insert(id, JobRecord::new(*job, epoch, now_ms).answer_by(answer_by_ms));
            applied.needs_cycle = true;
        }
        Command::Cancel { job, epoch } => match book.jobs.get_mut(&job) {
            Some(rec) => {
                let (transitions, effects) = rec.cancel(rules.cancel_grace_ms);
                applied.steps.extend(Step::report(job, epoch, transitions, now_ms));
                applied.steps.extend(Step::effects(job, effects));
                applied.needs_cycle = true;
            }
            None => {
                let cancelled = vec![Transition::job(State::Cancelled, Some("not running here".into()))];
                applied.steps.extend(Step::report(job, epoch, cancelled, now_ms));
            }
        },
        Command::Evict { job, grace_s, epoch, hold } => {
            let Some(rec) = book.jobs.get_mut(&job) else { return applied };
            // The nodes the victim frees are kept for the job the eviction makes room for.
            if let Some(h) = hold.filter(|h| h.job != job) {
                let nodes: Vec<String> =
                    rec.replicas.values().filter(|r| r.holds_capacity()).map(|r| r.node.clone()).collect();
                if !nodes.is_empty() {
                    let kept = book.holds.entry(h.job).or_default();
                    kept.nodes.extend(nodes);
                    let until = now_ms.saturating_add((i64::from(h.ttl_s) * 1000).min(super::MAX_HOLD_MS));
                    kept.until_ms = kept.until_ms.max(until);
                    applied.needs_cycle = true;
                }
            }
            let transitions = if rec.is_pending() {
                rec.preempt_before_start()
            } else if !rec.is_finished() && rec.state != State::Preempting {
                let why = format!("evicted by the control plane; grace {grace_s}s");
                rec.begin_eviction(now_ms, u64::from(grace_s), None, why)
            } else {
                Vec::new()
            };
            applied.steps.extend(Step::report(job, epoch, transitions, now_ms));
        }
        Command::ReadLogs { request, job, query } => applied.steps.push(Step::ReadLogs { request, job, query }),
        Command::Resync { reason } => {
            tracing::info!(reason, "the control plane asks for a snapshot");
            applied.steps.push(Step::Announce);
        }
        Command::CordonNodes { nodes } => {
            let nodes: BTreeSet<String> = nodes.into_iter().collect();
            if nodes != book.cordoned_nodes {
                tracing::info!(?nodes, "cordoned nodes changed");
                book.cordoned_nodes = nodes;
                applied.needs_cycle = true;
            }
        }
        Command::SetQueues { weights, quotas, pool_weights, hierarchy } => {
            if let Err(e) = convert::queues_of(&weights, &quotas, &pool_weights, hierarchy.as_ref()) {
                tracing::warn!(error = %e, "ignoring SetQueues that does not form valid queues");
            } else {
                book.queue_weights = weights;
                book.queue_quotas = quotas;
                book.queue_pool_weights = pool_weights;
                book.queue_hierarchy = hierarchy;
                applied.needs_cycle = true;
            }
        }
    }
    applied
}

#[cfg(test)]
pub(crate) mod tests {
    use std::collections::BTreeMap;

    use grus_protocol::wire::{JobSpec, ProjectShare, QueueQuota, ShareHierarchy};

    use super::*;
    use crate::backend::ReplicaPhase;
    use crate::book::record::tests::spec;
    use crate::book::Effect;

    pub(crate) const RULES: CommandRules = CommandRules { cancel_grace_ms: 30_000 };
    const NOW: i64 = 1_000_000;

    fn job(id: u64, replicas: u32) -> JobSpec {
        JobSpec { id, ..spec(&[("main", replicas)], vec![]) }
    }

    fn dispatch(book: &mut Book, id: u64, replicas: u32, epoch: u64) -> Applied {
        apply_command(
            book,
            Command::Dispatch { job: Box::new(job(id, replicas)), epoch, answer_by_ms: None },
            NOW,
            &RULES,
        )
    }

    #[test]
    fn cordon_nodes_replaces_the_set_and_asks_for_a_cycle_only_when_it_changed() {
        let mut book = Book::default();
        let cordon = |nodes: &[&str]| Command::CordonNodes { nodes: nodes.iter().map(|n| n.to_string()).collect() };
        assert!(apply_command(&mut book, cordon(&["n2", "n1"]), NOW, &RULES).needs_cycle);
        assert_eq!(book.cordoned_nodes.iter().map(String::as_str).collect::<Vec<_>>(), ["n1", "n2"]);
        assert!(!apply_command(&mut book, cordon(&["n1", "n2"]), NOW, &RULES).needs_cycle);
        assert!(apply_command(&mut book, cordon(&[]), NOW, &RULES).needs_cycle);
        assert!(book.cordoned_nodes.is_empty());
    }

    /// The job's transitions in the steps, as (epoch, state, reason).
    fn reports(applied: &Applied) -> Vec<(u64, State, Option<String>)> {
        applied
            .steps
            .iter()
            .flat_map(|s| match s {
                Step::Report { epoch, transitions, .. } => {
                    transitions.iter().map(|t| (*epoch, t.state, t.reason.clone())).collect()
                }
                _ => Vec::new(),
            })
            .collect()
    }

    /// A job dispatched under `epoch` whose `replicas` replicas run.
    fn running(book: &mut Book, id: u64, replicas: u32, epoch: u64) {
        dispatch(book, id, replicas, epoch);
        let rec = book.jobs.get_mut(&id).unwrap();
        for i in 0..replicas {
            rec.placed(("main".into(), i), "n1".into(), vec![], NOW);
        }
        for i in 0..replicas {
            rec.observe(&("main".into(), i), &ReplicaPhase::Running, NOW);
        }
        assert_eq!(rec.state, State::Running);
    }

    #[test]
    fn a_dispatch_records_the_job_and_asks_for_a_cycle_without_reporting() {
        let mut book = Book::default();
        let applied = dispatch(&mut book, 7, 2, 1);
        assert!(applied.steps.is_empty() && applied.needs_cycle);
        assert_eq!(book.jobs[&7].state, State::Dispatched);
        assert_eq!(book.epochs[&7], 1);
    }

    #[test]
    fn a_dispatch_under_a_stale_epoch_is_rejected_under_that_epoch_and_changes_nothing() {
        let mut book = Book::default();
        dispatch(&mut book, 7, 1, 5);
        let applied = dispatch(&mut book, 7, 1, 3);
        let rejected = reports(&applied);
        assert_eq!(rejected.len(), 1);
        assert_eq!((rejected[0].0, rejected[0].1), (3, State::Rejected));
        assert!(rejected[0].2.as_deref().unwrap().contains("stale epoch 3; this cluster holds epoch 5"));
        assert!(!applied.needs_cycle);
        assert_eq!((book.jobs[&7].epoch, book.epochs[&7]), (5, 5));
    }

    #[test]
    fn a_cancel_or_eviction_for_a_future_epoch_changes_nothing() {
        let mut book = Book::default();
        running(&mut book, 7, 1, 5);
        for command in
            [Command::Cancel { job: 7, epoch: 9 }, Command::Evict { job: 7, grace_s: 0, epoch: 9, hold: None }]
        {
            assert_eq!(apply_command(&mut book, command, NOW, &RULES), Applied::default());
        }
        assert_eq!((book.jobs[&7].state, book.epochs[&7]), (State::Running, 5), "running, fence unchanged");
        // The real next dispatch still gets through.
        assert!(dispatch(&mut book, 7, 1, 6).needs_cycle);
    }

    #[test]
    fn a_dispatch_beyond_the_job_limits_is_rejected_with_the_reason() {
        let mut book = Book::default();
        let mut huge = job(8, 1);
        huge.tasks = (0..2000)
            .map(|i| grus_protocol::wire::TaskSpec { name: format!("t{i}"), ..huge.tasks[0].clone() })
            .collect();
        let applied = apply_command(
            &mut book,
            Command::Dispatch { job: Box::new(huge), epoch: 1, answer_by_ms: None },
            NOW,
            &RULES,
        );
        let rejected = reports(&applied);
        assert_eq!((rejected.len(), rejected[0].1), (1, State::Rejected));
        assert!(rejected[0].2.as_deref().unwrap().contains("tasks: 2000 items, at most 64"), "{rejected:?}");
        assert!(!book.jobs.contains_key(&8));
    }

    #[test]
    fn stale_cancels_and_evictions_are_ignored_silently() {
        let mut book = Book::default();
        running(&mut book, 7, 1, 5);
        for command in
            [Command::Cancel { job: 7, epoch: 4 }, Command::Evict { job: 7, grace_s: 0, epoch: 4, hold: None }]
        {
            let applied = apply_command(&mut book, command, NOW, &RULES);
            assert_eq!(applied, Applied::default());
        }
        assert_eq!(book.jobs[&7].state, State::Running);
    }

    #[test]
    fn a_message_is_applied_once() {
        let mut book = Book::default();
        let cancel = || Command::Cancel { job: 99, epoch: 1 };
        let first = apply_message(&mut book, "m-1", None, cancel(), NOW, &RULES).expect("applied");
        assert_eq!(reports(&first), [(1, State::Cancelled, Some("not running here".into()))]);
        assert_eq!(apply_message(&mut book, "m-1", None, cancel(), NOW, &RULES), None, "a redelivery");
        assert!(apply_message(&mut book, "m-2", None, cancel(), NOW, &RULES).is_some(), "another message");
    }

    #[test]
    fn the_same_dispatch_again_under_a_new_message_id_changes_nothing() {
        let mut book = Book::default();
        dispatch(&mut book, 7, 1, 1);
        let before = book.jobs[&7].clone();
        let applied = apply_command(
            &mut book,
            Command::Dispatch { job: Box::new(job(7, 1)), epoch: 1, answer_by_ms: None },
            NOW + 5,
            &RULES,
        );
        assert_eq!(applied, Applied::default());
        assert_eq!(book.jobs[&7], before);
    }

    #[test]
    fn cancelling_a_running_job_reports_then_stops_its_replicas_with_the_grace() {
        let mut book = Book::default();
        running(&mut book, 7, 2, 1);
        let applied = apply_command(&mut book, Command::Cancel { job: 7, epoch: 1 }, NOW, &RULES);
        assert_eq!(
            applied.steps,
            [
                Step::Report {
                    job: 7,
                    epoch: 1,
                    transitions: vec![Transition::job(State::Cancelled, Some("cancelled".into()))],
                    at: NOW
                },
                Step::Effects {
                    job: 7,
                    effects: vec![Effect::Stop {
                        replicas: vec![("main".into(), 0), ("main".into(), 1)],
                        grace_ms: 30_000
                    }]
                },
            ]
        );
        assert!(applied.needs_cycle);
        // A second Cancel finds the job ended: nothing to report or stop.
        let again = apply_command(&mut book, Command::Cancel { job: 7, epoch: 1 }, NOW, &RULES);
        assert!(again.steps.is_empty());
    }

    #[test]
    fn a_cancel_under_a_newer_epoch_leaves_a_pending_job_and_its_fence_alone() {
        // Once answered as "cancelled under epoch 2" and raised the fence: a bogus Cancel could
        // kill a job and make its real next dispatch look stale.
        let mut book = Book::default();
        dispatch(&mut book, 7, 1, 1);
        let applied = apply_command(&mut book, Command::Cancel { job: 7, epoch: 2 }, NOW, &RULES);
        assert_eq!(applied, Applied::default());
        assert_eq!((book.epochs[&7], book.jobs[&7].state), (1, State::Dispatched));
    }

    #[test]
    fn a_redispatch_under_a_newer_epoch_stops_the_old_run_at_once_without_reporting_it() {
        let mut book = Book::default();
        running(&mut book, 7, 1, 1);
        let applied = dispatch(&mut book, 7, 1, 2);
        assert_eq!(
            applied.steps,
            [Step::Effects { job: 7, effects: vec![Effect::Stop { replicas: vec![("main".into(), 0)], grace_ms: 0 }] }]
        );
        let rec = &book.jobs[&7];
        assert_eq!((rec.epoch, rec.state, rec.replicas.len()), (2, State::Dispatched, 0));
    }

    #[test]
    fn an_invalid_job_is_rejected_and_not_recorded() {
        let mut book = Book::default();
        let empty = JobSpec { tasks: vec![], ..job(7, 1) };
        let applied = apply_command(
            &mut book,
            Command::Dispatch { job: Box::new(empty), epoch: 1, answer_by_ms: None },
            NOW,
            &RULES,
        );
        let rejected = reports(&applied);
        assert_eq!((rejected[0].0, rejected[0].1), (1, State::Rejected));
        assert!(rejected[0].2.as_deref().unwrap().starts_with("invalid job: "));
        assert!(!book.jobs.contains_key(&7) && !applied.needs_cycle);
    }

    #[test]
    fn evicting_a_job_not_yet_placed_ends_it_preempted() {
        let mut book = Book::default();
        dispatch(&mut book, 7, 1, 1);
        let applied =
            apply_command(&mut book, Command::Evict { job: 7, grace_s: 30, epoch: 1, hold: None }, NOW, &RULES);
        assert_eq!(reports(&applied), [(1, State::Preempted, Some("evicted before it started".into()))]);
        assert!(book.jobs[&7].is_finished());
    }

    #[test]
    fn evicting_a_running_job_gives_it_the_grace_and_only_once() {
        let mut book = Book::default();
        running(&mut book, 7, 1, 1);
        let applied =
            apply_command(&mut book, Command::Evict { job: 7, grace_s: 1, epoch: 1, hold: None }, NOW, &RULES);
        assert_eq!(reports(&applied), [(1, State::Preempting, Some("evicted by the control plane; grace 1s".into()))]);
        assert!(!applied.needs_cycle);
        let eviction = book.jobs[&7].eviction.clone().unwrap();
        assert_eq!((eviction.deadline_ms, eviction.preemptor, eviction.stopped), (NOW + 1000, None, false));
        // Evicted again: the deadline is not pushed back.
        let again =
            apply_command(&mut book, Command::Evict { job: 7, grace_s: 60, epoch: 1, hold: None }, NOW + 500, &RULES);
        assert!(again.steps.is_empty());
        assert_eq!(book.jobs[&7].eviction.as_ref().unwrap().deadline_ms, NOW + 1000);
        // Unknown jobs: nothing.
        let unknown =
            apply_command(&mut book, Command::Evict { job: 8, grace_s: 1, epoch: 1, hold: None }, NOW, &RULES);
        assert!(unknown.steps.is_empty());
    }

    /// The thrash the control plane's holds end (issue 18): the nodes an eviction frees stay
    /// kept for the job it makes room for, until that job starts here or the hold expires.
    #[test]
    fn an_eviction_for_another_job_keeps_the_victims_nodes_for_it() {
        use crate::convert::queues_of;
        let mut book = Book::default();
        running(&mut book, 7, 2, 1);
        let hold = Some(grus_protocol::command::EvictionHold { job: 9, ttl_s: 120 });
        let applied = apply_command(&mut book, Command::Evict { job: 7, grace_s: 1, epoch: 1, hold }, NOW, &RULES);
        assert!(applied.needs_cycle);
        assert_eq!(book.holds[&9], crate::book::NodeHold { nodes: ["n1".to_string()].into(), until_ms: NOW + 120_000 });
        let queues = queues_of(&BTreeMap::new(), &BTreeMap::new(), &BTreeMap::new(), None).unwrap();
        let held = book.cycle_jobs(&queues, &BTreeMap::new(), NOW + 1_000).holds;
        assert_eq!(held, vec![(grus_scheduler::job::JobId(9), ["n1".to_string()].into())]);
        // Job 9 arrives and waits: still held for it. Once it is placed (it runs), the hold is over.
        dispatch(&mut book, 9, 1, 1);
        assert_eq!(book.cycle_jobs(&queues, &BTreeMap::new(), NOW + 2_000).holds.len(), 1);
        let placed = BTreeMap::from([(9, vec![])]);
        assert!(book.cycle_jobs(&queues, &placed, NOW + 3_000).holds.is_empty());
        assert!(book.holds.is_empty());
        // A hold for a job that never comes expires; an absurd TTL is capped at an hour.
        running(&mut book, 8, 1, 1);
        let hold = Some(grus_protocol::command::EvictionHold { job: 10, ttl_s: u32::MAX });
        apply_command(&mut book, Command::Evict { job: 8, grace_s: 1, epoch: 1, hold }, NOW, &RULES);
        assert_eq!(book.holds[&10].until_ms, NOW + crate::book::MAX_HOLD_MS);
        assert!(book.cycle_jobs(&queues, &BTreeMap::new(), NOW + crate::book::MAX_HOLD_MS).holds.is_empty());
    }

    #[test]
    fn set_queues_is_stored_unless_it_does_not_form_valid_queues() {
        let mut book = Book::default();
        let weights = BTreeMap::from([("a".to_string(), 2.0)]);
        let applied = apply_command(
            &mut book,
            Command::SetQueues {
                weights: weights.clone(),
                quotas: BTreeMap::new(),
                pool_weights: BTreeMap::new(),
                hierarchy: Some(ShareHierarchy {
                    tenants: BTreeMap::from([("acme".to_string(), 2.0)]),
                    projects: BTreeMap::new(),
                }),
            },
            NOW,
            &RULES,
        );
        assert!(applied.needs_cycle && applied.steps.is_empty());
        assert_eq!(book.queue_weights, weights);
        assert_eq!(book.queue_hierarchy.as_ref().map(|h| h.tenants["acme"]), Some(2.0));
        let bad = QueueQuota {
            guaranteed: BTreeMap::from([("gpu".to_string(), 8)]),
            limit: BTreeMap::from([("gpu".to_string(), 4)]),
            can_borrow: false,
        };
        let refused = apply_command(
            &mut book,
            Command::SetQueues {
                weights: BTreeMap::new(),
                quotas: BTreeMap::from([("b".to_string(), bad)]),
                pool_weights: BTreeMap::new(),
                hierarchy: None,
            },
            NOW,
            &RULES,
        );
        assert_eq!(refused, Applied::default());
        assert_eq!(book.queue_weights, weights, "unchanged");
        assert!(book.queue_hierarchy.is_some(), "unchanged");
    }

    pub(crate) mod fuzz {
        //! Any sequence of commands, from any control plane, with any epochs and queue
        //! settings: the core never panics, a job's fence never goes down, and a command it
        //! refuses changes nothing.

        use proptest::prelude::*;

        use super::*;

        pub(crate) fn any_command() -> impl Strategy<Value = Command> {
            let job_id = 1u64..5;
            let epoch = 0u64..6;
            prop_oneof![
                (job_id.clone(), epoch.clone(), 1u32..4).prop_map(|(id, epoch, replicas)| Command::Dispatch {
                    job: Box::new(job(id, replicas)),
                    epoch,
                    answer_by_ms: None
                }),
                (job_id.clone(), epoch.clone()).prop_map(|(job, epoch)| Command::Cancel { job, epoch }),
                (job_id.clone(), epoch.clone(), 0u32..100, proptest::option::of((job_id.clone(), 0u32..=u32::MAX)))
                    .prop_map(|(job, epoch, grace_s, hold)| Command::Evict {
                        job,
                        grace_s,
                        epoch,
                        hold: hold.map(|(job, ttl_s)| grus_protocol::command::EvictionHold { job, ttl_s })
                    }),
                (
                    prop::collection::btree_map("[a-c]{0,1}/?[a-c]{1,2}", weight(), 0..3),
                    proptest::option::of((
                        prop::collection::btree_map("[a-c]", weight(), 0..3),
                        prop::collection::btree_map("[a-c]", ("[a-d]", weight()), 0..3),
                    ))
                )
                    .prop_map(|(weights, hierarchy)| Command::SetQueues {
                        weights,
                        quotas: BTreeMap::new(),
                        pool_weights: BTreeMap::new(),
                        hierarchy: hierarchy.map(|(tenants, projects)| ShareHierarchy {
                            tenants,
                            projects: projects
                                .into_iter()
                                .map(|(p, (tenant, weight))| (p, ProjectShare { tenant, weight }))
                                .collect(),
                        }),
                    }),
                ".{0,8}".prop_map(|reason| Command::Resync { reason }),
            ]
        }

        fn weight() -> impl Strategy<Value = f64> {
            prop_oneof![Just(f64::NAN), Just(f64::INFINITY), Just(-1.0), 0.0f64..10.0, Just(1e12)]
        }

        fn any_sender() -> impl Strategy<Value = Option<String>> {
            prop_oneof![Just(None), Just(Some("cp-a".to_owned())), Just(Some("cp-b".to_owned()))]
        }

        proptest! {
            #[test]
            fn any_command_sequence_keeps_fences_and_refusals(
                commands in prop::collection::vec((any_sender(), any_command(), 0u8..4), 1..60)
            ) {
                let mut book = Book::default();
                for (i, (from, command, replay)) in commands.into_iter().enumerate() {
                    let before = (book.epochs.clone(), book.jobs.len(), book.control_plane.clone());
                    // Some messages come twice (redelivery after a crash).
                    let id = format!("m-{}", if replay == 0 { i.saturating_sub(1) } else { i });
                    let applied = apply_message(&mut book, &id, from.as_deref(), command, NOW, &RULES);
                    for (job, epoch) in &before.0 {
                        prop_assert!(book.epochs[job] >= *epoch, "job {job}: fence went down");
                    }
                    if let Some(Applied { refused: Some(_), .. }) = &applied {
                        prop_assert_eq!((&before.0, before.1, &before.2), (&book.epochs, book.jobs.len(), &book.control_plane));
                    }
                    for (id, rec) in &book.jobs {
                        prop_assert!(rec.epoch <= book.epochs[id], "a job runs under an epoch above its fence");
                    }
                }
            }
        }
    }
}
