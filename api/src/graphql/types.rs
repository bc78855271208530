//! GraphQL output types: thin wrappers over the storage rows, converted at the boundary
//! (STYLE habit 4: database rows carry no serde, these types are the wire).

use std::sync::Arc;

use async_graphql::connection::{Connection, Edge, EmptyFields};
use async_graphql::{ComplexObject, Context, Enum, InputObject, Json, SimpleObject, ID};
use chrono::{DateTime, Utc};

use super::fair_share::{self, PoolWeightObj, QueueFairShareObj, ResourceAmount, ShareSettingsObj};
use super::job_status::{self, DispatchObj, JobUtilizationObj, WhyPendingObj};
use super::joined::Joined;
use super::loaders::{
    authorize_read, loaders, required, EventsOfJob, FairShareOfQueue, JobById, MembersOfProject, PagePreload,
    ProjectById, QueueById, QueuesOfProject, QuotasOfQueue, ReplicasOfJob, ReplicasOfTask, TaskSpecById, TasksOfJob,
    UsageOfQueue, UserById, WhyPendingShape,
};
use super::{authorize, pool};
use crate::db::fair_share::Level;
use crate::db::{self, JobFilter};
use crate::domain::{JobState, Role};
use crate::error::{ApiError, ApiResult};

/// A role as the API names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Enum)]
#[graphql(remote = "crate::domain::Role")]
pub enum RoleName {
    Viewer,
    Member,
    ProjectAdmin,
    TenantAdmin,
    PlatformAdmin,
}

/// The roles that can be granted on a project.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Enum)]
pub enum ProjectRole {
    Viewer,
    Member,
    ProjectAdmin,
}

impl From<ProjectRole> for Role {
    fn from(r: ProjectRole) -> Self {
        match r {
            ProjectRole::Viewer => Role::Viewer,
            ProjectRole::Member => Role::Member,
            ProjectRole::ProjectAdmin => Role::ProjectAdmin,
        }
    }
}

#[derive(SimpleObject)]
#[graphql(name = "User")]
pub struct UserObj {
    pub id: ID,
    pub subject: String,
    pub email: Option<String>,
    pub display_name: Option<String>,
    pub platform_admin: bool,
}

impl From<db::User> for UserObj {
    fn from(u: db::User) -> Self {
        UserObj {
            id: ID(u.id.to_string()),
            subject: u.subject,
            email: u.email,
            display_name: u.display_name,
            platform_admin: u.platform_admin,
        }
    }
}

#[derive(SimpleObject)]
#[graphql(name = "Tenant", complex)]
pub struct TenantObj {
    pub id: ID,
    pub slug: String,
    pub name: String,
    pub created_at: DateTime<Utc>,
}

#[ComplexObject]
impl TenantObj {
    /// What the tenant's members may do to others' work; every project of the tenant inherits
    /// it. Set by platform admins (`setTenantRights`).
    async fn rights(&self, ctx: &Context<'_>) -> ApiResult<TenantRightsObj> {
        let id = self.id.parse::<i64>().map_err(|e| ApiError::internal(&e))?;
        Ok(db::tenant_rights::tenant_rights(pool(ctx)?, id).await?.into())
    }

    /// Its weight among tenants and its guarantees in fair share (`setTenantShare`).
    async fn share(&self, ctx: &Context<'_>) -> ApiResult<ShareSettingsObj> {
        let id = self.id.parse::<i64>().map_err(|e| ApiError::internal(&e))?;
        fair_share::settings(ctx, Level::Tenant, id).await
    }

    /// The tenant's monthly budget and its spending (null: none set).
    async fn budget(&self, ctx: &Context<'_>) -> ApiResult<Option<super::budgets::BudgetObj>> {
        // Null too for a caller below tenant admin: a tenant is listed to anyone with a role in
        // one of its projects, its spending only to its admins (and platform admins).
        if self.admin_role(ctx).await?.is_none() {
            return Ok(None);
        }
        let id = self.id.parse::<i64>().map_err(|e| ApiError::internal(&e))?;
        super::budgets::budget_of(ctx, crate::db::budgets::BudgetScope::Tenant(id)).await
    }

    /// The caller's role over the whole tenant: TENANT_ADMIN (creates projects, exports its
    /// usage), PLATFORM_ADMIN, or null (a role in some of its projects only), so clients offer
    /// only what the caller may do.
    async fn my_role(&self, ctx: &Context<'_>) -> ApiResult<Option<RoleName>> {
        self.admin_role(ctx).await
    }
}

impl TenantObj {
    /// The caller's role over the whole tenant (`myRole`): PLATFORM_ADMIN, TENANT_ADMIN, or
    /// `None` for a role in some of its projects only.
    async fn admin_role(&self, ctx: &Context<'_>) -> ApiResult<Option<RoleName>> {
        let user = &super::caller(ctx)?.user;
        if user.platform_admin {
            return Ok(Some(RoleName::PlatformAdmin));
        }
        let id = self.id.parse::<i64>().map_err(|e| ApiError::internal(&e))?;
        Ok(db::role_in_tenant(pool(ctx)?, user.id, id).await?.filter(|r| *r >= Role::TenantAdmin).map(RoleName::from))
    }
}

