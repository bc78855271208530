//! How jobs come in: one at a time (`insert_job`, state `pending`), or a batch already admitted
//! (`insert_admitted_jobs`, one statement for the whole batch), with their tasks, replicas,
//! demands and first events.

use serde_json::Value;
use sqlx::PgConnection;

use super::{insert_event, Cause, EventOrigin, Job};
use crate::db::{DbError, DbResult};
use crate::domain::JobState;

/// A task of a job about to be inserted.
#[derive(Clone, Debug, PartialEq)]
pub struct NewTask {
    pub name: String,
    pub replicas: u32,
    pub resources: grus_protocol::wire::ResourcesSpec,
    /// The task as submitted (image, command, env, topology ...).
    pub spec: Value,
}

/// A validated job about to be inserted.
#[derive(Clone, Debug, PartialEq)]
pub struct NewJob {
    pub project_id: i64,
    pub queue_id: i64,
    pub name: String,
    pub priority: i32,
    pub priority_class: String,
    pub preemptible: bool,
    pub spec: Value,
    pub tasks: Vec<NewTask>,
    /// The node pools it may use, in order (also in `spec`): admission charges their quotas.
    pub pools: Vec<String>,
    pub submitted_by: i64,
}

/// Inserts a job in state `pending` with its tasks, replicas and the creating event.
/// Run it inside a transaction (`&mut *tx`) so a failure leaves nothing behind.
pub async fn insert_job(conn: &mut PgConnection, job: &NewJob, by: Cause<'_>) -> DbResult<Job> {
    if job.tasks.is_empty() {
        return Err(DbError::validation("a job needs at least one task"));
    }
    let row: Job = sqlx::query_as(
        "INSERT INTO jobs (project_id, queue_id, name, priority, priority_class, preemptible, spec, submitted_by)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING *",
    )
    .bind(job.project_id)
    .bind(job.queue_id)
    .bind(&job.name)
    .bind(job.priority)
    .bind(&job.priority_class)
    .bind(job.preemptible)
    .bind(&job.spec)
    .bind(job.submitted_by)
    .fetch_one(&mut *conn)
    .await?;
    for task in &job.tasks {
        let replicas = i32::try_from(task.replicas).map_err(|_| DbError::validation("too many replicas"))?;
        let (task_id,): (i64,) =
            sqlx::query_as("INSERT INTO tasks (job_id, name, replicas, spec) VALUES ($1, $2, $3, $4) RETURNING id")
                .bind(row.id)
                .bind(&task.name)
                .bind(replicas)
                .bind(&task.spec)
                .fetch_one(&mut *conn)
                .await?;
        sqlx::query("INSERT INTO replicas (job_id, task_id, index) SELECT $1, $2, g FROM generate_series(0, $3 - 1) g")
            .bind(row.id)
            .bind(task_id)
            .bind(replicas)
            .execute(&mut *conn)
            .await?;
    }
    insert_event(&mut *conn, row.id, None, None, JobState::Pending.as_str(), by, &EventOrigin::default()).await?;
    Ok(row)
}

/// One job of [`insert_admitted_jobs`]: the validated job, what it charges against quotas and
/// how it was admitted.
#[derive(Clone, Copy, Debug)]
pub struct AdmittedJob<'a> {
    pub job: &'a NewJob,
    /// Quota demands (`admission::demand`), charged to the queue as they land.
    pub demands: &'a [(String, i64)],
    pub borrowed: bool,
    /// Who submitted it: the cause and actor of the `pending` event.
    pub submitted: Cause<'a>,
    /// The cause of the `pending -> admitted` event.
    pub admitted: &'a str,
}

/// What [`insert_admitted_jobs`] refuses before the database sees it: a job without tasks, or a
/// task with more replicas than the schema holds.
pub fn check_insertable(job: &NewJob) -> DbResult<()> {
    if job.tasks.is_empty() {
        return Err(DbError::validation("a job needs at least one task"));
    }
    for task in &job.tasks {
        i32::try_from(task.replicas).map_err(|_| DbError::validation("too many replicas"))?;
    }
    Ok(())
}

