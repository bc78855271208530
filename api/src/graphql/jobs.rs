//! The top-level `jobs` query: every job the caller may read, across projects, newest first,
//! with cursor pagination.
//!
//! Authorization is inside the one SQL statement (`db::list_visible_jobs` joins the caller's
//! memberships, or all projects for a platform admin), so a page is one query whatever it
//! spans; filtering by a project the caller cannot read gives an empty page, which tells
//! nothing about whether it exists.

use async_graphql::connection::{Connection, EmptyFields};
use async_graphql::{Context, InputObject, Object, ID};

use std::collections::HashMap;

use super::joined::Joined;
use super::types::{connection, parse_cursor, JobObj, JobStateName};
use super::{caller, pool};
use crate::db::{self, VisibleJobFilter};
use crate::domain::{JobState, Role};
use crate::error::{ApiError, ApiResult};
use crate::job_cache::{JobCache, Visible};

/// Largest page of `jobs`.
pub const MAX_PAGE: i32 = 500;

/// Filter of the top-level `jobs`; absent fields do not filter.
#[derive(InputObject, Default)]
pub struct JobsFilter {
    pub project_id: Option<ID>,
    pub queue_id: Option<ID>,
    pub states: Option<Vec<JobStateName>>,
    /// The submitter's user id.
    pub user_id: Option<ID>,
    pub cluster_id: Option<String>,
    /// Case-insensitive substring of the job name.
    pub search: Option<String>,
}

/// Turns the GraphQL filter into the storage filter. An id that is not a number matches
/// nothing: like an id of another tenant, it is simply not found among the caller's jobs.
fn to_db_filter(f: JobsFilter) -> ApiResult<Option<VisibleJobFilter>> {
    let id = |v: Option<ID>| -> Result<Option<i64>, ()> {
        match v {
            None => Ok(None),
            Some(id) => id.parse::<i64>().map(Some).map_err(|_| ()),
        }
    };
    let (Ok(project_id), Ok(queue_id), Ok(submitted_by)) = (id(f.project_id), id(f.queue_id), id(f.user_id)) else {
        return Ok(None);
    };
    if f.search.as_ref().is_some_and(|s| s.len() > 200) {
        return Err(ApiError::field("filter.search", "at most 200 characters"));
    }
    Ok(Some(VisibleJobFilter {
        project_id,
        queue_id,
        states: f.states.unwrap_or_default().into_iter().map(JobState::from).collect(),
        submitted_by,
        cluster_id: f.cluster_id,
        search: f.search.filter(|s| !s.is_empty()),
    }))
}

/// The cross-project job list; other areas add their own roots to [`super::Query`].
#[derive(Default)]
pub struct JobsQuery;

#[Object]
impl JobsQuery {
    /// Jobs of every project the caller may read, newest first; `after` is the `endCursor`
    /// of the previous page.
    // A page costs `first` times its selection, so a large page of deep jobs hits the limit.
    #[graphql(complexity = "(first.max(1) as usize) * child_complexity")]
    async fn jobs(
        &self,
        ctx: &Context<'_>,
        filter: Option<JobsFilter>,
        #[graphql(default = 50, validator(minimum = 1, maximum = 500))] first: i32,
        after: Option<String>,
    ) -> ApiResult<Connection<String, Joined<JobObj>, EmptyFields, EmptyFields>> {
        let user = &caller(ctx)?.user;
        let after = parse_cursor(after)?;
        let Some(filter) = to_db_filter(filter.unwrap_or_default())? else {
            return Ok(Connection::new(after.is_some(), false));
        };
        let first = u32::try_from(first.clamp(1, MAX_PAGE)).unwrap_or(1);
        let includes =
            db::PageIncludes { tasks: ctx.look_ahead().field("edges").field("node").field("tasks").exists() };
        if let Some(cache) = ctx.data_opt::<JobCache>() {
            if let Some(page) = cached_page(ctx, cache, user, &filter, first, after, includes).await? {
                return Ok(page);
            }
        }
        let page =
            db::list_visible_jobs(pool(ctx)?, user.id, user.platform_admin, &filter, first, after, includes).await?;
        let refs: Vec<_> = page.jobs.iter().map(|j| (j.id, j.project_id, j.queue_id, j.submitted_by)).collect();
        let preload = super::loaders::prime_job_page(ctx, &refs, true, Some(&page.roles), page.tasks).await?;
        Ok(connection(page.jobs, preload, page.next_cursor, after.is_some()))
    }
}

/// The page from the process's jobs window ([`JobCache`]), or `None` when the window cannot
/// tell it and PostgreSQL must. The caller's roles are read now, with the window's catch-up.
async fn cached_page(
    ctx: &Context<'_>,
    cache: &JobCache,
    user: &db::User,
    filter: &VisibleJobFilter,
    first: u32,
    after: Option<i64>,
    includes: db::PageIncludes,
) -> ApiResult<Option<Connection<String, Joined<JobObj>, EmptyFields, EmptyFields>>> {
    let pool = pool(ctx)?;
    let roles = async {
        if user.platform_admin {
            Ok(None)
        } else {
            db::batch::roles_in_projects(pool, user.id, None).await.map(Some)
        }
    };
    let (caught_up, roles) = tokio::join!(cache.catch_up(), roles);
    let roles = roles?;
    if !caught_up {
        return Ok(None);
    }
    let visible = roles.as_ref().map_or(Visible::All, Visible::Projects);
    let Some(page) = cache.page(visible, filter, first, after) else { return Ok(None) };
    let roles: HashMap<i64, Role> = match roles {
        Some(roles) => {
            page.jobs.iter().filter_map(|j| Some((j.head.project_id, *roles.get(&j.head.project_id)?))).collect()
        }
        None => page.jobs.iter().map(|j| (j.head.project_id, Role::PlatformAdmin)).collect(),
    };
    let tasks = includes.tasks.then(|| page.jobs.iter().map(|j| (j.head.id, j.tasks.clone())).collect());
    let refs: Vec<_> =
        page.jobs.iter().map(|j| (j.head.id, j.head.project_id, j.head.queue_id, j.head.submitted_by)).collect();
    let preload = super::loaders::prime_job_page(ctx, &refs, true, Some(&roles), tasks).await?;
    let heads = page.jobs.iter().map(|j| j.head.clone());
    Ok(Some(connection(heads.collect::<Vec<_>>(), preload, page.next_cursor, after.is_some())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filter_ids_that_are_not_numbers_match_nothing() {
        let f = JobsFilter { project_id: Some(ID("x".into())), ..Default::default() };
        assert_eq!(to_db_filter(f), Ok(None));
        let f = JobsFilter { queue_id: Some(ID("7".into())), search: Some(String::new()), ..Default::default() };
        let got = to_db_filter(f).unwrap().unwrap();
        assert_eq!(got.queue_id, Some(7));
        assert_eq!(got.search, None);
    }

    #[test]
    fn long_search_is_refused() {
        let f = JobsFilter { search: Some("x".repeat(201)), ..Default::default() };
        assert_eq!(to_db_filter(f).unwrap_err().code(), "VALIDATION");
    }
}
