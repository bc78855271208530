//! Hierarchical fair share in the API: the objects of tenants' and projects' weights,
//! guarantees and limits and of each queue's fair share of the fleet's GPUs, and how a setting is read,
//! checked and stored (`setTenantShare` / `setProjectShare` live with the other mutations).

use async_graphql::{Context, InputObject, SimpleObject};

use super::pool;
use crate::db::fair_share::{self, Level, ShareSettings};
use crate::db::DbError;
use crate::domain::QuotaKey;
use crate::error::{ApiError, ApiResult};

/// A tenant's or project's place in fair share.
#[derive(SimpleObject)]
#[graphql(name = "ShareSettings")]
pub struct ShareSettingsObj {
    /// Relative weight among its siblings (tenants among tenants, a tenant's projects among
    /// themselves) when capacity above guarantees is shared.
    pub weight: f64,
    /// What its queues together are entitled to before capacity above guarantees is shared
    /// (keys and units of queue quotas: `gpu`, `gpu/<model>`, `pool/<pool>` in GPU milli).
    pub guarantees: Vec<ResourceAmount>,
    /// What its queues together may be admitted for, at most (same keys and units); a job
    /// that would pass one is refused with QUOTA_EXCEEDED naming the project or tenant.
    pub limits: Vec<ResourceAmount>,
}

/// An amount of one quota resource: a tenant's or project's guarantee or limit, a queue's usage
/// (GPU keys in milli).
#[derive(SimpleObject)]
pub struct ResourceAmount {
    pub resource: String,
    pub amount: i64,
}

impl From<ShareSettings> for ShareSettingsObj {
    fn from(s: ShareSettings) -> Self {
        let amounts = |v: Vec<(String, i64)>| {
            v.into_iter().map(|(resource, amount)| ResourceAmount { resource, amount }).collect()
        };
        ShareSettingsObj { weight: s.weight, guarantees: amounts(s.guarantees), limits: amounts(s.limits) }
    }
}

/// A queue's fair share of the fleet's GPUs now, and what its work holds.
#[derive(SimpleObject)]
#[graphql(name = "QueueFairShare")]
pub struct QueueFairShareObj {
    /// GPUs the hierarchy's weights and guarantees entitle the queue to, given what every queue
    /// holds and waits for now.
    pub fair_gpus: f64,
    /// GPUs its dispatched and running jobs hold.
    pub held_gpus: f64,
}

impl QueueFairShareObj {
    pub fn of_milli((fair, held): (u64, u64)) -> Self {
        let gpus = |m: u64| m as f64 / f64::from(grus_scheduler::resources::MILLI_PER_GPU);
        QueueFairShareObj { fair_gpus: gpus(fair), held_gpus: gpus(held) }
    }
}

/// A queue's over-quota weight in one node pool, where it differs from its weight.
#[derive(SimpleObject, Clone, Debug, PartialEq)]
#[graphql(name = "PoolWeight")]
pub struct PoolWeightObj {
    pub pool: String,
    pub weight: f64,
}

/// One pool's weight in an `updateQueue`.
#[derive(InputObject, Clone, Debug)]
pub struct PoolWeightInput {
    pub pool: String,
    pub weight: f64,
}

/// Checks per-pool weights: pool names as the agents' `--node-pool` takes them, each once, and
/// weights the database takes; errors name `poolWeights.N.pool` / `.weight`.
pub(super) fn check_pool_weights(given: &[PoolWeightInput]) -> ApiResult<Vec<(String, f64)>> {
    let mut out: Vec<(String, f64)> = Vec::with_capacity(given.len());
    for (i, p) in given.iter().enumerate() {
        if QuotaKey::parse(&format!("pool/{}", p.pool)).is_none() {
            return Err(ApiError::field(format!("poolWeights.{i}.pool"), "a node pool name: a-z, 0-9 and '-'"));
        }
        if out.iter().any(|(pool, _)| *pool == p.pool) {
            return Err(ApiError::field(format!("poolWeights.{i}.pool"), "is given twice"));
        }
        check_weight(p.weight).map_err(|_| {
            ApiError::field(format!("poolWeights.{i}.weight"), "must be a positive number up to 1000000")
        })?;
        out.push((p.pool.clone(), p.weight));
    }
    Ok(out)
}

