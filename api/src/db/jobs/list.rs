//! The lists of jobs: one project's (`list_jobs`, full rows) and every job a caller may read
//! (`list_visible_jobs`, lean heads with their tasks when asked, authorization inside the one
//! statement), both newest first with keyset cursors.

use chrono::{DateTime, Utc};
use sqlx::{FromRow, PgExecutor};

use super::{Job, Task};
use crate::db::DbResult;
use crate::domain::{JobState, Role};

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
pub(in crate::db) const JOB_HEAD_COLUMNS: &str =
    "j.id, j.project_id, j.queue_id, j.name, j.priority, j.priority_class, \
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
pub(in crate::db) fn job_head_at(row: &sqlx::postgres::PgRow) -> DbResult<JobHead> {
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
pub(in crate::db) fn task_at(row: &sqlx::postgres::PgRow, job_id: i64, first: usize) -> DbResult<Option<Task>> {
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
