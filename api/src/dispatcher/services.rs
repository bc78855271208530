//! The service step of the allocator round: for every live inference service, the desired
//! count from its autoscaling rule (`domain::service::recommend`, settled over the scale-down
//! delay), then the replica plan (`domain::service::plan_replicas`) carried out: replicas
//! admitted as jobs of the service's queue (refused by quota: the service waits and says so),
//! and replicas stopped by cancellation. Failed replicas have ended, so the plan replaces them.

use std::collections::HashMap;

use chrono::{DateTime, Utc};

use crate::admission::{self, Admission};
use crate::db::services::{self as store, Service};
use crate::db::{self, Cause, DbError};
use crate::domain::service::{
    plan_replicas, recommend, Recommendations, ReplicaSet, ReplicaView, ScalingMetric, Signal, CRASH_LOOP_FAILURES,
};
use crate::domain::JobState;

use super::{DispatchError, RoundReport, ACTOR};

/// What the step remembers between rounds: each service's recent recommendations, and the
/// last quota refusal told (so that a waiting service is not told again every round).
#[derive(Debug, Default)]
pub struct ServiceMemory {
    recommendations: HashMap<i64, Recommendations>,
    refused: HashMap<i64, String>,
}

/// What the step did to one service.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServiceChange {
    pub service_id: i64,
    pub started: Vec<i64>,
    pub stopped: Vec<i64>,
    /// (from, to) when autoscaling moved the desired count.
    pub scaled: Option<(u32, u32)>,
}

/// Runs the step over every live service.
pub async fn reconcile(
    pool: &sqlx::PgPool,
    memory: &mut ServiceMemory,
    now: DateTime<Utc>,
    report: &mut RoundReport,
) -> Result<(), DispatchError> {
    let services = store::list(pool, None).await?;
    memory.recommendations.retain(|id, _| services.iter().any(|s| s.id == *id));
    memory.refused.retain(|id, _| services.iter().any(|s| s.id == *id));
    for service in services {
        match reconcile_one(pool, memory, &service, now).await {
            Ok(change) => {
                if !change.started.is_empty() || !change.stopped.is_empty() || change.scaled.is_some() {
                    report.services.push(change);
                }
            }
            Err(e) => tracing::warn!(service = service.id, error = %e, "could not reconcile the service"),
        }
    }
    Ok(())
}

async fn reconcile_one(
    pool: &sqlx::PgPool,
    memory: &mut ServiceMemory,
    service: &Service,
    now: DateTime<Utc>,
) -> Result<ServiceChange, DbError> {
    let mut change = ServiceChange { service_id: service.id, started: vec![], stopped: vec![], scaled: None };
    let replicas = store::live_replicas(pool, service.id).await?;
    let views: Vec<ReplicaView> = replicas.iter().map(store::ReplicaJob::view).collect();
    let (min, max) = (store::to_u32(service.min_replicas), store::to_u32(service.max_replicas));
    let mut desired = store::to_u32(service.desired_replicas);
    let mut service = service.clone();
    if let Some(rule) = service.autoscaling() {
        let signal = match rule.metric {
            ScalingMetric::RequestRate => service.load_rps.map_or(Signal::Unknown, Signal::RequestRate),
            ScalingMetric::GpuUtilization => {
                let (mean_pct, measured) = store::replica_utilization(pool, service.id).await?;
                Signal::GpuUtilization { mean_pct, measured }
            }
        };
        let wanted = recommend(&rule, signal, desired, min, max);
        let settled = memory
            .recommendations
            .entry(service.id)
            .or_default()
            .settle(now, wanted, desired, rule.scale_down_delay)
            .clamp(min, max);
        if settled != desired {
            let measured = match signal {
                Signal::RequestRate(rps) => Some(rps),
                Signal::GpuUtilization { mean_pct, .. } => Some(mean_pct),
                Signal::Unknown => None,
            };
            let reason = format!(
                "autoscaled on {} (target {} per replica)",
                rule.metric.as_str().replace('_', " "),
                rule.target
            );
            let mut tx = pool.begin().await?;
            service = store::set_desired(&mut tx, &service, settled, measured, &reason).await?;
            tx.commit().await?;
            let now_desired = store::to_u32(service.desired_replicas);
            change.scaled = Some((desired, now_desired));
            desired = now_desired;
        }
    }
    let revision = store::to_u32(service.revision);
    let hold_starts = store::recent_failures(pool, service.id, service.revision).await? >= CRASH_LOOP_FAILURES;
    let plan = plan_replicas(&ReplicaSet {
        revision,
        desired,
        min,
        rollout: service.rollout(),
        replicas: &views,
        hold_starts,
    });
    if plan.is_empty() {
        return Ok(change);
    }
    for job_id in &plan.stop {
        let old = views.iter().find(|v| v.job_id == *job_id).map_or(revision, |v| v.revision);
        let cause = if old != revision {
            format!("replaced by revision {revision} of service {}", service.name)
        } else {
            format!("service {} scaled to {desired}", service.name)
        };
        let mut tx = pool.begin().await?;
        match db::transition_job(&mut tx, *job_id, JobState::Cancelled, Cause { cause: &cause, actor: ACTOR }).await {
            Ok(_) => {
                tx.commit().await?;
                change.stopped.push(*job_id);
            }
            // Ended meanwhile: the next round sees it gone.
            Err(e) => tracing::debug!(job = job_id, error = %e, "service replica not stopped"),
        }
    }
    if plan.start > 0 {
        let template = store::template(pool, service.id, service.revision).await?;
        let owner = db::get_user(pool, service.owner_id).await?;
        let cause = format!("started for service {} (revision {revision})", service.name);
        for i in 0..plan.start {
            let protected = i < plan.start_protected;
            let job = template.replica(&service, &owner.subject, protected, now.timestamp_millis())?;
            let mut tx = pool.begin().await?;
            match admission::admit_in(&mut tx, &job, Cause { cause: &cause, actor: ACTOR }).await? {
                Admission::Admitted { job, .. } => {
                    store::attach_replica(&mut tx, job.id, service.id, service.revision).await?;
                    tx.commit().await?;
                    if memory.refused.remove(&service.id).is_some() {
                        store::set_condition(pool, service.id, None).await?;
                    }
                    change.started.push(job.id);
                }
                refused => {
                    let why = match refused {
                        Admission::QuotaExceeded { name, resource, used, limit, .. } => {
                            format!("waiting for quota: {resource} of {name} is full ({used} of {limit} in use)")
                        }
                        Admission::BudgetExceeded(r) => {
                            format!(
                                "waiting for budget: the monthly budget of {} {} is spent",
                                r.level.as_str(),
                                r.name
                            )
                        }
                        Admission::Admitted { .. } => unreachable!("matched above"),
                    };
                    if memory.refused.get(&service.id) != Some(&why) {
                        tracing::info!(service = service.id, why, "service replica waits");
                        store::set_condition(pool, service.id, Some(&why)).await?;
                        memory.refused.insert(service.id, why);
                    }
                    break;
                }
            }
        }
    }
    Ok(change)
}
