//! The built `grus` binary against a real grus-api (its router, `--dev` auth, a fresh
//! PostgreSQL database per test): submit, list, detail, cancel, queues, clusters, usage
//! exports, login with an API token, `--wait`, completions, and the documented exit codes.

use std::io::{BufRead as _, BufReader, Write as _};
use std::process::Stdio;

use crate::support::World;
use grus_api::db::{self, Cause};
use grus_api::domain::JobState;
use grus_testkit::seed;
use serde_json::{json, Value};

/// The id in `job <id> (<name>) submitted to ...`.
fn submitted_id(stdout: &str) -> String {
    let line = stdout.lines().find(|l| l.starts_with("job ")).unwrap_or_else(|| panic!("no job line: {stdout}"));
    line.split_whitespace().nth(1).expect("id").to_owned()
}

fn submit(w: &World, who: &str, example: &str) -> String {
    let run = w.run(Some(who), &["submit", &World::example(example)]).expect(0);
    submitted_id(&run.stdout)
}

fn ids(jobs: &Value) -> Vec<String> {
    jobs.as_array().expect("a list").iter().map(|j| j["id"].as_str().expect("id").to_owned()).collect()
}

fn transition(w: &World, id: &str, to: JobState) {
    let id: i64 = id.parse().expect("numeric id");
    w.rt.block_on(seed::transition(&w.pool, id, to, Cause { cause: "test", actor: "test" }));
}

#[test]
fn submit_list_show_and_cancel() {
    let w = World::start();
    let run = w.run(Some("alice"), &["submit", &World::example("notebook.yaml")]).expect(0);
    assert!(run.stdout.contains("(notebook) submitted to demo/default"), "{}", run.stdout);
    let id = submitted_id(&run.stdout);
    let other = submit(&w, "alice", "train.yaml");

    let jobs = w.run(Some("alice"), &["jobs", "-o", "json"]).expect(0).json();
    assert_eq!(ids(&jobs), [other.clone(), id.clone()], "newest first");
    assert_eq!(jobs[1]["name"], "notebook");
    assert_eq!(jobs[1]["project"]["slug"], "demo");
    let state = jobs[1]["state"].as_str().expect("state").to_lowercase();

    // Filters, each resolved to the API's ids.
    let filtered = |args: &[&str]| {
        let mut all = vec!["jobs", "-o", "json"];
        all.extend_from_slice(args);
        ids(&w.run(Some("alice"), &all).expect(0).json())
    };
    assert_eq!(filtered(&["--project", "demo", "--queue", "default"]).len(), 2);
    assert_eq!(filtered(&["--state", &state, "--search", "NOTE"]), [id.as_str()]);
    assert_eq!(filtered(&["--state", "cancelled"]), Vec::<String>::new());
    assert_eq!(filtered(&["--user", "me", "--limit", "1"]), [other.as_str()]);
    assert_eq!(filtered(&["--user", "dev:alice"]).len(), 2);
    assert_eq!(filtered(&["--cluster", "c1"]), Vec::<String>::new());
    let run = w.run(Some("alice"), &["jobs", "--project", "demo", "--queue", "nope"]).expect(4);
    assert!(run.stderr.contains("queue \"nope\" not found in project demo"), "{}", run.stderr);

    let table = w.run(Some("alice"), &["jobs"]).expect(0).stdout;
    let lines: Vec<&str> = table.lines().collect();
    assert!(lines[0].starts_with("ID  NAME"), "{table}");
    assert!(lines[2].contains("notebook") && lines[2].contains("demo") && lines[2].contains("0.25"), "{table}");
    assert!(lines[1].contains("train-demo") && lines[1].contains("  8  "), "{table}");
    let yaml: Value = serde_yaml::from_str(&w.run(Some("alice"), &["jobs", "-o", "yaml"]).expect(0).stdout).unwrap();
    assert_eq!(ids(&yaml), [other.clone(), id.clone()]);

    let detail = w.run(Some("alice"), &["job", &id]).expect(0).stdout;
    assert!(detail.contains(&format!("Job:        {id} notebook")), "{detail}");
    assert!(detail.contains("Project:    demo / queue default"), "{detail}");
    assert!(detail.contains("Tasks:") && detail.contains("jupyter"), "{detail}");
    assert!(detail.contains("Events:") && detail.contains("submitted"), "{detail}");
    let job = w.run(Some("alice"), &["job", &id, "-o", "json"]).expect(0).json();
    assert_eq!(job["id"], id.as_str());
    assert_eq!(job["tasks"][0]["name"], "jupyter");

    let run = w.run(Some("alice"), &["suspend", &id, "--grace", "1.5s"]).expect(2);
    assert!(run.stderr.contains("--grace must be whole seconds"), "{}", run.stderr);
    let run = w.run(Some("alice"), &["suspend", &id]).expect(0);
    assert_eq!(run.stdout, format!("job {id} (notebook) is SUSPENDED\n"));
    let run = w.run(Some("alice"), &["suspend", &id]).expect(7);
    assert!(run.stderr.contains("suspended"), "{}", run.stderr);
    let run = w.run(Some("alice"), &["resume", &id]).expect(0);
    assert_eq!(run.stdout, format!("job {id} (notebook) is ADMITTED\n"));

    let run = w.run(Some("alice"), &["cancel", &id]).expect(0);
    assert_eq!(run.stdout, format!("job {id} (notebook) is CANCELLED\n"));
    let job = w.run(Some("alice"), &["job", &id, "-o", "json"]).expect(0).json();
    assert_eq!(job["state"], "CANCELLED");
    let run = w.run(Some("alice"), &["cancel", &id]).expect(7);
    assert!(run.stderr.starts_with("error: "), "{}", run.stderr);
}

