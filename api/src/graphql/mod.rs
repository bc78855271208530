//! The GraphQL API (async-graphql): schema construction, the per-request context and the
//! authorization helpers every resolver goes through (invariant 7).
//!
//! Authorization is by project role: `authorize` answers NOT_FOUND when the caller has no
//! role at all in the project (so ids of other tenants do not leak) and FORBIDDEN when the
//! role is too weak.

pub mod auth;
pub mod billing;
mod budgets;
pub mod clusters;
pub mod documents;
mod fair_share;
pub mod job_input;
mod job_status;
mod jobs;
pub mod joined;
pub mod loaders;
pub mod logs;
mod metric_history;
mod mutation;
mod operations;
mod plain_fields;
mod query;
mod runtime;
mod scheduling;
pub mod services;
mod subscription;
mod tokens;
mod types;
pub mod workloads;

use std::sync::Arc;

use async_graphql::futures_util::stream::{BoxStream, StreamExt};
use async_graphql::{Context, Data, Executor, MergedObject, MergedSubscription, Request, Response, Schema};
use sqlx::PgPool;

use crate::admission::batcher::{AdmissionBatcher, AdmissionMetrics, BatcherConfig};
use crate::db::{self, Project, User};
use crate::domain::Role;
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::job_cache::{JobCache, JobCacheLimits};
use crate::logs::LogReader;
use crate::notify::Notifier;
use clusters::AgentInstall;

// The query root: one component per area (each area's module owns its resolvers).
#[derive(MergedObject, Default)]
pub struct Query(
    query::CoreQuery,
    billing::BillingQuery,
    tokens::TokenQuery,
    clusters::ClusterQuery,
    jobs::JobsQuery,
    services::ServiceQuery,
    logs::LogsQuery,
    operations::OperationsQuery,
);

// The mutation root, merged like `Query`.
#[derive(MergedObject, Default)]
pub struct Mutation(
    mutation::CoreMutation,
    billing::BillingMutation,
    budgets::BudgetMutation,
    operations::OperationsMutation,
    tokens::TokenMutation,
    clusters::ClusterMutation,
    scheduling::SchedulingMutation,
    services::ServiceMutation,
);

// The subscription root (served at /graphql/ws), merged like `Query`.
#[derive(MergedSubscription, Default)]
pub struct Subscription(subscription::CoreSubscription, logs::LogsSubscription);

/// Limits applied to every GraphQL request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GraphqlLimits {
    pub max_depth: usize,
    pub max_complexity: usize,
    pub introspection: bool,
}

impl GraphqlLimits {
    /// Production defaults: introspection off.
    pub const fn production() -> Self {
        GraphqlLimits { max_depth: 12, max_complexity: 5000, introspection: false }
    }
}

/// The authenticated caller of one request (absent from the context when anonymous).
#[derive(Clone, Debug)]
pub struct Caller {
    pub user: User,
}

impl Caller {
    /// `user:<id>`: the actor recorded on events.
    pub fn actor(&self) -> String {
        format!("user:{}", self.user.id)
    }
}

/// Builds the schema with its limits; `pool` is shared by every resolver. Subscriptions get
/// a change feed of their own, whose listener starts with the first subscriber.
pub fn build_schema(pool: Option<PgPool>, limits: GraphqlLimits) -> GrusSchema {
    let notifier = pool.clone().map(Notifier::new);
    build_schema_with(pool, limits, notifier)
}

/// Like [`build_schema`], with the process's change feed (one `LISTEN` per process).
/// `registerCluster` names the agent's defaults ([`AgentInstall::default`]). With a pool,
/// submissions go through an [`AdmissionBatcher`] of default settings, whose workers start on
/// the current tokio runtime.
pub fn build_schema_with(pool: Option<PgPool>, limits: GraphqlLimits, notifier: Option<Notifier>) -> GrusSchema {
    let batcher = pool
        .clone()
        .map(|pool| AdmissionBatcher::start(pool, BatcherConfig::default(), Arc::new(AdmissionMetrics::default())));
    let jobs = pool.clone().map(|pool| JobCache::new(pool, JobCacheLimits::default()));
    build_server_schema(pool, limits, notifier, AgentInstall::default(), batcher, jobs, None)
}

/// The server's schema: [`build_schema_with`] plus what `registerCluster`'s install command
/// names (`--agent-redis-url`, `--agent-chart`) and the server's admission batcher. Without a
/// batcher, `submitJob` admits each job in a transaction of its own; without a jobs cache,
/// every `jobs` page is read from PostgreSQL; without a log reader, `jobLogs` answers that
/// this server reads no logs.
pub fn build_server_schema(
    pool: Option<PgPool>,
    limits: GraphqlLimits,
    notifier: Option<Notifier>,
    agents: AgentInstall,
    admission: Option<AdmissionBatcher>,
    jobs: Option<JobCache>,
    logs: Option<LogReader>,
) -> GrusSchema {
    let mut builder = Schema::build(Query::default(), Mutation::default(), Subscription::default())
        .limit_depth(limits.max_depth)
        .limit_complexity(limits.max_complexity);
    if !limits.introspection {
        builder = builder.disable_introspection();
    }
    if let Some(pool) = pool {
        builder = builder
            .data(Arc::new(crate::runtime::RuntimeHistory::new(pool.clone())))
            .data(Arc::new(crate::fleet_shapes::FleetShapes::new(pool.clone())))
            .data(pool);
    }
    if let Some(notifier) = notifier {
        builder = builder.data(notifier);
    }
    if let Some(admission) = admission {
        builder = builder.data(admission);
    }
    if let Some(jobs) = jobs {
        builder = builder.data(jobs);
    }
    if let Some(logs) = logs {
        builder = builder.data(logs);
    }
    GrusSchema { schema: builder.data(agents).finish(), documents: Arc::new(documents::DocumentCache::default()) }
}

