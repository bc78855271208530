//! Jobs, tasks, replicas, their event trail and dispatches.
//!
//! Invariant 6: [`transition_job`] is the only code that changes `jobs.state`, and it writes
//! the `job_events` row in the same transaction. The schema backs this up: a trigger refuses a
//! state change without the matching event, and another refuses UPDATE/DELETE on events.

use chrono::{DateTime, Utc};
use serde_json::Value;
use sqlx::{FromRow, PgConnection, PgExecutor};

use super::{DbError, DbResult};
use crate::domain::{JobState, Role, UnitState};

/// A job row.
#[derive(Clone, Debug, PartialEq, FromRow)]
pub struct Job {
    pub id: i64,
    pub project_id: i64,
    pub queue_id: i64,
    pub name: String,
    pub priority: i32,
    pub priority_class: String,
    pub preemptible: bool,
    pub spec: Value,
    #[sqlx(try_from = "String")]
    pub state: JobState,
    pub borrowed: bool,
    pub submitted_by: i64,
    pub submitted_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub cluster_id: Option<String>,
    pub epoch: i64,
    pub why_pending: Option<Value>,
}

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
    pub submitted_by: i64,
}

/// Who or what caused an event: `user:<id>`, `agent:<cluster>`, `system:<component>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cause<'a> {
    pub cause: &'a str,
    pub actor: &'a str,
}

/// Where an event came from, when an agent reported it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EventOrigin<'a> {
    /// Agent time of the change; `None`: now.
    pub at: Option<DateTime<Utc>>,
    pub cluster_id: Option<&'a str>,
    pub epoch: Option<i64>,
    /// Stream message id: a second event with the same id is ignored.
    pub message_id: Option<&'a str>,
}