#[test]
fn invalid_jobs_are_refused_per_field() {
    let w = World::start();
    // Structural errors: caught locally, one line per field, nothing sent.
    let run = w.run(Some("alice"), &["submit", &World::example("invalid/structure.yaml")]).expect(5);
    assert!(run.stderr.contains("invalid job file:"), "{}", run.stderr);
    assert!(run.stderr.contains("\n  tasks.0.replicas: must be an integer"), "{}", run.stderr);
    assert!(run.stderr.contains("\n  tasks.1: must be a map"), "{}", run.stderr);
    let jobs = w.run(Some("alice"), &["jobs", "-o", "json"]).expect(0).json();
    assert_eq!(ids(&jobs), Vec::<String>::new());

    // The API's VALIDATION errors, per field, read from stdin.
    let yaml = "name: Bad_Name\nproject: demo\ntasks:\n  - name: main\n    image: busybox\n    \
                resources: { gpus: 2, gpu_milli: 250 }\n";
    let mut child = w
        .grus(Some("alice"), &["submit", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    child.stdin.take().expect("stdin").write_all(yaml.as_bytes()).expect("write");
    let run = crate::support::Run::from(child.wait_with_output().expect("wait")).expect(5);
    assert!(run.stderr.contains("error: invalid input:"), "{}", run.stderr);
    assert!(run.stderr.contains("\n  name: "), "{}", run.stderr);
    assert!(run.stderr.contains("\n  tasks.0.resources.gpuMilli: "), "{}", run.stderr);

    // A quota the job would exceed: the same exit code, the API's explanation.
    let project = w.gql("admin", "{ project(slug: \"demo\") { queues { id name } } }", json!({}));
    let queue = project["data"]["project"]["queues"][0]["id"].as_str().expect("queue id").to_owned();
    let set = w.gql(
        "admin",
        "mutation($q: ID!) { updateQuota(queueId: $q, resource: \"gpu\", guaranteed: 0, limit: 1000) { id } }",
        json!({ "q": queue }),
    );
    assert!(set["errors"].is_null(), "{set}");
    let run = w.run(Some("alice"), &["submit", &World::example("train.yaml")]).expect(5);
    assert!(run.stderr.contains("quota exceeded in queue default"), "{}", run.stderr);
    // --dry-run shows the refusal without storing anything.
    let run = w.run(Some("alice"), &["submit", "--dry-run", &World::example("train.yaml")]).expect(0);
    assert!(run.stdout.contains("admission: refused: queue default gpu"), "{}", run.stdout);

    let run = w.run(Some("alice"), &["submit", "/nonexistent/job.yaml"]).expect(4);
    assert!(run.stderr.contains("cannot read /nonexistent/job.yaml"), "{}", run.stderr);
}

#[test]
fn exit_codes_for_not_found_auth_usage_and_unreachable() {
    let w = World::start();
    let id = submit(&w, "alice", "notebook.yaml");

    let run = w.run(Some("alice"), &["job", "999999"]).expect(4);
    assert!(run.stderr.contains("job 999999 not found"), "{}", run.stderr);
    w.run(Some("alice"), &["job", "not-a-number"]).expect(4);
    w.run(Some("bob"), &["job", &id]).expect(4); // another project's job is not visible
    w.run(Some("alice"), &["queues", "--project", "nope"]).expect(4);

    // A viewer may read the job but not cancel it.
    w.run(Some("vera"), &["job", &id]).expect(0);
    let run = w.run(Some("vera"), &["cancel", &id]).expect(3);
    assert!(run.stderr.contains("your role does not allow this"), "{}", run.stderr);

    let run = w.run(None, &["--token", "grus_not_a_real_token", "jobs"]).expect(3);
    assert!(run.stderr.contains("run `grus login`"), "{}", run.stderr);
    let run = w.run(Some("Not Valid"), &["jobs"]).expect(3);
    assert!(run.stderr.contains("dev user `Not Valid` was refused"), "{}", run.stderr);

    let run = w.run(Some("alice"), &["--server", "http://127.0.0.1:1", "jobs"]).expect(6);
    assert!(run.stderr.contains("cannot reach http://127.0.0.1:1: is `grus dev` running?"), "{}", run.stderr);

    w.run(Some("alice"), &["jobs", "--state", "sleeping"]).expect(2);
    w.run(Some("alice"), &["usage", "--period", "2026-13"]).expect(2);
    w.run(Some("alice"), &["--server", "127.0.0.1:8080", "jobs"]).expect(2);
    let help = w.run(None, &["--help"]).expect(0).stdout;
    assert!(help.contains("Exit codes:") && help.contains("6   server unreachable"), "{help}");
}

#[test]
fn loopback_server_without_credentials_is_the_dev_admin() {
    let w = World::start();
    let id = submit(&w, "alice", "notebook.yaml");
    // No token, no dev user: the loopback rule sends `admin`, a platform admin who sees all.
    let jobs = w.run(None, &["jobs", "-o", "json"]).expect(0).json();
    assert_eq!(ids(&jobs), [id]);
    assert_eq!(jobs[0]["submitter"]["subject"], "dev:alice");
}

#[test]
fn queues_and_clusters() {
    let w = World::start();
    let projects = w.run(Some("alice"), &["queues", "-o", "json"]).expect(0).json();
    let slugs: Vec<&str> = projects.as_array().unwrap().iter().map(|p| p["slug"].as_str().unwrap()).collect();
    assert_eq!(slugs, ["demo"], "alice sees only her project");
    assert_eq!(projects[0]["queues"][0]["name"], "default");
    let table = w.run(Some("admin"), &["queues"]).expect(0).stdout;
    assert!(
        table.starts_with(
            "PROJECT  QUEUE    WEIGHT  FAIR SHARE  BORROW  MAX WAIT  RUNTIME  MAX RUNTIME  PAUSE BORROWED"
        ),
        "{table}"
    );
    assert!(table.contains("\nother    default"), "{table}");
    let one = w.run(Some("admin"), &["queues", "--project", "other", "-o", "yaml"]).expect(0).stdout;
    assert!(one.contains("slug: other") && !one.contains("slug: demo"), "{one}");

    // A queue's class of service: project admins change it, named flags only.
    w.run(Some("alice"), &["queues", "default", "--project", "demo", "--max-wait", "2h"]).expect(3);
    w.run(Some("admin"), &["queues", "default", "--project", "demo", "--max-wait", "soon"]).expect(2);
    w.run(Some("admin"), &["queues", "nope", "--project", "demo", "--max-wait", "1h"]).expect(4);
    let bad = w
        .run(
            Some("admin"),
            &["queues", "default", "--project", "demo", "--default-runtime", "3h", "--max-runtime", "1h"],
        )
        .expect(5);
    assert!(bad.stderr.contains("defaultRuntimeSeconds"), "{}", bad.stderr);
    let args = ["queues", "default", "--project", "demo", "--max-wait", "2h", "--max-runtime", "1day", "-o", "json"];
    let set = w.run(Some("admin"), &args).expect(0).json();
    let q = &set[0]["queues"][0];
    assert_eq!((q["maxWaitSeconds"].as_i64(), q["maxRuntimeSeconds"].as_i64()), (Some(7200), Some(86400)), "{set}");
    let args = ["queues", "default", "--project", "demo", "--suspend-borrowed-during", "9-18"];
    let bad = w.run(Some("admin"), &args).expect(5);
    assert!(bad.stderr.contains("suspendBorrowedDuring"), "{}", bad.stderr);
    let args = ["queues", "default", "--project", "demo", "--suspend-borrowed-during", "22:00-06:00", "-o", "json"];
    let q = &w.run(Some("admin"), &args).expect(0).json()[0]["queues"][0];
    assert_eq!((q["suspendBorrowedDuring"].as_str(), q["maxWaitSeconds"].as_i64()), (Some("22:00-06:00"), Some(7200)));
    let args = ["queues", "default", "--project", "demo", "--max-wait", "none", "--weight", "2", "-o", "json"];
    let q = &w.run(Some("admin"), &args).expect(0).json()[0]["queues"][0];
    assert_eq!(
        (q["maxWaitSeconds"].clone(), q["maxRuntimeSeconds"].as_i64(), q["weight"].as_f64()),
        (Value::Null, Some(86400), Some(2.0))
    );
    let table = w.run(Some("alice"), &["queues", "default", "--project", "demo"]).expect(0).stdout;
    assert!(
        table
            .lines()
            .nth(1)
            .unwrap()
            .starts_with("demo     default  2.0     0 of 0      yes     -         -        1day"),
        "{table}"
    );

    // Weights per node pool: replaced when given, kept when not, a bad one named.
    let args = ["queues", "default", "--project", "demo", "--pool-weight", "train=3", "--pool-weight", "infer=0.5"];
    w.run(Some("admin"), &args).expect(0);
    let args = ["queues", "default", "--project", "demo", "--weight", "2", "-o", "json"];
    let q = &w.run(Some("admin"), &args).expect(0).json()[0]["queues"][0];
    assert_eq!(
        q["poolWeights"],
        json!([{ "pool": "infer", "weight": 0.5 }, { "pool": "train", "weight": 3.0 }]),
        "{q}"
    );
    let bad = w.run(Some("admin"), &["queues", "default", "--project", "demo", "--pool-weight", "Train=3"]).expect(5);
    assert!(bad.stderr.contains("poolWeights.0.pool"), "{}", bad.stderr);
    let bad = w.run(Some("admin"), &["queues", "default", "--project", "demo", "--pool-weight", "train=0"]).expect(5);
    assert!(bad.stderr.contains("poolWeights.0.weight"), "{}", bad.stderr);
    let args = ["queues", "default", "--project", "demo", "--pool-weight", "none", "-o", "json"];
    assert_eq!(w.run(Some("admin"), &args).expect(0).json()[0]["queues"][0]["poolWeights"], json!([]));

    // A project's weight and guarantees: tenant admins (and platform admins), GPUs in GPUs.
    w.run(Some("alice"), &["queues", "--project", "demo", "--project-weight", "3"]).expect(3);
    w.run(Some("admin"), &["queues", "--project", "demo", "--project-guarantee", "gpu"]).expect(2);
    let bad = w.run(Some("admin"), &["queues", "--project", "demo", "--project-weight", "0"]).expect(5);
    assert!(bad.stderr.contains("weight"), "{}", bad.stderr);
    let args = ["queues", "--project", "demo", "--project-weight", "3", "--project-guarantee", "gpu=2.5", "-o", "json"];
    let p = &w.run(Some("admin"), &args).expect(0).json()[0];
    assert_eq!(
        p["share"],
        json!({ "weight": 3.0, "guarantees": [{ "resource": "gpu", "amount": 2500 }], "limits": [] }),
        "{p}"
    );
    // A limit below the guarantee is refused, naming the flag's field; one above it is kept.
    let low = w.run(Some("admin"), &["queues", "--project", "demo", "--project-limit", "gpu=2"]).expect(5);
    assert!(low.stderr.contains("limits.0.amount") && low.stderr.contains("above the limit"), "{}", low.stderr);
    w.run(Some("admin"), &["queues", "--project", "demo", "--project-limit", "gpu=12"]).expect(0);
    let table = w.run(Some("admin"), &["queues", "--project", "demo"]).expect(0).stdout;
    assert!(table.contains("demo (weight 3.0) (guaranteed gpu=2.5) (limit gpu=12)"), "{table}");
    let args = ["tenants", "acme", "--weight", "2", "--guarantee", "gpu=8", "--limit", "gpu=64", "-o", "json"];
    let t = &w.run(Some("admin"), &args).expect(0).json()[0];
    assert_eq!(t["share"]["weight"], 2.0, "{t}");
    assert_eq!(t["share"]["limits"], json!([{ "resource": "gpu", "amount": 64000 }]), "{t}");
    let table = w.run(Some("admin"), &["tenants", "acme", "--limit", "none"]).expect(0).stdout;
    let row: Vec<&str> = table.lines().nth(1).unwrap().split_whitespace().collect();
    assert_eq!(row[row.len() - 2..], ["gpu=8", "-"], "limits removed:\n{table}");
    w.run(Some("alice"), &["tenants", "acme", "--weight", "2"]).expect(3);

    let clusters = w.run(Some("alice"), &["clusters", "-o", "json"]).expect(0).json();
    assert_eq!(clusters[0]["id"], "c1");
    assert_eq!(clusters[0]["health"], "unknown");
    let table = w.run(Some("alice"), &["clusters"]).expect(0).stdout;
    assert!(table.lines().nth(1).unwrap().starts_with("c1  -     unknown  no"), "{table}");
}

#[test]
fn usage_export_is_the_apis_file() {
    let w = World::start();
    let id = submit(&w, "alice", "notebook.yaml");
    let price = w.gql(
        "admin",
        "mutation { setPrice(gpuModel: \"T4\", listPricePerGpuHour: \"0.50\",
                             effectiveFrom: \"2026-01-01T00:00:00Z\") { id } }",
        json!({}),
    );
    assert!(price["errors"].is_null(), "{price}");
    // One replica run in March 2026 (the ingester writes these in production).
    w.rt.block_on(async {
        let job = db::get_job(&w.pool, id.parse().unwrap()).await.unwrap();
        let task = db::tasks(&w.pool, job.id).await.unwrap()[0].id;
        let replica = db::replicas(&w.pool, job.id).await.unwrap()[0].id;
        sqlx::query(
            "INSERT INTO usage_ledger (project_id, queue_id, cluster_id, gpu_model, gpu_milli, started_at, ended_at,
                                       job_id, task_id, replica_id, user_id)
             VALUES ($1, $2, 'c1', 'T4', 250, '2026-03-05T00:00:00Z', '2026-03-05T04:00:00Z', $3, $4, $5, $6)",
        )
        .bind(job.project_id)
        .bind(job.queue_id)
        .bind(job.id)
        .bind(task)
        .bind(replica)
        .bind(job.submitted_by)
        .execute(&w.pool)
        .await
        .unwrap();
    });

    let csv = w.run(Some("admin"), &["usage", "--period", "2026-03", "--format", "focus-csv"]).expect(0).bytes;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("march.jsonl");
    let file_arg = file.display().to_string();
    let run = w
        .run(
            Some("admin"),
            &["usage", "--period", "2026-03", "--format", "focus-jsonl", "--tenant", "acme", "-o", &file_arg],
        )
        .expect(0);
    assert!(run.stderr.contains("1 rows"), "{}", run.stderr);
    let jsonl = std::fs::read(&file).unwrap();

    // The same exports asked of the API directly: the stored files, byte for byte.
    let export = |format: &str, tenant: Value| {
        let v = w.gql(
            "admin",
            "mutation($f: ExportFormat!, $t: ID) { exportUsage(period: { month: \"2026-03\" }, format: $f, tenantId: $t)
               { downloadUrl rows } }",
            json!({ "f": format, "t": tenant }),
        );
        let url = v["data"]["exportUsage"]["downloadUrl"].as_str().unwrap_or_else(|| panic!("{v}")).to_owned();
        let (status, body) = w.get("admin", &url);
        assert_eq!(status, 200);
        body
    };
    assert_eq!(csv, export("FOCUS_CSV", Value::Null));
    let tenants = w.gql("admin", "{ tenants { id slug } }", json!({}));
    let acme = tenants["data"]["tenants"][0]["id"].clone();
    assert_eq!(jsonl, export("FOCUS_JSONL", acme));
    assert!(String::from_utf8_lossy(&csv).contains("BilledCost"), "a FOCUS header");

    // Exports are for admins.
    w.run(Some("alice"), &["usage", "--period", "2026-03", "--tenant", "acme"]).expect(3);
    w.run(Some("admin"), &["usage", "--period", "2026-03", "--tenant", "nope"]).expect(4);
}

