//! The copies of `grus_api::domain`'s enums that cannot be derived from it: the CHECK
//! constraints and the SQL function of the migrated schema, and the enums of the committed SDL
//! (which the portal's types are generated from). Each must list exactly the domain's values.

use std::collections::BTreeSet;

use grus_api::domain::service::{ScalingMetric, ServiceState};
use grus_api::domain::{
    AuditAction, BudgetUnit, ClassOfService, ExportFormat, Health, JobState, PriorityClass, Role, UnitState,
    WorkloadType, DAY_MIN, MAX_DURATION_S, MIN_MAX_WAIT_S,
};
use grus_testkit::TestDb;

/// The quoted literals of a CHECK constraint (`CHECK (state = ANY (ARRAY['a'::text, ...]))`).
async fn check_values(t: &TestDb, constraint: &str) -> BTreeSet<String> {
    let (def,): (String,) =
        sqlx::query_as("SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conname = $1 AND contype = 'c'")
            .bind(constraint)
            .fetch_optional(&t.pool)
            .await
            .unwrap()
            .unwrap_or_else(|| panic!("no CHECK constraint {constraint}"));
    let values: BTreeSet<String> = def.split('\'').skip(1).step_by(2).map(str::to_owned).collect();
    assert!(!values.is_empty(), "{constraint}: {def}");
    values
}

fn names<T: Copy>(all: &[T], name: fn(T) -> &'static str) -> BTreeSet<String> {
    all.iter().map(|v| name(*v).to_owned()).collect()
}

#[tokio::test]
async fn the_schema_checks_list_the_domain_values() {
    let t = TestDb::new().await;
    assert_eq!(check_values(&t, "jobs_state_check").await, names(&JobState::ALL, JobState::as_str));
    assert_eq!(check_values(&t, "tasks_state_check").await, names(&UnitState::ALL, UnitState::as_str));
    assert_eq!(check_values(&t, "replicas_state_check").await, names(&UnitState::ALL, UnitState::as_str));
    assert_eq!(check_values(&t, "memberships_role_check").await, names(&Role::MEMBERSHIP, Role::as_str));
    assert_eq!(check_values(&t, "clusters_health_check").await, names(&Health::ALL, Health::as_str));
    assert_eq!(check_values(&t, "exports_format_check").await, names(&ExportFormat::ALL, ExportFormat::as_str));
    assert_eq!(check_values(&t, "budgets_unit_check").await, names(&BudgetUnit::ALL, BudgetUnit::as_str));
    assert_eq!(check_values(&t, "audit_events_action_check").await, names(&AuditAction::ALL, AuditAction::as_str));
    assert_eq!(
        check_values(&t, "services_scaling_metric_check").await,
        names(&ScalingMetric::ALL, ScalingMetric::as_str)
    );
    assert_eq!(
        check_values(&t, "tenants_max_priority_class_check").await,
        names(&PriorityClass::ALL, PriorityClass::as_str)
    );
}

/// The usage trigger counts a job's demand while `job_state_holds_quota(state)`.
/// The bounds of a queue's class of service: the schema's CHECKs hold exactly what
/// `ClassOfService::problems` accepts.
#[tokio::test]
async fn the_schema_bounds_a_queues_class_of_service_as_the_domain_does() {
    let t = TestDb::new().await;
    let f = grus_testkit::seed::fixture(&t.pool, "cos").await;
    let fits = |column: &'static str, v: u32| {
        let pool = t.pool.clone();
        async move {
            let sql = format!("UPDATE queues SET {column} = $2 WHERE id = $1");
            sqlx::query(&sql).bind(f.queue_id).bind(v as i64 as i32).execute(&pool).await.is_ok()
        }
    };
    for (column, field, min) in [
        ("max_wait_s", "maxWaitSeconds", MIN_MAX_WAIT_S),
        ("default_runtime_s", "defaultRuntimeSeconds", 1),
        ("max_runtime_s", "maxRuntimeSeconds", 1),
    ] {
        for v in [min - 1, min, MAX_DURATION_S, MAX_DURATION_S + 1] {
            let service = match column {
                "max_wait_s" => ClassOfService { max_wait_s: Some(v), ..Default::default() },
                "default_runtime_s" => ClassOfService { default_runtime_s: Some(v), ..Default::default() },
                _ => ClassOfService { max_runtime_s: Some(v), ..Default::default() },
            };
            let domain_ok = !service.problems().iter().any(|(f, _)| *f == field);
            assert_eq!(fits(column, v).await, domain_ok, "{column} = {v}");
            sqlx::query(&format!("UPDATE queues SET {column} = NULL")).execute(&t.pool).await.unwrap();
        }
    }
    // The window's minutes: within a day, both ends or neither, and different.
    let window = |from: i32, until: Option<i32>| {
        let pool = t.pool.clone();
        async move {
            sqlx::query(
                "UPDATE queues SET borrowed_suspend_from_min = $2, borrowed_suspend_until_min = $3 WHERE id = $1",
            )
            .bind(f.queue_id)
            .bind(from as i16)
            .bind(until.map(|u| u as i16))
            .execute(&pool)
            .await
            .is_ok()
        }
    };
    let last = i32::from(DAY_MIN) - 1;
    assert!(window(last, Some(0)).await && window(0, Some(last)).await);
    assert!(!window(last + 1, Some(0)).await && !window(0, Some(last + 1)).await);
    assert!(!window(5, Some(5)).await, "an empty window");
    assert!(!window(5, None).await, "both ends or neither");
}

