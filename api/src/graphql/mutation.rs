//! Mutation root. Each mutation names the weakest role that may run it and checks it before
//! touching anything: viewer < member < project admin < tenant admin < platform admin.

use async_graphql::{Context, MaybeUndefined, Object, SimpleObject, ID};

use super::fair_share::{self, check_weight, PoolWeightInput, ResourceAmountInput};
use super::job_input::{self, JobInput, Resolved};
use super::types::{JobObj, ProjectObj, ProjectRole, QueueObj, TenantObj};
use super::{authorize, caller, own_job_or_project_admin, parse_id, pool};
use crate::admission::batcher::AdmissionBatcher;
use crate::admission::{self, Admission, QuotaKey};
use crate::db::fair_share::Level;
use crate::db::{self, Cause, QueueSettings, Quota, Scope};
use crate::domain::{gpus_to_milli, ClassOfService, JobState, PriorityClass, Role, SuspendWindow};
use crate::error::{ApiError, ApiResult, FieldError};

/// Tenancy, queue and job writes; other areas add their own roots to [`super::Mutation`].
#[derive(Default)]
pub struct CoreMutation;

/// Result of `submitJob`.
#[derive(SimpleObject)]
pub struct SubmitJobPayload {
    pub job: JobObj,
    /// Admitted above the queue's guarantee (preemptible by other queues).
    pub borrowed: bool,
    /// Set when the project's or its tenant's monthly budget is past its warning threshold
    /// (or, for a soft budget, past its amount): what to tell the submitter.
    pub budget_warning: Option<String>,
}

fn check_slug(field: &str, slug: &str) -> ApiResult<()> {
    let ok = (1..=63).contains(&slug.len())
        && slug.bytes().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-')
        && !slug.starts_with('-')
        && !slug.ends_with('-');
    if ok {
        Ok(())
    } else {
        Err(ApiError::field(field, "lowercase letters, digits and '-', at most 63"))
    }
}

/// A queue the caller administers; NOT_FOUND("queue") when it is not visible to them.
pub(super) async fn project_admin_queue(ctx: &Context<'_>, queue_id: &ID) -> ApiResult<db::Queue> {
    caller(ctx)?;
    let queue = db::get_queue(pool(ctx)?, parse_id(queue_id, "queue")?).await?;
    authorize(ctx, queue.project_id, Role::ProjectAdmin).await.map_err(|e| match e {
        ApiError::NotFound(_) => ApiError::NotFound("queue"),
        other => other,
    })?;
    Ok(queue)
}

/// A class of service from the arguments (max wait, default runtime, max runtime, seconds; the
/// suspension window's text), with every problem as a field error.
fn class_of_service(
    [max_wait, default_runtime, max_runtime]: [Option<i32>; 3],
    window: Option<&str>,
    interactive_reserve_gpus: f64,
) -> ApiResult<ClassOfService> {
    // Negative values become 0, which is out of bounds for all three.
    let secs = |v: Option<i32>| v.map(|v| u32::try_from(v).unwrap_or(0));
    let mut problems = Vec::new();
    let borrowed_suspend =
        window.and_then(|w| SuspendWindow::parse(w).map_err(|why| problems.push(("suspendBorrowedDuring", why))).ok());
    let interactive_reserve_milli = gpus_to_milli(interactive_reserve_gpus)
        .map_err(|why| problems.push(("interactiveReserveGpus", why)))
        .unwrap_or(0);
    let service = ClassOfService {
        max_wait_s: secs(max_wait),
        default_runtime_s: secs(default_runtime),
        max_runtime_s: secs(max_runtime),
        borrowed_suspend,
        interactive_reserve_milli,
    };
    problems.extend(service.problems());
    if problems.is_empty() {
        return Ok(service);
    }
    Err(ApiError::Validation(
        problems.into_iter().map(|(field, message)| FieldError { field: field.into(), message }).collect(),
    ))
}

/// The longest grace period `suspendJob` gives a running job.
const MAX_SUSPEND_GRACE_S: u32 = 3600;

#[Object]
impl CoreMutation {
    /// Platform admin only.
    async fn create_tenant(&self, ctx: &Context<'_>, slug: String, name: String) -> ApiResult<TenantObj> {
        if !caller(ctx)?.user.platform_admin {
            return Err(ApiError::Forbidden);
        }
        check_slug("slug", &slug)?;
        Ok(db::create_tenant(pool(ctx)?, &slug, &name).await?.into())
    }

