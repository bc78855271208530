//! Tenants, projects, users, memberships and the role lookup every resolver authorizes with
//! (invariant 7).

use chrono::{DateTime, Utc};
use sqlx::{FromRow, PgExecutor};

use super::{DbError, DbResult};
use crate::domain::Role;

#[derive(Clone, Debug, PartialEq, Eq, FromRow)]
pub struct Tenant {
    pub id: i64,
    pub slug: String,
    pub name: String,
    pub created_at: DateTime<Utc>,
}

#[derive(Clone, Debug, PartialEq, Eq, FromRow)]
pub struct Project {
    pub id: i64,
    pub tenant_id: i64,
    pub slug: String,
    pub name: String,
    pub created_at: DateTime<Utc>,
}

#[derive(Clone, Debug, PartialEq, Eq, FromRow)]
pub struct User {
    pub id: i64,
    pub subject: String,
    pub email: Option<String>,
    pub display_name: Option<String>,
    pub platform_admin: bool,
    pub created_at: DateTime<Utc>,
}

pub async fn create_tenant(db: impl PgExecutor<'_>, slug: &str, name: &str) -> DbResult<Tenant> {
    Ok(sqlx::query_as("INSERT INTO tenants (slug, name) VALUES ($1, $2) RETURNING *")
        .bind(slug)
        .bind(name)
        .fetch_one(db)
        .await?)
}

pub async fn get_tenant(db: impl PgExecutor<'_>, id: i64) -> DbResult<Tenant> {
    sqlx::query_as("SELECT * FROM tenants WHERE id = $1")
        .bind(id)
        .fetch_optional(db)
        .await?
        .ok_or(DbError::NotFound("tenant"))
}

pub async fn create_project(db: impl PgExecutor<'_>, tenant_id: i64, slug: &str, name: &str) -> DbResult<Project> {
    Ok(sqlx::query_as("INSERT INTO projects (tenant_id, slug, name) VALUES ($1, $2, $3) RETURNING *")
        .bind(tenant_id)
        .bind(slug)
        .bind(name)
        .fetch_one(db)
        .await?)
}

pub async fn get_project(db: impl PgExecutor<'_>, id: i64) -> DbResult<Project> {
    sqlx::query_as("SELECT * FROM projects WHERE id = $1")
        .bind(id)
        .fetch_optional(db)
        .await?
        .ok_or(DbError::NotFound("project"))
}

pub async fn get_project_by_slug(db: impl PgExecutor<'_>, slug: &str) -> DbResult<Project> {
    sqlx::query_as("SELECT * FROM projects WHERE slug = $1")
        .bind(slug)
        .fetch_optional(db)
        .await?
        .ok_or(DbError::NotFound("project"))
}

/// Profile fields from the identity provider, applied on every login.
#[derive(Clone, Debug, Default)]
pub struct UserProfile<'a> {
    pub subject: &'a str,
    pub email: Option<&'a str>,
    pub display_name: Option<&'a str>,
}

/// Creates the user on first login and refreshes the profile afterwards. `platform_admin` is
/// never set here: it is granted explicitly ([`set_platform_admin`]), not by a token claim.
///
/// Runs on every authenticated request, so an unchanged profile writes nothing: a write would
/// cost a WAL flush (fsync) per request. Only a new user or a changed profile is written.
pub async fn upsert_user(db: impl PgExecutor<'_>, profile: &UserProfile<'_>) -> DbResult<User> {
    Ok(sqlx::query_as(
        "WITH unchanged AS (
           SELECT * FROM users WHERE subject = $1
             AND email IS NOT DISTINCT FROM $2 AND display_name IS NOT DISTINCT FROM $3
         ), written AS (
           INSERT INTO users (subject, email, display_name)
           SELECT $1, $2, $3 WHERE NOT EXISTS (SELECT 1 FROM unchanged)
           ON CONFLICT (subject) DO UPDATE SET email = EXCLUDED.email, display_name = EXCLUDED.display_name
           RETURNING *
         )
         SELECT * FROM written UNION ALL SELECT * FROM unchanged",
    )
    .bind(profile.subject)
    .bind(profile.email)
    .bind(profile.display_name)
    .fetch_one(db)
    .await?)
}

pub async fn get_user(db: impl PgExecutor<'_>, id: i64) -> DbResult<User> {
    sqlx::query_as("SELECT * FROM users WHERE id = $1")
        .bind(id)
        .fetch_optional(db)
        .await?
        .ok_or(DbError::NotFound("user"))
}

pub async fn set_platform_admin(db: impl PgExecutor<'_>, user_id: i64, admin: bool) -> DbResult<()> {
    let done =
        sqlx::query("UPDATE users SET platform_admin = $2 WHERE id = $1").bind(user_id).bind(admin).execute(db).await?;
    if done.rows_affected() == 0 {
        return Err(DbError::NotFound("user"));
    }
    Ok(())
}

/// Where a membership applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    Tenant(i64),
    Project(i64),
}

/// Grants (or changes) a role. The schema refuses a tenant role on a project and the reverse.
pub async fn grant(db: impl PgExecutor<'_>, user_id: i64, scope: Scope, role: Role) -> DbResult<()> {
    if role == Role::PlatformAdmin {
        return Err(DbError::validation("platform admin is not a membership role"));
    }
    let (tenant, project, conflict) = match scope {
        Scope::Tenant(t) => (Some(t), None, "(user_id, tenant_id)"),
        Scope::Project(p) => (None, Some(p), "(user_id, project_id)"),
    };
    // The conflict target is one of two fixed strings, never input.
    let sql = format!(
        "INSERT INTO memberships (user_id, tenant_id, project_id, role) VALUES ($1, $2, $3, $4)
         ON CONFLICT {conflict} DO UPDATE SET role = EXCLUDED.role"
    );
    sqlx::query(&sql).bind(user_id).bind(tenant).bind(project).bind(role.as_str()).execute(db).await?;
    Ok(())
}