#[tokio::test]
async fn the_schema_holds_quota_in_the_domain_states() {
    let t = TestDb::new().await;
    for state in JobState::ALL {
        let (holds,): (bool,) =
            sqlx::query_as("SELECT job_state_holds_quota($1)").bind(state.as_str()).fetch_one(&t.pool).await.unwrap();
        assert_eq!(holds, state.holds_quota(), "{state}");
    }
}

#[tokio::test]
async fn the_allocators_waiting_states_are_the_waiting_index_ones() {
    let t = TestDb::new().await;
    let (def,): (String,) = sqlx::query_as("SELECT indexdef FROM pg_indexes WHERE indexname = 'jobs_waiting_idx'")
        .fetch_one(&t.pool)
        .await
        .unwrap();
    for state in JobState::ALL {
        let listed = def.contains(&format!("'{}'", state.as_str()));
        assert_eq!(listed, grus_api::db::dispatch::is_waiting_state(state.as_str()), "{state}: {def}");
    }
}

/// The values of `enum <name>` in the committed SDL, in order.
fn sdl_enum(name: &str) -> Vec<String> {
    let sdl = include_str!("../../schema.graphql");
    let start = sdl.find(&format!("enum {name} {{")).unwrap_or_else(|| panic!("no enum {name} in the SDL"));
    let body = &sdl[start..];
    let body = &body[body.find('{').unwrap() + 1..body.find('}').unwrap()];
    // Descriptions ("""...""") precede some values; the values are the bare words.
    let mut values = Vec::new();
    let mut in_description = false;
    for line in body.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if line.starts_with("\"\"\"") {
            // A one-line description opens and closes on the same line.
            let one_line = line.len() > 3 && line.ends_with("\"\"\"");
            if !one_line {
                in_description = !in_description;
            }
            continue;
        }
        if !in_description {
            values.push(line.to_owned());
        }
    }
    values
}

fn api_names<T: Copy>(all: &[T], name: fn(T) -> String) -> Vec<String> {
    all.iter().map(|v| name(*v)).collect()
}

#[test]
fn the_sdl_enums_list_the_domain_values_in_order() {
    assert_eq!(sdl_enum("JobState"), api_names(&JobState::ALL, JobState::api_name));
    assert_eq!(sdl_enum("RoleName"), api_names(&Role::ALL, Role::api_name));
    assert_eq!(sdl_enum("ExportFormat"), api_names(&ExportFormat::ALL, ExportFormat::api_name));
    assert_eq!(sdl_enum("WorkloadType"), api_names(&WorkloadType::ALL, WorkloadType::api_name));
    assert_eq!(sdl_enum("ScalingMetric"), api_names(&ScalingMetric::ALL, ScalingMetric::api_name));
    assert_eq!(sdl_enum("ServiceState"), api_names(&ServiceState::ALL, ServiceState::api_name));
    // ProjectRole is the grantable subset: the membership roles below tenant admin.
    let grantable: Vec<Role> = Role::MEMBERSHIP.into_iter().filter(|r| *r < Role::TenantAdmin).collect();
    assert_eq!(sdl_enum("ProjectRole"), api_names(&grantable, Role::api_name));
}

/// The portal's table of job states and which are final (`portal/src/components/format.ts`,
/// hand-written because generated GraphQL types carry no values at run time).
#[test]
fn the_portals_job_states_and_final_ones_are_the_domains() {
    let source = include_str!("../../../portal/src/components/format.ts");
    let start = source.find("const JOB_STATE_IS_FINAL").expect("JOB_STATE_IS_FINAL in format.ts");
    let table = &source[start..];
    let table = &table[table.find('{').unwrap() + 1..table.find('}').unwrap()];
    let portal: Vec<(String, bool)> = table
        .lines()
        .filter_map(|l| l.trim().trim_end_matches(',').split_once(':'))
        .map(|(state, is_final)| (state.trim().to_owned(), is_final.trim() == "true"))
        .collect();
    let domain: Vec<(String, bool)> = JobState::ALL.into_iter().map(|s| (s.api_name(), s.is_terminal())).collect();
    assert_eq!(portal, domain);
}

/// The portal's waiting states (its fleet-wide queue view) are the domain's.
#[test]
fn the_portals_waiting_states_are_the_domains() {
    let source = include_str!("../../../portal/src/components/format.ts");
    let start = source.find("export const WAITING_STATES").expect("WAITING_STATES in format.ts");
    let list = &source[start..];
    let list = &list[list.find("= [").unwrap() + 3..list.find("];").unwrap()];
    let portal: Vec<String> =
        list.split(',').map(|s| s.trim().trim_matches('\'').to_owned()).filter(|s| !s.is_empty()).collect();
    let domain: Vec<String> =
        JobState::ALL.into_iter().filter(|s| s.waits_to_start()).map(JobState::api_name).collect();
    assert_eq!(portal, domain);
}