#[derive(Clone, Debug, PartialEq, Eq, FromRow)]
pub struct JobEvent {
    pub id: i64,
    pub job_id: i64,
    pub task_id: Option<i64>,
    pub replica_id: Option<i64>,
    pub from_state: Option<String>,
    pub to_state: String,
    pub cause: String,
    pub actor: String,
    pub at: DateTime<Utc>,
    pub recorded_at: DateTime<Utc>,
    pub cluster_id: Option<String>,
    pub epoch: Option<i64>,
    pub message_id: Option<String>,
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

#[allow(clippy::too_many_arguments)]
async fn insert_event(
    conn: &mut PgConnection,
    job_id: i64,
    task: Option<(i64, Option<i64>)>,
    from: Option<&str>,
    to: &str,
    by: Cause<'_>,
    origin: &EventOrigin<'_>,
) -> DbResult<bool> {
    let done = sqlx::query(
        "INSERT INTO job_events (job_id, task_id, replica_id, from_state, to_state, cause, actor, at, cluster_id, epoch, message_id)
         VALUES ($1, $2, $3, $4, $5, $6, $7, COALESCE($8, now()), $9, $10, $11)
         ON CONFLICT (message_id) DO NOTHING",
    )
    .bind(job_id)
    .bind(task.map(|t| t.0))
    .bind(task.and_then(|t| t.1))
    .bind(from)
    .bind(to)
    .bind(by.cause)
    .bind(by.actor)
    .bind(origin.at)
    .bind(origin.cluster_id)
    .bind(origin.epoch)
    .bind(origin.message_id)
    .execute(conn)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// The only way to change a job's state: locks the job row, checks the state machine, appends
/// the event and updates the row, all on `conn` (a transaction). Returns the previous state.
/// A disallowed change is a CONFLICT.
pub async fn transition_job(conn: &mut PgConnection, job_id: i64, to: JobState, by: Cause<'_>) -> DbResult<JobState> {
    // Without a message id the event is always new, so the previous state is always known.
    transition_job_from(conn, job_id, to, by, &EventOrigin::default()).await.map(|prev| prev.unwrap_or(to))
}

/// Has the agent message `origin` names already been recorded as an event? Redelivered
/// messages (at-least-once delivery) are recognised by their id.
async fn already_applied(conn: &mut PgConnection, origin: &EventOrigin<'_>) -> DbResult<bool> {
    let Some(id) = origin.message_id else { return Ok(false) };
    let seen: Option<(i64,)> =
        sqlx::query_as("SELECT id FROM job_events WHERE message_id = $1").bind(id).fetch_optional(&mut *conn).await?;
    Ok(seen.is_some())
}

/// [`transition_job`] for a change reported by an agent. Returns `None` when `origin.message_id`
/// was already recorded (a redelivery): nothing changes.
pub async fn transition_job_from(
    conn: &mut PgConnection,
    job_id: i64,
    to: JobState,
    by: Cause<'_>,
    origin: &EventOrigin<'_>,
) -> DbResult<Option<JobState>> {
    let (from,): (String,) = sqlx::query_as("SELECT state FROM jobs WHERE id = $1 FOR UPDATE")
        .bind(job_id)
        .fetch_optional(&mut *conn)
        .await?
        .ok_or(DbError::NotFound("job"))?;
    let from: JobState = from.parse()?;
    // A redelivered agent event is a no-op even when the state has moved on since.
    if already_applied(conn, origin).await? {
        return Ok(None);
    }
    if !from.can_become(to) {
        return Err(DbError::conflict(format!("job cannot go from {from} to {to}")));
    }
    if !insert_event(&mut *conn, job_id, None, Some(from.as_str()), to.as_str(), by, origin).await? {
        return Ok(None);
    }
    // Leaving `pending` clears the explanation of why it was pending.
    sqlx::query(
        "UPDATE jobs SET state = $2, updated_at = now(),
           why_pending = CASE WHEN $2 = 'pending' THEN why_pending ELSE NULL END
         WHERE id = $1",
    )
    .bind(job_id)
    .bind(to.as_str())
    .execute(&mut *conn)
    .await?;
    Ok(Some(from))
}

/// Records why a pending job is not admitted or placed (no state change, so no event).
pub async fn set_why_pending(db: impl PgExecutor<'_>, job_id: i64, why: &Value) -> DbResult<()> {
    sqlx::query("UPDATE jobs SET why_pending = $2 WHERE id = $1 AND state = 'pending'")
        .bind(job_id)
        .bind(why)
        .execute(db)
        .await?;
    Ok(())
}

pub async fn get_job(db: impl PgExecutor<'_>, job_id: i64) -> DbResult<Job> {
    sqlx::query_as("SELECT * FROM jobs WHERE id = $1")
        .bind(job_id)
        .fetch_optional(db)
        .await?
        .ok_or(DbError::NotFound("job"))
}

/// The event trail of a job, oldest first.
pub async fn job_events(db: impl PgExecutor<'_>, job_id: i64) -> DbResult<Vec<JobEvent>> {
    Ok(sqlx::query_as("SELECT * FROM job_events WHERE job_id = $1 ORDER BY id").bind(job_id).fetch_all(db).await?)
}

/// Filter of [`list_jobs`]; empty fields do not filter.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct JobFilter {
    pub states: Vec<JobState>,
    pub queue_id: Option<i64>,
}

/// One page of jobs, newest first.
#[derive(Clone, Debug, PartialEq)]
pub struct JobPage {
    pub jobs: Vec<Job>,
    /// Pass as `after` for the next page; `None` on the last page.
    pub next_cursor: Option<i64>,
}

/// Keyset pagination over a project's jobs by descending id. The cursor is the last job id
/// seen, so jobs submitted while paging never shift or repeat rows of later pages.
pub async fn list_jobs(
    db: impl PgExecutor<'_>,
    project_id: i64,
    filter: &JobFilter,
    first: u32,
    after: Option<i64>,
) -> DbResult<JobPage> {
    let first = i64::from(first.clamp(1, 500));
    let states: Vec<&str> = filter.states.iter().map(|s| s.as_str()).collect();
    let mut jobs: Vec<Job> = sqlx::query_as(
        "SELECT * FROM jobs WHERE project_id = $1
           AND ($2::bigint IS NULL OR id < $2)
           AND (cardinality($3::text[]) = 0 OR state = ANY($3))
           AND ($4::bigint IS NULL OR queue_id = $4)
         ORDER BY id DESC LIMIT $5",
    )
    .bind(project_id)
    .bind(after)
    .bind(&states)
    .bind(filter.queue_id)
    .bind(first + 1)
    .fetch_all(db)
    .await?;
    let next_cursor = if jobs.len() as i64 > first {
        jobs.truncate(first as usize);
        jobs.last().map(|j| j.id)
    } else {
        None
    };
    Ok(JobPage { jobs, next_cursor })
}

/// A job row without its documents (`spec`, `why_pending`): what a list page shows. Parsing
/// every job's JSON documents into values was a large part of a page's CPU cost; the GraphQL
/// layer loads them only when a query selects them.
#[derive(Clone, Debug, PartialEq, FromRow)]
pub struct JobHead {
    pub id: i64,
    pub project_id: i64,
    pub queue_id: i64,
    pub name: String,
    pub priority: i32,
    pub priority_class: String,
    pub preemptible: bool,
    #[sqlx(try_from = "String")]
    pub state: JobState,
    pub borrowed: bool,
    pub submitted_by: i64,
    pub submitted_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub cluster_id: Option<String>,
    pub epoch: i64,
}

/// One page of [`JobHead`]s, newest first.
#[derive(Clone, Debug, PartialEq)]
pub struct JobHeadPage {
    pub jobs: Vec<JobHead>,
    /// Pass as `after` for the next page; `None` on the last page.
    pub next_cursor: Option<i64>,
    /// The reader's role in each project of the page, found by the same statement
    /// ([`list_visible_jobs`]), so nested fields need not look them up again.
    pub roles: std::collections::HashMap<i64, Role>,
    /// Each job's tasks in insertion order, when asked for ([`PageIncludes::tasks`]): read by
    /// the page's statement, not by a second one.
    pub tasks: Option<std::collections::HashMap<i64, Vec<Task>>>,
}

/// What [`list_visible_jobs`] reads besides the jobs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PageIncludes {
    pub tasks: bool,
}