pub async fn revoke(db: impl PgExecutor<'_>, user_id: i64, scope: Scope) -> DbResult<()> {
    let (tenant, project) = match scope {
        Scope::Tenant(t) => (Some(t), None),
        Scope::Project(p) => (None, Some(p)),
    };
    sqlx::query(
        "DELETE FROM memberships WHERE user_id = $1
         AND tenant_id IS NOT DISTINCT FROM $2 AND project_id IS NOT DISTINCT FROM $3",
    )
    .bind(user_id)
    .bind(tenant)
    .bind(project)
    .execute(db)
    .await?;
    Ok(())
}

/// The caller's effective role in a project: the strongest of platform admin, tenant admin of
/// the project's tenant, and a direct project membership. `None`: no access at all (resolvers
/// answer NOT_FOUND so a project's existence does not leak).
pub async fn role_in_project(db: impl PgExecutor<'_>, user_id: i64, project_id: i64) -> DbResult<Option<Role>> {
    let roles: Vec<(String,)> = sqlx::query_as(
        "SELECT 'platform_admin' FROM users u
           WHERE u.id = $1 AND u.platform_admin
             AND EXISTS (SELECT 1 FROM projects WHERE id = $2)
         UNION ALL
         SELECT m.role FROM memberships m JOIN projects p ON p.tenant_id = m.tenant_id
           WHERE m.user_id = $1 AND p.id = $2
         UNION ALL
         SELECT m.role FROM memberships m WHERE m.user_id = $1 AND m.project_id = $2",
    )
    .bind(user_id)
    .bind(project_id)
    .fetch_all(db)
    .await?;
    Ok(roles.iter().filter_map(|(r,)| Role::parse(r)).max())
}

/// Projects the user can see, with the effective role in each (for the portal's project list).
pub async fn projects_for_user(db: impl PgExecutor<'_>, user_id: i64) -> DbResult<Vec<(Project, Role)>> {
    #[derive(FromRow)]
    struct Row {
        #[sqlx(flatten)]
        project: Project,
        role: String,
    }
    let rows: Vec<Row> = sqlx::query_as(
        "WITH r AS (
           SELECT p.id, 'platform_admin' AS role FROM projects p, users u WHERE u.id = $1 AND u.platform_admin
           UNION ALL
           SELECT p.id, m.role FROM memberships m JOIN projects p ON p.tenant_id = m.tenant_id WHERE m.user_id = $1
           UNION ALL
           SELECT m.project_id, m.role FROM memberships m WHERE m.user_id = $1 AND m.project_id IS NOT NULL
         )
         SELECT p.*, r.role FROM projects p JOIN r ON r.id = p.id ORDER BY p.slug",
    )
    .bind(user_id)
    .fetch_all(db)
    .await?;
    let mut out: Vec<(Project, Role)> = Vec::new();
    for row in rows {
        let Some(role) = Role::parse(&row.role) else { continue };
        match out.last_mut() {
            Some((p, r)) if p.id == row.project.id => *r = (*r).max(role),
            _ => out.push((row.project, role)),
        }
    }
    Ok(out)
}

/// The caller's role at tenant level: platform admin or a tenant membership (`None`: none).
/// Needed where no project exists yet (creating one).
pub async fn role_in_tenant(db: impl PgExecutor<'_>, user_id: i64, tenant_id: i64) -> DbResult<Option<Role>> {
    let roles: Vec<(String,)> = sqlx::query_as(
        "SELECT 'platform_admin' FROM users u
           WHERE u.id = $1 AND u.platform_admin AND EXISTS (SELECT 1 FROM tenants WHERE id = $2)
         UNION ALL
         SELECT m.role FROM memberships m WHERE m.user_id = $1 AND m.tenant_id = $2",
    )
    .bind(user_id)
    .bind(tenant_id)
    .fetch_all(db)
    .await?;
    Ok(roles.iter().filter_map(|(r,)| Role::parse(r)).max())
}

/// Tenants the user can see: all for a platform admin, else those with a tenant membership or
/// a project membership.
pub async fn tenants_for_user(db: impl PgExecutor<'_>, user_id: i64) -> DbResult<Vec<Tenant>> {
    Ok(sqlx::query_as(
        "SELECT t.* FROM tenants t WHERE
           EXISTS (SELECT 1 FROM users u WHERE u.id = $1 AND u.platform_admin)
           OR EXISTS (SELECT 1 FROM memberships m WHERE m.user_id = $1 AND m.tenant_id = t.id)
           OR EXISTS (SELECT 1 FROM memberships m JOIN projects p ON p.id = m.project_id
                      WHERE m.user_id = $1 AND p.tenant_id = t.id)
         ORDER BY t.slug",
    )
    .bind(user_id)
    .fetch_all(db)
    .await?)
}

pub async fn get_user_by_subject(db: impl PgExecutor<'_>, subject: &str) -> DbResult<User> {
    sqlx::query_as("SELECT * FROM users WHERE subject = $1")
        .bind(subject)
        .fetch_optional(db)
        .await?
        .ok_or(DbError::NotFound("user"))
}