/// Prepares one request for execution: the caller (absent when anonymous) and, for a caller,
/// the request's DataLoaders and role cache ([`loaders::RequestLoaders`]).
pub fn prepare_request(mut req: Request, caller: Option<Caller>, pool: &PgPool) -> Request {
    if let Some(caller) = caller {
        req = req.data(loaders::RequestLoaders::new(pool.clone(), caller.user.id)).data(caller);
    }
    req
}

/// The schema as served: async-graphql's [`Schema`] whose responses give
/// `extensions.code = VALIDATION` to every error that carries no code. Those are raised by
/// async-graphql itself before or around the resolvers (syntax, unknown fields, argument
/// validators, the depth and complexity limits, disabled introspection), i.e. the request is
/// invalid; resolver errors always carry their own code ([`ApiError`]).
///
/// The mapping is done on the response rather than in a schema extension: registering any
/// extension sends every field through async-graphql's instrumented resolve path, which
/// cost more CPU than the resolvers themselves on list queries (BENCHMARKS.md).
///
/// It also holds the process's parsed documents ([`documents::DocumentCache`]), which the
/// HTTP handler parses requests through.
#[derive(Clone)]
pub struct GrusSchema {
    schema: Schema<Query, Mutation, Subscription>,
    documents: Arc<documents::DocumentCache>,
}

impl GrusSchema {
    pub async fn execute(&self, request: impl Into<Request>) -> Response {
        with_error_codes(self.schema.execute(request).await)
    }

    /// A subscription's responses (a query or mutation gives one).
    pub fn execute_stream(&self, request: impl Into<Request>) -> BoxStream<'static, Response> {
        self.schema.execute_stream(request).map(with_error_codes).boxed()
    }

    pub fn sdl(&self) -> String {
        self.schema.sdl()
    }

    /// The process's parsed documents.
    pub fn documents(&self) -> &documents::DocumentCache {
        &self.documents
    }
}

impl Executor for GrusSchema {
    async fn execute(&self, request: Request) -> Response {
        GrusSchema::execute(self, request).await
    }

    fn execute_stream(&self, request: Request, session_data: Option<Arc<Data>>) -> BoxStream<'static, Response> {
        self.schema
            .execute_stream_with_session_data(request, session_data.unwrap_or_default())
            .map(with_error_codes)
            .boxed()
    }
}

fn with_error_codes(mut resp: Response) -> Response {
    for err in &mut resp.errors {
        let ext = err.extensions.get_or_insert_with(Default::default);
        if ext.get("code").is_none() {
            ext.set("code", ErrorCode::Validation.as_str());
        }
    }
    resp
}

/// The SDL, as committed in `api/schema.graphql`.
pub fn sdl() -> String {
    build_schema(None, GraphqlLimits::production()).sdl()
}

pub(crate) fn pool<'a>(ctx: &Context<'a>) -> ApiResult<&'a PgPool> {
    ctx.data::<PgPool>().map_err(|e| ApiError::internal(&e.message))
}

pub(crate) fn caller<'a>(ctx: &Context<'a>) -> ApiResult<&'a Caller> {
    ctx.data_opt::<Caller>().ok_or(ApiError::Unauthenticated)
}

/// The job `id`, if the caller submitted it (as a member of its project) or administers its
/// project: who may cancel, suspend, resume or reprioritise it.
pub(super) async fn own_job_or_project_admin(ctx: &Context<'_>, id: &async_graphql::ID) -> ApiResult<db::Job> {
    let user = &caller(ctx)?.user;
    let job = db::get_job(pool(ctx)?, parse_id(id, "job")?).await?;
    let (_, role) = authorize(ctx, job.project_id, Role::Member).await.map_err(|e| match e {
        ApiError::NotFound(_) => ApiError::NotFound("job"),
        other => other,
    })?;
    if role < Role::ProjectAdmin && job.submitted_by != user.id {
        return Err(ApiError::Forbidden);
    }
    Ok(job)
}

/// Loads the project and checks that the caller holds at least `min` in it.
pub(crate) async fn authorize(ctx: &Context<'_>, project_id: i64, min: Role) -> ApiResult<(Project, Role)> {
    let caller = caller(ctx)?;
    let pool = pool(ctx)?;
    let role = db::role_in_project(pool, caller.user.id, project_id).await?.ok_or(ApiError::NotFound("project"))?;
    if role < min {
        return Err(ApiError::Forbidden);
    }
    let project = db::get_project(pool, project_id).await?;
    Ok((project, role))
}

/// Parses a GraphQL `ID` holding a database id; a malformed id is simply not found.
pub(crate) fn parse_id(id: &async_graphql::ID, what: &'static str) -> ApiResult<i64> {
    id.parse::<i64>().map_err(|_| ApiError::NotFound(what))
}
