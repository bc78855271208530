//! The GraphQL client: one POST to `/graphql` per call, credentials from [`Settings`], and the
//! API's errors turned into [`CliError`]s with the documented exit codes and a hint of what to
//! do next. Downloads (`/api/exports/{id}`) use the same credentials.

use std::time::Duration;

use grus_api::error::ErrorCode;
use grus_api::graphql::auth::DEV_USER_HEADER;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::Value;
use url::Url;

use crate::config::{Auth, Settings};
use crate::exit::{CliError, CliResult, Exit};

pub struct Client {
    http: reqwest::Client,
    settings: Settings,
}

/// One GraphQL error as the API sends it.
#[derive(Debug, Deserialize)]
struct GraphqlError {
    message: String,
    #[serde(default)]
    extensions: Option<Value>,
}

#[derive(Debug, Deserialize)]
struct GraphqlResponse {
    #[serde(default)]
    data: Option<Value>,
    #[serde(default)]
    errors: Vec<GraphqlError>,
}

impl Client {
    pub fn new(settings: Settings) -> CliResult<Self> {
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .timeout(Duration::from_secs(120))
            .user_agent(concat!("grus-cli/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| CliError::generic(format!("cannot build the HTTP client: {e}")))?;
        Ok(Client { http, settings })
    }

    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    pub fn server(&self) -> &Url {
        &self.settings.server
    }

    fn url(&self, path: &str) -> CliResult<Url> {
        self.settings
            .server
            .join(path.trim_start_matches('/'))
            .map_err(|e| CliError::generic(format!("cannot build a URL for {path}: {e}")))
    }

    fn authorize(&self, req: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match &self.settings.auth {
            Auth::Bearer(token) => req.bearer_auth(token),
            Auth::DevUser { name, .. } => req.header(DEV_USER_HEADER, name),
            Auth::None => req,
        }
    }

    /// Runs one operation and deserializes its `data`.
    pub async fn graphql<T: DeserializeOwned>(&self, query: &str, variables: Value) -> CliResult<T> {
        let url = self.url("graphql")?;
        let body = serde_json::json!({ "query": query, "variables": variables });
        let response =
            self.authorize(self.http.post(url.clone()).json(&body)).send().await.map_err(|e| self.send_error(e))?;
        let status = response.status();
        let text = response.text().await.map_err(|e| self.send_error(e))?;
        if !status.is_success() {
            return Err(self.http_error(&url, status, &text));
        }
        let parsed: GraphqlResponse = serde_json::from_str(&text).map_err(|e| {
            CliError::generic(format!("{url} did not answer with a GraphQL response ({e}): is this a Grus server?"))
        })?;
        if let Some(first) = parsed.errors.first() {
            return Err(self.api_error(first, &parsed.errors));
        }
        let data = parsed.data.filter(|d| !d.is_null()).ok_or_else(|| CliError::generic("the API answered no data"))?;
        serde_json::from_value(data).map_err(|e| CliError::generic(format!("unexpected answer from the API: {e}")))
    }

    /// GETs a file under the server (an export), with the same credentials.
    pub async fn download(&self, path: &str) -> CliResult<Vec<u8>> {
        let url = self.url(path)?;
        let response = self.authorize(self.http.get(url.clone())).send().await.map_err(|e| self.send_error(e))?;
        let status = response.status();
        let bytes = response.bytes().await.map_err(|e| self.send_error(e))?;
        if !status.is_success() {
            return Err(self.http_error(&url, status, &String::from_utf8_lossy(&bytes)));
        }
        Ok(bytes.to_vec())
    }

    /// A request that got no HTTP answer.
    fn send_error(&self, e: reqwest::Error) -> CliError {
        let server = self.settings.server.as_str().trim_end_matches('/');
        let cause = error_chain(&e);
        if e.is_connect() || e.is_timeout() {
            let hint = if crate::config::is_loopback(&self.settings.server) {
                "is `grus dev` running? Otherwise point --server (or GRUS_SERVER) at your Grus server"
            } else {
                "check the address (--server, GRUS_SERVER or `server` in the config file) and your network"
            };
            CliError::new(Exit::Unreachable, format!("cannot reach {server}: {hint}"))
                .with_details(vec![format!("cause: {cause}")])
        } else {
            CliError::new(Exit::Unreachable, format!("request to {server} failed: {cause}"))
        }
    }

    /// An HTTP error status (no GraphQL answer).
    fn http_error(&self, url: &Url, status: reqwest::StatusCode, body: &str) -> CliError {
        let snippet: String = body.trim().chars().take(200).collect();
        let exit = match status.as_u16() {
            401 | 403 => Exit::Auth,
            404 => Exit::NotFound,
            413 => Exit::Validation,
            _ => Exit::Generic,
        };
        let mut err = CliError::new(exit, format!("{url} answered {status}: {snippet}"));
        if exit == Exit::Auth {
            err.details.push(self.auth_hint());
        }
        err
    }

    fn auth_hint(&self) -> String {
        match &self.settings.auth {
            Auth::Bearer(_) => "the token was refused (expired or revoked?): run `grus login`".into(),
            Auth::DevUser { name, implicit } => {
                let how = if *implicit { "the default dev user" } else { "the dev user" };
                format!(
                    "{how} `{name}` was refused: the server is not running with --dev. Run `grus login` \
                     (or set GRUS_TOKEN)"
                )
            }
            Auth::None => "not signed in: run `grus login` (or set GRUS_TOKEN)".into(),
        }
    }

    /// The first GraphQL error decides the exit code; VALIDATION lists every field.
    fn api_error(&self, first: &GraphqlError, all: &[GraphqlError]) -> CliError {
        let code = first.extensions.as_ref().and_then(|e| e.get("code")).and_then(Value::as_str).unwrap_or("");
        let exit = Exit::from_api_code(code);
        let code = ErrorCode::parse(code);
        let mut details = Vec::new();
        if code == Some(ErrorCode::Validation) {
            let fields = first.extensions.as_ref().and_then(|e| e.get("fields")).and_then(Value::as_array);
            for f in fields.into_iter().flatten() {
                let field = f.get("field").and_then(Value::as_str).unwrap_or("?");
                let message = f.get("message").and_then(Value::as_str).unwrap_or("");
                details.push(format!("{field}: {message}"));
            }
        }
        for other in &all[1..] {
            details.push(other.message.clone());
        }
        match code {
            Some(ErrorCode::Unauthenticated) => details.push(self.auth_hint()),
            Some(ErrorCode::Forbidden) => {
                details.push("ask a project or tenant admin for a role that allows this".into())
            }
            _ => {}
        }
        let message = if code == Some(ErrorCode::Validation) && !details.is_empty() {
            "invalid input:".to_owned()
        } else {
            first.message.clone()
        };
        CliError::new(exit, message).with_details(details)
    }
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = s.source();
    }
    out
}