/// Filter of [`list_visible_jobs`]; empty fields do not filter.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct VisibleJobFilter {
    pub project_id: Option<i64>,
    pub queue_id: Option<i64>,
    pub states: Vec<JobState>,
    pub submitted_by: Option<i64>,
    pub cluster_id: Option<String>,
    /// Case-insensitive substring of the job name (`%` and `_` match themselves).
    pub search: Option<String>,
}

/// Escapes LIKE's metacharacters so user text matches literally.
pub fn like_pattern(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('%');
    for c in text.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('%');
    out
}

/// The columns of a [`JobHead`].
pub(super) const JOB_HEAD_COLUMNS: &str = "j.id, j.project_id, j.queue_id, j.name, j.priority, j.priority_class, \
     j.preemptible, j.state, j.borrowed, j.submitted_by, j.submitted_at, j.updated_at, j.cluster_id, j.epoch";

/// The statement of [`list_visible_jobs`]: `$1` the reader, `$2` the row limit, then one
/// parameter per filter in use (`?` in `filters`), in order. Only the filters in use are in the
/// text: with `($n IS NULL OR ...)` conditions for absent ones, the generic plan PostgreSQL
/// caches for the prepared statement estimated one row per project and read a whole project's
/// jobs to sort them, where the (project, id) index gives them in order.
///
/// A platform admin reads every job: one backward scan of the primary key (the flag is checked
/// again in the statement, the caller's copy may be stale). Anyone else reads each visible
/// project's newest jobs through the (project, id) index, merged, with the roles that grant the
/// read (the rule of [`super::role_in_project`]): scanning all jobs newest first and dropping
/// other projects' read a page's worth of rows per visible project (1,600 rows for a page of
/// 100 when 1 project in 16 is visible).
///
/// Columns: [`JOB_HEAD_COLUMNS`], `roles`, then with `tasks` the columns of one task: a row per
/// task (one for a job without tasks), newest job first and its tasks in insertion order. The
/// page's rows are joined in the same statement: a second statement, or aggregating each job's
/// tasks into arrays, cost PostgreSQL more than repeating the job's columns. The join is a
/// LATERAL probe of the (job, name) index per job (`OFFSET 0` keeps the subquery from being
/// flattened): the generic plan, which cannot know the page is small, hashed the whole
/// `tasks` table otherwise.
fn visible_jobs_sql(platform_admin: bool, filters: &[&str], includes: PageIncludes) -> String {
    let conditions: String =
        filters.iter().enumerate().map(|(i, f)| format!(" AND {}", f.replace('?', &format!("${}", i + 3)))).collect();
    let page = if platform_admin {
        format!(
            "SELECT {JOB_HEAD_COLUMNS}, ARRAY['platform_admin'] AS roles FROM jobs j
             WHERE EXISTS (SELECT 1 FROM users u WHERE u.id = $1 AND u.platform_admin){conditions}
             ORDER BY j.id DESC LIMIT $2"
        )
    } else {
        format!(
            "WITH grants AS (
               SELECT p.id, 'platform_admin' AS role FROM projects p JOIN users u ON u.id = $1 AND u.platform_admin
               UNION ALL
               SELECT p.id, m.role FROM memberships m JOIN projects p ON p.tenant_id = m.tenant_id WHERE m.user_id = $1
               UNION ALL
               SELECT m.project_id, m.role FROM memberships m WHERE m.user_id = $1 AND m.project_id IS NOT NULL
             ), visible AS (SELECT id, array_agg(role) AS roles FROM grants GROUP BY id)
             SELECT page.*, v.roles FROM visible v CROSS JOIN LATERAL (
               SELECT {JOB_HEAD_COLUMNS} FROM jobs j WHERE j.project_id = v.id{conditions}
               ORDER BY j.id DESC LIMIT $2
             ) page
             ORDER BY page.id DESC LIMIT $2"
        )
    };
    if !includes.tasks {
        return page;
    }
    format!(
        "WITH page AS ({page})
         SELECT page.*, t.id, t.name, t.replicas, t.state FROM page LEFT JOIN LATERAL (
           SELECT t.id, t.name, t.replicas, t.state FROM tasks t WHERE t.job_id = page.id OFFSET 0
         ) t ON true
         ORDER BY page.id DESC, t.id"
    )
}

