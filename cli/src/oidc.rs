//! Signing in with the identity provider, as a public client (no secret):
//!
//! - the device authorization flow (RFC 8628) when the issuer's discovery document has a
//!   `device_authorization_endpoint`: works over SSH, nothing listens locally;
//! - otherwise authorization code + PKCE S256 (RFC 7636) with a loopback redirect
//!   (`http://127.0.0.1:<random port>/callback`, RFC 8252), a random `state` checked on return.
//!
//! The token sent to grus-api is the ID token when the provider returns one (its audience is
//! the client id, which the server's `--oidc-audience` must name), else the access token. A
//! refresh token, when granted, renews it ([`refresh_if_expired`]).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use rand::RngCore as _;
use serde::Deserialize;
use sha2::{Digest, Sha256};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use crate::config::ConfigFile;
use crate::exit::{CliError, CliResult, Exit};

/// Scopes asked for besides `openid` when none are configured.
pub const DEFAULT_SCOPES: &[&str] = &["email", "profile", "offline_access"];

/// The parts of the discovery document used here.
#[derive(Clone, Debug, Deserialize)]
pub struct Discovery {
    pub authorization_endpoint: Option<String>,
    pub token_endpoint: String,
    #[serde(default)]
    pub device_authorization_endpoint: Option<String>,
}

#[derive(Debug, Deserialize)]
struct TokenResponse {
    access_token: String,
    #[serde(default)]
    id_token: Option<String>,
    #[serde(default)]
    refresh_token: Option<String>,
    #[serde(default)]
    expires_in: Option<i64>,
}

#[derive(Debug, Deserialize)]
struct OAuthError {
    error: String,
    #[serde(default)]
    error_description: Option<String>,
}

#[derive(Debug, Deserialize)]
struct DeviceAuthorization {
    device_code: String,
    user_code: String,
    verification_uri: String,
    #[serde(default)]
    verification_uri_complete: Option<String>,
    #[serde(default)]
    expires_in: Option<u64>,
    #[serde(default)]
    interval: Option<u64>,
}

/// What a successful sign-in yields, ready for the config file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tokens {
    /// What grus-api receives as the bearer token.
    pub bearer: String,
    pub refresh_token: Option<String>,
    /// Unix seconds.
    pub expires_at: Option<i64>,
}

/// How to sign in.
pub struct LoginRequest<'a> {
    pub issuer: &'a str,
    pub client_id: &'a str,
    pub scopes: &'a [String],
    pub force_browser: bool,
    pub open_browser: bool,
    pub timeout: Duration,
}

fn http() -> CliResult<reqwest::Client> {
    reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(10))
        .timeout(Duration::from_secs(30))
        .build()
        .map_err(|e| CliError::generic(format!("cannot build the HTTP client: {e}")))
}

fn now_s() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0)
}

fn provider_error(what: &str, e: impl std::fmt::Display) -> CliError {
    CliError::new(Exit::Unreachable, format!("identity provider: {what}: {e}"))
}

pub async fn discover(http: &reqwest::Client, issuer: &str) -> CliResult<Discovery> {
    let url = format!("{}/.well-known/openid-configuration", issuer.trim_end_matches('/'));
    let response = http.get(&url).send().await.map_err(|e| provider_error(&format!("cannot reach {url}"), e))?;
    if !response.status().is_success() {
        return Err(CliError::generic(format!("{url} answered {}: is the issuer URL right?", response.status())));
    }
    response.json().await.map_err(|e| CliError::generic(format!("{url}: not a discovery document: {e}")))
}