    /// Platform admin only. Changes what a tenant's members may do to others' work (every
    /// project of the tenant inherits it); fields left out stay as they are. `reclaimFrom`
    /// limits reclaim to the tenant's own and these tenants' borrowed work; `reclaimFromAny:
    /// true` lifts that limit. Jobs already admitted keep their priority.
    async fn set_tenant_rights(
        &self,
        ctx: &Context<'_>,
        tenant_id: ID,
        max_priority_class: Option<String>,
        may_preempt: Option<bool>,
        reclaim_from_any: Option<bool>,
        reclaim_from: Option<Vec<ID>>,
    ) -> ApiResult<TenantObj> {
        if !caller(ctx)?.user.platform_admin {
            return Err(ApiError::Forbidden);
        }
        let pool = pool(ctx)?;
        let tenant = db::get_tenant(pool, parse_id(&tenant_id, "tenant")?).await?;
        let mut rights = db::tenant_rights::tenant_rights(pool, tenant.id).await?;
        if let Some(class) = max_priority_class {
            rights.max_priority_class = PriorityClass::parse(&class)
                .ok_or_else(|| ApiError::field("maxPriorityClass", format!("one of {}", PriorityClass::names())))?;
        }
        if let Some(may) = may_preempt {
            rights.may_preempt = may;
        }
        match (reclaim_from_any, reclaim_from) {
            (Some(true), Some(_)) => {
                return Err(ApiError::field("reclaimFrom", "cannot be given with reclaimFromAny: true"));
            }
            (Some(true), None) => rights.reclaim_from = None,
            (_, Some(ids)) => {
                let mut from = std::collections::BTreeSet::new();
                for (i, id) in ids.iter().enumerate() {
                    let not_found = || ApiError::field(format!("reclaimFrom.{i}"), "no such tenant");
                    let t = parse_id(id, "tenant").map_err(|_| not_found())?;
                    db::get_tenant(pool, t).await.map_err(|_| not_found())?;
                    from.insert(t as u64);
                }
                rights.reclaim_from = Some(from);
            }
            (Some(false), None) => {
                rights.reclaim_from.get_or_insert_with(Default::default);
            }
            (None, None) => {}
        }
        let mut tx = pool.begin().await.map_err(db::DbError::from)?;
        db::tenant_rights::set_tenant_rights(&mut tx, tenant.id, &rights).await?;
        tx.commit().await.map_err(db::DbError::from)?;
        Ok(tenant.into())
    }

    /// Platform admin only. Sets a tenant's weight among tenants and, when given, replaces its
    /// guarantees (an amount of 0 removes a key) and limits (`[]` removes them; a limit of 0
    /// admits nothing); fields left out stay as they are. A guarantee above the limit on the
    /// same resource is refused.
    async fn set_tenant_share(
        &self,
        ctx: &Context<'_>,
        tenant_id: ID,
        weight: Option<f64>,
        guarantees: Option<Vec<ResourceAmountInput>>,
        limits: Option<Vec<ResourceAmountInput>>,
    ) -> ApiResult<TenantObj> {
        if !caller(ctx)?.user.platform_admin {
            return Err(ApiError::Forbidden);
        }
        let tenant = db::get_tenant(pool(ctx)?, parse_id(&tenant_id, "tenant")?).await?;
        fair_share::set(ctx, Level::Tenant, tenant.id, weight, guarantees, limits).await?;
        Ok(tenant.into())
    }

    /// Tenant admin of the project's tenant (a project admin may not raise their own project
    /// against its siblings). Sets the project's weight among its tenant's projects and, when
    /// given, replaces its guarantees and limits (as `setTenantShare`).
    async fn set_project_share(
        &self,
        ctx: &Context<'_>,
        project_id: ID,
        weight: Option<f64>,
        guarantees: Option<Vec<ResourceAmountInput>>,
        limits: Option<Vec<ResourceAmountInput>>,
    ) -> ApiResult<ProjectObj> {
        let (project, role) = authorize(ctx, parse_id(&project_id, "project")?, Role::TenantAdmin).await?;
        fair_share::set(ctx, Level::Project, project.id, weight, guarantees, limits).await?;
        Ok(ProjectObj::new(project, role))
    }

