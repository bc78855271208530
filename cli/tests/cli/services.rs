//! `grus services` and `grus service apply|show|scale|load|delete` against a real grus-api:
//! the example YAML creates a service, a changed image is a new revision, bounds and load
//! change, bad input exits 5 with the field, a viewer may read but not change, delete frees
//! the name.

use std::io::Write as _;

use crate::support::World;

fn example() -> String {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/services/chat.yaml").display().to_string()
}

#[test]
fn apply_list_show_scale_load_and_delete_a_service() {
    let w = World::start();
    let run = w.run(Some("alice"), &["service", "apply", "-f", &example()]).expect(0);
    assert_eq!(run.stdout, "service chat created in demo (revision 1)\n");
    let run = w.run(Some("alice"), &["service", "apply", "-f", &example()]).expect(0);
    assert!(run.stdout.contains("updated (revision 1 unchanged)"), "{}", run.stdout);

    // A new image from stdin: revision 2.
    let yaml = std::fs::read_to_string(example()).unwrap().replace("llm-server:1.4", "llm-server:1.5");
    let mut child = w
        .grus(Some("alice"), &["service", "apply", "-f", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(yaml.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "service chat in demo: revision 2, rolling out\n");

    let list = w.run(Some("vera"), &["services", "-o", "json"]).expect(0).json();
    assert_eq!(list[0]["name"], "chat");
    assert_eq!(list[0]["revision"], 2);
    assert_eq!(list[0]["image"], "ghcr.io/acme/llm-server:1.5");
    let table = w.run(Some("alice"), &["services"]).expect(0).stdout;
    assert!(table.contains("request rate 20/s per replica"), "{table}");

    let run =
        w.run(Some("alice"), &["service", "scale", "chat", "--min", "2", "--max", "6", "--replicas", "3"]).expect(0);
    assert_eq!(run.stdout, "service chat in demo: 3 replicas (min 2, max 6)\n");
    w.run(Some("alice"), &["service", "load", "chat", "42.5"]).expect(0);
    let show = w.run(Some("alice"), &["service", "show", "chat", "-p", "demo"]).expect(0).stdout;
    // No allocator runs here: nothing is started, so none is ready.
    for want in
        ["0 ready of 3", "min 2, max 6", "42.5 requests/s", "llm-server:1.5", "GET /healthz", "Scaling history:"]
    {
        assert!(show.contains(want), "{want} in\n{show}");
    }

    // Bad input: the server's field, exit 5; a viewer may not change it (3); unknown names (4).
    let run = w.run(Some("alice"), &["service", "scale", "chat", "--min", "5", "--max", "4"]).expect(5);
    assert!(run.stderr.contains("maxReplicas"), "{}", run.stderr);
    w.run(Some("vera"), &["service", "scale", "chat", "--replicas", "2"]).expect(3);
    w.run(Some("alice"), &["service", "show", "nope"]).expect(4);
    w.run(Some("bob"), &["service", "show", "chat", "-p", "demo"]).expect(4);
    w.run(Some("alice"), &["service", "scale", "chat"]).expect(2);

    let run = w.run(Some("alice"), &["service", "delete", "chat"]).expect(0);
    assert_eq!(run.stdout, "service chat in demo deleted\n");
    let run = w.run(Some("alice"), &["services"]).expect(0);
    assert!(run.stdout.starts_with("No services."), "{}", run.stdout);
}

#[test]
fn a_bad_service_file_is_refused_per_field_before_anything_is_sent() {
    let w = World::start();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("svc.yaml");
    std::fs::write(&file, "name: chat\nproject: demo\nimage: x\nport: web\nautoscaling: { metric: qps, target: 1 }\n")
        .unwrap();
    let run = w.run(Some("alice"), &["service", "apply", "-f", file.to_str().unwrap()]).expect(5);
    assert!(run.stderr.contains("port: must be an integer"), "{}", run.stderr);
    assert!(run.stderr.contains("autoscaling.metric: one of request_rate, gpu_utilization"), "{}", run.stderr);
    // Out of range: the server's VALIDATION, per field.
    std::fs::write(&file, "name: chat\nproject: demo\nimage: x\nport: 70000\nmin_replicas: 3\nmax_replicas: 2\n")
        .unwrap();
    let run = w.run(Some("alice"), &["service", "apply", "-f", file.to_str().unwrap()]).expect(5);
    assert!(run.stderr.contains("port") && run.stderr.contains("maxReplicas"), "{}", run.stderr);
    let run = w.run(Some("alice"), &["services", "-o", "json"]).expect(0);
    assert_eq!(run.json(), serde_json::json!([]));
}

#[test]
fn workspaces_are_listed_with_their_idle_rule() {
    let w = World::start();
    w.run(Some("alice"), &["submit", &World::example("workspace.yaml")]).expect(0);
    w.run(Some("alice"), &["submit", &World::example("train.yaml")]).expect(0);
    let listed = w.run(Some("alice"), &["workspaces", "-o", "json"]).expect(0).json();
    let names: Vec<&str> = listed.as_array().unwrap().iter().map(|j| j["name"].as_str().unwrap()).collect();
    assert_eq!(names.len(), 1, "only the workspace: {listed}");
    let table = w.run(Some("alice"), &["workspaces", "-p", "demo"]).expect(0).stdout;
    assert!(table.contains("port 8888"), "{table}");
    let id = listed[0]["id"].as_str().unwrap().to_owned();
    let detail = w.run(Some("alice"), &["job", &id]).expect(0).stdout;
    assert!(detail.contains("Workspace:") && detail.contains("port 8888"), "{detail}");
    w.run(Some("bob"), &["workspaces", "-p", "demo"]).expect(4);
}