/// A tenant's rights over priority and preemption.
#[derive(SimpleObject)]
#[graphql(name = "TenantRights")]
pub struct TenantRightsObj {
    /// The highest priority class (low, normal, high, critical) its members may submit at or
    /// raise a job to.
    pub max_priority_class: String,
    /// Whether its jobs may have others' work evicted to make room for them.
    pub may_preempt: bool,
    /// Its jobs may reclaim borrowed work of any tenant (true), or only of their own tenant and
    /// those in `reclaimFrom` (false).
    pub reclaim_from_any: bool,
    /// With `reclaimFromAny` false: the other tenants whose borrowed work its jobs may reclaim.
    pub reclaim_from: Vec<ID>,
}

impl From<crate::domain::TenantRights> for TenantRightsObj {
    fn from(r: crate::domain::TenantRights) -> Self {
        TenantRightsObj {
            max_priority_class: r.max_priority_class.as_str().to_owned(),
            may_preempt: r.may_preempt,
            reclaim_from_any: r.reclaim_from.is_none(),
            reclaim_from: r.reclaim_from.iter().flatten().map(|t| ID(t.to_string())).collect(),
        }
    }
}

impl From<db::Tenant> for TenantObj {
    fn from(t: db::Tenant) -> Self {
        TenantObj { id: ID(t.id.to_string()), slug: t.slug, name: t.name, created_at: t.created_at }
    }
}

/// A project, with the caller's role in it. Only built after authorization.
#[derive(SimpleObject)]
#[graphql(name = "Project", complex)]
pub struct ProjectObj {
    pub id: ID,
    pub tenant_id: ID,
    pub slug: String,
    pub name: String,
    pub my_role: RoleName,
    pub created_at: DateTime<Utc>,
    #[graphql(skip)]
    pub db_id: i64,
}

impl ProjectObj {
    pub fn new(p: db::Project, role: Role) -> Self {
        ProjectObj {
            id: ID(p.id.to_string()),
            tenant_id: ID(p.tenant_id.to_string()),
            slug: p.slug,
            name: p.name,
            my_role: role.into(),
            created_at: p.created_at,
            db_id: p.id,
        }
    }
}

/// Filter of `Project.jobs`.
#[derive(InputObject, Default)]
pub struct JobFilterInput {
    pub states: Option<Vec<JobStateName>>,
    pub queue: Option<String>,
}

/// A direct member of a project and the role granted there.
#[derive(SimpleObject)]
#[graphql(name = "Member")]
pub struct MemberObj {
    pub user: UserObj,
    pub role: RoleName,
}

// Nested fields re-check the caller's role (a resolver must not rely on how its parent was
// reached) through the request's cached roles, and load through the request's DataLoaders.
#[ComplexObject]
impl ProjectObj {
    /// Its weight among its tenant's projects and its guarantees in fair share
    /// (`setProjectShare`).
    async fn share(&self, ctx: &Context<'_>) -> ApiResult<ShareSettingsObj> {
        authorize_read(ctx, self.db_id, Role::Viewer).await?;
        fair_share::settings(ctx, Level::Project, self.db_id).await
    }

    /// The project's monthly budget and its spending (null: none set; `Tenant.budget` may
    /// still bind it).
    async fn budget(&self, ctx: &Context<'_>) -> ApiResult<Option<super::budgets::BudgetObj>> {
        authorize_read(ctx, self.db_id, Role::Viewer).await?;
        super::budgets::budget_of(ctx, crate::db::budgets::BudgetScope::Project(self.db_id)).await
    }

    async fn queues(&self, ctx: &Context<'_>) -> ApiResult<Vec<QueueObj>> {
        authorize_read(ctx, self.db_id, Role::Viewer).await?;
        let queues = loaders(ctx)?.one(QueuesOfProject(self.db_id)).await?.unwrap_or_default();
        Ok(queues.iter().cloned().map(QueueObj::from).collect())
    }

    /// Direct members of the project (tenant admins hold their role through the tenant).
    async fn members(&self, ctx: &Context<'_>) -> ApiResult<Vec<MemberObj>> {
        authorize_read(ctx, self.db_id, Role::Viewer).await?;
        let members = loaders(ctx)?.one(MembersOfProject(self.db_id)).await?.unwrap_or_default();
        Ok(members
            .iter()
            .filter_map(|m| {
                let role = Role::parse(&m.role)?;
                Some(MemberObj { user: m.user.clone().into(), role: role.into() })
            })
            .collect())
    }

    /// Jobs, newest first; `after` is the `endCursor` of the previous page.
    // A page costs `first` times its selection, so a large page of deep jobs hits the limit.
    #[graphql(complexity = "(first.max(1) as usize) * child_complexity")]
    async fn jobs(
        &self,
        ctx: &Context<'_>,
        filter: Option<JobFilterInput>,
        #[graphql(default = 50, validator(minimum = 1, maximum = 500))] first: i32,
        after: Option<String>,
    ) -> ApiResult<Connection<String, Joined<JobObj>, EmptyFields, EmptyFields>> {
        authorize_read(ctx, self.db_id, Role::Viewer).await?;
        let pool = pool(ctx)?;
        let filter = filter.unwrap_or_default();
        let queue_id = match filter.queue {
            Some(name) => Some(db::get_queue_by_name(pool, self.db_id, &name).await?.id),
            None => None,
        };
        let db_filter =
            JobFilter { states: filter.states.unwrap_or_default().into_iter().map(JobState::from).collect(), queue_id };
        let after = parse_cursor(after)?;
        let first = u32::try_from(first).unwrap_or(1);
        let page = db::list_jobs(pool, self.db_id, &db_filter, first, after).await?;
        let refs: Vec<_> = page.jobs.iter().map(|j| (j.id, j.project_id, j.queue_id, j.submitted_by)).collect();
        let preload = super::loaders::prime_job_page(ctx, &refs, false, None, None).await?;
        Ok(connection(page.jobs, preload, page.next_cursor, after.is_some()))
    }
}

