//! Round trips and the version rules of the wire protocol.

use std::collections::BTreeMap;

use grus_protocol::wire::*;
use grus_protocol::{decode, encode, Command, DecodeError, Decoded, Envelope, Event};

fn job() -> JobSpec {
    JobSpec {
        id: 42,
        name: "llama-finetune".into(),
        project: "vision".into(),
        queue: "default".into(),
        priority: 1000,
        preemptible: false,
        may_preempt: true,
        tasks: vec![TaskSpec {
            name: "main".into(),
            replicas: 4,
            image: "ghcr.io/example/train:1.2".into(),
            command: vec!["torchrun".into(), "train.py".into()],
            env: BTreeMap::new(),
            resources: ResourcesSpec {
                gpus: 8,
                gpu_milli: None,
                gpu_memory_mib: None,
                gpu_models: vec!["A100-80GB".into(), "H100-80GB".into()],
                cpu_milli: 32000,
                memory_mib: 262144,
                mig_profile: None,
            },
            topology: Some(TopologySpec { scope: TopologyScope::Nvlink }),
        }],
        gang: Some(GangSpec { min_members: 4 }),
        elastic: None,
        policies: vec![PolicySpec {
            on: PolicyTrigger::TaskSucceeded("main".into()),
            action: PolicyAction::CompleteJob,
        }],
        max_runtime_s: Some(3600),
        min_runtime_s: None,
        predicted_runtime_s: None,
        labels: BTreeMap::from([("grus.io/sim-duration-s".into(), "120".into())]),
        node_selector: BTreeMap::new(),
        pools: Vec::new(),
        submitted_by: "alice".into(),
        submitted_at_ms: 1_700_000_000_000,
        checkpoint: None,
        workspace: None,
        service: None,
    }
}

pub fn commands() -> Vec<Command> {
    vec![
        Command::Dispatch { job: Box::new(job()), epoch: 3, answer_by_ms: Some(1_800_000_000_000) },
        Command::Cancel { job: 42, epoch: 3 },
        Command::Evict {
            job: 42,
            grace_s: 30,
            epoch: 3,
            hold: Some(grus_protocol::command::EvictionHold { job: 7, ttl_s: 120 }),
        },
        Command::SetQueues {
            weights: BTreeMap::from([("default".into(), 1.0)]),
            quotas: BTreeMap::from([(
                "default".into(),
                QueueQuota {
                    guaranteed: BTreeMap::from([("gpu".into(), 8000)]),
                    limit: BTreeMap::new(),
                    can_borrow: true,
                },
            )]),
            pool_weights: BTreeMap::from([("default".into(), BTreeMap::from([("a100-train".into(), 3.0)]))]),
            hierarchy: None,
        },
        Command::SetQueues {
            weights: BTreeMap::from([("vision/default".into(), 2.0)]),
            quotas: BTreeMap::new(),
            pool_weights: BTreeMap::new(),
            hierarchy: Some(grus_protocol::wire::ShareHierarchy {
                tenants: BTreeMap::from([("acme".into(), 3.0)]),
                projects: BTreeMap::from([(
                    "vision".into(),
                    grus_protocol::wire::ProjectShare { tenant: "acme".into(), weight: 0.5 },
                )]),
            }),
        },
        Command::Resync { reason: "cluster was unreachable".into() },
        Command::ReadLogs {
            request: "r-1".into(),
            job: 7,
            query: grus_protocol::logs::LogQuery {
                task: Some("main".into()),
                replica: Some(1),
                tail: Some(100),
                since_ms: None,
                max_bytes: 65_536,
            },
        },
        Command::CordonNodes { nodes: vec!["gpu-node-3".into(), "gpu-node-7".into()] },
    ]
}

