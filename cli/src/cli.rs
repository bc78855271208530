//! The command line: global connection flags and one subcommand per action (clap derive; the
//! doc comments are the help text).

use std::path::PathBuf;
use std::time::Duration;

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::{Args, Parser, Subcommand};
use grus_api::domain::{BudgetUnit, ExportFormat, JobState};

use crate::exit::EXIT_CODES_HELP;
use crate::output::Format;

/// The parser of a flag that takes one of grus-api's named values (`JobState`, ...) by its CLI
/// name, listing them with their help in `--help`: the values come from the one definition.
fn named_value<T>(all: &'static [T], help: fn(T) -> Option<String>) -> impl TypedValueParser<Value = T>
where
    T: NamedValue,
{
    let values = all.iter().map(move |v| {
        let value = PossibleValue::new(v.cli_name());
        // As clap's derive shows a doc comment: without its closing period.
        match help(*v) {
            Some(h) => value.help(h.trim_end_matches('.').to_owned()),
            None => value,
        }
    });
    PossibleValuesParser::new(values)
        .map(move |name| *all.iter().find(|v| v.cli_name() == name).expect("clap accepts only the listed names"))
}

/// What [`named_value`] needs of a value.
trait NamedValue: Copy + Send + Sync + 'static {
    fn cli_name(self) -> String;
}

impl NamedValue for JobState {
    fn cli_name(self) -> String {
        JobState::cli_name(self)
    }
}

impl NamedValue for ExportFormat {
    fn cli_name(self) -> String {
        ExportFormat::cli_name(self)
    }
}

impl NamedValue for BudgetUnit {
    fn cli_name(self) -> String {
        BudgetUnit::cli_name(self)
    }
}

#[derive(Debug, Parser)]
#[command(
    name = "grus",
    version,
    about = "The Grus command line: submit and follow GPU jobs, list queues and clusters, export usage.",
    long_about = None,
    after_help = EXIT_CODES_HELP,
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

/// Where the server is and who we are (see `grus::config` for the precedence rules).
#[derive(Debug, Args)]
#[command(next_help_heading = "Connection")]
pub struct GlobalArgs {
    /// Grus server URL [default: the config file's `server`, else http://127.0.0.1:8080].
    #[arg(long, env = "GRUS_SERVER", global = true)]
    pub server: Option<String>,
    /// Bearer token: an API token (grus_...) or an OIDC token [default: the config file's].
    #[arg(long, env = "GRUS_TOKEN", global = true, hide_env_values = true)]
    pub token: Option<String>,
    /// Identity sent to a server running with --dev (X-Grus-Dev-User) when there is no token.
    /// Without a token, a loopback server gets `admin`.
    #[arg(long, env = "GRUS_DEV_USER", global = true)]
    pub dev_user: Option<String>,
    /// Config file [default: $XDG_CONFIG_HOME/grus/config.toml or ~/.config/grus/config.toml].
    #[arg(long, env = "GRUS_CONFIG", global = true)]
    pub config: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Sign in: store an API token (--token) or get one from the OIDC provider.
    Login(LoginArgs),
    /// Forget the stored token.
    Logout,
    /// Submit a job from a YAML file (the portal's YAML editor's schema; `-` reads stdin).
    Submit(SubmitArgs),
    /// List jobs you can see, newest first.
    Jobs(JobsArgs),
    /// Show one job: state, tasks, replicas, dispatches, and why it is pending.
    Job(JobArgs),
    /// Print a replica's output (stdout and stderr); -f follows it until it ends.
    Logs(LogsArgs),
    /// Cancel a job.
    Cancel(CancelArgs),
    /// Suspend a job: it gives back its GPUs and its quota (a running job after its grace
    /// period) and keeps its history until `grus resume`.
    Suspend(SuspendArgs),
    /// Resume a suspended job: admitted again and dispatched wherever it fits.
    Resume(CancelArgs),
    /// List inference services you can see: state, ready/desired replicas, revision.
    Services(ServicesArgs),
    /// Manage one inference service: apply a YAML, show, scale, set its load, delete.
    Service(ServiceArgs),
    /// List interactive workspaces that have not ended: idle rule and address.
    Workspaces(WorkspacesArgs),
    /// List queues with their quotas and usage.
    Queues(QueuesArgs),
    /// List clusters: health and free GPUs per model.
    Clusters(OutputArgs),
    /// Operate a cluster or one of its nodes (platform admins): cordon, drain, uncordon,
    /// retire; audited.
    Cluster(ClusterArgs),
    /// Show, set or remove the monthly budget of a project (tenant admins) or a tenant
    /// (platform admins): spent, committed by running work, status.
    Budget(BudgetArgs),
    /// List tenants you can see with their rights (highest priority class, preemption); with
    /// a tenant and flags, change its rights (platform admins).
    Tenants(TenantsArgs),
    /// Export a billing period as a FOCUS 1.2 file (closed periods only).
    Usage(UsageArgs),
    /// Print a shell completion script.
    Completions(CompletionsArgs),
    /// Run Grus on this machine: grus-api, the portal and simulated clusters in one process,
    /// with demo data and a dev login (loopback only).
    Dev(crate::dev::DevArgs),
}