#[derive(SimpleObject)]
#[graphql(name = "Queue", complex)]
pub struct QueueObj {
    pub id: ID,
    pub name: String,
    pub weight: f64,
    pub can_borrow: bool,
    /// Aging: after this long waiting, and again after each further period, a job's priority
    /// is raised one class (never to `critical`). `null`: no aging.
    pub max_wait_seconds: Option<i32>,
    /// The runtime limit of a job that names none.
    pub default_runtime_seconds: Option<i32>,
    /// No job of the queue may ask for a longer runtime.
    pub max_runtime_seconds: Option<i32>,
    /// A daily window, `HH:MM-HH:MM` UTC, in which the queue's borrowed work is suspended (and
    /// resumed after it). `null`: never.
    pub suspend_borrowed_during: Option<String>,
    /// GPUs of its `gpu` guarantee kept for interactive workspaces: other work is admitted
    /// as if its guarantee and limit were smaller by what workspaces do not hold of them, so a
    /// workspace starts without waiting behind the queue's batch work. 0: none.
    pub interactive_reserve_gpus: f64,
    #[graphql(skip)]
    pub db_id: i64,
    #[graphql(skip)]
    pub project_id: i64,
}

impl From<db::Queue> for QueueObj {
    fn from(q: db::Queue) -> Self {
        let window = q.class_of_service().borrowed_suspend;
        QueueObj {
            id: ID(q.id.to_string()),
            name: q.name,
            weight: q.weight,
            can_borrow: q.can_borrow,
            max_wait_seconds: q.max_wait_s,
            default_runtime_seconds: q.default_runtime_s,
            max_runtime_seconds: q.max_runtime_s,
            suspend_borrowed_during: window.map(|w| w.to_string()),
            interactive_reserve_gpus: q.interactive_reserve_milli as f64 / 1000.0,
            db_id: q.id,
            project_id: q.project_id,
        }
    }
}

// `domain::WorkloadType` in the API.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Enum)]
#[graphql(name = "WorkloadType", remote = "crate::domain::WorkloadType")]
pub enum WorkloadTypeName {
    /// A batch job: training, evaluation, a pipeline step.
    Batch,
    /// An interactive workspace: one user's notebook-style session.
    Workspace,
    /// Replicas of an inference service.
    Inference,
}

/// What makes a job an interactive workspace (`JobInput.workspace`).
#[derive(SimpleObject)]
#[graphql(name = "Workspace")]
pub struct WorkspaceObj {
    pub port: i32,
    /// Without GPU activity this long it is warned, then stopped or suspended.
    pub idle_timeout_seconds: i64,
    pub idle_action: crate::graphql::job_input::IdleActionInput,
}

/// The workspace settings of a stored spec, if it is a workspace's.
fn workspace_of(spec: &serde_json::Value) -> Option<grus_protocol::wire::WorkspaceSpec> {
    serde_json::from_value(spec.get("workspace")?.clone()).ok()
}

/// How a job checkpoints (`JobInput.checkpoint`) and its last checkpoint.
#[derive(SimpleObject)]
#[graphql(name = "Checkpoint")]
pub struct CheckpointObj {
    pub http_port: Option<i32>,
    pub http_path: Option<String>,
    /// The reference of the last checkpoint acknowledged before the job was stopped to make
    /// room; a resumed run finds it in `GRUS_CHECKPOINT_REF`.
    pub last_reference: Option<String>,
}

/// One quota: amounts of `gpu` and `gpu/<model>` are GPU milli (1000 = one GPU).
#[derive(SimpleObject)]
#[graphql(name = "Quota")]
pub struct QuotaObj {
    pub resource: String,
    pub guaranteed: i64,
    /// `null`: the queue may borrow without bound.
    pub limit: Option<i64>,
}

#[ComplexObject]
impl QueueObj {
    async fn quotas(&self, ctx: &Context<'_>) -> ApiResult<Vec<QuotaObj>> {
        authorize_read(ctx, self.project_id, Role::Viewer).await?;
        let rows = loaders(ctx)?.one(QuotasOfQueue(self.db_id)).await?.unwrap_or_default();
        Ok(rows
            .iter()
            .map(|q| QuotaObj { resource: q.resource.clone(), guaranteed: q.guaranteed, limit: q.limit })
            .collect())
    }

    /// Its fair share of the fleet's GPUs now (tenant, project and queue weights and
    /// guarantees), and what its work holds.
    async fn fair_share(&self, ctx: &Context<'_>) -> ApiResult<QueueFairShareObj> {
        authorize_read(ctx, self.project_id, Role::Viewer).await?;
        let share = loaders(ctx)?.one(FairShareOfQueue(self.db_id)).await?.unwrap_or((0, 0));
        Ok(QueueFairShareObj::of_milli(share))
    }

