//! Hierarchical fair share in the API: the objects of tenants' and projects' weights and
//! guarantees and of each queue's fair share of the fleet's GPUs, and how a setting is read,
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
    pub guarantees: Vec<GuaranteeObj>,
}

/// One guarantee of a tenant or project.
#[derive(SimpleObject)]
#[graphql(name = "Guarantee")]
pub struct GuaranteeObj {
    pub resource: String,
    pub amount: i64,
}

impl From<ShareSettings> for ShareSettingsObj {
    fn from(s: ShareSettings) -> Self {
        ShareSettingsObj {
            weight: s.weight,
            guarantees: s.guarantees.into_iter().map(|(resource, amount)| GuaranteeObj { resource, amount }).collect(),
        }
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

/// One guarantee in a `setTenantShare` / `setProjectShare`.
#[derive(InputObject, Clone, Debug)]
pub struct GuaranteeInput {
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

fn check_guarantees(guarantees: &[GuaranteeInput]) -> ApiResult<Vec<(String, i64)>> {
    let mut out: Vec<(String, i64)> = Vec::with_capacity(guarantees.len());
    for (i, g) in guarantees.iter().enumerate() {
        if QuotaKey::parse(&g.resource).is_none() {
            return Err(ApiError::field(format!("guarantees.{i}.resource"), QuotaKey::EXPECTED));
        }
        if out.iter().any(|(r, _)| *r == g.resource) {
            return Err(ApiError::field(format!("guarantees.{i}.resource"), "is given twice"));
        }
        if g.amount < 0 {
            return Err(ApiError::field(format!("guarantees.{i}.amount"), "must not be negative"));
        }
        out.push((g.resource.clone(), g.amount));
    }
    Ok(out)
}

/// Checks and stores a weight and (when given) guarantees of a tenant or project.
pub async fn set(
    ctx: &Context<'_>,
    level: Level,
    id: i64,
    weight: Option<f64>,
    g: Option<Vec<GuaranteeInput>>,
) -> ApiResult<()> {
    if let Some(w) = weight {
        check_weight(w)?;
    }
    let guarantees = g.as_deref().map(check_guarantees).transpose()?;
    let mut tx = pool(ctx)?.begin().await.map_err(DbError::from)?;
    fair_share::set_share_settings(&mut tx, level, id, weight, guarantees.as_deref()).await?;
    tx.commit().await.map_err(DbError::from)?;
    Ok(())
}
