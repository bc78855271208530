//! Tenant rights (`tenants.max_priority_class`, `may_preempt`, `reclaim_from_any` and
//! `tenant_reclaim_rights`): read for admission and the allocator, written by platform admins.

use std::collections::{BTreeMap, BTreeSet};

use sqlx::{PgConnection, PgExecutor, PgPool};

use super::{DbError, DbResult};
use crate::allocator::ReclaimRights;
use crate::domain::{PriorityClass, TenantRights};

type RightsRow = (i64, String, bool, bool, Option<Vec<i64>>);

/// The columns of a [`RightsRow`], of `tenants t`.
const RIGHTS: &str = "t.id, t.max_priority_class, t.may_preempt, t.reclaim_from_any, \
    (SELECT array_agg(r.from_tenant_id ORDER BY r.from_tenant_id) FROM tenant_reclaim_rights r WHERE r.tenant_id = t.id)";

fn rights_of(row: RightsRow) -> DbResult<(u64, TenantRights)> {
    let (id, class, may_preempt, any, from) = row;
    let max_priority_class = PriorityClass::parse(&class).ok_or_else(|| {
        DbError::Internal(sqlx::Error::Decode(format!("tenant {id}: unknown priority class {class}").into()))
    })?;
    let reclaim_from =
        (!any).then(|| from.unwrap_or_default().into_iter().filter_map(|t| u64::try_from(t).ok()).collect());
    Ok((id as u64, TenantRights { max_priority_class, may_preempt, reclaim_from }))
}

/// One tenant's rights.
pub async fn tenant_rights(db: impl PgExecutor<'_>, tenant_id: i64) -> DbResult<TenantRights> {
    let row: Option<RightsRow> = sqlx::query_as(&format!("SELECT {RIGHTS} FROM tenants t WHERE t.id = $1"))
        .bind(tenant_id)
        .fetch_optional(db)
        .await?;
    Ok(rights_of(row.ok_or(DbError::NotFound("tenant"))?)?.1)
}

/// The rights of the tenant a project belongs to, with the tenant's slug (for messages).
pub async fn project_tenant_rights(db: &PgPool, project_id: i64) -> DbResult<(String, TenantRights)> {
    let tenant: Option<(i64, String)> =
        sqlx::query_as("SELECT t.id, t.slug FROM tenants t JOIN projects p ON p.tenant_id = t.id WHERE p.id = $1")
            .bind(project_id)
            .fetch_optional(db)
            .await?;
    let (id, slug) = tenant.ok_or(DbError::NotFound("project"))?;
    Ok((slug, tenant_rights(db, id).await?))
}

/// Every tenant's rights, and the tenant of every project (by slug, as job specs name it): what
/// an allocator round checks dispatches and evictions against.
pub async fn rights_by_project(db: &PgPool) -> DbResult<ReclaimRights> {
    let rows: Vec<RightsRow> = sqlx::query_as(&format!("SELECT {RIGHTS} FROM tenants t")).fetch_all(db).await?;
    let tenants = rows.into_iter().map(rights_of).collect::<DbResult<BTreeMap<_, _>>>()?;
    let projects: Vec<(String, i64)> = sqlx::query_as("SELECT slug, tenant_id FROM projects").fetch_all(db).await?;
    let project_tenants = projects.into_iter().map(|(p, t)| (p, t as u64)).collect();
    Ok(ReclaimRights { tenants, project_tenants })
}

/// Replaces a tenant's rights. `reclaim_from` names tenants by id; unknown ids are refused.
pub async fn set_tenant_rights(tx: &mut PgConnection, tenant_id: i64, rights: &TenantRights) -> DbResult<()> {
    let updated = sqlx::query(
        "UPDATE tenants SET max_priority_class = $2, may_preempt = $3, reclaim_from_any = $4 WHERE id = $1",
    )
    .bind(tenant_id)
    .bind(rights.max_priority_class.as_str())
    .bind(rights.may_preempt)
    .bind(rights.reclaim_from.is_none())
    .execute(&mut *tx)
    .await?;
    if updated.rows_affected() == 0 {
        return Err(DbError::NotFound("tenant"));
    }
    sqlx::query("DELETE FROM tenant_reclaim_rights WHERE tenant_id = $1").bind(tenant_id).execute(&mut *tx).await?;
    let from: Vec<i64> =
        rights.reclaim_from.iter().flatten().map(|&t| t as i64).collect::<BTreeSet<_>>().into_iter().collect();
    sqlx::query("INSERT INTO tenant_reclaim_rights (tenant_id, from_tenant_id) SELECT $1, unnest($2::bigint[])")
        .bind(tenant_id)
        .bind(&from)
        .execute(&mut *tx)
        .await?;
    Ok(())
}