/// Decodes a [`JobHead`] from the first columns of `row`, in [`JOB_HEAD_COLUMNS`] order. By
/// position: looking each column up by name hashed its name, a tenth of a page's decoding.
pub(super) fn job_head_at(row: &sqlx::postgres::PgRow) -> DbResult<JobHead> {
    use sqlx::Row;
    Ok(JobHead {
        id: row.try_get(0)?,
        project_id: row.try_get(1)?,
        queue_id: row.try_get(2)?,
        name: row.try_get(3)?,
        priority: row.try_get(4)?,
        priority_class: row.try_get(5)?,
        preemptible: row.try_get(6)?,
        state: row.try_get::<&str, _>(7)?.parse()?,
        borrowed: row.try_get(8)?,
        submitted_by: row.try_get(9)?,
        submitted_at: row.try_get(10)?,
        updated_at: row.try_get(11)?,
        cluster_id: row.try_get(12)?,
        epoch: row.try_get(13)?,
    })
}

/// The task of `row` whose job is `job_id`, from the four task columns starting at `first`
/// (NULL: a job without tasks).
pub(super) fn task_at(row: &sqlx::postgres::PgRow, job_id: i64, first: usize) -> DbResult<Option<Task>> {
    use sqlx::Row;
    let Some(id) = row.try_get::<Option<i64>, _>(first)? else { return Ok(None) };
    Ok(Some(Task {
        id,
        job_id,
        name: row.try_get(first + 1)?,
        replicas: row.try_get(first + 2)?,
        state: row.try_get::<&str, _>(first + 3)?.parse()?,
    }))
}

