//! Query root. Every list is filtered to what the caller may see; every single-row lookup
//! authorizes by the row's project (invariant 7).

use async_graphql::{Context, Object, ID};

use super::types::{JobObj, ProjectObj, TenantObj, UserObj};
use super::{authorize, caller, parse_id, pool};
use crate::db;
use crate::domain::Role;
use crate::error::{ApiError, ApiResult};

/// Tenancy and job reads; other areas add their own roots to [`super::Query`].
#[derive(Default)]
pub struct CoreQuery;

#[Object]
impl CoreQuery {
    /// The authenticated caller.
    async fn me(&self, ctx: &Context<'_>) -> ApiResult<UserObj> {
        Ok(caller(ctx)?.user.clone().into())
    }

    /// Tenants in which the caller has a role (all of them for a platform admin).
    async fn tenants(&self, ctx: &Context<'_>) -> ApiResult<Vec<TenantObj>> {
        let user = &caller(ctx)?.user;
        let rows = db::tenants_for_user(pool(ctx)?, user.id).await?;
        Ok(rows.into_iter().map(TenantObj::from).collect())
    }

    /// Projects the caller can see, with the caller's role in each.
    async fn projects(&self, ctx: &Context<'_>) -> ApiResult<Vec<ProjectObj>> {
        let user = &caller(ctx)?.user;
        let rows = db::projects_for_user(pool(ctx)?, user.id).await?;
        Ok(rows.into_iter().map(|(p, r)| ProjectObj::new(p, r)).collect())
    }

    /// One project by id or slug (exactly one of them).
    async fn project(&self, ctx: &Context<'_>, id: Option<ID>, slug: Option<String>) -> ApiResult<ProjectObj> {
        caller(ctx)?;
        let project_id = match (id, slug) {
            (Some(id), None) => parse_id(&id, "project")?,
            (None, Some(slug)) => db::get_project_by_slug(pool(ctx)?, &slug).await?.id,
            _ => return Err(ApiError::field("id", "give exactly one of id and slug")),
        };
        let (project, role) = authorize(ctx, project_id, Role::Viewer).await?;
        Ok(ProjectObj::new(project, role))
    }

    /// One job, with its tasks, replicas and events.
    async fn job(&self, ctx: &Context<'_>, id: ID) -> ApiResult<JobObj> {
        caller(ctx)?;
        let job = db::get_job(pool(ctx)?, parse_id(&id, "job")?).await?;
        // No role in the job's project: the job does not exist for this caller.
        authorize(ctx, job.project_id, Role::Viewer).await.map_err(|e| match e {
            ApiError::NotFound(_) => ApiError::NotFound("job"),
            other => other,
        })?;
        Ok(job.into())
    }
}
