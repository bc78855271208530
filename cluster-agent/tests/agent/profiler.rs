//! The profiler: Prometheus text, the cgroup → pod parser, the NVML fallback, the sim probe
//! and the feeds built on the sampler.

use std::sync::Arc;
use std::time::Duration;

use grus_agent::backend::sim::{spec, SimBackend, SimControl};
use grus_agent::backend::{Backend, ReplicaKey, ReplicaLaunch};
use grus_agent::clock::ManualClock;
use grus_agent::device_plugin::{plugin_gpus, plugin_gpus_feed};
use grus_agent::profiler::cgroup::{pod_uid_from_cgroup, pod_uid_from_cgroup_line, pod_uid_of_pid};
use grus_agent::profiler::nvml::nvml_or_noop;
use grus_agent::profiler::prometheus::{metrics_router, render, CONTENT_TYPE};
use grus_agent::profiler::{spawn_sampler, to_wire, GpuProbe, GpuReading, PodGpuUsage, PodRef, Sample};
use grus_protocol::wire::{DeviceRef, ResourcesSpec, TaskSpec};
use tower::ServiceExt;

fn reading(index: u32, uuid: &str, used: u64, util: f32) -> GpuReading {
    GpuReading {
        node: "gpu-node-1".into(),
        index,
        uuid: Some(uuid.into()),
        model: "NVIDIA H100 80GB HBM3".into(),
        utilization_pct: util,
        memory_used_mib: used,
        memory_total_mib: 81559,
        power_w: Some(312.5),
        temperature_c: Some(61.0),
        numa: Some(0),
        healthy: true,
        mig: None,
    }
}

fn pod(namespace: &str, name: &str) -> PodRef {
    PodRef { namespace: namespace.into(), name: name.into() }
}

fn fixed_sample() -> Sample {
    let mut idle = reading(1, "GPU-b", 0, 0.0);
    idle.power_w = None;
    idle.temperature_c = None;
    Sample {
        gpus: vec![idle, reading(0, "GPU-a", 20480, 87.0)],
        pods: vec![PodGpuUsage {
            node: "gpu-node-1".into(),
            gpu_index: 0,
            pod: pod("ml", "train-0"),
            memory_used_mib: 20480,
        }],
    }
}

// Labels in the exposition's order (sorted by name), dcgm-exporter's names.
const A: &str =
    r#"Hostname="gpu-node-1",UUID="GPU-a",gpu="0",modelName="NVIDIA H100 80GB HBM3",namespace="ml",pod="train-0""#;
const B: &str = r#"Hostname="gpu-node-1",UUID="GPU-b",gpu="1",modelName="NVIDIA H100 80GB HBM3",namespace="",pod="""#;

#[test]
fn prometheus_text_for_a_fixed_sample() {
    let expected = format!(
        "# HELP DCGM_FI_DEV_FB_FREE Framebuffer memory free (in MiB).
# TYPE DCGM_FI_DEV_FB_FREE gauge
DCGM_FI_DEV_FB_FREE{{{A}}} 61079
DCGM_FI_DEV_FB_FREE{{{B}}} 81559
# HELP DCGM_FI_DEV_FB_USED Framebuffer memory used (in MiB).
# TYPE DCGM_FI_DEV_FB_USED gauge
DCGM_FI_DEV_FB_USED{{{A}}} 20480
DCGM_FI_DEV_FB_USED{{{B}}} 0
# HELP DCGM_FI_DEV_GPU_TEMP GPU temperature (in C).
# TYPE DCGM_FI_DEV_GPU_TEMP gauge
DCGM_FI_DEV_GPU_TEMP{{{A}}} 61
# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).
# TYPE DCGM_FI_DEV_GPU_UTIL gauge
DCGM_FI_DEV_GPU_UTIL{{{A}}} 87
DCGM_FI_DEV_GPU_UTIL{{{B}}} 0
# HELP DCGM_FI_DEV_POWER_USAGE Power draw (in W).
# TYPE DCGM_FI_DEV_POWER_USAGE gauge
DCGM_FI_DEV_POWER_USAGE{{{A}}} 312.5
# HELP grus_gpu_pod_fb_used Framebuffer memory used by one pod's processes (in MiB).
# TYPE grus_gpu_pod_fb_used gauge
grus_gpu_pod_fb_used{{{A}}} 20480
"
    );
    assert_eq!(render(&fixed_sample()), expected);
}

