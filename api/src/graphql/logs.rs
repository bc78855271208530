//! A job's output in the API: `jobLogs` (one page of a replica's lines) and the subscription
//! `followJobLogs` (new lines as they are written, until the replica ends). Readers of the job
//! (viewer role in its project) may read its output; the lines come from the agent of the
//! cluster the job was last sent to (`crate::logs`).

use std::time::Duration;

use async_graphql::futures_util::Stream;
use async_graphql::{Context, Enum, Object, SimpleObject, Subscription, ID};
use chrono::{DateTime, TimeZone, Utc};
use grus_protocol::logs::{LogQuery, LogReply, MAX_LOG_REPLY_BYTES, MAX_TAIL_LINES};
use sqlx::PgPool;

use super::{authorize, caller, parse_id, pool};
use crate::db::{self, Job};
use crate::domain::Role;
use crate::error::{ApiError, ApiResult, FieldError};
use crate::logs::{LogReadError, LogReader};

/// How often a follower asks for new lines.
const FOLLOW_EVERY: Duration = Duration::from_secs(1);
/// The bytes one page holds unless the caller asks for fewer.
const DEFAULT_PAGE_BYTES: i32 = 256 << 10;

// `grus_protocol::logs::LogStream` in the API.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Enum)]
#[graphql(name = "LogStream", remote = "grus_protocol::logs::LogStream")]
pub enum LogStreamName {
    Stdout,
    Stderr,
}

/// Where a page's lines came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Enum)]
#[graphql(name = "LogSource", remote = "grus_protocol::logs::LogSource")]
pub enum LogSourceName {
    /// The replica as it runs, or its container still on its node.
    Live,
    /// The last lines its agent kept after it was gone.
    Kept,
    /// Nothing is left of it: not started yet, or gone longer than its agent keeps lines.
    Gone,
}

/// One line a replica wrote.
#[derive(Clone, Debug, SimpleObject)]
#[graphql(name = "LogLine")]
pub struct LogLineObj {
    pub at: DateTime<Utc>,
    pub stream: LogStreamName,
    pub text: String,
}

/// A page of one replica's output, oldest line first.
#[derive(Clone, Debug, SimpleObject)]
#[graphql(name = "LogPage")]
pub struct LogPageObj {
    pub task: String,
    pub replica: i32,
    /// The cluster the lines came from (`null`: the job was never sent to one).
    pub cluster_id: Option<String>,
    pub source: LogSourceName,
    pub lines: Vec<LogLineObj>,
    /// Older lines matched but were left out (the tail or the byte bound).
    pub truncated: bool,
    /// The replica has ended: no more lines will come.
    pub ended: bool,
    /// The last line's time: pass it as `since` to read only what follows.
    pub cursor: Option<DateTime<Utc>>,
}

fn ms_time(ms: i64) -> DateTime<Utc> {
    Utc.timestamp_millis_opt(ms).single().unwrap_or_default()
}

impl LogPageObj {
    fn of(reply: LogReply, cluster_id: Option<String>) -> LogPageObj {
        let cursor = reply.lines.last().map(|l| ms_time(l.at_ms));
        LogPageObj {
            task: reply.task,
            replica: i32::try_from(reply.replica).unwrap_or(i32::MAX),
            cluster_id,
            source: reply.source.into(),
            lines: reply
                .lines
                .into_iter()
                .map(|l| LogLineObj { at: ms_time(l.at_ms), stream: l.stream.into(), text: l.text })
                .collect(),
            truncated: reply.truncated,
            ended: reply.ended,
            cursor,
        }
    }
}

/// What a caller asked for, checked against the job.
struct Request {
    task: String,
    replica: u32,
    query: LogQuery,
}

/// Checks the arguments against the job's tasks and the bounds, every problem a field error.
async fn request(
    pool: &PgPool,
    job: &Job,
    task: Option<String>,
    replica: Option<i32>,
    tail: Option<i32>,
    max_bytes: i32,
) -> ApiResult<Request> {
    let tasks = db::tasks(pool, job.id).await?;
    let mut problems = Vec::new();
    let chosen = match &task {
        Some(name) => tasks.iter().find(|t| &t.name == name),
        None => tasks.first(),
    };
    if chosen.is_none() {
        let names: Vec<&str> = tasks.iter().map(|t| t.name.as_str()).collect();
        problems
            .push(FieldError { field: "task".into(), message: format!("the job's tasks are {}", names.join(", ")) });
    }
    let replica = replica.unwrap_or(0);
    if let Some(t) = chosen {
        if replica < 0 || replica >= t.replicas {
            let message = format!("task {} has replicas 0 to {}", t.name, t.replicas - 1);
            problems.push(FieldError { field: "replica".into(), message });
        }
    }
    if tail.is_some_and(|t| t < 1 || t as u32 > MAX_TAIL_LINES) {
        problems.push(FieldError { field: "tail".into(), message: format!("must be between 1 and {MAX_TAIL_LINES}") });
    }
    if max_bytes < 1 || max_bytes as u32 > MAX_LOG_REPLY_BYTES {
        let message = format!("must be between 1 and {MAX_LOG_REPLY_BYTES}");
        problems.push(FieldError { field: "maxBytes".into(), message });
    }
    if !problems.is_empty() {
        return Err(ApiError::Validation(problems));
    }
    let task = chosen.map(|t| t.name.clone()).unwrap_or_default();
    let replica = replica as u32;
    let query = LogQuery {
        task: Some(task.clone()),
        replica: Some(replica),
        tail: tail.map(|t| t as u32),
        since_ms: None,
        max_bytes: max_bytes as u32,
    };
    Ok(Request { task, replica, query })
}

