//! The fleet's node shapes, read at most every [`REFRESH`] for admission's "does this job fit
//! any node at all" check (`domain::node_fit`): a submit must not scan every node of every
//! cluster, and a node added a few seconds ago only delays refusing, never admits wrongly.

use std::sync::Arc;
use std::time::{Duration, Instant};

use grus_protocol::wire::NodeInfo;
use sqlx::PgPool;
use tokio::sync::Mutex;

use crate::db::{self, DbResult};

/// How old the shapes may be.
pub const REFRESH: Duration = Duration::from_secs(10);

pub struct FleetShapes {
    pool: PgPool,
    loaded: Mutex<Option<(Instant, Arc<Vec<NodeInfo>>)>>,
}

impl FleetShapes {
    pub fn new(pool: PgPool) -> FleetShapes {
        FleetShapes { pool, loaded: Mutex::new(None) }
    }

    /// The shapes, read again when older than [`REFRESH`].
    pub async fn get(&self) -> DbResult<Arc<Vec<NodeInfo>>> {
        let mut loaded = self.loaded.lock().await;
        if let Some((at, shapes)) = loaded.as_ref() {
            if at.elapsed() < REFRESH {
                return Ok(shapes.clone());
            }
        }
        let shapes = Arc::new(db::ingest::fleet_node_shapes(&self.pool).await?);
        *loaded = Some((Instant::now(), shapes.clone()));
        Ok(shapes)
    }
}