/// Inserts admitted jobs in one statement, whatever their number: each job in state `admitted`
/// with its tasks, replicas and quota demands, and its two events (`pending`, then `pending ->
/// admitted`). Returns the job rows in the order of `jobs`; ids increase in that order. The one
/// round trip matters: admission holds its queue locks while it runs, and a batch's statement
/// costs little more than one job's. The statement calls the SQL function
/// `insert_admitted_jobs` (migration 0008) with one array per column; the quota-usage triggers
/// (migrations 0007, 0008) charge the queues as the demands land.
pub async fn insert_admitted_jobs(conn: &mut PgConnection, jobs: &[AdmittedJob<'_>]) -> DbResult<Vec<Job>> {
    if jobs.is_empty() {
        return Ok(Vec::new());
    }
    let mut columns = AdmittedColumns::default();
    for (ord, admitted) in (1i64..).zip(jobs) {
        columns.push(ord, admitted)?;
    }
    let c = &columns;
    let rows: Vec<Job> = sqlx::query_as(
        "SELECT * FROM insert_admitted_jobs($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, \
         $17, $18, $19)",
    )
    .bind(&c.project)
    .bind(&c.queue)
    .bind(&c.name)
    .bind(&c.priority)
    .bind(&c.class)
    .bind(&c.preemptible)
    .bind(&c.spec)
    .bind(&c.submitted_by)
    .bind(&c.borrowed)
    .bind(&c.actor)
    .bind(&c.submitted)
    .bind(&c.admitted)
    .bind(&c.task_job)
    .bind(&c.task_name)
    .bind(&c.task_replicas)
    .bind(&c.task_spec)
    .bind(&c.demand_job)
    .bind(&c.demand_resource)
    .bind(&c.demand_amount)
    .fetch_all(&mut *conn)
    .await?;
    if rows.len() != jobs.len() {
        return Err(DbError::Internal(sqlx::Error::Protocol(format!(
            "inserted {} jobs of {}",
            rows.len(),
            jobs.len()
        ))));
    }
    Ok(rows)
}

/// The parameters of the SQL function `insert_admitted_jobs`: one array per job column, per
/// task column and per demand column; tasks and demands name their job by its 1-based position.
#[derive(Default)]
struct AdmittedColumns<'a> {
    project: Vec<i64>,
    queue: Vec<i64>,
    name: Vec<&'a str>,
    priority: Vec<i32>,
    class: Vec<&'a str>,
    preemptible: Vec<bool>,
    spec: Vec<&'a Value>,
    submitted_by: Vec<i64>,
    borrowed: Vec<bool>,
    actor: Vec<&'a str>,
    submitted: Vec<&'a str>,
    admitted: Vec<&'a str>,
    task_job: Vec<i64>,
    task_name: Vec<&'a str>,
    task_replicas: Vec<i32>,
    task_spec: Vec<&'a Value>,
    demand_job: Vec<i64>,
    demand_resource: Vec<&'a str>,
    demand_amount: Vec<i64>,
}

impl<'a> AdmittedColumns<'a> {
    fn push(&mut self, ord: i64, a: &AdmittedJob<'a>) -> DbResult<()> {
        check_insertable(a.job)?;
        let job = a.job;
        self.project.push(job.project_id);
        self.queue.push(job.queue_id);
        self.name.push(&job.name);
        self.priority.push(job.priority);
        self.class.push(&job.priority_class);
        self.preemptible.push(job.preemptible);
        self.spec.push(&job.spec);
        self.submitted_by.push(job.submitted_by);
        self.borrowed.push(a.borrowed);
        self.actor.push(a.submitted.actor);
        self.submitted.push(a.submitted.cause);
        self.admitted.push(a.admitted);
        for task in &job.tasks {
            self.task_job.push(ord);
            self.task_name.push(&task.name);
            self.task_replicas
                .push(i32::try_from(task.replicas).map_err(|_| DbError::validation("too many replicas"))?);
            self.task_spec.push(&task.spec);
        }
        for (resource, amount) in a.demands {
            self.demand_job.push(ord);
            self.demand_resource.push(resource);
            self.demand_amount.push(*amount);
        }
        Ok(())
    }
}
