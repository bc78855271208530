//! The queues of `--fair-share-queues`: in one project, or spread over `tenants` tenants of 4
//! projects each (tenant weights 1, 2, 3, ... so that the tree matters). Kept apart so that a
//! version without tenant and project weights can build the bench with a flat copy of it.

use grus_scheduler::queue::{Project, Queue, Queues, Tenant};

pub fn queues(queues: u32, tenants: u32) -> Queues {
    if tenants <= 1 {
        return Queues::flat((0..queues).map(|q| Queue::new(q, 0, &format!("q{q}"))).collect()).expect("flat queues");
    }
    let projects = tenants * 4;
    let ts = (0..tenants).map(|t| Tenant { weight: t + 1, ..Tenant::new(t, &format!("t{t}")) }).collect();
    let ps = (0..projects).map(|p| Project::new(p, p % tenants, &format!("p{p}"))).collect();
    let qs = (0..queues).map(|q| Queue::new(q, q % projects, &format!("q{q}"))).collect();
    Queues::new(ts, ps, qs).expect("a valid tree")
}
