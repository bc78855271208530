//! The storage layer's error type.
//!
//! Callers branch on the variant (STYLE habit 6), and the GraphQL layer maps each variant to
//! one client-visible code. No variant's `Display` carries SQL text or a driver message:
//! database failures other than constraint violations become [`DbError::Internal`], whose
//! source is kept for logging only (STYLE habit 5).

use sqlx::error::ErrorKind;

/// Result of a storage call.
pub type DbResult<T> = Result<T, DbError>;

#[derive(Debug, thiserror::Error)]
pub enum DbError {
    /// The row asked for does not exist (or is not visible to the caller). Client sees NOT_FOUND.
    #[error("{0} not found")]
    NotFound(&'static str),
    /// A uniqueness or exclusion rule would be broken, or a state change is not allowed from
    /// the current state. Client sees CONFLICT with `message`.
    #[error("{message}")]
    Conflict { message: String, constraint: Option<String> },
    /// The input breaks a check or references a row that does not exist. Client sees
    /// VALIDATION with `message`.
    #[error("{message}")]
    Validation { message: String, constraint: Option<String> },
    /// Anything else: logged where handled, shown to clients as a generic internal error.
    #[error("internal database error")]
    Internal(#[source] sqlx::Error),
}

impl DbError {
    pub fn conflict(message: impl Into<String>) -> Self {
        DbError::Conflict { message: message.into(), constraint: None }
    }

    pub fn validation(message: impl Into<String>) -> Self {
        DbError::Validation { message: message.into(), constraint: None }
    }

    /// Whether a failure may go away by itself (the database restarting, a lost connection, a
    /// pool out of connections, a serialization conflict): such work is retried. Any other failure
    /// is about the work itself and would fail again.
    pub fn is_transient(&self) -> bool {
        let DbError::Internal(e) = self else { return false };
        match e {
            sqlx::Error::Io(_)
            | sqlx::Error::PoolTimedOut
            | sqlx::Error::PoolClosed
            | sqlx::Error::WorkerCrashed
            | sqlx::Error::Tls(_) => true,
            sqlx::Error::Database(db) => db.code().is_some_and(|c| {
                // connection exception, insufficient resources, operator intervention (shutdown),
                // serialization failure and deadlock, lock not available.
                c.starts_with("08")
                    || c.starts_with("53")
                    || c.starts_with("57")
                    || matches!(c.as_ref(), "40001" | "40P01" | "55P03")
            }),
            _ => false,
        }
    }

    /// The violated constraint's name, when the error came from one (for tests and logs).
    pub fn constraint(&self) -> Option<&str> {
        match self {
            DbError::Conflict { constraint, .. } | DbError::Validation { constraint, .. } => constraint.as_deref(),
            _ => None,
        }
    }
}

/// A stored name that no enum of `crate::domain` knows (the CHECK constraints keep them out).
impl From<crate::domain::UnknownName> for DbError {
    fn from(e: crate::domain::UnknownName) -> Self {
        DbError::validation(e.to_string())
    }
}

/// What a data exception (SQLSTATE class 22) says about the value, without echoing it.
fn data_exception(code: &str) -> &'static str {
    match code {
        // character_not_in_repertoire (a NUL in text), untranslatable_character (`\u0000` in
        // JSON), invalid byte sequence.
        "22021" | "22P05" => "invalid value: text must not contain NUL characters",
        "22001" => "invalid value: too long",
        "22003" => "invalid value: out of range",
        _ => "invalid value",
    }
}

/// SQLSTATE raised by the `job_events` append-only trigger.
const APPEND_ONLY: &str = "GR001";
/// SQLSTATE raised when a job's state changes without its event row.
const STATE_WITHOUT_EVENT: &str = "GR002";

/// The one place where driver errors become client-safe categories, so every repository
/// function (and every resolver) can use `?`.
impl From<sqlx::Error> for DbError {
    fn from(err: sqlx::Error) -> Self {
        if matches!(err, sqlx::Error::RowNotFound) {
            return DbError::NotFound("row");
        }
        let Some(db) = err.as_database_error() else {
            return DbError::Internal(err);
        };
        let constraint = db.constraint().map(str::to_owned);
        // Only the constraint's name reaches the message: it names a rule of the schema,
        // not the query or the values.
        let rule = constraint.as_deref().map(|c| format!(" ({c})")).unwrap_or_default();
        match db.kind() {
            ErrorKind::UniqueViolation => DbError::Conflict { message: format!("already exists{rule}"), constraint },
            ErrorKind::ForeignKeyViolation => {
                DbError::Validation { message: format!("refers to a missing or still-used row{rule}"), constraint }
            }
            ErrorKind::CheckViolation | ErrorKind::NotNullViolation => {
                DbError::Validation { message: format!("invalid value{rule}"), constraint }
            }
            _ => match db.code().as_deref() {
                // exclusion_violation (overlapping price ranges).
                Some("23P01") => DbError::Conflict { message: format!("overlaps an existing row{rule}"), constraint },
                // Class 22, data exception: the value itself is unacceptable (a NUL byte in text
                // or JSON, a number out of range, a string too long, ...); retrying cannot help.
                Some(code) if code.starts_with("22") => DbError::validation(data_exception(code)),
                // program_limit_exceeded: a value too large for an index row.
                Some("54000") => DbError::validation("value too large"),
                Some(APPEND_ONLY) => DbError::conflict("events are append-only"),
                Some(STATE_WITHOUT_EVENT) => DbError::conflict("a state change needs its event"),
                _ => DbError::Internal(err),
            },
        }
    }
}
