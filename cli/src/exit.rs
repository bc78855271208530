//! Exit codes scripts can rely on, and the one error type every command returns.
//!
//! The API's `extensions.code` decides the code (UNAUTHENTICATED/FORBIDDEN -> 3, NOT_FOUND -> 4,
//! VALIDATION/QUOTA_EXCEEDED/BUDGET_EXCEEDED -> 5, CONFLICT -> 7); a connection failure is 6. `grus submit
//! --wait` ends with 0 for Succeeded, 10 for Failed, 11 for Cancelled and 8 when the wait
//! timed out. Clap's own usage errors are 2. The table is printed by `grus --help`.

use std::fmt;

use grus_api::error::ErrorCode;

/// The process exit status of `grus`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    Ok = 0,
    /// Anything not listed below (an internal server error, a bad answer, a local I/O error).
    Generic = 1,
    /// Bad flags or arguments (what clap exits with).
    Usage = 2,
    /// Not signed in, an invalid token, or a role that does not allow the action.
    Auth = 3,
    NotFound = 4,
    /// The input was refused: invalid fields or a quota the job would exceed.
    Validation = 5,
    /// The server could not be reached.
    Unreachable = 6,
    /// The action conflicts with the current state (e.g. cancelling a finished job).
    Conflict = 7,
    /// `--wait` gave up before the job ended.
    WaitTimeout = 8,
    /// `--wait`: the job failed.
    JobFailed = 10,
    /// `--wait`: the job was cancelled.
    JobCancelled = 11,
}

impl Exit {
    pub fn code(self) -> u8 {
        self as u8
    }

    /// The exit code of an API error code (`extensions.code`).
    pub fn from_api_code(code: &str) -> Exit {
        match ErrorCode::parse(code) {
            Some(ErrorCode::Unauthenticated | ErrorCode::Forbidden) => Exit::Auth,
            Some(ErrorCode::NotFound) => Exit::NotFound,
            Some(ErrorCode::Validation | ErrorCode::QuotaExceeded | ErrorCode::BudgetExceeded) => Exit::Validation,
            Some(ErrorCode::Conflict) => Exit::Conflict,
            Some(ErrorCode::Internal) | None => Exit::Generic,
        }
    }
}

/// The exit-code table, as `grus --help` shows it (kept next to the enum it describes).
pub const EXIT_CODES_HELP: &str = "\
Exit codes:
  0   success (--wait: the job succeeded)
  1   other error
  2   usage error (bad flags or arguments)
  3   authentication or authorization (UNAUTHENTICATED, FORBIDDEN): run `grus login`
  4   not found (NOT_FOUND)
  5   invalid input or quota exceeded (VALIDATION, QUOTA_EXCEEDED, BUDGET_EXCEEDED)
  6   server unreachable
  7   conflict with the current state (CONFLICT)
  8   --wait timed out
  10  --wait: the job failed
  11  --wait: the job was cancelled";

/// An error a command ends with: what to print and which exit code to use.
#[derive(Debug, thiserror::Error)]
pub struct CliError {
    pub exit: Exit,
    pub message: String,
    /// Extra lines printed after the message (one per invalid field, hints).
    pub details: Vec<String>,
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)?;
        for d in &self.details {
            write!(f, "\n  {d}")?;
        }
        Ok(())
    }
}

impl CliError {
    pub fn new(exit: Exit, message: impl Into<String>) -> Self {
        CliError { exit, message: message.into(), details: Vec::new() }
    }

    pub fn generic(message: impl Into<String>) -> Self {
        CliError::new(Exit::Generic, message)
    }

    pub fn usage(message: impl Into<String>) -> Self {
        CliError::new(Exit::Usage, message)
    }

    pub fn with_details(mut self, details: Vec<String>) -> Self {
        self.details = details;
        self
    }
}

impl From<std::io::Error> for CliError {
    fn from(e: std::io::Error) -> Self {
        CliError::generic(e.to_string())
    }
}

pub type CliResult<T> = Result<T, CliError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_codes_map_to_documented_exits() {
        assert_eq!(Exit::from_api_code("UNAUTHENTICATED").code(), 3);
        assert_eq!(Exit::from_api_code("FORBIDDEN").code(), 3);
        assert_eq!(Exit::from_api_code("NOT_FOUND").code(), 4);
        assert_eq!(Exit::from_api_code("VALIDATION").code(), 5);
        assert_eq!(Exit::from_api_code("QUOTA_EXCEEDED").code(), 5);
        assert_eq!(Exit::from_api_code("CONFLICT").code(), 7);
        assert_eq!(Exit::from_api_code("INTERNAL").code(), 1);
        assert_eq!(Exit::from_api_code("SOMETHING_NEW").code(), 1);
    }

    #[test]
    fn help_lists_every_code() {
        for exit in [
            Exit::Ok,
            Exit::Generic,
            Exit::Usage,
            Exit::Auth,
            Exit::NotFound,
            Exit::Validation,
            Exit::Unreachable,
            Exit::Conflict,
            Exit::WaitTimeout,
            Exit::JobFailed,
            Exit::JobCancelled,
        ] {
            let line = format!("\n  {:<4}", exit.code());
            assert!(EXIT_CODES_HELP.contains(&line), "{exit:?} missing from the help");
        }
    }
}
