//! A job's tasks and replicas as stored, and `RawJson`, a JSON column passed through without
//! being parsed (task specs are only forwarded).

use chrono::{DateTime, Utc};
use serde_json::Value;
use sqlx::{FromRow, PgExecutor};

use crate::db::DbResult;
use crate::domain::UnitState;

#[derive(Clone, Debug, PartialEq, FromRow)]
pub struct Replica {
    pub id: i64,
    pub job_id: i64,
    pub task_id: i64,
    pub index: i32,
    #[sqlx(try_from = "String")]
    pub state: UnitState,
    pub node: Option<String>,
    pub devices: Option<Value>,
    pub cluster_id: Option<String>,
    pub epoch: Option<i64>,
    pub updated_at: DateTime<Utc>,
    /// How it ended (migration 0031): the exit code, when one is known, and why.
    pub exit_code: Option<i32>,
    pub termination: Option<String>,
}

/// The replicas of a job, by task then index.
pub async fn replicas(db: impl PgExecutor<'_>, job_id: i64) -> DbResult<Vec<Replica>> {
    Ok(sqlx::query_as("SELECT * FROM replicas WHERE job_id = $1 ORDER BY task_id, index")
        .bind(job_id)
        .fetch_all(db)
        .await?)
}

/// A JSON document as PostgreSQL sent it: validated, not built into a tree, because most
/// reads never look inside (a page of jobs lists tasks by name; building each task's spec
/// was a tenth of the server's time per page).
#[derive(Clone, Debug)]
pub struct RawJson(pub Box<serde_json::value::RawValue>);

impl RawJson {
    /// A document from a tree (tests, and values built in code).
    pub fn from_value(value: &Value) -> RawJson {
        // A `Value` always serializes.
        RawJson(serde_json::value::to_raw_value(value).expect("a JSON value serializes"))
    }

    /// The document decoded into `T` without building a tree first.
    pub fn decode<T: serde::de::DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        serde_json::from_str(self.0.get())
    }

    /// The document as a tree.
    pub fn to_value(&self) -> Value {
        // It came out of a jsonb column, so it parses.
        serde_json::from_str(self.0.get()).unwrap_or(Value::Null)
    }
}

impl PartialEq for RawJson {
    fn eq(&self, other: &Self) -> bool {
        self.0.get() == other.0.get()
    }
}

impl sqlx::Type<sqlx::Postgres> for RawJson {
    fn type_info() -> sqlx::postgres::PgTypeInfo {
        <sqlx::types::Json<Box<serde_json::value::RawValue>> as sqlx::Type<sqlx::Postgres>>::type_info()
    }

    fn compatible(ty: &sqlx::postgres::PgTypeInfo) -> bool {
        <sqlx::types::Json<Box<serde_json::value::RawValue>> as sqlx::Type<sqlx::Postgres>>::compatible(ty)
    }
}

impl<'r> sqlx::Decode<'r, sqlx::Postgres> for RawJson {
    fn decode(value: sqlx::postgres::PgValueRef<'r>) -> Result<Self, sqlx::error::BoxDynError> {
        let json =
            <sqlx::types::Json<Box<serde_json::value::RawValue>> as sqlx::Decode<sqlx::Postgres>>::decode(value)?;
        Ok(RawJson(json.0))
    }
}

/// A task row without its `spec` ([`TaskSpec`]): lists of tasks rarely show it, and reading
/// it cost a third of a `jobs(first: 100)` page that lists tasks by name.
#[derive(Clone, Debug, PartialEq, FromRow)]
pub struct Task {
    pub id: i64,
    pub job_id: i64,
    pub name: String,
    pub replicas: i32,
    #[sqlx(try_from = "String")]
    pub state: UnitState,
}

/// A task's `spec`, as submitted (image, command, env, topology ...).
#[derive(Clone, Debug, FromRow)]
pub struct TaskSpec {
    pub id: i64,
    pub spec: RawJson,
}

/// The tasks of a job, in insertion order.
pub async fn tasks(db: impl PgExecutor<'_>, job_id: i64) -> DbResult<Vec<Task>> {
    Ok(sqlx::query_as("SELECT id, job_id, name, replicas, state FROM tasks WHERE job_id = $1 ORDER BY id")
        .bind(job_id)
        .fetch_all(db)
        .await?)
}
