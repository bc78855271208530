//! Per-request DataLoaders: nested fields (job → project, queue, submitter, tasks, replicas,
//! events; task → spec, replicas; project → queues, members; queue → quotas, usage) and the
//! caller's project roles are loaded in batches, one statement per field and nesting level
//! instead of one per parent row (the N+1 problem).
//!
//! A [`RequestLoaders`] lives exactly as long as one GraphQL request and caches what it
//! loaded: within a request the caller's role in a project is read once however many nested
//! fields re-check it, and nothing cached outlives the request (a role revoked between two
//! requests takes effect at the next one).

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::Arc;

use async_graphql::dataloader::{DataLoader, HashMapCache, Loader};
use async_graphql::Context;
use sqlx::PgPool;

use super::{caller, pool};
use crate::db::batch::{self, Member};
use crate::db::{Job, JobEvent, Project, Queue, Quota, Replica, Task, TaskSpec, User};
use crate::domain::Role;
use crate::error::{ApiError, ApiResult};

/// The batch functions behind every loader, bound to the caller (roles are the caller's).
pub struct PgLoader {
    pool: PgPool,
    user_id: i64,
}

/// The caller's effective role in a project.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RoleIn(pub i64);
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ProjectById(pub i64);
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct QueueById(pub i64);
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct UserById(pub i64);
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct JobById(pub i64);
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TasksOfJob(pub i64);
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TaskSpecById(pub i64);
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ReplicasOfJob(pub i64);
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ReplicasOfTask(pub i64);
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EventsOfJob(pub i64);
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct QueuesOfProject(pub i64);
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MembersOfProject(pub i64);
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct QuotasOfQueue(pub i64);
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct UsageOfQueue(pub i64);
/// A queue's fair share of the fleet's GPUs and what its work holds, in milli (the tree is
/// loaded once for every queue of the request's batch).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FairShareOfQueue(pub i64);
/// A replica's latest resource reading, by replica id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct UsageOfReplica(pub i64);
/// The whyPending stored for a job shape (`dispatcher::why`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct WhyPendingShape(pub i64);

/// Groups rows under their keys; every requested key gets an entry (empty when it has no
/// rows), so "no rows" is an empty list and not a missing value.
fn group<K: Copy + Eq + Hash, V>(keys: &[K], rows: impl IntoIterator<Item = (K, V)>) -> HashMap<K, Arc<Vec<V>>> {
    let mut out: HashMap<K, Vec<V>> = keys.iter().map(|k| (*k, Vec::new())).collect();
    for (k, v) in rows {
        if let Some(list) = out.get_mut(&k) {
            list.push(v);
        }
    }
    out.into_iter().map(|(k, v)| (k, Arc::new(v))).collect()
}

fn ids<K: Copy>(keys: &[K], id: impl Fn(K) -> i64) -> Vec<i64> {
    keys.iter().map(|k| id(*k)).collect()
}

impl Loader<RoleIn> for PgLoader {
    type Value = Role;
    type Error = ApiError;

    async fn load(&self, keys: &[RoleIn]) -> Result<HashMap<RoleIn, Role>, ApiError> {
        let roles = batch::roles_in_projects(&self.pool, self.user_id, Some(&ids(keys, |k| k.0))).await?;
        Ok(roles.into_iter().map(|(p, r)| (RoleIn(p), r)).collect())
    }
}

/// Loaders of rows by primary key: `$key` → `$value` through `$fetch`.
macro_rules! by_id {
    ($key:ident, $value:ty, $fetch:path) => {
        impl Loader<$key> for PgLoader {
            type Value = $value;
            type Error = ApiError;

            async fn load(&self, keys: &[$key]) -> Result<HashMap<$key, $value>, ApiError> {
                let rows = $fetch(&self.pool, &ids(keys, |k| k.0)).await?;
                Ok(rows.into_iter().map(|r| ($key(r.id), r)).collect())
            }
        }
    };
}

by_id!(ProjectById, Project, batch::projects);
by_id!(QueueById, Queue, batch::queues);
by_id!(UserById, User, batch::users);
by_id!(JobById, Job, batch::jobs);
by_id!(TaskSpecById, TaskSpec, batch::task_specs);