/// One guarantee or limit in a `setTenantShare` / `setProjectShare`.
#[derive(InputObject, Clone, Debug)]
pub struct ResourceAmountInput {
    pub resource: String,
    pub amount: i64,
}

/// One tenant's or project's settings.
pub async fn settings(ctx: &Context<'_>, level: Level, id: i64) -> ApiResult<ShareSettingsObj> {
    let mut conn = pool(ctx)?.acquire().await.map_err(DbError::from)?;
    Ok(fair_share::share_settings(&mut conn, level, id).await?.into())
}

/// A weight the database takes (`weight > 0 AND weight <= 1e6`).
pub(super) fn check_weight(weight: f64) -> ApiResult<()> {
    if weight.is_finite() && weight > 0.0 && weight <= 1e6 {
        Ok(())
    } else {
        Err(ApiError::field("weight", "must be a positive number up to 1000000"))
    }
}

/// Checks the amounts given as `field` (`guarantees`, `limits`): known keys, each once, none
/// negative.
fn check_amounts(field: &str, given: &[ResourceAmountInput]) -> ApiResult<Vec<(String, i64)>> {
    let mut out: Vec<(String, i64)> = Vec::with_capacity(given.len());
    for (i, g) in given.iter().enumerate() {
        if QuotaKey::parse(&g.resource).is_none() {
            return Err(ApiError::field(format!("{field}.{i}.resource"), QuotaKey::EXPECTED));
        }
        if out.iter().any(|(r, _)| *r == g.resource) {
            return Err(ApiError::field(format!("{field}.{i}.resource"), "is given twice"));
        }
        if g.amount < 0 {
            return Err(ApiError::field(format!("{field}.{i}.amount"), "must not be negative"));
        }
        out.push((g.resource.clone(), g.amount));
    }
    Ok(out)
}

/// No guarantee above the limit on the same resource (the fill could not honour both).
fn check_guarantees_within_limits(
    guarantees: &[(String, i64)],
    limits: &[(String, i64)],
    blame: &str,
) -> ApiResult<()> {
    for (i, (resource, limit)) in limits.iter().enumerate() {
        if let Some((_, g)) = guarantees.iter().find(|(r, g)| r == resource && g > limit) {
            let at = if blame == "limits" {
                format!("limits.{i}.amount")
            } else {
                let j = guarantees.iter().position(|(r, _)| r == resource).unwrap_or(0);
                format!("guarantees.{j}.amount")
            };
            return Err(ApiError::field(
                at,
                format!("the guarantee of {g} on {resource} is above the limit of {limit}"),
            ));
        }
    }
    Ok(())
}

/// Checks and stores a weight and (when given) guarantees and limits of a tenant or project.
pub async fn set(
    ctx: &Context<'_>,
    level: Level,
    id: i64,
    weight: Option<f64>,
    guarantees: Option<Vec<ResourceAmountInput>>,
    limits: Option<Vec<ResourceAmountInput>>,
) -> ApiResult<()> {
    if let Some(w) = weight {
        check_weight(w)?;
    }
    let guarantees = guarantees.as_deref().map(|g| check_amounts("guarantees", g)).transpose()?;
    let limits = limits.as_deref().map(|l| check_amounts("limits", l)).transpose()?;
    let mut tx = pool(ctx)?.begin().await.map_err(DbError::from)?;
    // Compared with what is stored where only one side changes.
    let stored = fair_share::share_settings(&mut tx, level, id).await?;
    let blame = if limits.is_some() { "limits" } else { "guarantees" };
    check_guarantees_within_limits(
        guarantees.as_deref().unwrap_or(&stored.guarantees),
        limits.as_deref().unwrap_or(&stored.limits),
        blame,
    )?;
    let change = fair_share::ShareChange { weight, guarantees: guarantees.as_deref(), limits: limits.as_deref() };
    fair_share::set_share_settings(&mut tx, level, id, change).await?;
    tx.commit().await.map_err(DbError::from)?;
    Ok(())
}