    /// Tenant admin of `tenantId`. Creates the project's `default` queue too.
    async fn create_project(
        &self,
        ctx: &Context<'_>,
        tenant_id: ID,
        slug: String,
        name: String,
    ) -> ApiResult<ProjectObj> {
        let user = &caller(ctx)?.user;
        let pool = pool(ctx)?;
        let tenant_id = parse_id(&tenant_id, "tenant")?;
        match db::role_in_tenant(pool, user.id, tenant_id).await? {
            // Someone who sees the tenant through a project is told no, anyone else that
            // there is no such tenant.
            None if db::tenants_for_user(pool, user.id).await?.iter().any(|t| t.id == tenant_id) => {
                return Err(ApiError::Forbidden)
            }
            None => return Err(ApiError::NotFound("tenant")),
            Some(r) if r < Role::TenantAdmin => return Err(ApiError::Forbidden),
            Some(_) => {}
        }
        check_slug("slug", &slug)?;
        let mut tx = pool.begin().await.map_err(db::DbError::from)?;
        let project = db::create_project(&mut *tx, tenant_id, &slug, &name).await?;
        db::create_queue(&mut *tx, project.id, &QueueSettings::named(db::DEFAULT_QUEUE)).await?;
        tx.commit().await.map_err(db::DbError::from)?;
        let role = db::role_in_project(pool, user.id, project.id).await?.unwrap_or(Role::TenantAdmin);
        Ok(ProjectObj::new(project, role))
    }

    /// Project admin. `subject` is the user's identity (`dev:alice`, or the OIDC subject);
    /// the user must have signed in once.
    async fn add_member(
        &self,
        ctx: &Context<'_>,
        project_id: ID,
        subject: String,
        role: ProjectRole,
    ) -> ApiResult<bool> {
        let (project, _) = authorize(ctx, parse_id(&project_id, "project")?, Role::ProjectAdmin).await?;
        let pool = pool(ctx)?;
        let user = db::get_user_by_subject(pool, &subject).await?;
        db::grant(pool, user.id, Scope::Project(project.id), role.into()).await?;
        Ok(true)
    }

    /// Project admin. Changes the role of an existing member.
    async fn set_role(&self, ctx: &Context<'_>, project_id: ID, user_id: ID, role: ProjectRole) -> ApiResult<bool> {
        let (project, _) = authorize(ctx, parse_id(&project_id, "project")?, Role::ProjectAdmin).await?;
        let pool = pool(ctx)?;
        let user_id = parse_id(&user_id, "user")?;
        // Only people who already have a role here: otherwise this would probe which user
        // ids exist (addMember takes the subject the admin already knows).
        if db::role_in_project(pool, user_id, project.id).await?.is_none() {
            return Err(ApiError::NotFound("member"));
        }
        db::grant(pool, user_id, Scope::Project(project.id), role.into()).await?;
        Ok(true)
    }

    /// Project admin. Removes a direct project membership (tenant roles are untouched).
    async fn remove_member(&self, ctx: &Context<'_>, project_id: ID, user_id: ID) -> ApiResult<bool> {
        let (project, _) = authorize(ctx, parse_id(&project_id, "project")?, Role::ProjectAdmin).await?;
        db::revoke(pool(ctx)?, parse_id(&user_id, "user")?, Scope::Project(project.id)).await?;
        Ok(true)
    }

    /// Project admin. `maxWaitSeconds`: a waiting job's priority is raised one class after
    /// this long, and again after each further period (never to `critical`, nor above its
    /// tenant's highest class). `defaultRuntimeSeconds`: the runtime limit of a job that names
    /// none; `maxRuntimeSeconds`: no job may ask for more (one that names none gets it).
    /// `suspendBorrowedDuring`: a daily window, `HH:MM-HH:MM` UTC, in which the queue's borrowed
    /// work is suspended (and resumed after it). `interactiveReserveGpus`: GPUs of the queue's
    /// `gpu` guarantee kept for interactive workspaces.
    #[allow(clippy::too_many_arguments)]
    async fn create_queue(
        &self,
        ctx: &Context<'_>,
        project_id: ID,
        name: String,
        #[graphql(default = 1.0)] weight: f64,
        #[graphql(default = true)] can_borrow: bool,
        max_wait_seconds: Option<i32>,
        default_runtime_seconds: Option<i32>,
        max_runtime_seconds: Option<i32>,
        suspend_borrowed_during: Option<String>,
        #[graphql(default = 0.0)] interactive_reserve_gpus: f64,
    ) -> ApiResult<QueueObj> {
        let (project, _) = authorize(ctx, parse_id(&project_id, "project")?, Role::ProjectAdmin).await?;
        check_slug("name", &name)?;
        check_weight(weight)?;
        let durations = [max_wait_seconds, default_runtime_seconds, max_runtime_seconds];
        let service = class_of_service(durations, suspend_borrowed_during.as_deref(), interactive_reserve_gpus)?;
        let settings = QueueSettings { name: &name, weight, can_borrow, service };
        Ok(db::create_queue(pool(ctx)?, project.id, &settings).await?.into())
    }