/// The job, if the caller may read it (NOT_FOUND otherwise, as for the job itself).
async fn readable_job(ctx: &Context<'_>, job_id: &ID) -> ApiResult<Job> {
    caller(ctx)?;
    let job = db::get_job(pool(ctx)?, parse_id(job_id, "job")?).await?;
    authorize(ctx, job.project_id, Role::Viewer).await.map_err(|e| match e {
        ApiError::NotFound(_) => ApiError::NotFound("job"),
        other => other,
    })?;
    Ok(job)
}

/// The server's reader; `None` in a server without Redis (then only jobs never sent to a
/// cluster can be answered).
fn reader<'a>(ctx: &Context<'a>) -> Option<&'a LogReader> {
    ctx.data_opt::<LogReader>()
}

fn read_error(e: LogReadError) -> ApiError {
    match e {
        LogReadError::Timeout { .. } => ApiError::Conflict(e.to_string()),
        other => ApiError::internal(&other),
    }
}

/// One page of `job`'s output: from its cluster's agent, or an empty `GONE` page when it was
/// never sent to one.
async fn page(reader: Option<&LogReader>, job: &Job, req: &Request, since_ms: Option<i64>) -> ApiResult<LogPageObj> {
    let state = job.state;
    let Some(cluster) = job.cluster_id.clone() else {
        return Ok(LogPageObj {
            task: req.task.clone(),
            replica: req.replica as i32,
            cluster_id: None,
            source: LogSourceName::Gone,
            lines: Vec::new(),
            truncated: false,
            ended: state.is_terminal(),
            cursor: None,
        });
    };
    let reader = reader.ok_or_else(|| ApiError::Conflict("this server reads no logs (no Redis)".into()))?;
    let query = LogQuery { since_ms, ..req.query.clone() };
    let reply = reader.read(&cluster, job.id as u64, query).await.map_err(read_error)?;
    if let Some(error) = &reply.error {
        return Err(ApiError::Conflict(format!("cluster {cluster} could not read the output: {error}")));
    }
    let mut page = LogPageObj::of(reply, Some(cluster));
    // A replica that ended may run again (a restart, a requeue): no more lines only once the
    // job itself has ended.
    page.ended &= state.is_terminal();
    Ok(page)
}

#[derive(Default)]
pub struct LogsQuery;

#[Object]
impl LogsQuery {
    /// A replica's output (viewer role in the job's project): the task's (default: the first)
    /// replica `replica` (default 0), the last `tail` lines (1 to 10000; default all that fit),
    /// only lines after `since`, at most `maxBytes` of text (the newest that fit). Read from the
    /// agent of the job's cluster: a CONFLICT error when it does not answer within 5 s.
    #[allow(clippy::too_many_arguments)]
    async fn job_logs(
        &self,
        ctx: &Context<'_>,
        job_id: ID,
        task: Option<String>,
        replica: Option<i32>,
        tail: Option<i32>,
        since: Option<DateTime<Utc>>,
        #[graphql(default = 262144)] max_bytes: i32,
    ) -> ApiResult<LogPageObj> {
        let job = readable_job(ctx, &job_id).await?;
        let req = request(pool(ctx)?, &job, task, replica, tail, max_bytes).await?;
        page(reader(ctx), &job, &req, since.map(|s| s.timestamp_millis())).await
    }
}

#[derive(Default)]
pub struct LogsSubscription;

#[Subscription]
impl LogsSubscription {
    /// A replica's output as it is written (viewer role in the job's project): first its last
    /// `tail` lines (default 100), then every second the lines written since, until the replica
    /// ended (its last page has `ended`). Follows the job to another cluster when it moves.
    async fn follow_job_logs(
        &self,
        ctx: &Context<'_>,
        job_id: ID,
        task: Option<String>,
        replica: Option<i32>,
        #[graphql(default = 100)] tail: i32,
    ) -> Result<impl Stream<Item = ApiResult<LogPageObj>>, ApiError> {
        let user_id = caller(ctx)?.user.id;
        let job = readable_job(ctx, &job_id).await?;
        let pool = pool(ctx)?.clone();
        let req = request(&pool, &job, task, replica, Some(tail), DEFAULT_PAGE_BYTES).await?;
        let reader = reader(ctx).cloned();
        Ok(async_stream::stream! {
            let mut since: Option<i64> = None;
            let mut first = true;
            loop {
                // Re-checked per page: a membership revoked mid-stream ends it.
                match db::role_in_project(&pool, user_id, job.project_id).await {
                    Ok(Some(_)) => {}
                    Ok(None) => {
                        yield Err(ApiError::NotFound("job"));
                        break;
                    }
                    Err(e) => {
                        yield Err(e.into());
                        break;
                    }
                }
                let current = match db::get_job(&pool, job.id).await {
                    Ok(j) => j,
                    Err(e) => {
                        yield Err(e.into());
                        break;
                    }
                };
                let asked = Request {
                    task: req.task.clone(),
                    replica: req.replica,
                    query: LogQuery { tail: if first { req.query.tail } else { None }, ..req.query.clone() },
                };
                match page(reader.as_ref(), &current, &asked, since).await {
                    Ok(p) => {
                        since = p.lines.last().map(|l| l.at.timestamp_millis()).or(since);
                        let ended = p.ended;
                        if first || !p.lines.is_empty() || ended {
                            yield Ok(p);
                        }
                        first = false;
                        if ended {
                            break;
                        }
                    }
                    // An agent that does not answer now may later: say so, and go on.
                    Err(e) => yield Err(e),
                }
                tokio::time::sleep(FOLLOW_EVERY).await;
            }
        })
    }
}