/// Loaders of child lists: `$key` → `Arc<Vec<$value>>` through `$fetch`, grouped by `$parent`.
macro_rules! children {
    ($key:ident, $value:ty, $fetch:path, |$row:ident| $parent:expr) => {
        impl Loader<$key> for PgLoader {
            type Value = Arc<Vec<$value>>;
            type Error = ApiError;

            async fn load(&self, keys: &[$key]) -> Result<HashMap<$key, Arc<Vec<$value>>>, ApiError> {
                let rows = $fetch(&self.pool, &ids(keys, |k| k.0)).await?;
                Ok(group(keys, rows.into_iter().map(|$row| ($key($parent), $row))))
            }
        }
    };
}

children!(TasksOfJob, Task, batch::tasks_of_jobs, |t| t.job_id);
children!(ReplicasOfJob, Replica, batch::replicas_of_jobs, |r| r.job_id);
children!(ReplicasOfTask, Replica, batch::replicas_of_tasks, |r| r.task_id);
children!(EventsOfJob, JobEvent, batch::events_of_jobs, |e| e.job_id);
children!(QueuesOfProject, Queue, batch::queues_of_projects, |q| q.project_id);
children!(MembersOfProject, Member, batch::members_of_projects, |m| m.project_id);

impl Loader<UsageOfReplica> for PgLoader {
    type Value = batch::ReplicaUsageRow;
    type Error = ApiError;

    async fn load(&self, keys: &[UsageOfReplica]) -> Result<HashMap<UsageOfReplica, batch::ReplicaUsageRow>, ApiError> {
        let rows = batch::replica_usage(&self.pool, &ids(keys, |k| k.0)).await?;
        Ok(rows.into_iter().map(|r| (UsageOfReplica(r.replica_id), r)).collect())
    }
}

impl Loader<WhyPendingShape> for PgLoader {
    type Value = serde_json::Value;
    type Error = ApiError;

    async fn load(&self, keys: &[WhyPendingShape]) -> Result<HashMap<WhyPendingShape, serde_json::Value>, ApiError> {
        let rows = crate::db::dispatch::why_shapes(&self.pool, &ids(keys, |k| k.0)).await?;
        Ok(rows.into_iter().map(|(id, v)| (WhyPendingShape(id), v)).collect())
    }
}

impl Loader<QuotasOfQueue> for PgLoader {
    type Value = Arc<Vec<Quota>>;
    type Error = ApiError;

    async fn load(&self, keys: &[QuotasOfQueue]) -> Result<HashMap<QuotasOfQueue, Arc<Vec<Quota>>>, ApiError> {
        let rows = batch::quotas_of_queues(&self.pool, &ids(keys, |k| k.0)).await?;
        Ok(group(keys, rows.into_iter().map(|(q, quota)| (QuotasOfQueue(q), quota))))
    }
}

impl Loader<UsageOfQueue> for PgLoader {
    type Value = Arc<Vec<(String, i64)>>;
    type Error = ApiError;

    async fn load(&self, keys: &[UsageOfQueue]) -> Result<HashMap<UsageOfQueue, Self::Value>, ApiError> {
        let rows = batch::usage_of_queues(&self.pool, &ids(keys, |k| k.0)).await?;
        Ok(group(keys, rows.into_iter().map(|(q, resource, amount)| (UsageOfQueue(q), (resource, amount)))))
    }
}

impl Loader<FairShareOfQueue> for PgLoader {
    type Value = (u64, u64);
    type Error = ApiError;

    async fn load(&self, keys: &[FairShareOfQueue]) -> Result<HashMap<FairShareOfQueue, Self::Value>, ApiError> {
        let shares = crate::db::fair_share::fleet_shares_now(&self.pool).await?;
        Ok(keys.iter().filter_map(|k| Some((*k, shares.of_stored_queue(k.0)?))).collect())
    }
}

/// The loaders of one request (cheap to clone: one shared cache).
#[derive(Clone)]
pub struct RequestLoaders(Arc<DataLoader<PgLoader, HashMapCache>>);

impl RequestLoaders {
    /// Loaders for `user_id`'s request. Batches are run on the tokio runtime.
    pub fn new(pool: PgPool, user_id: i64) -> Self {
        RequestLoaders(Arc::new(DataLoader::with_cache(
            PgLoader { pool, user_id },
            tokio::spawn,
            HashMapCache::default(),
        )))
    }