    /// Project admin. Changes a queue's settings: an argument left out keeps its value; `null`
    /// clears a duration. The class of service applies to jobs submitted (runtimes) or waiting
    /// (aging) from now on. `poolWeights` replaces its weights per node pool (`[]`: its weight
    /// everywhere).
    #[allow(clippy::too_many_arguments)]
    async fn update_queue(
        &self,
        ctx: &Context<'_>,
        queue_id: ID,
        weight: Option<f64>,
        can_borrow: Option<bool>,
        max_wait_seconds: MaybeUndefined<i32>,
        default_runtime_seconds: MaybeUndefined<i32>,
        max_runtime_seconds: MaybeUndefined<i32>,
        suspend_borrowed_during: MaybeUndefined<String>,
        pool_weights: Option<Vec<PoolWeightInput>>,
        interactive_reserve_gpus: Option<f64>,
    ) -> ApiResult<QueueObj> {
        let pool = pool(ctx)?;
        let queue = project_admin_queue(ctx, &queue_id).await?;
        let pool_weights = pool_weights.as_deref().map(fair_share::check_pool_weights).transpose()?;
        let weight = weight.unwrap_or(queue.weight);
        check_weight(weight)?;
        let keep = |arg: MaybeUndefined<i32>, now: Option<i32>| match arg {
            MaybeUndefined::Undefined => now,
            MaybeUndefined::Null => None,
            MaybeUndefined::Value(v) => Some(v),
        };
        let window = match suspend_borrowed_during {
            MaybeUndefined::Undefined => queue.class_of_service().borrowed_suspend.map(|w| w.to_string()),
            MaybeUndefined::Null => None,
            MaybeUndefined::Value(w) => Some(w),
        };
        let durations = [
            keep(max_wait_seconds, queue.max_wait_s),
            keep(default_runtime_seconds, queue.default_runtime_s),
            keep(max_runtime_seconds, queue.max_runtime_s),
        ];
        let reserve = interactive_reserve_gpus.unwrap_or(queue.interactive_reserve_milli as f64 / 1000.0);
        let service = class_of_service(durations, window.as_deref(), reserve)?;
        let settings =
            QueueSettings { name: &queue.name, weight, can_borrow: can_borrow.unwrap_or(queue.can_borrow), service };
        let mut tx = pool.begin().await.map_err(db::DbError::from)?;
        let updated = db::update_queue(&mut *tx, queue.id, &settings).await?;
        if let Some(weights) = &pool_weights {
            db::set_pool_weights(&mut tx, queue.id, weights).await?;
        }
        tx.commit().await.map_err(db::DbError::from)?;
        Ok(updated.into())
    }

    /// Project admin. Sets one quota of a queue (`gpu`, `gpu/<model>`, `pool/<node pool>` in
    /// GPU milli; `cpu_milli`; `memory_mib`); `limit: null` lets the queue borrow without bound.
    async fn update_quota(
        &self,
        ctx: &Context<'_>,
        queue_id: ID,
        resource: String,
        guaranteed: i64,
        limit: Option<i64>,
    ) -> ApiResult<QueueObj> {
        let pool = pool(ctx)?;
        let queue = project_admin_queue(ctx, &queue_id).await?;
        if QuotaKey::parse(&resource).is_none() {
            return Err(ApiError::field("resource", QuotaKey::EXPECTED));
        }
        if guaranteed < 0 || limit.is_some_and(|l| l < guaranteed) {
            return Err(ApiError::field("limit", "needs 0 <= guaranteed <= limit"));
        }
        db::set_quota(pool, queue.id, &Quota { resource, guaranteed, limit }).await?;
        Ok(queue.into())
    }