/// Keyset pagination, newest first, over the jobs of every project `user_id` may read: the
/// authorization is part of the one statement (platform admin, tenant membership of the
/// project's tenant, or a direct project membership), so a page costs one query however many
/// projects it spans. Cursors are job ids, as in [`list_jobs`].
pub async fn list_visible_jobs(
    db: impl PgExecutor<'_>,
    user_id: i64,
    platform_admin: bool,
    filter: &VisibleJobFilter,
    first: u32,
    after: Option<i64>,
    includes: PageIncludes,
) -> DbResult<JobHeadPage> {
    use sqlx::Row;
    let first = i64::from(first.clamp(1, 500));
    let states: Vec<&str> = filter.states.iter().map(|s| s.as_str()).collect();
    let pattern = filter.search.as_deref().map(like_pattern);
    // Each filter in use: its condition (`?` is its parameter) and its binding, in one order.
    let mut filters: Vec<&str> = Vec::new();
    if after.is_some() {
        filters.push("j.id < ?");
    }
    if !states.is_empty() {
        filters.push("j.state = ANY(?)");
    }
    for (value, condition) in [
        (filter.project_id, "j.project_id = ?"),
        (filter.queue_id, "j.queue_id = ?"),
        (filter.submitted_by, "j.submitted_by = ?"),
    ] {
        if value.is_some() {
            filters.push(condition);
        }
    }
    if filter.cluster_id.is_some() {
        filters.push("j.cluster_id = ?");
    }
    if pattern.is_some() {
        filters.push("j.name ILIKE ?");
    }
    let sql = visible_jobs_sql(platform_admin, &filters, includes);
    let mut query = sqlx::query(&sql).bind(user_id).bind(first + 1);
    if let Some(after) = after {
        query = query.bind(after);
    }
    if !states.is_empty() {
        query = query.bind(&states);
    }
    for id in [filter.project_id, filter.queue_id, filter.submitted_by].into_iter().flatten() {
        query = query.bind(id);
    }
    for text in [filter.cluster_id.as_deref(), pattern.as_deref()].into_iter().flatten() {
        query = query.bind(text);
    }
    let rows = query.fetch_all(db).await?;
    let mut jobs: Vec<JobHead> = Vec::with_capacity(rows.len());
    let mut roles = std::collections::HashMap::new();
    let mut tasks = includes.tasks.then(|| std::collections::HashMap::with_capacity(rows.len()));
    for row in &rows {
        let id: i64 = row.try_get(0)?;
        // With tasks, a job's rows are consecutive: its head comes with the first.
        if jobs.last().is_none_or(|j| j.id != id) {
            let job = job_head_at(row)?;
            if let std::collections::hash_map::Entry::Vacant(e) = roles.entry(job.project_id) {
                let names: Vec<String> = row.try_get(14)?;
                if let Some(role) = names.iter().filter_map(|name| Role::parse(name)).max() {
                    e.insert(role);
                }
            }
            jobs.push(job);
        }
        if let Some(tasks) = &mut tasks {
            let list: &mut Vec<Task> = tasks.entry(id).or_default();
            list.extend(task_at(row, id, 15)?);
        }
    }
    let next_cursor = if jobs.len() as i64 > first {
        // The one extra job only tells that a next page exists.
        for extra in jobs.split_off(first as usize) {
            if let Some(tasks) = &mut tasks {
                tasks.remove(&extra.id);
            }
        }
        jobs.last().map(|j| j.id)
    } else {
        None
    };
    Ok(JobHeadPage { jobs, next_cursor, roles, tasks })
}

#[derive(Clone, Debug, PartialEq, Eq, FromRow)]
pub struct Dispatch {
    pub id: i64,
    pub job_id: i64,
    pub epoch: i64,
    pub cluster_id: String,
    pub dispatched_at: DateTime<Utc>,
    pub acknowledged_at: Option<DateTime<Utc>>,
    pub outcome: String,
    pub reason: Option<String>,
}

/// Records the intent to run `job_id` on `cluster_id` under the next epoch (fencing token,
/// invariant 2): bumps `jobs.epoch`, points `jobs.cluster_id` at the cluster and marks older
/// unanswered dispatches superseded. The state change to `dispatched` is the caller's
/// [`transition_job`] in the same transaction.
pub async fn insert_dispatch(conn: &mut PgConnection, job_id: i64, cluster_id: &str) -> DbResult<Dispatch> {
    let (epoch,): (i64,) = sqlx::query_as(
        "UPDATE jobs SET epoch = epoch + 1, cluster_id = $2, updated_at = now() WHERE id = $1 RETURNING epoch",
    )
    .bind(job_id)
    .bind(cluster_id)
    .fetch_optional(&mut *conn)
    .await?
    .ok_or(DbError::NotFound("job"))?;
    sqlx::query("UPDATE dispatches SET outcome = 'superseded' WHERE job_id = $1 AND outcome = 'pending'")
        .bind(job_id)
        .execute(&mut *conn)
        .await?;
    Ok(sqlx::query_as("INSERT INTO dispatches (job_id, epoch, cluster_id) VALUES ($1, $2, $3) RETURNING *")
        .bind(job_id)
        .bind(epoch)
        .bind(cluster_id)
        .fetch_one(&mut *conn)
        .await?)
}

