//! `grus login` and `grus logout`. A token (`--token` / GRUS_TOKEN) is checked with `{ me }`
//! before it is stored; without one, the OIDC provider from `--issuer`/`--client-id` (or the
//! config file) signs the user in. The config file keeps the token for the server it was
//! checked against.

use serde_json::{json, Value};

use super::jobs::text;
use super::Context;
use crate::cli::LoginArgs;
use crate::client::Client;
use crate::config::{self, Auth, OidcSettings, Settings};
use crate::exit::{CliError, CliResult, Exit};
use crate::oidc::{self, LoginRequest};

/// Asks the server who the token belongs to.
async fn whoami(server: &url::Url, token: &str) -> CliResult<String> {
    let settings = Settings { server: server.clone(), auth: Auth::Bearer(token.to_owned()), token_from_file: false };
    let data: Value = Client::new(settings)?.graphql("{ me { subject displayName } }", json!({})).await?;
    Ok(text(&data, "me.subject").unwrap_or_default())
}

pub async fn login(ctx: &mut Context, args: LoginArgs) -> CliResult<Exit> {
    let settings = config::resolve(&ctx.overrides, &ctx.file)?;
    let server = settings.server.clone();
    let server_text = server.as_str().trim_end_matches('/').to_owned();
    if let Some(token) = ctx.overrides.token.clone().filter(|t| !t.trim().is_empty()) {
        let token = token.trim().to_owned();
        let subject = whoami(&server, &token).await?;
        ctx.file.server = Some(server_text.clone());
        ctx.file.token = Some(token);
        ctx.file.refresh_token = None;
        ctx.file.token_expires_at = None;
        config::save(&ctx.config_path, &ctx.file)?;
        println!("signed in to {server_text} as {subject} (token stored in {})", ctx.config_path.display());
        return Ok(Exit::Ok);
    }
    let stored = ctx.file.oidc.clone().unwrap_or_default();
    let issuer = args.issuer.clone().unwrap_or(stored.issuer);
    let client_id = args.client_id.clone().unwrap_or(stored.client_id);
    if issuer.is_empty() || client_id.is_empty() {
        return Err(CliError::usage(
            "grus login needs an API token (`grus login --token grus_...`; create one in the portal) or your \
             identity provider (`grus login --issuer https://idp.example.com --client-id grus-cli`)",
        ));
    }
    let scopes = if args.scopes.is_empty() { stored.scopes } else { args.scopes.clone() };
    let tokens = oidc::login(&LoginRequest {
        issuer: &issuer,
        client_id: &client_id,
        scopes: &scopes,
        force_browser: args.browser,
        open_browser: !args.no_open,
        timeout: args.timeout,
    })
    .await?;
    let subject = whoami(&server, &tokens.bearer).await.map_err(|e| {
        if e.exit == Exit::Auth {
            CliError::new(
                Exit::Auth,
                format!(
                    "{server_text} refused the token from {issuer}: the server's --oidc-issuer and --oidc-audience \
                     must name this issuer and client id {client_id:?}"
                ),
            )
        } else {
            e
        }
    })?;
    ctx.file.server = Some(server_text.clone());
    ctx.file.token = Some(tokens.bearer);
    ctx.file.refresh_token = tokens.refresh_token;
    ctx.file.token_expires_at = tokens.expires_at;
    ctx.file.oidc = Some(OidcSettings { issuer, client_id, scopes });
    config::save(&ctx.config_path, &ctx.file)?;
    println!("signed in to {server_text} as {subject} (token stored in {})", ctx.config_path.display());
    Ok(Exit::Ok)
}

pub fn logout(ctx: &mut Context) -> CliResult<Exit> {
    if ctx.file.token.is_none() && ctx.file.refresh_token.is_none() {
        println!("no stored token in {}", ctx.config_path.display());
        return Ok(Exit::Ok);
    }
    ctx.file.token = None;
    ctx.file.refresh_token = None;
    ctx.file.token_expires_at = None;
    config::save(&ctx.config_path, &ctx.file)?;
    println!("stored token removed from {}", ctx.config_path.display());
    Ok(Exit::Ok)
}