    /// Member. Validates, resolves the priority class, runs admission and stores the job.
    async fn submit_job(&self, ctx: &Context<'_>, input: JobInput) -> ApiResult<SubmitJobPayload> {
        let user = &caller(ctx)?.user;
        let pool = pool(ctx)?;
        let queue = job_input::target_queue(ctx, &input).await?;
        let at = Resolved {
            project_id: queue.project_id,
            queue_id: queue.id,
            queue_name: &queue.name,
            service: queue.class_of_service(),
            submitted_by: user.id,
            submitted_by_subject: &user.subject,
        };
        let new = job_input::validate(&input, &at, chrono::Utc::now().timestamp_millis())?;
        job_input::check_tenant_rights(pool, queue.project_id, &new.priority_class, "priority").await?;
        job_input::check_fits_fleet(ctx, &new).await?;
        let actor = caller(ctx)?.actor();
        let by = Cause { cause: "submitted", actor: &actor };
        let outcome = match ctx.data_opt::<AdmissionBatcher>() {
            Some(batcher) => batcher.admit(new, by).await?,
            None => admission::admit(pool, &new, by).await?,
        };
        match outcome {
            Admission::Admitted { job, borrowed } => {
                // The job is committed: a budget that cannot be read now costs the answer its
                // warning, never the news that the job was admitted.
                let budget_warning = match super::budgets::warning_for(ctx, job.project_id).await {
                    Ok(warning) => warning,
                    Err(e) => {
                        let (id, project) = (job.id, job.project_id);
                        tracing::warn!(job = id, project, error = ?e, "budget warning not computed");
                        None
                    }
                };
                Ok(SubmitJobPayload { job: job.into(), borrowed, budget_warning })
            }
            Admission::QuotaExceeded { level, name, resource, used, limit } => {
                Err(ApiError::QuotaExceeded { level, name, resource, used, limit })
            }
            Admission::BudgetExceeded(refusal) => Err(ApiError::BudgetExceeded(refusal)),
        }
    }

    /// Member for their own jobs; project admin for any job of the project.
    async fn cancel_job(&self, ctx: &Context<'_>, id: ID) -> ApiResult<JobObj> {
        let pool = pool(ctx)?;
        let job = own_job_or_project_admin(ctx, &id).await?;
        let actor = caller(ctx)?.actor();
        let mut tx = pool.begin().await.map_err(db::DbError::from)?;
        db::transition_job(&mut tx, job.id, JobState::Cancelled, Cause { cause: "cancelled", actor: &actor }).await?;
        tx.commit().await.map_err(db::DbError::from)?;
        Ok(db::get_job(pool, job.id).await?.into())
    }

    /// Member for their own jobs; project admin for any job of the project. A job no cluster
    /// holds is suspended at once; a scheduled or running one is stopped after `graceSeconds`
    /// (0-3600, default 30) and then ends `SUSPENDED` instead of being requeued; one on its way
    /// to a cluster (`DISPATCHED`) is stopped so once the cluster places it, or suspended at once
    /// if the cluster refuses it. A suspended job holds no capacity and no quota and keeps its
    /// history.
    async fn suspend_job(
        &self,
        ctx: &Context<'_>,
        id: ID,
        #[graphql(default = 30)] grace_seconds: i32,
    ) -> ApiResult<JobObj> {
        let pool = pool(ctx)?;
        let grace_s = u32::try_from(grace_seconds)
            .ok()
            .filter(|g| *g <= MAX_SUSPEND_GRACE_S)
            .ok_or_else(|| ApiError::field("graceSeconds", format!("must be 0 to {MAX_SUSPEND_GRACE_S}")))?;
        let job = own_job_or_project_admin(ctx, &id).await?;
        let actor = caller(ctx)?.actor();
        let mut tx = pool.begin().await.map_err(db::DbError::from)?;
        let cause = format!("suspended by {actor}");
        db::suspend::suspend_job(&mut tx, job.id, grace_s, Cause { cause: &cause, actor: &actor }).await?;
        tx.commit().await.map_err(db::DbError::from)?;
        Ok(db::get_job(pool, job.id).await?.into())
    }

    /// Member for their own jobs; project admin for any job of the project. A suspended job is
    /// admitted again (refused with BUDGET_EXCEEDED while a hard budget of its project or tenant
    /// is spent, and with QUOTA_EXCEEDED while its queue's quota cannot take it) and dispatched
    /// under a new epoch, to whichever cluster it fits.
    async fn resume_job(&self, ctx: &Context<'_>, id: ID) -> ApiResult<JobObj> {
        let pool = pool(ctx)?;
        let job = own_job_or_project_admin(ctx, &id).await?;
        let actor = caller(ctx)?.actor();
        let mut tx = pool.begin().await.map_err(db::DbError::from)?;
        let cause = format!("resumed by {actor}");
        match admission::resume(&mut tx, job.id, Cause { cause: &cause, actor: &actor }).await? {
            Admission::Admitted { .. } => {
                tx.commit().await.map_err(db::DbError::from)?;
                Ok(db::get_job(pool, job.id).await?.into())
            }
            Admission::QuotaExceeded { level, name, resource, used, limit } => {
                Err(ApiError::QuotaExceeded { level, name, resource, used, limit })
            }
            Admission::BudgetExceeded(refusal) => Err(ApiError::BudgetExceeded(refusal)),
        }
    }
}