    /// Loads one value; `None` when the key has no row.
    pub async fn one<K>(&self, key: K) -> ApiResult<Option<<PgLoader as Loader<K>>::Value>>
    where
        K: Send + Sync + Hash + Eq + Clone + 'static,
        PgLoader: Loader<K, Error = ApiError>,
    {
        self.0.load_one(key).await
    }

    /// Loads many keys with one statement now (not after the DataLoader's batching delay) and
    /// puts them in the request's cache, where the fields resolved afterwards find them.
    pub async fn prime<K>(&self, keys: Vec<K>) -> ApiResult<HashMap<K, <PgLoader as Loader<K>>::Value>>
    where
        K: Send + Sync + Hash + Eq + Clone + 'static,
        PgLoader: Loader<K, Error = ApiError>,
    {
        let values = self.0.loader().load(&keys).await?;
        self.0.feed_many(values.iter().map(|(k, v)| (k.clone(), v.clone()))).await;
        Ok(values)
    }

    /// Puts values found otherwise (by a statement that had them anyway) in the request's cache.
    pub async fn feed<K>(&self, values: impl IntoIterator<Item = (K, <PgLoader as Loader<K>>::Value)>)
    where
        K: Send + Sync + Hash + Eq + Clone + 'static,
        PgLoader: Loader<K, Error = ApiError>,
    {
        self.0.feed_many(values).await;
    }

    /// The caller's role in `project_id`, `None` when it has none.
    pub async fn role(&self, project_id: i64) -> ApiResult<Option<Role>> {
        self.one(RoleIn(project_id)).await
    }
}

/// The request's loaders, or (for a context built without them, e.g. a schema executed
/// directly) fresh ones for this one call: correct, only not batched across fields.
pub(crate) fn loaders(ctx: &Context<'_>) -> ApiResult<RequestLoaders> {
    if let Some(l) = ctx.data_opt::<RequestLoaders>() {
        return Ok(l.clone());
    }
    Ok(RequestLoaders::new(pool(ctx)?.clone(), caller(ctx)?.user.id))
}

/// Authorization for reads reached through a parent object: the caller's role in the
/// project from the request's cache (one batched query per request, not one per row).
/// NOT_FOUND without a role, FORBIDDEN below `min`, like [`super::authorize`].
pub(crate) async fn authorize_read(ctx: &Context<'_>, project_id: i64, min: Role) -> ApiResult<Role> {
    caller(ctx)?;
    let role = loaders(ctx)?.role(project_id).await?.ok_or(ApiError::NotFound("project"))?;
    if role < min {
        return Err(ApiError::Forbidden);
    }
    Ok(role)
}

/// What a page of jobs loaded for its nested fields, shared by the page's job objects: they
/// read it directly instead of asking the DataLoader once per field and job (a lock, a hash
/// lookup and an allocation each, 4 per job on a typical page).
#[derive(Default)]
pub struct PagePreload {
    /// The caller's role in each project of the page (absent: none).
    pub roles: HashMap<i64, Role>,
    pub projects: HashMap<i64, Project>,
    pub queues: HashMap<i64, Queue>,
    pub tasks: HashMap<i64, Arc<Vec<Task>>>,
}