/// The PKCE S256 challenge of a verifier.
pub fn pkce_challenge(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

fn random_token() -> String {
    let mut bytes = [0u8; 32];
    rand::thread_rng().fill_bytes(&mut bytes);
    URL_SAFE_NO_PAD.encode(bytes)
}

/// `exp` of a JWT, read without verification (only to know when to refresh; the server
/// verifies the token).
pub fn jwt_expiry(token: &str) -> Option<i64> {
    let payload = token.split('.').nth(1)?;
    let bytes = URL_SAFE_NO_PAD.decode(payload.trim_end_matches('=')).ok()?;
    serde_json::from_slice::<serde_json::Value>(&bytes).ok()?.get("exp")?.as_i64()
}

fn tokens_from(response: TokenResponse, previous_refresh: Option<String>) -> Tokens {
    let bearer = response.id_token.unwrap_or(response.access_token);
    let expires_at = jwt_expiry(&bearer).or_else(|| response.expires_in.map(|s| now_s() + s));
    Tokens { bearer, refresh_token: response.refresh_token.or(previous_refresh), expires_at }
}

fn scope_string(scopes: &[String]) -> String {
    let mut all = vec!["openid".to_owned()];
    if scopes.is_empty() {
        all.extend(DEFAULT_SCOPES.iter().map(|s| (*s).to_owned()));
    } else {
        all.extend(scopes.iter().filter(|s| *s != "openid").cloned());
    }
    all.join(" ")
}

/// Posts a token request; `Ok(Err(error))` is an OAuth error answer (the caller may retry).
async fn token_request(
    http: &reqwest::Client,
    endpoint: &str,
    form: &[(&str, &str)],
) -> CliResult<Result<TokenResponse, OAuthError>> {
    let response =
        http.post(endpoint).form(form).send().await.map_err(|e| provider_error("token request failed", e))?;
    let status = response.status();
    let body = response.text().await.map_err(|e| provider_error("token request failed", e))?;
    if status.is_success() {
        return serde_json::from_str(&body)
            .map(Ok)
            .map_err(|e| CliError::generic(format!("identity provider: unexpected token answer: {e}")));
    }
    match serde_json::from_str::<OAuthError>(&body) {
        Ok(err) => Ok(Err(err)),
        Err(_) => Err(CliError::generic(format!("identity provider answered {status}: {}", body.trim()))),
    }
}

fn refused(err: &OAuthError) -> CliError {
    CliError::new(
        Exit::Auth,
        format!(
            "sign-in refused: {}{}",
            err.error,
            err.error_description.as_deref().map(|d| format!(" ({d})")).unwrap_or_default()
        ),
    )
}

/// Signs in with the device flow when available (unless `force_browser`), else the browser.
pub async fn login(req: &LoginRequest<'_>) -> CliResult<Tokens> {
    let http = http()?;
    let discovery = discover(&http, req.issuer).await?;
    match (&discovery.device_authorization_endpoint, req.force_browser) {
        (Some(device), false) => device_flow(&http, &discovery, device, req).await,
        _ => browser_flow(&http, &discovery, req).await,
    }
}

async fn device_flow(
    http: &reqwest::Client,
    discovery: &Discovery,
    endpoint: &str,
    req: &LoginRequest<'_>,
) -> CliResult<Tokens> {
    let scope = scope_string(req.scopes);
    let response = http
        .post(endpoint)
        .form(&[("client_id", req.client_id), ("scope", scope.as_str())])
        .send()
        .await
        .map_err(|e| provider_error("device authorization failed", e))?;
    if !response.status().is_success() {
        let status = response.status();
        let body = response.text().await.unwrap_or_default();
        return Err(CliError::new(Exit::Auth, format!("device authorization refused ({status}): {}", body.trim())));
    }
    let auth: DeviceAuthorization =
        response.json().await.map_err(|e| CliError::generic(format!("unexpected device authorization answer: {e}")))?;
    let url = auth.verification_uri_complete.clone().unwrap_or_else(|| auth.verification_uri.clone());
    eprintln!("To sign in, open {} and enter the code {}", auth.verification_uri, auth.user_code);
    if let Some(complete) = &auth.verification_uri_complete {
        eprintln!("(or open {complete})");
    }
    if req.open_browser {
        open_browser(&url);
    }
    let deadline = tokio::time::Instant::now() + req.timeout.min(Duration::from_secs(auth.expires_in.unwrap_or(600)));
    let mut interval = Duration::from_secs(auth.interval.unwrap_or(5).max(1));
    loop {
        if tokio::time::Instant::now() + interval > deadline {
            return Err(CliError::new(Exit::Auth, "the sign-in was not completed in time: run `grus login` again"));
        }
        tokio::time::sleep(interval).await;
        let form = [
            ("grant_type", "urn:ietf:params:oauth:grant-type:device_code"),
            ("device_code", auth.device_code.as_str()),
            ("client_id", req.client_id),
        ];
        match token_request(http, &discovery.token_endpoint, &form).await? {
            Ok(tokens) => return Ok(tokens_from(tokens, None)),
            Err(e) if e.error == "authorization_pending" => {}
            // RFC 8628 3.5: slow down by 5 seconds.
            Err(e) if e.error == "slow_down" => interval += Duration::from_secs(5),
            Err(e) => return Err(refused(&e)),
        }
    }
}

/// The `code` of a loopback callback request line, once its `state` matches.
pub fn parse_callback(request_line: &str, expected_state: &str) -> Result<String, String> {
    let target = request_line.split_whitespace().nth(1).ok_or("malformed request")?;
    let url = url::Url::parse(&format!("http://127.0.0.1{target}")).map_err(|_| "malformed request")?;
    if url.path() != "/callback" {
        return Err(format!("unexpected path {}", url.path()));
    }
    let get = |k: &str| url.query_pairs().find(|(n, _)| n == k).map(|(_, v)| v.into_owned());
    if let Some(error) = get("error") {
        return Err(format!("the provider refused: {error} {}", get("error_description").unwrap_or_default()));
    }
    if get("state").as_deref() != Some(expected_state) {
        return Err("the state does not match this sign-in".into());
    }
    get("code").ok_or_else(|| "no code in the callback".into())
}

async fn browser_flow(http: &reqwest::Client, discovery: &Discovery, req: &LoginRequest<'_>) -> CliResult<Tokens> {
    let authorize = discovery
        .authorization_endpoint
        .as_deref()
        .ok_or_else(|| CliError::generic("the provider has neither a device nor an authorization endpoint"))?;
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .map_err(|e| CliError::generic(format!("cannot listen on a loopback port for the redirect: {e}")))?;
    let port = listener.local_addr().map_err(CliError::from)?.port();
    let redirect = format!("http://127.0.0.1:{port}/callback");
    let verifier = random_token();
    let state = random_token();
    let mut url = url::Url::parse(authorize)
        .map_err(|e| CliError::generic(format!("bad authorization endpoint {authorize}: {e}")))?;
    url.query_pairs_mut()
        .append_pair("response_type", "code")
        .append_pair("client_id", req.client_id)
        .append_pair("redirect_uri", &redirect)
        .append_pair("scope", &scope_string(req.scopes))
        .append_pair("state", &state)
        .append_pair("code_challenge", &pkce_challenge(&verifier))
        .append_pair("code_challenge_method", "S256");
    eprintln!("To sign in, open this URL in a browser on this machine:\n  {url}");
    if req.open_browser {
        open_browser(url.as_str());
    }
    let code = tokio::time::timeout(req.timeout, async {
        loop {
            let (mut socket, _) = listener.accept().await.map_err(CliError::from)?;
            let mut buf = vec![0u8; 8192];
            let n = socket.read(&mut buf).await.unwrap_or(0);
            let head = String::from_utf8_lossy(&buf[..n]);
            let line = head.lines().next().unwrap_or_default();
            // Browsers also ask for /favicon.ico: answer 404 and keep waiting.
            if !line.contains(" /callback") {
                let _ = socket.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n").await;
                continue;
            }
            let result = parse_callback(line, &state);
            let body = match &result {
                Ok(_) => "Signed in to Grus. You can close this window.".to_owned(),
                Err(e) => format!("Sign-in failed: {e}"),
            };
            let response = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = socket.write_all(response.as_bytes()).await;
            return result.map_err(|e| CliError::new(Exit::Auth, format!("sign-in failed: {e}")));
        }
    })
    .await
    .map_err(|_| CliError::new(Exit::Auth, "the sign-in was not completed in time: run `grus login` again"))??;
    let form = [
        ("grant_type", "authorization_code"),
        ("code", code.as_str()),
        ("redirect_uri", redirect.as_str()),
        ("client_id", req.client_id),
        ("code_verifier", verifier.as_str()),
    ];
    match token_request(http, &discovery.token_endpoint, &form).await? {
        Ok(tokens) => Ok(tokens_from(tokens, None)),
        Err(e) => Err(refused(&e)),
    }
}

/// Best effort: the URL is printed anyway.
fn open_browser(url: &str) {
    let opener = if cfg!(target_os = "macos") { "open" } else { "xdg-open" };
    let _ = std::process::Command::new(opener)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
}

/// Renews the config file's OIDC token when it expires within 30 s and a refresh token and
/// the provider are known. `Ok(true)`: the file changed (the caller saves it).
pub async fn refresh_if_expired(file: &mut ConfigFile) -> CliResult<bool> {
    let (Some(expires_at), Some(refresh), Some(oidc)) =
        (file.token_expires_at, file.refresh_token.clone(), file.oidc.clone())
    else {
        return Ok(false);
    };
    if expires_at > now_s() + 30 {
        return Ok(false);
    }
    let http = http()?;
    let discovery = discover(&http, &oidc.issuer).await?;
    let form =
        [("grant_type", "refresh_token"), ("refresh_token", refresh.as_str()), ("client_id", oidc.client_id.as_str())];
    match token_request(&http, &discovery.token_endpoint, &form).await? {
        Ok(tokens) => {
            let tokens = tokens_from(tokens, Some(refresh));
            file.token = Some(tokens.bearer);
            file.refresh_token = tokens.refresh_token;
            file.token_expires_at = tokens.expires_at;
            Ok(true)
        }
        Err(e) => Err(CliError::new(
            Exit::Auth,
            format!("the stored sign-in expired and could not be renewed ({}): run `grus login`", e.error),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pkce_matches_rfc7636_appendix_b() {
        assert_eq!(
            pkce_challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
    }

    #[test]
    fn callback_needs_the_state() {
        let line = "GET /callback?code=abc&state=s1 HTTP/1.1";
        assert_eq!(parse_callback(line, "s1").unwrap(), "abc");
        assert!(parse_callback(line, "s2").unwrap_err().contains("state"));
        assert!(parse_callback("GET /callback?error=access_denied&state=s1 HTTP/1.1", "s1").is_err());
        assert!(parse_callback("GET /other?code=abc&state=s1 HTTP/1.1", "s1").is_err());
    }

    #[test]
    fn reads_expiry_and_prefers_the_id_token() {
        let payload = URL_SAFE_NO_PAD.encode(br#"{"sub":"u","exp":1900000000}"#);
        let jwt = format!("eyJhbGciOiJSUzI1NiJ9.{payload}.sig");
        assert_eq!(jwt_expiry(&jwt), Some(1_900_000_000));
        let t = tokens_from(
            TokenResponse {
                access_token: "opaque".into(),
                id_token: Some(jwt.clone()),
                refresh_token: None,
                expires_in: Some(60),
            },
            Some("r0".into()),
        );
        assert_eq!(t, Tokens { bearer: jwt, refresh_token: Some("r0".into()), expires_at: Some(1_900_000_000) });
    }

    #[test]
    fn scopes_always_include_openid_once() {
        assert_eq!(scope_string(&[]), "openid email profile offline_access");
        assert_eq!(scope_string(&["openid".into(), "groups".into()]), "openid groups");
    }
}
