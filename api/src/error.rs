//! The one boundary error type of the API (STYLE habit 5).
//!
//! Every resolver returns [`ApiResult`]; `?` converts storage errors through
//! `From<DbError>`. Each variant maps to one GraphQL `extensions.code`. Internal errors are
//! logged here, with their detail, and reach the client as a generic message: no SQL, no
//! driver text.
//!
//! `ApiError` deliberately does not implement `Display`: async-graphql converts any `Display`
//! type into an error without a code, and keeping it off forces the conversion below.

use async_graphql::{ErrorExtensionValues, Value};

use crate::billing::Nanos;
use crate::db::budgets::BudgetRefusal;
use crate::db::DbError;
use crate::domain::{QuotaKey, QuotaLevel};

/// Result of a resolver.
pub type ApiResult<T> = Result<T, ApiError>;

named_enum! {
    /// The `extensions.code` of an API error: what clients branch on (the CLI's exit codes,
    /// the portal's messages). Request-level errors (syntax, limits) are `VALIDATION` too.
    pub enum ErrorCode("error code") {
        Unauthenticated = "UNAUTHENTICATED",
        Forbidden = "FORBIDDEN",
        NotFound = "NOT_FOUND",
        Validation = "VALIDATION",
        QuotaExceeded = "QUOTA_EXCEEDED",
        BudgetExceeded = "BUDGET_EXCEEDED",
        Conflict = "CONFLICT",
        Internal = "INTERNAL",
    }
}

/// One invalid input field: `field` is the input path (`tasks.0.resources.gpus`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    pub field: String,
    pub message: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ApiError {
    /// No or invalid credentials. Client sees UNAUTHENTICATED.
    Unauthenticated,
    /// The caller can see the resource but its role does not allow the action. FORBIDDEN.
    Forbidden,
    /// The resource does not exist or is not visible to the caller (the two are not told
    /// apart, so another tenant's ids do not leak). NOT_FOUND with the kind of resource.
    NotFound(&'static str),
    /// Invalid input. VALIDATION with `extensions.fields: [{field, message}]`.
    Validation(Vec<FieldError>),
    /// Admission refused the job. QUOTA_EXCEEDED with queue, resource, used and limit.
    QuotaExceeded { level: QuotaLevel, name: String, resource: String, used: i64, limit: i64 },
    /// Admission refused the job: a hard monthly budget is spent. BUDGET_EXCEEDED with level,
    /// name, unit, spent and budget.
    BudgetExceeded(BudgetRefusal),
    /// Uniqueness or state-machine conflict. CONFLICT with a message safe to show.
    Conflict(String),
    /// Anything else; already logged. INTERNAL with a generic message.
    Internal,
}

impl ApiError {
    /// A validation error on a single field.
    pub fn field(field: impl Into<String>, message: impl Into<String>) -> Self {
        ApiError::Validation(vec![FieldError { field: field.into(), message: message.into() }])
    }

    /// Logs `detail` and returns the generic internal error.
    pub fn internal(detail: &dyn std::fmt::Debug) -> Self {
        tracing::error!(error = ?detail, "internal error");
        ApiError::Internal
    }

    /// The `extensions.code` the client branches on.
    pub fn error_code(&self) -> ErrorCode {
        match self {
            ApiError::Unauthenticated => ErrorCode::Unauthenticated,
            ApiError::Forbidden => ErrorCode::Forbidden,
            ApiError::NotFound(_) => ErrorCode::NotFound,
            ApiError::Validation(_) => ErrorCode::Validation,
            ApiError::QuotaExceeded { .. } => ErrorCode::QuotaExceeded,
            ApiError::BudgetExceeded(_) => ErrorCode::BudgetExceeded,
            ApiError::Conflict(_) => ErrorCode::Conflict,
            ApiError::Internal => ErrorCode::Internal,
        }
    }

    /// [`Self::error_code`] as the client reads it.
    pub fn code(&self) -> &'static str {
        self.error_code().as_str()
    }

    fn message(&self) -> String {
        match self {
            ApiError::Unauthenticated => "authentication required".into(),
            ApiError::Forbidden => "your role does not allow this".into(),
            ApiError::NotFound(what) => format!("{what} not found"),
            ApiError::Validation(fields) => match fields.as_slice() {
                [one] => format!("invalid input: {}: {}", one.field, one.message),
                _ => format!("invalid input ({} fields)", fields.len()),
            },
            ApiError::QuotaExceeded { level, name, resource, used, limit } => {
                let level = level.as_str();
                let amount = |v: i64| match QuotaKey::parse(resource) {
                    Some(key) => key.display(v),
                    None => v.to_string(),
                };
                let mut m = format!(
                    "quota exceeded in {level} {name}: {resource} would exceed its limit of {} ({} in use)",
                    amount(*limit),
                    amount(*used)
                );
                if resource.starts_with("pool/") {
                    // Charged conservatively, as for GPU models: say how to avoid it.
                    m.push_str("; a job naming no node pool counts against every pool its queue has a quota for: name the pools it may use");
                }
                m
            }
            ApiError::BudgetExceeded(r) => format!(
                "budget exceeded in {} {}: {} of its monthly budget of {} spent or committed by running work; \
                 new jobs are refused until the next month or a larger budget",
                r.level.as_str(),
                r.name,
                budget_amount(r.unit, r.spent),
                budget_amount(r.unit, r.amount),
            ),
            ApiError::Conflict(message) => message.clone(),
            ApiError::Internal => "internal error".into(),
        }
    }
}