    /// Its over-quota weight in the node pools where it differs from `weight`.
    async fn pool_weights(&self, ctx: &Context<'_>) -> ApiResult<Vec<PoolWeightObj>> {
        authorize_read(ctx, self.project_id, Role::Viewer).await?;
        let rows = crate::db::pool_weights(pool(ctx)?, self.db_id).await?;
        Ok(rows.into_iter().map(|(pool, weight)| PoolWeightObj { pool, weight }).collect())
    }

    /// What the queue's admitted jobs hold now, per resource key.
    async fn usage(&self, ctx: &Context<'_>) -> ApiResult<Vec<ResourceAmount>> {
        authorize_read(ctx, self.project_id, Role::Viewer).await?;
        let rows = loaders(ctx)?.one(UsageOfQueue(self.db_id)).await?.unwrap_or_default();
        Ok(rows
            .iter()
            .map(|(resource, amount)| ResourceAmount { resource: resource.clone(), amount: *amount })
            .collect())
    }
}

// `domain::JobState` in the API (no doc comment: it would become the SDL's description). The
// derive writes both conversions, so a state added to either side alone does not compile.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Enum)]
#[graphql(name = "JobState", remote = "crate::domain::JobState")]
pub enum JobStateName {
    Pending,
    Admitted,
    Dispatched,
    Rejected,
    Scheduled,
    Running,
    Preempting,
    Preempted,
    Succeeded,
    Failed,
    Cancelled,
    /// Its cluster stopped answering while it ran; it may still be running there.
    Unknown,
    /// Suspended by a user: holds no capacity and no quota until it is resumed.
    Suspended,
}

/// Parses an `after` cursor (a job id, as `endCursor` gives it).
pub(crate) fn parse_cursor(after: Option<String>) -> ApiResult<Option<i64>> {
    match after {
        None => Ok(None),
        Some(c) => match c.parse::<i64>() {
            Ok(id) if id > 0 => Ok(Some(id)),
            _ => Err(ApiError::field("after", "not a cursor of this list")),
        },
    }
}

/// A page of jobs as a connection, each job sharing what the page loaded; cursors are job
/// ids, stable while jobs are added.
pub(crate) fn connection<J: Into<JobObj>>(
    jobs: Vec<J>,
    preload: PagePreload,
    next_cursor: Option<i64>,
    has_previous: bool,
) -> Connection<String, Joined<JobObj>, EmptyFields, EmptyFields> {
    let preload = Arc::new(preload);
    let mut conn = Connection::new(has_previous, next_cursor.is_some());
    conn.edges.extend(jobs.into_iter().map(|j| {
        let mut j: JobObj = j.into();
        j.page = Some(preload.clone());
        Edge::new(j.db_id.to_string(), Joined(j))
    }));
    conn
}

#[derive(SimpleObject)]
#[graphql(name = "Job", complex)]
pub struct JobObj {
    pub id: ID,
    pub project_id: ID,
    pub queue_id: ID,
    pub name: String,
    pub priority: i32,
    pub priority_class: String,
    pub preemptible: bool,
    pub state: JobStateName,
    /// Admitted above the queue's guarantee: preemptible by other queues.
    pub borrowed: bool,
    pub submitted_by: ID,
    pub submitted_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub cluster_id: Option<String>,
    pub epoch: i64,
    /// `spec` and `why_pending` when the row carried them; `None` for a list page's lean
    /// rows, whose documents are loaded only if the query selects them.
    #[graphql(skip)]
    pub docs: Option<JobDocs>,
    #[graphql(skip)]
    pub db_id: i64,
    #[graphql(skip)]
    pub db_project_id: i64,
    #[graphql(skip)]
    pub db_queue_id: i64,
    #[graphql(skip)]
    pub db_submitted_by: i64,
    /// What the job's page loaded for the nested fields (`None` outside a page).
    #[graphql(skip)]
    pub page: Option<std::sync::Arc<super::loaders::PagePreload>>,
}