#[test]
fn login_with_an_api_token_stores_it_privately() {
    let w = World::start();
    let id = submit(&w, "alice", "notebook.yaml");
    let created = w.gql("alice", "mutation { createApiToken(name: \"cli\", expiresInDays: 1) { secret } }", json!({}));
    let secret = created["data"]["createApiToken"]["secret"].as_str().unwrap_or_else(|| panic!("{created}")).to_owned();

    let run = w.run(None, &["login", "--token", "grus_wrong"]).expect(3);
    assert!(run.stderr.contains("grus login"), "{}", run.stderr);
    assert!(!w.config_file().exists(), "a refused token is not stored");

    let run = w.run(None, &["login", "--token", &secret]).expect(0);
    assert!(run.stdout.contains("as dev:alice"), "{}", run.stdout);
    let text = std::fs::read_to_string(w.config_file()).unwrap();
    assert!(text.contains(&secret) && text.contains(&w.url), "{text}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(w.config_file()).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    // The stored token is alice's identity from now on (no dev header is sent with it).
    let jobs = w.run(None, &["jobs", "--user", "me", "-o", "json"]).expect(0).json();
    assert_eq!(ids(&jobs), [id]);
    // ... but only for the server it was stored for.
    w.run(None, &["--server", "http://127.0.0.1:1", "jobs"]).expect(6);

    let run = w.run(None, &["logout"]).expect(0);
    assert!(run.stdout.contains("removed"), "{}", run.stdout);
    assert!(!std::fs::read_to_string(w.config_file()).unwrap().contains(&secret));
    let run = w.run(None, &["login"]).expect(2);
    assert!(run.stderr.contains("--token grus_"), "{}", run.stderr);
}

/// Starts `grus submit --wait`, returns the child and the job id from its first line (on
/// stdout, or on stderr with `-o json`).
fn submit_and_wait(w: &World, extra: &[&str]) -> (std::process::Child, BufReader<std::process::ChildStdout>, String) {
    let example = World::example("notebook.yaml");
    let mut args = vec!["submit", example.as_str(), "--wait"];
    args.extend_from_slice(extra);
    let mut child = w.grus(Some("alice"), &args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn");
    let mut out = BufReader::new(child.stdout.take().expect("stdout"));
    let mut first = String::new();
    if extra.contains(&"json") {
        let mut err = BufReader::new(child.stderr.take().expect("stderr"));
        err.read_line(&mut first).expect("first line");
        // Keep draining: the child must not see a closed stderr.
        std::thread::spawn(move || std::io::copy(&mut err, &mut std::io::sink()));
    } else {
        out.read_line(&mut first).expect("first line");
    }
    let id = submitted_id(&first);
    (child, out, id)
}

fn finish(mut child: std::process::Child, mut out: BufReader<std::process::ChildStdout>) -> (i32, String) {
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut out, &mut rest).expect("read stdout");
    let status = child.wait().expect("wait");
    (status.code().unwrap_or(-1), rest)
}

#[test]
fn wait_follows_the_job_to_its_end() {
    let w = World::start();

    let (child, out, id) = submit_and_wait(&w, &[]);
    let cancel = w.gql("alice", "mutation($id: ID!) { cancelJob(id: $id) { state } }", json!({ "id": id }));
    assert_eq!(cancel["data"]["cancelJob"]["state"], "CANCELLED", "{cancel}");
    let (code, rest) = finish(child, out);
    assert_eq!(code, 11, "{rest}");
    assert!(rest.contains("admitted -> cancelled  (cancelled)"), "{rest}");
    assert!(rest.ends_with(&format!("job {id} ended CANCELLED\n")), "{rest}");

    let (child, out, id) = submit_and_wait(&w, &[]);
    transition(&w, &id, JobState::Failed);
    assert_eq!(finish(child, out).0, 10);

    let (child, out, id) = submit_and_wait(&w, &["-o", "json"]);
    let state = w.gql("alice", "query($id: ID!) { job(id: $id) { state } }", json!({ "id": id }));
    if state["data"]["job"]["state"] == "PENDING" {
        transition(&w, &id, JobState::Admitted);
    }
    for to in [JobState::Dispatched, JobState::Running, JobState::Succeeded] {
        transition(&w, &id, to);
    }
    let (code, rest) = finish(child, out);
    assert_eq!(code, 0, "{rest}");
    let last: Value = serde_json::from_str(&rest).unwrap_or_else(|e| panic!("{e}: {rest}"));
    assert_eq!(last["state"], "SUCCEEDED");

    // Giving up leaves the job alone.
    let (child, out, id) = submit_and_wait(&w, &["--timeout", "1s"]);
    assert_eq!(finish(child, out).0, 8);
    let job = w.gql("alice", "query($id: ID!) { job(id: $id) { state } }", json!({ "id": id }));
    assert_ne!(job["data"]["job"]["state"], "CANCELLED");
}

#[test]
fn completions_for_bash_and_zsh() {
    let w = World::start();
    let bash = w.run(None, &["completions", "bash"]).expect(0).stdout;
    assert!(bash.contains("_grus()") && bash.contains("complete -F _grus"), "{bash}");
    assert!(bash.contains("submit") && bash.contains("--period"), "every subcommand and flag");
    let zsh = w.run(None, &["completions", "zsh"]).expect(0).stdout;
    assert!(zsh.starts_with("#compdef grus"), "{zsh}");
    w.run(None, &["completions", "tcsh"]).expect(2);
}