#[test]
fn shared_devices_have_no_pod_label_but_one_series_per_pod() {
    let mut sample = fixed_sample();
    sample.pods.push(PodGpuUsage {
        node: "gpu-node-1".into(),
        gpu_index: 0,
        pod: pod("ml", "nb-1"),
        memory_used_mib: 1024,
    });
    let text = render(&sample);
    assert!(text.contains(r#"DCGM_FI_DEV_FB_USED{Hostname="gpu-node-1",UUID="GPU-a",gpu="0",modelName="NVIDIA H100 80GB HBM3",namespace="",pod=""} 20480"#), "{text}");
    assert!(text.contains(r#"namespace="ml",pod="nb-1"} 1024"#), "{text}");
    assert!(text.contains(r#"namespace="ml",pod="train-0"} 20480"#), "{text}");
}

#[test]
fn f32_readings_print_as_measured_not_widened() {
    let mut sample = fixed_sample();
    sample.gpus[1].power_w = Some(215.3);
    sample.gpus[1].utilization_pct = 33.3;
    sample.gpus[1].temperature_c = Some(47.1);
    let text = render(&sample);
    // gpus[1] is device 0, which train-0 uses alone (labels A).
    for want in [
        format!("DCGM_FI_DEV_POWER_USAGE{{{A}}} 215.3\n"),
        format!("DCGM_FI_DEV_GPU_UTIL{{{A}}} 33.3\n"),
        format!("DCGM_FI_DEV_GPU_TEMP{{{A}}} 47.1\n"),
    ] {
        assert!(text.contains(&want), "{want} in {text}");
    }
}

#[test]
fn a_pod_listed_twice_for_one_device_is_one_series_with_both() {
    let mut sample = fixed_sample();
    sample.pods.push(PodGpuUsage {
        node: "gpu-node-1".into(),
        gpu_index: 0,
        pod: pod("ml", "train-0"),
        memory_used_mib: 1024,
    });
    let text = render(&sample);
    let series: Vec<&str> = text.lines().filter(|l| l.starts_with("grus_gpu_pod_fb_used{")).collect();
    assert_eq!(series, [format!("grus_gpu_pod_fb_used{{{A}}} 21504")], "{text}");
    // Still the device's one pod: its device series keep the pod's labels.
    assert!(text.contains(&format!("DCGM_FI_DEV_FB_USED{{{A}}} 20480\n")), "{text}");
}

#[test]
fn label_values_are_escaped() {
    let mut sample = fixed_sample();
    sample.gpus[1].model = "Tesla \"V100\"\\16GB\n".into();
    assert!(render(&sample).contains(r#"modelName="Tesla \"V100\"\\16GB\n""#));
}

#[tokio::test]
async fn metrics_endpoint_serves_the_latest_sample() {
    let (_tx, rx) = tokio::sync::watch::channel(Arc::new(fixed_sample()));
    let response = metrics_router(rx)
        .oneshot(axum::http::Request::get("/metrics").body(axum::body::Body::empty()).unwrap())
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], CONTENT_TYPE);
    let body = axum::body::to_bytes(response.into_body(), 1 << 20).await.unwrap();
    assert_eq!(std::str::from_utf8(&body).unwrap(), render(&fixed_sample()));
}

const UID: &str = "8e7f4d2a-1b2c-4d5e-9f80-a1b2c3d4e5f6";

#[test]
fn cgroup_lines_of_every_driver_and_version_name_the_pod() {
    let lines = [
        // v1, cgroupfs driver: Burstable, BestEffort, Guaranteed.
        "12:memory:/kubepods/burstable/pod8e7f4d2a-1b2c-4d5e-9f80-a1b2c3d4e5f6/3f2a9c1e0b7d6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b2a1f",
        "4:cpu,cpuacct:/kubepods/besteffort/pod8e7f4d2a-1b2c-4d5e-9f80-a1b2c3d4e5f6/3f2a9c1e0b7d",
        "9:devices:/kubepods/pod8e7f4d2a-1b2c-4d5e-9f80-a1b2c3d4e5f6/3f2a9c1e0b7d",
        // v1, systemd driver.
        "11:cpuset:/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod8e7f4d2a_1b2c_4d5e_9f80_a1b2c3d4e5f6.slice/cri-containerd-3f2a9c1e0b7d.scope",
        "1:name=systemd:/kubepods.slice/kubepods-pod8e7f4d2a_1b2c_4d5e_9f80_a1b2c3d4e5f6.slice/docker-3f2a9c1e0b7d.scope",
        // v2, systemd driver, and the cgroupfs form.
        "0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod8e7f4d2a_1b2c_4d5e_9f80_a1b2c3d4e5f6.slice/cri-containerd-3f2a9c1e0b7d.scope",
        "0::/kubepods/burstable/pod8e7f4d2a-1b2c-4d5e-9f80-a1b2c3d4e5f6/3f2a9c1e0b7d",
        // v2 under containerd's cgroup namespace (kind, nested runtimes).
        "0::/system.slice/containerd.service/kubepods-burstable-pod8e7f4d2a_1b2c_4d5e_9f80_a1b2c3d4e5f6.slice:cri-containerd:3f2a9c1e0b7d",
        // CRI-O.
        "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod8e7f4d2a_1b2c_4d5e_9f80_a1b2c3d4e5f6.slice/crio-3f2a9c1e0b7d.scope",
    ];
    for line in lines {
        assert_eq!(pod_uid_from_cgroup_line(line).as_deref(), Some(UID), "{line}");
    }
    // Static pods: the UID is the config hash.
    assert_eq!(
        pod_uid_from_cgroup_line(
            "0::/kubepods.slice/kubepods-pod6b4b2c1e5d0b5f4e2d8c9a7b6e5f4d3c.slice/cri-containerd-1.scope"
        )
        .as_deref(),
        Some("6b4b2c1e5d0b5f4e2d8c9a7b6e5f4d3c")
    );
}

#[test]
fn processes_outside_pods_have_no_pod() {
    for line in [
        "0::/",
        "0::/user.slice/user-1000.slice/session-3.scope",
        "0::/system.slice/containerd.service",
        "12:memory:/docker/3f2a9c1e0b7d6a5f",
        "0::/kubepods.slice/kubepods-burstable.slice",
        "0::/kubepods/burstable/podnot-a-uid/3f2a",
        "garbage",
        "",
    ] {
        assert_eq!(pod_uid_from_cgroup_line(line), None, "{line}");
    }
}

#[test]
fn a_whole_v1_cgroup_file_and_a_proc_tree() {
    let contents =
        "12:pids:/user.slice\n11:memory:/kubepods/burstable/pod8e7f4d2a-1b2c-4d5e-9f80-a1b2c3d4e5f6/abc\n0::/\n";
    assert_eq!(pod_uid_from_cgroup(contents).as_deref(), Some(UID));

    let proc_root = tempfile::tempdir().unwrap();
    std::fs::create_dir(proc_root.path().join("4242")).unwrap();
    std::fs::write(proc_root.path().join("4242/cgroup"), contents).unwrap();
    assert_eq!(pod_uid_of_pid(proc_root.path(), 4242).as_deref(), Some(UID));
    assert_eq!(pod_uid_of_pid(proc_root.path(), 4243), None, "a process that is gone");
}

#[test]
fn without_nvml_the_probe_is_a_noop_and_does_not_panic() {
    let probe = nvml_or_noop("gpu-node-1", None);
    // A second call (a re-init) must not panic either.
    let again = nvml_or_noop("gpu-node-1", None);
    let sample = probe.sample().expect("a sample");
    if probe.name() == "noop" {
        assert_eq!(sample, Sample::default());
        assert_eq!(again.name(), "noop");
    }
}

fn sim() -> (SimBackend, SimControl) {
    let nodes = spec::parse_compact("1x2xA100-80GB").unwrap();
    let backend = SimBackend::new(nodes, None, None, Arc::new(ManualClock::at(0))).unwrap();
    let control = backend.control();
    (backend, control)
}

fn share(job: u64, gpu: u32, milli: u32) -> ReplicaLaunch {
    ReplicaLaunch {
        key: ReplicaKey { job, task: "main".into(), replica: 0 },
        epoch: 1,
        job_name: format!("j{job}"),
        project: "ml".into(),
        queue: "q".into(),
        task: TaskSpec {
            name: "main".into(),
            replicas: 1,
            image: "img".into(),
            command: vec![],
            env: Default::default(),
            resources: ResourcesSpec { gpus: 1, gpu_milli: Some(milli), ..ResourcesSpec::default() },
            topology: None,
        },
        node: "a100-80gb-000".into(),
        devices: vec![DeviceRef::share(gpu, milli)],
        gang: None,
        labels: Default::default(),
        service: None,
        workspace: None,
    }
}

#[tokio::test]
async fn sim_utilization_follows_what_runs() {
    let (mut backend, probe) = sim();
    backend.launch(&share(1, 0, 250)).await.unwrap();
    backend.launch(&share(2, 0, 500)).await.unwrap();
    let sample = probe.sample().unwrap();
    let g0 = &sample.gpus[0];
    assert_eq!((g0.utilization_pct, g0.memory_used_mib), (67.5, 81920 * 750 / 1000 * 9 / 10));
    assert_eq!(sample.gpus[1].utilization_pct, 0.0);
    assert_eq!(sample.pods.len(), 2);
    assert_eq!(sample.pods[0].pod, pod("ml", "grus-1-main-0"));

    let wire = to_wire(&sample);
    assert_eq!(wire[0].node, "a100-80gb-000");
    assert_eq!(wire[0].busy_pct, 67.5);
    assert!(wire[0].power_w.unwrap() > wire[1].power_w.unwrap());

    backend.stop(&ReplicaKey { job: 1, task: "main".into(), replica: 0 }, Duration::ZERO).await.unwrap();
    assert_eq!(probe.sample().unwrap().gpus[0].utilization_pct, 45.0);

    let plugin = plugin_gpus(&sample, "a100-80gb-000");
    assert_eq!(plugin.len(), 2);
    assert_eq!(
        (plugin[1].uuid.as_deref(), plugin[1].memory_mib, plugin[1].numa),
        (Some("GPU-sim-a100-80gb-000-1"), 81920, Some(1))
    );
    assert!(plugin_gpus(&sample, "other-node").is_empty());
}

#[tokio::test]
async fn health_flows_from_the_sampler_to_the_plugin_feed() {
    let (mut backend, probe) = sim();
    let samples = spawn_sampler(Arc::new(probe.clone()), Duration::from_millis(10));
    let mut feed = plugin_gpus_feed(samples, "a100-80gb-000".into());
    tokio::time::timeout(Duration::from_secs(5), feed.wait_for(|g| g.len() == 2 && g.iter().all(|g| g.healthy)))
        .await
        .expect("first sample")
        .expect("feed open");

    // Utilization alone does not wake the device plugin.
    backend.launch(&share(1, 1, 300)).await.unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(!feed.has_changed().unwrap());

    assert!(probe.set_gpu_health("a100-80gb-000", 1, false).unwrap());
    let gpus_now = tokio::time::timeout(Duration::from_secs(5), feed.wait_for(|g| g.len() == 2 && !g[1].healthy))
        .await
        .expect("health change")
        .expect("feed open")
        .clone();
    assert!(gpus_now[0].healthy);
}

/// The MIG reader against the fake NVML (`libgrus_fake_cuda.so`, built next to this test as a
/// dev-dependency): GPU instances come back with their profile, first slice and MIG UUID, in
/// slice order; a GPU not in MIG mode reads as `None`.
#[test]
fn mig_layouts_are_read_from_nvml() {
    use grus_agent::profiler::mig::{MigInstanceReading, MigReader};
    use std::ffi::{c_char, c_int};
    let deps = std::env::current_exe().unwrap().parent().unwrap().to_path_buf();
    let fake = deps.join("libgrus_fake_cuda.so");
    assert!(fake.exists(), "{} not built", fake.display());
    let reader = MigReader::open(&fake).unwrap();
    // SAFETY: the fake driver's own test hook, with a NUL-terminated spec.
    let lib = unsafe { nvml_wrapper_sys::bindings::NvmlLib::new(&fake) }.unwrap();
    let set_mig =
        unsafe { lib.__library.get::<unsafe extern "C" fn(c_int, *const c_char) -> c_int>(b"fakeSetMig") }.unwrap();
    assert_eq!(reader.instances(0), Ok(None), "not in MIG mode");
    assert_eq!(unsafe { set_mig(1, c"3g.40gb@4,1g.10gb@0,1g.10gb@1".as_ptr()) }, 0);
    let mig = |profile: &str, start: u8, uuid: &str| MigInstanceReading {
        profile: profile.into(),
        start,
        uuid: Some(uuid.into()),
    };
    assert_eq!(
        reader.instances(1).unwrap().unwrap(),
        vec![
            mig("1g.10gb", 0, "MIG-abababab-0000-0000-0000-000000000011"),
            mig("1g.10gb", 1, "MIG-abababab-0000-0000-0000-000000000012"),
            mig("3g.40gb", 4, "MIG-abababab-0000-0000-0000-000000000010"),
        ]
    );
    assert_eq!(unsafe { set_mig(0, c"".as_ptr()) }, 0);
    assert_eq!(reader.instances(0), Ok(Some(vec![])), "MIG mode without instances");
    assert!(reader.instances(7).is_err(), "no such GPU");
}
