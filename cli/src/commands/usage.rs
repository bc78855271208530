//! `grus usage --period 2026-11 [--cutoff T] --format focus-csv [-o file]`: `exportUsage`
//! stores (or finds) the FOCUS file of a closed period (or of the month up to a cut-off), then
//! the bytes come from `GET /api/exports/{id}` and are checked against the export's SHA-256
//! before they are written.

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use super::jobs::text;
use super::Context;
use crate::cli::UsageArgs;
use crate::client::Client;
use crate::exit::{CliError, CliResult, Exit};
use crate::output;

const EXPORT: &str = "mutation Export($period: PeriodInput!, $format: ExportFormat!, $tenantId: ID) {
  exportUsage(period: $period, format: $format, tenantId: $tenantId) { id sha256 bytes rows periodEnd downloadUrl }
}";

/// Checks `YYYY-MM` before asking the server (a typo is a usage error, not a server one).
pub fn check_period(period: &str) -> CliResult<()> {
    let ok = period.len() == 7
        && period.as_bytes()[4] == b'-'
        && period[..4].bytes().all(|b| b.is_ascii_digit())
        && period[5..].parse::<u8>().is_ok_and(|m| (1..=12).contains(&m));
    if ok {
        Ok(())
    } else {
        Err(CliError::usage(format!("invalid --period {period:?}: expected a month as YYYY-MM, like 2026-11")))
    }
}

/// The period `exportUsage` is asked for: `month`, up to `--cutoff` when given (`now`: the
/// server's clock decides, `toDate`).
pub fn export_period(month: &str, cutoff: Option<&str>, now: chrono::DateTime<chrono::Utc>) -> CliResult<Value> {
    Ok(match cutoff {
        None => json!({ "month": month }),
        Some("now") => json!({ "month": month, "toDate": true }),
        Some(c) => json!({ "month": month, "cutoff": parse_cutoff(c, now)? }),
    })
}

/// `--cutoff` as the API takes it: an RFC 3339 instant, or `today` (00:00 UTC of `now`'s day).
pub fn parse_cutoff(cutoff: &str, now: chrono::DateTime<chrono::Utc>) -> CliResult<String> {
    if cutoff == "today" {
        let midnight = now.date_naive().and_time(chrono::NaiveTime::MIN).and_utc();
        return Ok(midnight.to_rfc3339_opts(chrono::SecondsFormat::Secs, true));
    }
    chrono::DateTime::parse_from_rfc3339(cutoff)
        .map(|t| t.to_utc().to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
        .map_err(|_| {
            CliError::usage(format!(
                "invalid --cutoff {cutoff:?}: expected `now`, `today` or a time like 2026-11-28T00:00:00Z"
            ))
        })
}

async fn tenant_id(client: &Client, tenant: &str) -> CliResult<String> {
    if !tenant.is_empty() && tenant.bytes().all(|b| b.is_ascii_digit()) {
        return Ok(tenant.to_owned());
    }
    let data: Value = client.graphql("{ tenants { id slug } }", json!({})).await?;
    data["tenants"]
        .as_array()
        .and_then(|ts| ts.iter().find(|t| t["slug"] == tenant))
        .and_then(|t| text(t, "id"))
        .ok_or_else(|| CliError::new(Exit::NotFound, format!("tenant {tenant:?} not found (or not visible to you)")))
}

pub async fn export(ctx: &mut Context, args: UsageArgs) -> CliResult<Exit> {
    check_period(&args.period)?;
    let client = ctx.client().await?;
    let tenant = match &args.tenant {
        Some(t) => Some(tenant_id(&client, t).await?),
        None => None,
    };
    let period = export_period(&args.period, args.cutoff.as_deref(), chrono::Utc::now())?;
    let vars = json!({ "period": period, "format": args.format.api_name(), "tenantId": tenant });
    let data: Value = client.graphql(EXPORT, vars).await?;
    let export = &data["exportUsage"];
    let url = text(export, "downloadUrl").ok_or_else(|| CliError::generic("the export has no download URL"))?;
    let bytes = client.download(&url).await?;
    let digest = hex(&Sha256::digest(&bytes));
    if text(export, "sha256").as_deref() != Some(digest.as_str()) {
        return Err(CliError::generic(format!(
            "the downloaded export does not match its SHA-256 ({} expected, {digest} received); try again",
            text(export, "sha256").unwrap_or_default()
        )));
    }
    match &args.output {
        Some(path) => {
            std::fs::write(path, &bytes)
                .map_err(|e| CliError::generic(format!("cannot write {}: {e}", path.display())))?;
            eprintln!(
                "wrote {} ({} rows, {} bytes, sha256 {digest}, up to {})",
                path.display(),
                text(export, "rows").unwrap_or_default(),
                bytes.len(),
                text(export, "periodEnd").unwrap_or_default()
            );
        }
        None => output::write_stdout(&bytes)?,
    }
    Ok(Exit::Ok)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn periods_are_months() {
        check_period("2026-11").unwrap();
        check_period("2026-01").unwrap();
        for bad in ["2026-13", "2026-00", "2026-1", "26-11", "2026/11", "2026-11-01", ""] {
            assert_eq!(check_period(bad).unwrap_err().exit, Exit::Usage, "{bad}");
        }
    }

    #[test]
    fn a_cutoff_is_today_or_an_instant() {
        let now = chrono::DateTime::parse_from_rfc3339("2026-11-28T19:45:12Z").unwrap().to_utc();
        assert_eq!(parse_cutoff("today", now).unwrap(), "2026-11-28T00:00:00Z");
        assert_eq!(parse_cutoff("2026-11-20T12:00:00+01:00", now).unwrap(), "2026-11-20T11:00:00Z");
        assert_eq!(parse_cutoff("yesterday", now).unwrap_err().exit, Exit::Usage);
        // `now` is the server's: the CLI's clock may run ahead of it.
        assert_eq!(export_period("2026-11", Some("now"), now).unwrap(), json!({ "month": "2026-11", "toDate": true }));
        assert_eq!(export_period("2026-11", None, now).unwrap(), json!({ "month": "2026-11" }));
        assert_eq!(
            export_period("2026-11", Some("today"), now).unwrap(),
            json!({ "month": "2026-11", "cutoff": "2026-11-28T00:00:00Z" })
        );
    }
}