/// What the `Workload` interface calls (its derive calls a method per field; the GraphQL
/// fields of the same meaning are the resolvers `projectSlug`, `queueName`, ...).
impl JobObj {
    pub(crate) async fn workload_id(&self, _: &Context<'_>) -> async_graphql::Result<ID> {
        Ok(self.id.clone())
    }
    pub(crate) async fn workload_name(&self, _: &Context<'_>) -> async_graphql::Result<String> {
        Ok(self.name.clone())
    }
    pub(crate) async fn workload_kind(&self, ctx: &Context<'_>) -> async_graphql::Result<WorkloadTypeName> {
        Ok(self.with_docs(ctx, |spec, _| crate::domain::WorkloadType::of_spec(spec).into()).await?)
    }
    pub(crate) async fn workload_project_slug(&self, ctx: &Context<'_>) -> async_graphql::Result<String> {
        Ok(required(loaders(ctx)?.one(ProjectById(self.db_project_id)).await?, "project")?.slug)
    }
    pub(crate) async fn workload_queue_name(&self, ctx: &Context<'_>) -> async_graphql::Result<String> {
        Ok(required(loaders(ctx)?.one(QueueById(self.db_queue_id)).await?, "queue")?.name)
    }
    pub(crate) async fn workload_owner_subject(&self, ctx: &Context<'_>) -> async_graphql::Result<String> {
        Ok(required(loaders(ctx)?.one(UserById(self.db_submitted_by)).await?, "user")?.subject)
    }
    pub(crate) async fn workload_phase(&self, _: &Context<'_>) -> async_graphql::Result<String> {
        Ok(crate::domain::JobState::from(self.state).api_name())
    }
    pub(crate) async fn workload_created_at(&self, _: &Context<'_>) -> async_graphql::Result<DateTime<Utc>> {
        Ok(self.submitted_at)
    }
    pub(crate) async fn workload_timeline(
        &self,
        ctx: &Context<'_>,
        limit: i32,
    ) -> async_graphql::Result<Vec<super::workloads::WorkloadEventObj>> {
        self.read_role(ctx).await?;
        let rows = loaders(ctx)?.one(EventsOfJob(self.db_id)).await?.unwrap_or_default();
        Ok(super::workloads::latest(super::workloads::job_timeline(&rows), limit))
    }
    pub(crate) async fn workload_cost(
        &self,
        ctx: &Context<'_>,
    ) -> async_graphql::Result<Option<super::workloads::WorkloadCostObj>> {
        self.read_role(ctx).await?;
        Ok(Some(super::workloads::cost_of_jobs(pool(ctx)?, vec![self.db_id]).await?))
    }
}

/// A job's JSON documents.
pub struct JobDocs {
    pub spec: serde_json::Value,
    pub why_pending: Option<serde_json::Value>,
}

impl From<db::JobHead> for JobObj {
    fn from(j: db::JobHead) -> Self {
        JobObj {
            id: ID(j.id.to_string()),
            project_id: ID(j.project_id.to_string()),
            queue_id: ID(j.queue_id.to_string()),
            name: j.name,
            priority: j.priority,
            priority_class: j.priority_class,
            preemptible: j.preemptible,
            state: j.state.into(),
            borrowed: j.borrowed,
            submitted_by: ID(j.submitted_by.to_string()),
            submitted_at: j.submitted_at,
            updated_at: j.updated_at,
            cluster_id: j.cluster_id,
            epoch: j.epoch,
            docs: None,
            db_id: j.id,
            db_project_id: j.project_id,
            db_queue_id: j.queue_id,
            db_submitted_by: j.submitted_by,
            page: None,
        }
    }
}

impl From<db::Job> for JobObj {
    fn from(j: db::Job) -> Self {
        JobObj {
            id: ID(j.id.to_string()),
            project_id: ID(j.project_id.to_string()),
            queue_id: ID(j.queue_id.to_string()),
            name: j.name,
            priority: j.priority,
            priority_class: j.priority_class,
            preemptible: j.preemptible,
            state: j.state.into(),
            borrowed: j.borrowed,
            submitted_by: ID(j.submitted_by.to_string()),
            submitted_at: j.submitted_at,
            updated_at: j.updated_at,
            cluster_id: j.cluster_id,
            epoch: j.epoch,
            docs: Some(JobDocs { spec: j.spec, why_pending: j.why_pending }),
            db_id: j.id,
            db_project_id: j.project_id,
            db_queue_id: j.queue_id,
            db_submitted_by: j.submitted_by,
            page: None,
        }
    }
}

#[derive(SimpleObject)]
#[graphql(name = "Task", complex)]
pub struct TaskObj {
    pub id: ID,
    pub name: String,
    /// How many replicas the task asks for (`replicas` lists them).
    #[graphql(name = "replicaCount")]
    pub replicas: i32,
    pub state: String,
    #[graphql(skip)]
    pub db_id: i64,
    #[graphql(skip)]
    pub db_project_id: i64,
}

impl TaskObj {
    /// The task `t` of a job in `project_id`.
    pub fn new(t: &db::Task, project_id: i64) -> Self {
        TaskObj {
            id: ID(t.id.to_string()),
            name: t.name.clone(),
            replicas: t.replicas,
            state: t.state.as_str().to_owned(),
            db_id: t.id,
            db_project_id: project_id,
        }
    }
}

#[ComplexObject]
impl TaskObj {
    /// The task as submitted (image, command, env, topology ...). Loaded only when selected,
    /// for every task of the request in one statement.
    async fn spec(&self, ctx: &Context<'_>) -> ApiResult<Json<serde_json::Value>> {
        authorize_read(ctx, self.db_project_id, Role::Viewer).await?;
        let row = required(loaders(ctx)?.one(TaskSpecById(self.db_id)).await?, "task")?;
        Ok(Json(row.spec.to_value()))
    }

    /// The task's replicas, by index.
    #[graphql(name = "replicas")]
    async fn replica_list(&self, ctx: &Context<'_>) -> ApiResult<Vec<ReplicaObj>> {
        authorize_read(ctx, self.db_project_id, Role::Viewer).await?;
        let rows = loaders(ctx)?.one(ReplicasOfTask(self.db_id)).await?.unwrap_or_default();
        Ok(rows.iter().map(ReplicaObj::from).collect())
    }
}