#[derive(Debug, Args)]
pub struct OutputArgs {
    /// Output format.
    #[arg(short = 'o', long = "output", value_enum, default_value_t = Format::Table)]
    pub output: Format,
}

#[derive(Debug, Args)]
pub struct LoginArgs {
    /// OIDC issuer URL [default: the config file's `oidc.issuer`]. Ignored with --token.
    #[arg(long, env = "GRUS_OIDC_ISSUER")]
    pub issuer: Option<String>,
    /// OIDC client id of the CLI (a public client) [default: the config file's `oidc.client_id`].
    #[arg(long, env = "GRUS_OIDC_CLIENT_ID")]
    pub client_id: Option<String>,
    /// Extra scopes besides `openid` (comma-separated) [default: email,profile,offline_access].
    #[arg(long, value_delimiter = ',')]
    pub scopes: Vec<String>,
    /// Use the browser flow (authorization code + PKCE on a loopback redirect) even when the
    /// provider supports the device flow.
    #[arg(long)]
    pub browser: bool,
    /// Do not try to open a browser; print the URL instead.
    #[arg(long)]
    pub no_open: bool,
    /// Give up when the sign-in is not completed within this time.
    #[arg(long, default_value = "5m", value_parser = humantime::parse_duration)]
    pub timeout: Duration,
}

#[derive(Debug, Args)]
pub struct SubmitArgs {
    /// The job YAML (`-` for stdin).
    pub file: PathBuf,
    /// Follow the job until it ends; exit 0 on Succeeded, 10 on Failed, 11 on Cancelled.
    #[arg(long)]
    pub wait: bool,
    /// With --wait: give up after this long (exit 8); the job keeps running.
    #[arg(long, value_parser = humantime::parse_duration, requires = "wait")]
    pub timeout: Option<Duration>,
    /// Validate and show whether admission would accept the job and where it would go;
    /// stores nothing.
    #[arg(long, conflicts_with = "wait")]
    pub dry_run: bool,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Args)]
pub struct ServicesArgs {
    /// Only this project (slug).
    #[arg(long, short = 'p')]
    pub project: Option<String>,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Args)]
pub struct WorkspacesArgs {
    /// Only this project (slug).
    #[arg(long, short = 'p')]
    pub project: Option<String>,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Args)]
pub struct ServiceArgs {
    #[command(subcommand)]
    pub action: ServiceAction,
}

/// Names a live service: its name, and its project when the name is in several.
#[derive(Debug, Args)]
pub struct ServiceName {
    pub name: String,
    /// Its project (slug); needed only when several projects you see have a service of this name.
    #[arg(long, short = 'p')]
    pub project: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum ServiceAction {
    /// Create a service from a YAML file, or update it (a changed replica spec is a new
    /// revision, rolled out within its rollout bounds). `-` reads stdin.
    Apply {
        #[arg(short = 'f', long = "file")]
        file: PathBuf,
        #[command(flatten)]
        output: OutputArgs,
    },
    /// Show a service: replicas per cluster, autoscaling history, revisions.
    Show {
        #[command(flatten)]
        service: ServiceName,
        #[command(flatten)]
        output: OutputArgs,
    },
    /// Set its replica count now, and/or its bounds (with autoscaling, the rule moves the
    /// count again within the bounds).
    Scale {
        #[command(flatten)]
        service: ServiceName,
        #[arg(long)]
        replicas: Option<i32>,
        #[arg(long)]
        min: Option<i32>,
        #[arg(long)]
        max: Option<i32>,
    },
    /// Report its current request rate (requests per second), which request-rate
    /// autoscaling reads; in the sim, a synthetic load.
    Load {
        #[command(flatten)]
        service: ServiceName,
        requests_per_second: f64,
    },
    /// Delete it: every replica is stopped.
    Delete {
        #[command(flatten)]
        service: ServiceName,
    },
}

#[derive(Debug, Args)]
pub struct JobsArgs {
    /// Only this project (slug).
    #[arg(long)]
    pub project: Option<String>,
    /// Only this queue (name; needs --project).
    #[arg(long, requires = "project")]
    pub queue: Option<String>,
    /// Only these states (comma-separated).
    #[arg(long, value_delimiter = ',', value_parser = named_value(&JobState::ALL, |_| None))]
    pub state: Vec<JobState>,
    /// Only jobs submitted by this user: `me`, a user id, or a subject (`dev:alice`).
    #[arg(long)]
    pub user: Option<String>,
    /// Only jobs on this cluster.
    #[arg(long)]
    pub cluster: Option<String>,
    /// Only jobs whose name contains this (case-insensitive).
    #[arg(long)]
    pub search: Option<String>,
    /// At most this many jobs.
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub limit: u32,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Args)]
pub struct JobArgs {
    /// The job's id.
    pub id: String,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Args)]