/// The portal's mirror of the job bounds (`portal/src/jobs/jobInput.ts`) holds the protocol's
/// numbers, so the form refuses what the server would.
#[test]
fn the_portals_job_bounds_are_the_protocols() {
    let source = include_str!("../../../portal/src/jobs/jobInput.ts");
    let constant = |name: &str| -> u64 {
        let line = source
            .lines()
            .find(|l| l.starts_with(&format!("export const {name} = ")))
            .unwrap_or_else(|| panic!("jobInput.ts declares {name}"));
        line.trim_end_matches(';').rsplit(' ').next().unwrap().parse().unwrap()
    };
    assert_eq!(constant("MAX_REPLICAS"), grus_protocol::limits::MAX_REPLICAS_PER_JOB);
    assert_eq!(constant("MAX_TASKS"), grus_protocol::limits::MAX_TASKS_PER_JOB as u64);
}

/// The portal's priority classes (`portal/src/jobs/jobInput.ts`, for its selects) are the
/// domain's, lowest first.
#[test]
fn the_portals_priority_classes_are_the_domains() {
    let source = include_str!("../../../portal/src/jobs/jobInput.ts");
    let line = source
        .lines()
        .find(|l| l.starts_with("export const PRIORITY_CLASSES = "))
        .expect("jobInput.ts declares PRIORITY_CLASSES");
    let portal: Vec<&str> = line.split('\'').skip(1).step_by(2).collect();
    assert_eq!(portal, PriorityClass::ALL.map(PriorityClass::as_str));
}

#[tokio::test]
async fn the_schema_accepts_exactly_the_quota_keys_admission_parses() {
    use grus_api::admission::QuotaKey;
    let t = TestDb::new().await;
    let (queue,): (i64,) = sqlx::query_as(
        "WITH t AS (INSERT INTO tenants (name, slug) VALUES ('t', 't') RETURNING id),
              p AS (INSERT INTO projects (tenant_id, name, slug) SELECT id, 'p', 'p' FROM t RETURNING id)
         INSERT INTO queues (project_id, name) SELECT id, 'q' FROM p RETURNING id",
    )
    .fetch_one(&t.pool)
    .await
    .unwrap();
    let long = format!("gpu/{}", "a".repeat(65));
    let keys = [
        "gpu",
        "gpus",
        "cpu_milli",
        "memory_mib",
        "memory",
        "gpu/A100-80GB",
        "gpu/h100.sxm_5",
        "gpu/",
        "gpu/-x",
        "gpu/a/b",
        &long,
        "pool/a100-train",
        "pool/x",
        "pool/",
        "pool/Train",
        "pool/-a",
        "pool/a-",
        "pool/a_b",
        "gpu/ A",
    ];
    let (project, tenant): (i64, i64) =
        sqlx::query_as("SELECT p.id, p.tenant_id FROM projects p").fetch_one(&t.pool).await.unwrap();
    let tables = [
        ("INSERT INTO queue_quotas (queue_id, resource, guaranteed) VALUES ($1, $2, 0)", queue),
        ("INSERT INTO project_guarantees (project_id, resource, guaranteed) VALUES ($1, $2, 1)", project),
        ("INSERT INTO tenant_guarantees (tenant_id, resource, guaranteed) VALUES ($1, $2, 1)", tenant),
        ("INSERT INTO project_limits (project_id, resource, limit_amount) VALUES ($1, $2, 1)", project),
        ("INSERT INTO tenant_limits (tenant_id, resource, limit_amount) VALUES ($1, $2, 1)", tenant),
    ];
    for key in keys {
        for (insert, owner) in tables {
            let stored = sqlx::query(insert).bind(owner).bind(key).execute(&t.pool).await.is_ok();
            assert_eq!(stored, QuotaKey::parse(key).is_some(), "{key} in {insert}: the schema and QuotaKey disagree");
        }
    }
}

/// `jobs.workload_type` is generated from the spec (migrations 0026, 0027): its expression
/// yields exactly the domain's workload types.
#[tokio::test]
async fn the_generated_workload_type_yields_the_domain_values() {
    let t = TestDb::new().await;
    let (expr,): (String,) = sqlx::query_as(
        "SELECT generation_expression FROM information_schema.columns
         WHERE table_name = 'jobs' AND column_name = 'workload_type'",
    )
    .fetch_one(&t.pool)
    .await
    .unwrap();
    let yielded: BTreeSet<String> = expr
        .split("THEN ")
        .skip(1)
        .chain(expr.split("ELSE ").skip(1))
        .filter_map(|s| s.split('\'').nth(1).map(str::to_owned))
        .collect();
    assert_eq!(yielded, names(&WorkloadType::ALL, WorkloadType::as_str), "{expr}");
}