#[derive(SimpleObject)]
#[graphql(name = "Replica", complex)]
pub struct ReplicaObj {
    #[graphql(skip)]
    pub db_id: i64,
    pub id: ID,
    pub task_id: ID,
    pub index: i32,
    pub state: String,
    pub node: Option<String>,
    pub devices: Option<Json<serde_json::Value>>,
    pub cluster_id: Option<String>,
    pub epoch: Option<i64>,
    pub updated_at: DateTime<Utc>,
    /// The main container's exit code once the replica ended, when one is known (a replica
    /// stopped before it ran, or whose node was lost, has none).
    pub exit_code: Option<i32>,
    /// Why the replica ended (null while it has not).
    pub termination: Option<TerminationObj>,
}

/// Why a replica ended.
#[derive(Enum, Clone, Copy, Debug, PartialEq, Eq)]
#[graphql(name = "Termination", remote = "grus_protocol::wire::Termination")]
pub enum TerminationObj {
    /// Exited with code 0.
    Completed,
    /// Exited with a non-zero code of its own.
    Error,
    /// Killed for using more memory than its limit.
    OomKilled,
    /// Evicted by its node (memory or disk pressure) or deleted by Kubernetes for a disruption.
    Evicted,
    /// Ran past its maximum runtime.
    DeadlineExceeded,
    /// Stopped on request: cancelled, preempted or given back by a shrink.
    Stopped,
    /// Its node or pod disappeared under it.
    Lost,
    /// Its container could never start (a bad image name, a missing secret).
    CannotStart,
    Other,
}

impl From<&db::Replica> for ReplicaObj {
    fn from(r: &db::Replica) -> Self {
        ReplicaObj {
            db_id: r.id,
            id: ID(r.id.to_string()),
            task_id: ID(r.task_id.to_string()),
            index: r.index,
            state: r.state.as_str().to_owned(),
            node: r.node.clone(),
            devices: r.devices.clone().map(Json),
            cluster_id: r.cluster_id.clone(),
            epoch: r.epoch,
            updated_at: r.updated_at,
            exit_code: r.exit_code,
            termination: r.termination.as_deref().map(|t| grus_protocol::wire::Termination::parse(t).into()),
        }
    }
}

#[ComplexObject]
impl ReplicaObj {
    /// Its latest CPU, memory, disk and network use while it runs (null before the first
    /// reading and once it ended). Whoever may read the replica may read it.
    async fn usage(&self, ctx: &Context<'_>) -> ApiResult<Option<super::metric_history::ReplicaUsageObj>> {
        if self.state != crate::domain::UnitState::Running.as_str() {
            return Ok(None);
        }
        let row = loaders(ctx)?.one(super::loaders::UsageOfReplica(self.db_id)).await?;
        Ok(row.map(super::metric_history::ReplicaUsageObj::from))
    }
}

#[derive(SimpleObject)]
#[graphql(name = "JobEvent", complex)]
pub struct JobEventObj {
    pub id: ID,
    pub job_id: ID,
    pub task_id: Option<ID>,
    pub replica_id: Option<ID>,
    pub from_state: Option<String>,
    pub to_state: String,
    pub cause: String,
    pub actor: String,
    pub at: DateTime<Utc>,
    pub cluster_id: Option<String>,
    pub epoch: Option<i64>,
}

#[ComplexObject]
impl JobEventObj {
    /// Who acted, as people read it: a user's display name (else subject) for `user:<id>`,
    /// the actor itself otherwise (`system:allocator`, `agent:<cluster>`).
    async fn actor_name(&self, ctx: &Context<'_>) -> ApiResult<String> {
        let Some(id) = self.actor.strip_prefix("user:").and_then(|id| id.parse::<i64>().ok()) else {
            return Ok(self.actor.clone());
        };
        Ok(match loaders(ctx)?.one(UserById(id)).await? {
            Some(u) => u.display_name.unwrap_or(u.subject),
            None => self.actor.clone(),
        })
    }
}

impl JobObj {
    /// The caller's role in the job's project (at least viewer, or the read is refused like
    /// [`authorize_read`]): from the job's page when it has one, else from the request's cache.
    async fn read_role(&self, ctx: &Context<'_>) -> ApiResult<Role> {
        match self.page.as_ref().and_then(|p| p.roles.get(&self.db_project_id)) {
            Some(role) => Ok(*role),
            None => authorize_read(ctx, self.db_project_id, Role::Viewer).await,
        }
    }

    /// The documents: from the row, or loaded (batched) for a lean row.
    async fn with_docs<T>(
        &self,
        ctx: &Context<'_>,
        f: impl FnOnce(&serde_json::Value, Option<&serde_json::Value>) -> T,
    ) -> ApiResult<T> {
        if let Some(d) = &self.docs {
            return Ok(f(&d.spec, d.why_pending.as_ref()));
        }
        self.read_role(ctx).await?;
        let job = required(loaders(ctx)?.one(JobById(self.db_id)).await?, "job")?;
        Ok(f(&job.spec, job.why_pending.as_ref()))
    }
}

#[ComplexObject]
impl JobObj {
    /// The job as submitted (wire JobSpec, snake_case).
    async fn spec(&self, ctx: &Context<'_>) -> ApiResult<Json<serde_json::Value>> {
        self.with_docs(ctx, |spec, _| Json(spec.clone())).await
    }