/// Loads, for a page of jobs, every nested field the query selects under `edges.node`, one
/// statement per field, before the children resolve; the children then read the returned
/// [`PagePreload`] or the request's cache. Without this the DataLoader's batching window
/// decides how keys are grouped: list items are resolved in chunks (the executor yields
/// between them), so a page of 100 could take several batches per field depending on timing,
/// each after the loader's delay.
///
/// `jobs` are (id, project, queue, submitter); `lean`: the rows lack `spec`/`whyPending`;
/// `known_roles` and `known_tasks`: the caller's roles in the page's projects and the jobs'
/// tasks, when the page's statement read them.
pub(crate) async fn prime_job_page(
    ctx: &Context<'_>,
    jobs: &[(i64, i64, i64, i64)],
    lean: bool,
    known_roles: Option<&HashMap<i64, Role>>,
    known_tasks: Option<HashMap<i64, Vec<Task>>>,
) -> ApiResult<PagePreload> {
    let node = ctx.look_ahead().field("edges").field("node");
    let has = |f: &str| node.field(f).exists();
    let has_docs = lean && (has("spec") || has("whyPending"));
    let nested = ["project", "queue", "submitter", "tasks", "replicas", "events", "spec", "whyPending"];
    if jobs.is_empty() || !nested.iter().any(|f| has(f)) {
        return Ok(PagePreload::default());
    }
    let l = loaders(ctx)?;
    let mut projects: Vec<i64> = jobs.iter().map(|j| j.1).collect();
    projects.sort_unstable();
    projects.dedup();
    let job_ids: Vec<i64> = jobs.iter().map(|j| j.0).collect();
    let mut queues: Vec<i64> = jobs.iter().map(|j| j.2).collect();
    queues.sort_unstable();
    queues.dedup();
    let (has_tasks, has_project, has_queue) = (has("tasks"), has("project"), has("queue"));
    let (has_submitter, has_replicas, has_events) = (has("submitter"), has("replicas"), has("events"));
    // Independent statements, run concurrently (each on its own pooled connection).
    let (roles, tasks, projects, queues, ..) = tokio::try_join!(
        // Every nested field re-checks the caller's role in the job's project.
        async {
            match known_roles {
                Some(roles) if projects.iter().all(|p| roles.contains_key(p)) => {
                    let roles: HashMap<RoleIn, Role> = roles.iter().map(|(p, r)| (RoleIn(*p), *r)).collect();
                    l.feed(roles.clone()).await;
                    Ok(roles)
                }
                _ => l.prime(projects.iter().map(|p| RoleIn(*p)).collect()).await,
            }
        },
        async {
            match known_tasks {
                Some(tasks) => Ok(tasks.into_iter().map(|(job, tasks)| (TasksOfJob(job), Arc::new(tasks))).collect()),
                None if has_tasks => l.prime(job_ids.iter().map(|j| TasksOfJob(*j)).collect()).await,
                None => Ok(HashMap::new()),
            }
        },
        async {
            if !has_project {
                return Ok(HashMap::new());
            }
            l.prime(projects.iter().map(|p| ProjectById(*p)).collect()).await
        },
        async {
            if !has_queue {
                return Ok(HashMap::new());
            }
            l.prime(queues.iter().map(|q| QueueById(*q)).collect()).await
        },
        async {
            if has_submitter {
                l.prime(jobs.iter().map(|j| UserById(j.3)).collect()).await?;
            }
            Ok::<_, ApiError>(())
        },
        async {
            if has_replicas {
                l.prime(job_ids.iter().map(|j| ReplicasOfJob(*j)).collect()).await?;
            }
            Ok::<_, ApiError>(())
        },
        async {
            if has_events {
                l.prime(job_ids.iter().map(|j| EventsOfJob(*j)).collect()).await?;
            }
            if has_docs {
                l.prime(job_ids.iter().map(|j| JobById(*j)).collect()).await?;
            }
            Ok::<_, ApiError>(())
        },
    )?;
    if node.field("tasks").field("replicas").exists() {
        let task_ids: Vec<ReplicasOfTask> =
            tasks.values().flat_map(|ts| ts.iter().map(|t| ReplicasOfTask(t.id)).collect::<Vec<_>>()).collect();
        l.prime(task_ids).await?;
    }
    Ok(PagePreload {
        roles: roles.into_iter().map(|(k, v)| (k.0, v)).collect(),
        projects: projects.into_iter().map(|(k, v)| (k.0, v)).collect(),
        queues: queues.into_iter().map(|(k, v)| (k.0, v)).collect(),
        tasks: tasks.into_iter().map(|(k, v)| (k.0, v)).collect(),
    })
}

/// A row a parent points at by foreign key; its absence is a broken reference, not input.
pub(crate) fn required<T>(value: Option<T>, what: &'static str) -> ApiResult<T> {
    value.ok_or_else(|| ApiError::internal(&format!("dangling reference to a {what}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_keeps_every_key_and_row_order() {
        let keys = [TasksOfJob(1), TasksOfJob(2), TasksOfJob(3)];
        let rows = [(TasksOfJob(2), "a"), (TasksOfJob(1), "b"), (TasksOfJob(2), "c"), (TasksOfJob(9), "x")];
        let g = group(&keys, rows);
        assert_eq!(g.len(), 3);
        assert_eq!(*g[&TasksOfJob(1)], vec!["b"]);
        assert_eq!(*g[&TasksOfJob(2)], vec!["a", "c"]);
        assert!(g[&TasksOfJob(3)].is_empty());
    }
}