/// An agent's answer to a dispatch. A rejection may follow an acknowledgement (accepted, then
/// not placed within the agent's deadline); answers for a stale epoch change nothing (returns false).
pub async fn answer_dispatch(
    db: impl PgExecutor<'_>,
    job_id: i64,
    epoch: i64,
    accepted: bool,
    reason: Option<&str>,
) -> DbResult<bool> {
    let done = sqlx::query(
        "UPDATE dispatches SET outcome = CASE WHEN $3 THEN 'acknowledged' ELSE 'rejected' END,
           acknowledged_at = COALESCE(acknowledged_at, now()), reason = $4
         WHERE job_id = $1 AND epoch = $2
           AND (outcome = 'pending' OR (NOT $3 AND outcome = 'acknowledged'))
           AND epoch = (SELECT epoch FROM jobs WHERE id = $1)",
    )
    .bind(job_id)
    .bind(epoch)
    .bind(accepted)
    .bind(reason)
    .execute(db)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// What an agent observed about one replica.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ReplicaReport<'a> {
    pub state: UnitState,
    pub node: Option<&'a str>,
    pub devices: Option<&'a Value>,
}

/// Changes a replica's observed state with its event (invariant 6), like
/// [`transition_job_from`]: `None` when `origin.message_id` was already recorded. The replica's
/// node, devices, cluster and epoch are overwritten with the report's (observation).
pub async fn transition_replica(
    conn: &mut PgConnection,
    replica_id: i64,
    report: &ReplicaReport<'_>,
    by: Cause<'_>,
    origin: &EventOrigin<'_>,
) -> DbResult<Option<UnitState>> {
    let (job_id, task_id, from): (i64, i64, String) =
        sqlx::query_as("SELECT job_id, task_id, state FROM replicas WHERE id = $1 FOR UPDATE")
            .bind(replica_id)
            .fetch_optional(&mut *conn)
            .await?
            .ok_or(DbError::NotFound("replica"))?;
    let from: UnitState = from.parse()?;
    if already_applied(conn, origin).await? {
        return Ok(None);
    }
    if !from.can_become(report.state) {
        return Err(DbError::conflict(format!("replica cannot go from {from} to {}", report.state)));
    }
    let to = report.state.as_str();
    if !insert_event(&mut *conn, job_id, Some((task_id, Some(replica_id))), Some(from.as_str()), to, by, origin).await?
    {
        return Ok(None);
    }
    sqlx::query(
        "UPDATE replicas SET state = $2, node = $3, devices = $4, cluster_id = COALESCE($5, cluster_id),
           epoch = COALESCE($6, epoch), updated_at = now()
         WHERE id = $1",
    )
    .bind(replica_id)
    .bind(to)
    .bind(report.node)
    .bind(report.devices)
    .bind(origin.cluster_id)
    .bind(origin.epoch)
    .execute(&mut *conn)
    .await?;
    Ok(Some(from))
}

/// Changes a task's state with its event. Returns the previous state.
pub async fn transition_task(
    conn: &mut PgConnection,
    task_id: i64,
    to: UnitState,
    by: Cause<'_>,
) -> DbResult<UnitState> {
    let (job_id, from): (i64, String) = sqlx::query_as("SELECT job_id, state FROM tasks WHERE id = $1 FOR UPDATE")
        .bind(task_id)
        .fetch_optional(&mut *conn)
        .await?
        .ok_or(DbError::NotFound("task"))?;
    let from: UnitState = from.parse()?;
    if !from.can_become(to) {
        return Err(DbError::conflict(format!("task cannot go from {from} to {to}")));
    }
    insert_event(
        &mut *conn,
        job_id,
        Some((task_id, None)),
        Some(from.as_str()),
        to.as_str(),
        by,
        &EventOrigin::default(),
    )
    .await?;
    sqlx::query("UPDATE tasks SET state = $2 WHERE id = $1")
        .bind(task_id)
        .bind(to.as_str())
        .execute(&mut *conn)
        .await?;
    Ok(from)
}

#[derive(Clone, Debug, PartialEq, FromRow)]
pub struct Replica {
    pub id: i64,
    pub job_id: i64,
    pub task_id: i64,
    pub index: i32,
    #[sqlx(try_from = "String")]
    pub state: UnitState,
    pub node: Option<String>,
    pub devices: Option<Value>,
    pub cluster_id: Option<String>,
    pub epoch: Option<i64>,
    pub updated_at: DateTime<Utc>,
}