    /// What kind of work the job is.
    async fn workload_type(&self, ctx: &Context<'_>) -> ApiResult<WorkloadTypeName> {
        self.with_docs(ctx, |spec, _| crate::domain::WorkloadType::of_spec(spec).into()).await
    }

    /// Its workspace settings; `null` for a batch job.
    async fn workspace(&self, ctx: &Context<'_>) -> ApiResult<Option<WorkspaceObj>> {
        let workspace = self.with_docs(ctx, |spec, _| workspace_of(spec)).await?;
        Ok(workspace.map(|w| WorkspaceObj {
            port: i32::from(w.port),
            idle_timeout_seconds: i64::try_from(w.idle_after_s).unwrap_or(i64::MAX),
            idle_action: w.idle_action.into(),
        }))
    }

    /// How the job checkpoints and the last checkpoint it wrote before being stopped to make
    /// room (the next run resumes from it); `null`: it does not checkpoint.
    async fn checkpoint(&self, ctx: &Context<'_>) -> ApiResult<Option<CheckpointObj>> {
        self.with_docs(ctx, |spec, _| {
            let c = spec.get("checkpoint")?.as_object()?;
            let http = c.get("http");
            Some(CheckpointObj {
                http_port: http.and_then(|h| h["port"].as_i64()).and_then(|p| i32::try_from(p).ok()),
                http_path: http.and_then(|h| h["path"].as_str()).map(str::to_owned),
                last_reference: c.get("resume_from").and_then(|r| r.as_str()).map(str::to_owned),
            })
        })
        .await
    }

    /// Why the job is not yet admitted or placed, per cluster and stage.
    async fn why_pending(&self, ctx: &Context<'_>) -> ApiResult<Option<WhyPendingObj>> {
        let Some(stored) = self.with_docs(ctx, |_, why| why.cloned()).await? else { return Ok(None) };
        // The allocator stores a waiting job's reasons once per job shape and refers to them.
        let why = match crate::db::dispatch::referenced_shape(&stored) {
            Some(shape) => loaders(ctx)?.one(WhyPendingShape(shape)).await?,
            None => Some(stored),
        };
        Ok(why.map(WhyPendingObj::from_json))
    }

    async fn project(&self, ctx: &Context<'_>) -> ApiResult<Joined<ProjectObj>> {
        let role = self.read_role(ctx).await?;
        let project = match self.page.as_ref().and_then(|p| p.projects.get(&self.db_project_id)) {
            Some(project) => project.clone(),
            None => required(loaders(ctx)?.one(ProjectById(self.db_project_id)).await?, "project")?,
        };
        Ok(Joined(ProjectObj::new(project, role)))
    }

    async fn queue(&self, ctx: &Context<'_>) -> ApiResult<Joined<QueueObj>> {
        self.read_role(ctx).await?;
        let queue = match self.page.as_ref().and_then(|p| p.queues.get(&self.db_queue_id)) {
            Some(queue) => queue.clone(),
            None => required(loaders(ctx)?.one(QueueById(self.db_queue_id)).await?, "queue")?,
        };
        Ok(Joined(queue.into()))
    }

    /// Its project's slug (the `Workload` interface's).
    async fn project_slug(&self, ctx: &Context<'_>) -> async_graphql::Result<String> {
        self.workload_project_slug(ctx).await
    }

    /// Its queue's name (the `Workload` interface's).
    async fn queue_name(&self, ctx: &Context<'_>) -> async_graphql::Result<String> {
        self.workload_queue_name(ctx).await
    }

    /// The submitter's subject (the `Workload` interface's).
    async fn owner_subject(&self, ctx: &Context<'_>) -> async_graphql::Result<String> {
        self.workload_owner_subject(ctx).await
    }

    /// Where it serves while it runs: a workspace's URL, a service replica's address (in-cluster:
    /// its Kubernetes Service's DNS name; in the sim, a made-up `.invalid` one). Null for a batch
    /// job, or before it runs.
    async fn endpoint(&self, ctx: &Context<'_>) -> ApiResult<Option<String>> {
        if self.state != JobStateName::Running {
            return Ok(None);
        }
        Ok(db::services::running_endpoint(pool(ctx)?, self.db_id).await?)
    }

    /// Its state as a name (`RUNNING`, ...): the `Workload` interface's phase.
    async fn phase(&self) -> String {
        crate::domain::JobState::from(self.state).api_name()
    }

    /// When it was submitted (the `Workload` interface's).
    async fn created_at(&self) -> DateTime<Utc> {
        self.submitted_at
    }

    /// The user who submitted the job.
    async fn submitter(&self, ctx: &Context<'_>) -> ApiResult<UserObj> {
        self.read_role(ctx).await?;
        Ok(required(loaders(ctx)?.one(UserById(self.db_submitted_by)).await?, "user")?.into())
    }

    async fn tasks(&self, ctx: &Context<'_>) -> ApiResult<Vec<Joined<TaskObj>>> {
        self.read_role(ctx).await?;
        let rows = match self.page.as_ref().and_then(|p| p.tasks.get(&self.db_id)) {
            Some(rows) => rows.clone(),
            None => loaders(ctx)?.one(TasksOfJob(self.db_id)).await?.unwrap_or_default(),
        };
        Ok(rows.iter().map(|t| Joined(TaskObj::new(t, self.db_project_id))).collect())
    }