pub fn events() -> Vec<Event> {
    let node = NodeInfo {
        name: "n1".into(),
        labels: BTreeMap::new(),
        rack: Some("r1".into()),
        pool: None,
        cpu_milli: 64000,
        memory_mib: 512 * 1024,
        healthy: true,
        gpus: vec![GpuInfo {
            index: 0,
            uuid: Some("GPU-1".into()),
            model: "A100-80GB".into(),
            memory_mib: 81920,
            numa: 0,
            nvlink_group: 0,
            healthy: true,
            mig: false,
        }],
    };
    vec![
        Event::Hello { version: "0.1.0".into(), capabilities: vec!["sim".into()] },
        Event::Inventory { nodes: vec![node.clone()] },
        Event::Capacity { summary: CapacitySummary::default() },
        Event::JobState {
            job: 42,
            task: Some("main".into()),
            replica: Some(0),
            state: State::Running,
            node: Some("n1".into()),
            devices: vec![DeviceRef::share(0, 1000)],
            at: 5,
            epoch: 3,
            reason: None,
            checkpoint: None,
            endpoint: None,
            exit: None,
        },
        Event::JobState {
            job: 43,
            task: None,
            replica: None,
            state: State::Running,
            node: None,
            devices: vec![],
            at: 5,
            epoch: 1,
            reason: None,
            checkpoint: None,
            endpoint: Some("http://grus-ws-43.grus-vision.svc.cluster.local:8888/".into()),
            exit: None,
        },
        Event::Metrics {
            gpus: vec![GpuMetrics {
                node: "n1".into(),
                index: 0,
                busy_pct: 50.0,
                memory_used_mib: 100,
                power_w: None,
                temperature_c: None,
            }],
            replicas: vec![],
        },
        Event::Snapshot {
            jobs: vec![JobSnapshot { job: 42, epoch: 3, state: State::Running, replicas: vec![] }],
            inventory: vec![node],
        },
        Event::JobState {
            job: 44,
            task: Some("main".into()),
            replica: Some(1),
            state: State::Failed,
            node: Some("n1".into()),
            devices: vec![DeviceRef::share(0, 1000)],
            at: 9,
            epoch: 1,
            reason: Some("OOMKilled (exit 137)".into()),
            checkpoint: None,
            endpoint: None,
            exit: Some(ReplicaExit::new(Some(137), Termination::OomKilled)),
        },
        Event::Metrics {
            gpus: vec![],
            replicas: vec![ReplicaUsage {
                job: 44,
                task: "main".into(),
                replica: 1,
                cpu_milli: 3_500,
                memory_mib: 12_288,
                disk_read_bps: 20_000_000,
                disk_write_bps: 1_000_000,
                net_rx_bps: 125_000_000,
                net_tx_bps: 2_000_000,
            }],
        },
    ]
}

#[test]
fn every_command_and_event_round_trips() {
    for c in commands() {
        let e = Envelope::new("m1", "c1", 7, c.clone());
        let text = encode(&e);
        assert_eq!(decode::<Command>(text.as_bytes(), "c1"), Ok(Decoded::Known(e)), "{text}");
    }
    for ev in events() {
        let e = Envelope::new("m2", "c1", 7, ev.clone());
        let text = encode(&e);
        assert_eq!(decode::<Event>(text.as_bytes(), "c1"), Ok(Decoded::Known(e)), "{text}");
    }
}

#[test]
fn the_envelope_has_the_documented_shape() {
    let text = encode(&Envelope::new("m1", "c1", 7, Command::Cancel { job: 42, epoch: 3 }));
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        v,
        serde_json::json!({"v": 1, "id": "m1", "cluster": "c1", "epoch": 3, "ts": 7, "kind": "Cancel", "body": {"job": 42, "epoch": 3}})
    );
}

#[test]
fn a_newer_minor_with_extra_fields_is_accepted() {
    let text = r#"{"v":1,"id":"m","cluster":"c1","epoch":3,"ts":1,"kind":"Cancel","body":{"job":42,"epoch":3,"reason":"user"},"trace_id":"x"}"#;
    assert!(matches!(decode::<Command>(text.as_bytes(), "c1"), Ok(Decoded::Known(_))));
}

#[test]
fn an_unknown_kind_is_reported_not_dropped() {
    let text = r#"{"v":1,"id":"m","cluster":"c1","ts":1,"kind":"Drain","body":{"node":"n1"}}"#;
    assert_eq!(
        decode::<Command>(text.as_bytes(), "c1"),
        Ok(Decoded::UnknownKind { id: "m".into(), kind: "Drain".into() })
    );
}