/// The replicas of a job, by task then index.
pub async fn replicas(db: impl PgExecutor<'_>, job_id: i64) -> DbResult<Vec<Replica>> {
    Ok(sqlx::query_as("SELECT * FROM replicas WHERE job_id = $1 ORDER BY task_id, index")
        .bind(job_id)
        .fetch_all(db)
        .await?)
}

/// A JSON document as PostgreSQL sent it: validated, not built into a tree, because most
/// reads never look inside (a page of jobs lists tasks by name; building each task's spec
/// was a tenth of the server's time per page).
#[derive(Clone, Debug)]
pub struct RawJson(pub Box<serde_json::value::RawValue>);

impl RawJson {
    /// A document from a tree (tests, and values built in code).
    pub fn from_value(value: &Value) -> RawJson {
        // A `Value` always serializes.
        RawJson(serde_json::value::to_raw_value(value).expect("a JSON value serializes"))
    }

    /// The document decoded into `T` without building a tree first.
    pub fn decode<T: serde::de::DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        serde_json::from_str(self.0.get())
    }

    /// The document as a tree.
    pub fn to_value(&self) -> Value {
        // It came out of a jsonb column, so it parses.
        serde_json::from_str(self.0.get()).unwrap_or(Value::Null)
    }
}

impl PartialEq for RawJson {
    fn eq(&self, other: &Self) -> bool {
        self.0.get() == other.0.get()
    }
}

impl sqlx::Type<sqlx::Postgres> for RawJson {
    fn type_info() -> sqlx::postgres::PgTypeInfo {
        <sqlx::types::Json<Box<serde_json::value::RawValue>> as sqlx::Type<sqlx::Postgres>>::type_info()
    }

    fn compatible(ty: &sqlx::postgres::PgTypeInfo) -> bool {
        <sqlx::types::Json<Box<serde_json::value::RawValue>> as sqlx::Type<sqlx::Postgres>>::compatible(ty)
    }
}

impl<'r> sqlx::Decode<'r, sqlx::Postgres> for RawJson {
    fn decode(value: sqlx::postgres::PgValueRef<'r>) -> Result<Self, sqlx::error::BoxDynError> {
        let json =
            <sqlx::types::Json<Box<serde_json::value::RawValue>> as sqlx::Decode<sqlx::Postgres>>::decode(value)?;
        Ok(RawJson(json.0))
    }
}

/// A task row without its `spec` ([`TaskSpec`]): lists of tasks rarely show it, and reading
/// it cost a third of a `jobs(first: 100)` page that lists tasks by name.
#[derive(Clone, Debug, PartialEq, FromRow)]
pub struct Task {
    pub id: i64,
    pub job_id: i64,
    pub name: String,
    pub replicas: i32,
    #[sqlx(try_from = "String")]
    pub state: UnitState,
}

/// A task's `spec`, as submitted (image, command, env, topology ...).
#[derive(Clone, Debug, FromRow)]
pub struct TaskSpec {
    pub id: i64,
    pub spec: RawJson,
}

/// The tasks of a job, in insertion order.
pub async fn tasks(db: impl PgExecutor<'_>, job_id: i64) -> DbResult<Vec<Task>> {
    Ok(sqlx::query_as("SELECT id, job_id, name, replicas, state FROM tasks WHERE job_id = $1 ORDER BY id")
        .bind(job_id)
        .fetch_all(db)
        .await?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn visible_jobs_statement_numbers_the_filters_in_use_after_reader_and_limit() {
        let sql = visible_jobs_sql(false, &["j.id < ?", "j.name ILIKE ?"], PageIncludes::default());
        assert!(sql.contains("j.project_id = v.id AND j.id < $3 AND j.name ILIKE $4"), "{sql}");
        assert!(!sql.contains('?'));
        let admin = visible_jobs_sql(true, &[], PageIncludes::default());
        assert!(admin.contains("u.platform_admin)\n") || admin.contains("u.platform_admin) "), "{admin}");
        assert!(!admin.contains(" AND j."), "no filters, no conditions: {admin}");
    }
}