    async fn replicas(&self, ctx: &Context<'_>) -> ApiResult<Vec<ReplicaObj>> {
        self.read_role(ctx).await?;
        let rows = loaders(ctx)?.one(ReplicasOfJob(self.db_id)).await?.unwrap_or_default();
        Ok(rows.iter().map(ReplicaObj::from).collect())
    }

    /// GPU utilization from the profiler (null until a Metrics sample covered the job).
    async fn utilization(&self, ctx: &Context<'_>) -> ApiResult<Option<JobUtilizationObj>> {
        authorize(ctx, self.db_project_id, Role::Viewer).await?;
        job_status::job_utilization(ctx, self.db_id).await
    }

    /// Every dispatch to a cluster, oldest epoch first.
    async fn dispatches(&self, ctx: &Context<'_>) -> ApiResult<Vec<DispatchObj>> {
        authorize(ctx, self.db_project_id, Role::Viewer).await?;
        job_status::dispatches(ctx, self.db_id).await
    }

    /// Its place in its queue's line while it waits to start (1: next in its queue), in the
    /// order the allocator serves a queue: priority, then workspaces, then age. Null once it
    /// runs, ends or is suspended.
    async fn queue_position(&self, ctx: &Context<'_>) -> ApiResult<Option<i32>> {
        self.read_role(ctx).await?;
        if !crate::domain::JobState::from(self.state).waits_to_start() {
            return Ok(None);
        }
        Ok(db::queue_position(pool(ctx)?, self.db_id).await?.map(|p| i32::try_from(p).unwrap_or(i32::MAX)))
    }

    /// Its metrics over `[since, until)` (default: the hour before `until`, which defaults to
    /// now): its GPUs' utilization and memory, averaged and maxed per interval over the devices
    /// its running replicas held, and its replicas' total CPU, memory, disk and network use.
    /// VALIDATION on `since` when it is not before `until`.
    async fn metric_history(
        &self,
        ctx: &Context<'_>,
        since: Option<DateTime<Utc>>,
        until: Option<DateTime<Utc>>,
    ) -> ApiResult<super::metric_history::MetricHistoryObj> {
        self.read_role(ctx).await?;
        super::metric_history::history(ctx, db::metric_history::Subject::Job(self.db_id), since, until).await
    }

    /// How long it is expected to run, from the finished jobs most like it (same name pattern,
    /// image, shape, user, project; see `RuntimePrediction.basis`), at most its maximum
    /// runtime. Null while nothing like it has finished.
    async fn predicted_runtime(&self, ctx: &Context<'_>) -> ApiResult<Option<super::runtime::RuntimePredictionObj>> {
        let spec = self.with_docs(ctx, |spec, _| spec.clone()).await?;
        super::runtime::predicted_runtime(ctx, &spec).await
    }

    /// When it is expected to start while it waits (see `StartEstimate.at`). Null once it runs,
    /// ends or is suspended, or when no estimate can be made: it needs more GPUs than the
    /// healthy clusters have, or waits behind work whose end nothing predicts.
    async fn estimated_start(&self, ctx: &Context<'_>) -> ApiResult<Option<super::runtime::StartEstimateObj>> {
        self.read_role(ctx).await?;
        if !crate::domain::JobState::from(self.state).waits_to_start() {
            return Ok(None);
        }
        super::runtime::estimated_start(ctx, self.db_id).await
    }

    /// The `Workload` interface's timeline: its events as entries, the latest `limit` (default
    /// 100, up to 1000), oldest first.
    async fn timeline(
        &self,
        ctx: &Context<'_>,
        #[graphql(default = 100)] limit: i32,
    ) -> async_graphql::Result<Vec<super::workloads::WorkloadEventObj>> {
        self.workload_timeline(ctx, limit).await
    }

    /// What its GPUs have cost since it was submitted (the `Workload` interface's).
    async fn cost(&self, ctx: &Context<'_>) -> async_graphql::Result<Option<super::workloads::WorkloadCostObj>> {
        self.workload_cost(ctx).await
    }

    /// The append-only event trail, oldest first.
    async fn events(&self, ctx: &Context<'_>) -> ApiResult<Vec<JobEventObj>> {
        self.read_role(ctx).await?;
        let rows = loaders(ctx)?.one(EventsOfJob(self.db_id)).await?.unwrap_or_default();
        Ok(rows.iter().cloned().map(JobEventObj::from).collect())
    }
}

impl From<db::JobEvent> for JobEventObj {
    fn from(e: db::JobEvent) -> Self {
        JobEventObj {
            id: ID(e.id.to_string()),
            job_id: ID(e.job_id.to_string()),
            task_id: e.task_id.map(|i| ID(i.to_string())),
            replica_id: e.replica_id.map(|i| ID(i.to_string())),
            from_state: e.from_state,
            to_state: e.to_state,
            cause: e.cause,
            actor: e.actor,
            at: e.at,
            cluster_id: e.cluster_id,
            epoch: e.epoch,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors() {
        assert_eq!(parse_cursor(None), Ok(None));
        assert_eq!(parse_cursor(Some("42".into())), Ok(Some(42)));
        assert!(parse_cursor(Some("abc".into())).is_err());
        assert!(parse_cursor(Some("-1".into())).is_err());
    }
}
