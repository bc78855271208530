//! The GraphQL API (async-graphql): schema construction, the per-request context and the
//! authorization helpers every resolver goes through (invariant 7).
//!
//! Authorization is by project role: `authorize` answers NOT_FOUND when the caller has no
//! role at all in the project (so ids of other tenants do not leak) and FORBIDDEN when the
//! role is too weak.

pub mod auth;
pub mod billing;
pub mod clusters;
pub mod job_input;
mod jobs;
pub mod loaders;
mod mutation;
mod query;
mod scheduling;
mod subscription;
mod tokens;
mod types;

use std::sync::Arc;

use async_graphql::extensions::{Extension, ExtensionContext, ExtensionFactory, NextParseQuery, NextRequest};
use async_graphql::parser::types::{ExecutableDocument, OperationType};
use async_graphql::{Context, MergedObject, MergedSubscription, Request, Response, Schema, ServerResult, Variables};
use sqlx::PgPool;

use crate::config::{AgentInstall, GraphqlLimits};
use crate::db::{self, Project, Role, User};
use crate::error::{ApiError, ApiResult};
use crate::notify::Notifier;

// The query root: one component per area (each area's module owns its resolvers).
#[derive(MergedObject, Default)]
pub struct Query(query::CoreQuery, billing::BillingQuery, tokens::TokenQuery, clusters::ClusterQuery, jobs::JobsQuery);

// The mutation root, merged like `Query`.
#[derive(MergedObject, Default)]
pub struct Mutation(
    mutation::CoreMutation,
    billing::BillingMutation,
    tokens::TokenMutation,
    clusters::ClusterMutation,
    scheduling::SchedulingMutation,
);

// The subscription root (served at /graphql/ws), merged like `Query`.
#[derive(MergedSubscription, Default)]
pub struct Subscription(subscription::CoreSubscription);

/// The schema type served at /graphql.
pub type GrusSchema = Schema<Query, Mutation, Subscription>;

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
/// `registerCluster` names the agent's defaults ([`AgentInstall::default`]).
pub fn build_schema_with(pool: Option<PgPool>, limits: GraphqlLimits, notifier: Option<Notifier>) -> GrusSchema {
    build_server_schema(pool, limits, notifier, AgentInstall::default())
}

/// The server's schema: [`build_schema_with`] plus what `registerCluster`'s install command
/// names (`--agent-redis-url`, `--agent-chart`).
pub fn build_server_schema(
    pool: Option<PgPool>,
    limits: GraphqlLimits,
    notifier: Option<Notifier>,
    agents: AgentInstall,
) -> GrusSchema {
    let mut builder = Schema::build(Query::default(), Mutation::default(), Subscription::default())
        .extension(RequestErrorCodes)
        .limit_depth(limits.max_depth)
        .limit_complexity(limits.max_complexity);
    if !limits.introspection {
        builder = builder.disable_introspection();
    }
    if let Some(pool) = pool {
        builder = builder.data(pool);
    }
    if let Some(notifier) = notifier {
        builder = builder.data(notifier);
    }
    builder.data(agents).finish()
}

/// Prepares one request for execution: the caller (absent when anonymous) and, for a caller,
/// the request's DataLoaders and role cache ([`loaders::RequestLoaders`]).
pub fn prepare_request(mut req: Request, caller: Option<Caller>, pool: &PgPool) -> Request {
    if let Some(caller) = caller {
        req = req.data(loaders::RequestLoaders::new(pool.clone(), caller.user.id)).data(caller);
    }
    req
}

/// Gives `extensions.code = VALIDATION` to errors that carry no code: those are raised by
/// async-graphql itself before or around the resolvers (syntax, unknown fields, argument
/// validators, the depth and complexity limits, disabled introspection), i.e. the request is
/// invalid. Resolver errors always carry their own code ([`ApiError`]). Also fills the
/// request's [`OperationTypeSlot`].
struct RequestErrorCodes;

impl ExtensionFactory for RequestErrorCodes {
    fn create(&self) -> Arc<dyn Extension> {
        Arc::new(RequestErrorCodes)
    }
}

/// Where the type of a request's operation is recorded when the executor parses it, so the
/// HTTP layer can label its metrics without parsing the query a second time. Put in the
/// request's data (shared: the handler reads it after execution).
#[derive(Debug, Default)]
pub struct OperationTypeSlot {
    /// The request's `operationName`, which picks the operation of a multi-operation document.
    pub operation_name: Option<String>,
    ty: std::sync::OnceLock<OperationType>,
}

impl OperationTypeSlot {
    pub fn new(operation_name: Option<String>) -> Arc<Self> {
        Arc::new(OperationTypeSlot { operation_name, ty: std::sync::OnceLock::new() })
    }

    /// `None` until parsed, and for a document without that operation.
    pub fn get(&self) -> Option<OperationType> {
        self.ty.get().copied()
    }
}

#[async_graphql::async_trait::async_trait]
impl Extension for RequestErrorCodes {
    async fn parse_query(
        &self,
        ctx: &ExtensionContext<'_>,
        query: &str,
        variables: &Variables,
        next: NextParseQuery<'_>,
    ) -> ServerResult<ExecutableDocument> {
        let doc = next.run(ctx, query, variables).await?;
        if let Some(slot) = ctx.data_opt::<Arc<OperationTypeSlot>>() {
            let name = slot.operation_name.as_deref();
            let found = doc.operations.iter().find(|(n, _)| name.is_none() || n.map(|n| n.as_str()) == name);
            if let Some((_, op)) = found {
                let _ = slot.ty.set(op.node.ty);
            }
        }
        Ok(doc)
    }

    async fn request(&self, ctx: &ExtensionContext<'_>, next: NextRequest<'_>) -> Response {
        let mut resp = next.run(ctx).await;
        for err in &mut resp.errors {
            let ext = err.extensions.get_or_insert_with(Default::default);
            if ext.get("code").is_none() {
                ext.set("code", "VALIDATION");
            }
        }
        resp
    }
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