/// A budget's amount as people read it: two decimals, then the unit (`1234.50 GPU-hours`; in
/// currency, the number alone: the price book names the currency).
fn budget_amount(unit: crate::domain::BudgetUnit, n: Nanos) -> String {
    let cents = (n.0 + 5_000_000) / 10_000_000;
    let text = format!("{}.{:02}", cents / 100, cents % 100);
    match unit {
        crate::domain::BudgetUnit::GpuHours => format!("{text} GPU-hours"),
        crate::domain::BudgetUnit::Currency => text,
    }
}

impl From<DbError> for ApiError {
    fn from(err: DbError) -> Self {
        match err {
            DbError::NotFound(what) => ApiError::NotFound(what),
            DbError::Conflict { message, .. } => ApiError::Conflict(message),
            // The storage layer's messages name a rule, never values or SQL.
            DbError::Validation { message, constraint } => {
                ApiError::field(constraint.unwrap_or_else(|| "input".into()), message)
            }
            DbError::Internal(source) => ApiError::internal(&source),
        }
    }
}

impl From<ApiError> for async_graphql::Error {
    fn from(err: ApiError) -> Self {
        let mut ext = ErrorExtensionValues::default();
        ext.set("code", err.code());
        match &err {
            ApiError::Validation(fields) => {
                let list = fields
                    .iter()
                    .map(|f| {
                        let mut m = async_graphql::indexmap::IndexMap::new();
                        m.insert(async_graphql::Name::new("field"), Value::from(f.field.clone()));
                        m.insert(async_graphql::Name::new("message"), Value::from(f.message.clone()));
                        Value::Object(m)
                    })
                    .collect::<Vec<_>>();
                ext.set("fields", Value::List(list));
            }
            ApiError::QuotaExceeded { level, name, resource, used, limit } => {
                ext.set("level", level.as_str());
                ext.set("name", name.clone());
                if *level == QuotaLevel::Queue {
                    ext.set("queue", name.clone());
                }
                ext.set("resource", resource.clone());
                ext.set("used", *used);
                ext.set("limit", *limit);
            }
            ApiError::BudgetExceeded(r) => {
                ext.set("level", r.level.as_str());
                ext.set("name", r.name.clone());
                ext.set("unit", r.unit.as_str());
                ext.set("spent", r.spent.to_string());
                ext.set("budget", r.amount.to_string());
            }
            _ => {}
        }
        async_graphql::Error { message: err.message(), source: None, extensions: Some(ext) }
    }
}