pub struct LogsArgs {
    /// The job's id.
    pub id: String,
    /// The task [default: the job's first].
    #[arg(long)]
    pub task: Option<String>,
    /// The replica's index within the task.
    #[arg(long)]
    pub replica: Option<u32>,
    /// Only the last N lines (1 to 10000).
    #[arg(long, value_name = "N")]
    pub tail: Option<u32>,
    /// Follow: print new lines as they are written until the replica ends; then exit with the
    /// job's exit code, as `grus submit --wait`.
    #[arg(short, long)]
    pub follow: bool,
    /// Start each line with the time it was written (UTC).
    #[arg(long)]
    pub timestamps: bool,
}

#[derive(Debug, Args)]
pub struct SuspendArgs {
    /// The job's id.
    pub id: String,
    /// How long a running job has to stop (0s to 1h).
    #[arg(long, default_value = "30s", value_parser = humantime::parse_duration)]
    pub grace: std::time::Duration,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Args)]
pub struct CancelArgs {
    /// The job's id.
    pub id: String,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Args)]
pub struct QueuesArgs {
    /// The queue to show or, with flags, change (project admins); needs --project.
    #[arg(requires = "project")]
    pub queue: Option<String>,
    /// Only this project (slug).
    #[arg(long)]
    pub project: Option<String>,
    /// Its weight in fair share.
    #[arg(long, requires = "queue")]
    pub weight: Option<f64>,
    /// Replaces its weights per node pool, where they differ from --weight: POOL=WEIGHT,
    /// repeatable (train=3); `none` removes them.
    #[arg(long, requires = "queue", value_parser = pool_weight)]
    pub pool_weight: Vec<PoolWeight>,
    /// Whether it may borrow idle capacity above its guarantee.
    #[arg(long, requires = "queue")]
    pub borrow: Option<bool>,
    /// Aging: a job waiting this long (e.g. 2h) is raised one priority class, and again after
    /// each further period (never to critical); `none` turns it off.
    #[arg(long, requires = "queue", value_parser = optional_duration)]
    pub max_wait: Option<DurationOrNone>,
    /// The runtime limit of a job that names none (e.g. 4h); `none` removes it.
    #[arg(long, requires = "queue", value_parser = optional_duration)]
    pub default_runtime: Option<DurationOrNone>,
    /// No job may ask for a longer runtime (e.g. 2d); `none` removes the bound.
    #[arg(long, requires = "queue", value_parser = optional_duration)]
    pub max_runtime: Option<DurationOrNone>,
    /// A daily window, HH:MM-HH:MM UTC (e.g. 09:00-18:00), in which the queue's borrowed work
    /// is suspended and after which it resumes; `none` removes it.
    #[arg(long, requires = "queue")]
    pub suspend_borrowed_during: Option<String>,
    /// GPUs of its gpu guarantee kept for interactive workspaces (e.g. 2 or 0.5): its batch
    /// work is admitted as if the guarantee and limit were that much smaller; 0 removes it.
    #[arg(long, requires = "queue")]
    pub workspace_reserve: Option<f64>,
    /// The project's weight among its tenant's projects in fair share (tenant admins).
    #[arg(long, requires = "project")]
    pub project_weight: Option<f64>,
    /// Replaces the project's guarantees in fair share (tenant admins): RESOURCE=AMOUNT,
    /// repeatable, as `grus tenants --guarantee`; `none` removes them.
    #[arg(long, requires = "project", value_parser = resource_amount)]
    pub project_guarantee: Vec<ResourceAmount>,
    /// Replaces the project's limits (tenant admins): what its queues together may be admitted
    /// for, RESOURCE=AMOUNT, repeatable, as `grus tenants --limit`; `none` removes them.
    #[arg(long, requires = "project", value_parser = resource_amount)]
    pub project_limit: Vec<ResourceAmount>,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// One `--pool-weight` (`None`: `none`, every one removed).
#[derive(Clone, Debug, PartialEq)]
pub struct PoolWeight(pub Option<(String, f64)>);

/// `POOL=WEIGHT`, or `none`.
fn pool_weight(s: &str) -> Result<PoolWeight, String> {
    if s == "none" {
        return Ok(PoolWeight(None));
    }
    let (pool, weight) = s.split_once('=').ok_or("expected POOL=WEIGHT, e.g. train=3")?;
    let weight: f64 = weight.parse().map_err(|_| format!("{weight:?} is not a number"))?;
    Ok(PoolWeight(Some((pool.to_owned(), weight))))
}

/// A setting's duration, or `None` for `none` (the setting removed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DurationOrNone(pub Option<std::time::Duration>);

/// A duration like `90m`, or `none`.
fn optional_duration(s: &str) -> Result<DurationOrNone, String> {
    if s == "none" {
        return Ok(DurationOrNone(None));
    }
    humantime::parse_duration(s)
        .map(|d| DurationOrNone(Some(d)))
        .map_err(|e| format!("{e} (a duration like 90m or 2h, or none)"))
}

#[derive(Debug, Args)]
pub struct ClusterArgs {
    #[command(subcommand)]
    pub action: ClusterAction,
}

/// Which cluster, or which node of it.
#[derive(Debug, Args)]
pub struct ClusterTarget {
    /// The cluster's id.
    pub cluster: String,
    /// Only this node of the cluster.
    #[arg(long)]
    pub node: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum ClusterAction {
    /// It takes no new work; what runs there stays.
    Cordon {
        #[command(flatten)]
        target: ClusterTarget,
    },
    /// Cordon it and evict its preemptible work after the grace period; the work is
    /// requeued and placed elsewhere. Work that is not preemptible runs to its end.
    Drain {
        #[command(flatten)]
        target: ClusterTarget,
        /// How long evicted work has to stop (0s to 1h).
        #[arg(long, default_value = "30s", value_parser = humantime::parse_duration)]
        grace: std::time::Duration,
    },
    /// It takes new work again.
    Uncordon {
        #[command(flatten)]
        target: ClusterTarget,
    },
    /// Retire an empty cluster: it leaves the list and its agent token stops working.
    Retire {
        /// The cluster's id.
        cluster: String,
    },
}

#[derive(Debug, Args)]
pub struct BudgetArgs {
    /// The project (slug) whose budget to show or change.
    #[arg(long, short = 'p', required_unless_present = "tenant", conflicts_with = "tenant")]
    pub project: Option<String>,
    /// The tenant (slug) whose budget to show or change.
    #[arg(long)]
    pub tenant: Option<String>,
    /// Set the monthly amount, in the unit (`1500`, `250.5`).
    #[arg(long, conflicts_with = "remove")]
    pub set: Option<String>,
    /// What the amount counts.
    #[arg(long, default_value = "currency", requires = "set", value_parser = named_value(&BudgetUnit::ALL, BudgetUnit::description))]
    pub unit: BudgetUnit,
    /// Warn at this percentage of the amount.
    #[arg(long, default_value_t = 80, requires = "set", value_parser = clap::value_parser!(i32).range(1..=100))]
    pub warn_at: i32,
    /// Only warn: never refuse new jobs when the amount is reached.
    #[arg(long, requires = "set")]
    pub soft_only: bool,
    /// Also suspend the borrowed work under the budget while it is spent (resumed when it is
    /// not: a new month, a larger amount).
    #[arg(long, requires = "set", conflicts_with = "soft_only")]
    pub suspend_borrowed: bool,
    /// Remove the budget.
    #[arg(long)]
    pub remove: bool,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Args)]
pub struct TenantsArgs {
    /// The tenant (slug) to show or change.
    pub tenant: Option<String>,
    /// The highest priority class its members may use: low, normal, high or critical.
    #[arg(long, requires = "tenant")]
    pub max_priority: Option<String>,
    /// Whether its jobs may have others' work evicted to make room.
    #[arg(long, requires = "tenant")]
    pub may_preempt: Option<bool>,
    /// Its jobs may reclaim borrowed work only of its own tenant and these (comma-separated
    /// slugs; empty: its own only).
    #[arg(long, requires = "tenant", value_delimiter = ',', num_args = 0.., conflicts_with = "reclaim_from_any")]
    pub reclaim_from: Option<Vec<String>>,
    /// Its jobs may reclaim borrowed work of any tenant.
    #[arg(long, requires = "tenant")]
    pub reclaim_from_any: bool,
    /// Its weight among tenants in fair share.
    #[arg(long, requires = "tenant")]
    pub weight: Option<f64>,
    /// Replaces its guarantees in fair share: RESOURCE=AMOUNT, repeatable (gpu=16,
    /// gpu/A100=8, pool/train=8 in GPUs; cpu_milli, memory_mib as numbers); `none` removes them.
    #[arg(long, requires = "tenant", value_parser = resource_amount)]
    pub guarantee: Vec<ResourceAmount>,
    /// Replaces its limits: what its projects together may be admitted for, RESOURCE=AMOUNT,
    /// repeatable, as --guarantee (gpu=0 admits nothing); `none` removes them.
    #[arg(long, requires = "tenant", value_parser = resource_amount)]
    pub limit: Vec<ResourceAmount>,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// One `--guarantee` or `--limit` (`None`: `none`, every one removed).
#[derive(Clone, Debug, PartialEq)]
pub struct ResourceAmount(pub Option<(String, i64)>);

/// `RESOURCE=AMOUNT` with GPU keys in GPUs (to milli), or `none`.
fn resource_amount(s: &str) -> Result<ResourceAmount, String> {
    if s == "none" {
        return Ok(ResourceAmount(None));
    }
    let (resource, amount) = s.split_once('=').ok_or("expected RESOURCE=AMOUNT, e.g. gpu=8")?;
    let gpus = resource == "gpu" || resource.starts_with("gpu/") || resource.starts_with("pool/");
    let value = if gpus {
        let n: f64 = amount.parse().map_err(|_| format!("{amount:?} is not a number of GPUs"))?;
        if !(0.0..=1e9).contains(&n) {
            return Err(format!("{amount:?} GPUs is out of range"));
        }
        (n * 1000.0).round() as i64
    } else {
        amount.parse::<i64>().map_err(|_| format!("{amount:?} is not a whole number"))?
    };
    Ok(ResourceAmount(Some((resource.to_owned(), value))))
}

/// The `guarantees` or `limits` variable for `setTenantShare` / `setProjectShare` (null: keep
/// them; `none` alone: `[]`).
pub fn amounts_var(given: &[ResourceAmount]) -> serde_json::Value {
    if given.is_empty() {
        return serde_json::Value::Null;
    }
    serde_json::Value::Array(
        given
            .iter()
            .filter_map(|g| g.0.as_ref())
            .map(|(resource, amount)| serde_json::json!({ "resource": resource, "amount": amount }))
            .collect(),
    )
}

#[derive(Debug, Args)]
pub struct UsageArgs {
    /// The month, `YYYY-MM` (UTC); it must have ended, unless --cutoff is given.
    #[arg(long)]
    pub period: String,
    /// Month to date: the month up to this instant (RFC 3339, e.g. 2026-11-28T00:00:00Z;
    /// `today`: 00:00 UTC today; `now`: the server's now, printed with the file). The same
    /// cut-off gives the same file again.
    #[arg(long)]
    pub cutoff: Option<String>,
    /// File format.
    #[arg(long, default_value = "focus-csv", value_parser = named_value(&ExportFormat::ALL, ExportFormat::description))]
    pub format: ExportFormat,
    /// Only this tenant (slug or id); default: every tenant (platform admins).
    #[arg(long)]
    pub tenant: Option<String>,
    /// Write the file here instead of stdout.
    #[arg(short = 'o', long = "output")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell.
    pub shell: clap_complete::Shell,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn help_documents_the_exit_codes() {
        let help = Cli::command().render_long_help().to_string();
        assert!(help.contains("Exit codes:"), "{help}");
        assert!(help.contains("6   server unreachable"), "{help}");
    }

    #[test]
    fn states_are_graphql_enum_values() {
        assert_eq!(JobState::Running.api_name(), "RUNNING");
        let cli = Cli::try_parse_from(["grus", "jobs", "--state", "pending,running"]).unwrap();
        let Command::Jobs(args) = cli.command else { panic!("jobs") };
        assert_eq!(args.state, [JobState::Pending, JobState::Running]);
    }

    #[test]
    fn the_default_export_format_is_a_value_of_the_flag() {
        let cli = Cli::try_parse_from(["grus", "usage", "--period", "2026-01"]).unwrap();
        let Command::Usage(args) = cli.command else { panic!("usage") };
        assert_eq!(args.format, ExportFormat::FocusCsv);
        assert_eq!(ExportFormat::FocusCsv.cli_name(), "focus-csv");
    }
}