#[test]
fn malformed_messages_say_why() {
    type Check = fn(&DecodeError) -> bool;
    let cases: &[(&str, Check)] = &[
        ("not json", |e| matches!(e, DecodeError::NotAnEnvelope(_))),
        (r#"{"v":1,"cluster":"c1","ts":1,"kind":"Cancel","body":{}}"#, |e| matches!(e, DecodeError::NotAnEnvelope(_))),
        (r#"{"v":2,"id":"m","cluster":"c1","ts":1,"kind":"Cancel","body":{}}"#, |e| {
            *e == DecodeError::UnsupportedVersion(2)
        }),
        (r#"{"v":1,"id":"m","cluster":"c1","epoch":3,"ts":1,"kind":"Cancel","body":{"job":"x","epoch":3}}"#, |e| {
            matches!(e, DecodeError::BadBody { .. })
        }),
        (r#"{"v":1,"id":"m","cluster":"c1","epoch":2,"ts":1,"kind":"Cancel","body":{"job":1,"epoch":3}}"#, |e| {
            matches!(e, DecodeError::EpochMismatch { .. })
        }),
        (r#"{"v":1,"id":"m","cluster":"c2","ts":1,"kind":"Cancel","body":{}}"#, |e| {
            matches!(e, DecodeError::WrongCluster { .. })
        }),
    ];
    for (text, check) in cases {
        let err = decode::<Command>(text.as_bytes(), "c1").unwrap_err();
        assert!(check(&err), "{text}: {err}");
        assert!(!err.to_string().is_empty());
    }
}

#[test]
fn a_dispatch_without_an_answer_deadline_is_one_of_an_older_control_plane() {
    let older = Command::Dispatch { job: Box::new(job()), epoch: 3, answer_by_ms: None };
    let json = serde_json::to_value(&older).unwrap();
    assert!(json["body"].get("answer_by_ms").is_none(), "{json}");
    assert_eq!(serde_json::from_value::<Command>(json).unwrap(), older);
}

#[test]
fn set_queues_without_a_hierarchy_is_one_of_an_older_control_plane() {
    let older = serde_json::json!({"kind": "SetQueues", "body": {"weights": {"default": 2.0}, "quotas": {}}});
    let Command::SetQueues { weights, hierarchy, .. } = serde_json::from_value::<Command>(older).unwrap() else {
        panic!("not a SetQueues")
    };
    assert_eq!((weights["default"], hierarchy), (2.0, None));
    assert_eq!(grus_protocol::wire::ShareHierarchy::project_of("vision/default"), Some("vision"));
    assert_eq!(grus_protocol::wire::ShareHierarchy::project_of("default"), None);
}

#[test]
fn a_checkpoint_report_round_trips_and_one_without_leaves_the_field_out() {
    let written = Event::JobState {
        job: 42,
        task: None,
        replica: None,
        state: State::Preempting,
        node: None,
        devices: vec![],
        at: 6,
        epoch: 3,
        reason: Some("checkpoint written: s3://ckpt/42".into()),
        checkpoint: Some("s3://ckpt/42".into()),
        endpoint: None,
        exit: None,
    };
    let text = encode(&Envelope::new("m1", "c1", 7, written.clone()));
    let Ok(Decoded::Known(back)) = decode::<Event>(text.as_bytes(), "c1") else { panic!("{text}") };
    assert_eq!(back.message, written);
    let plain = events().into_iter().find(|e| matches!(e, Event::JobState { .. })).unwrap();
    let json = serde_json::to_value(&plain).unwrap();
    assert!(json["body"].get("checkpoint").is_none(), "an older api reads it as before: {json}");
}

#[test]
fn a_replicas_exit_round_trips_and_an_unknown_termination_reads_as_other() {
    let failed = events().into_iter().find(|e| matches!(e, Event::JobState { exit: Some(_), .. })).unwrap();
    let json = serde_json::to_value(&failed).unwrap();
    assert_eq!(json["body"]["exit"], serde_json::json!({ "code": 137, "termination": "oom_killed" }));
    let newer: ReplicaExit =
        serde_json::from_value(serde_json::json!({ "termination": "gpu_fell_off_the_bus" })).unwrap();
    assert_eq!(newer, ReplicaExit::new(None, Termination::Other));
    for t in Termination::ALL {
        assert_eq!(Termination::parse(t.as_str()), t);
        assert_eq!(serde_json::to_value(t).unwrap(), t.as_str(), "one name on the wire and in storage");
    }
}

#[test]
fn kind_lists_name_every_variant() {
    for c in commands() {
        assert!(Command::KINDS.contains(&c.kind()));
    }
    for e in events() {
        assert!(Event::KINDS.contains(&e.kind()));
    }
    let kinds = |ks: Vec<&'static str>| ks.into_iter().collect::<std::collections::BTreeSet<_>>().len();
    assert_eq!(Command::KINDS.len(), kinds(commands().iter().map(Command::kind).collect()));
    assert_eq!(Event::KINDS.len(), kinds(events().iter().map(Event::kind).collect()));
}
