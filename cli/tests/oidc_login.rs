//! `grus login` against a real OpenID Connect provider (npm `oidc-provider`, the one the api's
//! tests run: `api/tests/oidc/provider.mjs`, client `grus-cli`) and grus-api in OIDC mode: the
//! device flow and the browser flow (authorization code + PKCE on a loopback redirect), each
//! driven by a plain HTTP client playing the browser, then the stored token used by the next
//! command.

mod support;

use std::collections::HashMap;
use std::io::{BufRead as _, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use grus_api::auth::{AuthMode, OidcConfig};
use serde_json::Value;
use support::World;

const CLIENT_ID: &str = "grus-cli";

fn provider_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../api/tests/oidc")
}

/// The provider process, killed on drop.
struct Provider {
    child: Child,
    issuer: String,
}

impl Provider {
    fn start() -> Provider {
        if !provider_dir().join("node_modules/oidc-provider").is_dir() {
            let status = Command::new("npm")
                .args(["ci", "--no-audit", "--no-fund"])
                .current_dir(provider_dir())
                .status()
                .expect("run npm ci (is Node.js installed?)");
            assert!(status.success(), "npm ci in api/tests/oidc failed");
        }
        let mut child = Command::new("node")
            .arg("provider.mjs")
            .current_dir(provider_dir())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start node provider.mjs");
        let mut line = String::new();
        let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
        stdout.read_line(&mut line).expect("ready line");
        // Keep reading: the provider logs to stdout, and node dies of EPIPE on a closed pipe.
        std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::stderr()));
        let ready: Value = serde_json::from_str(&line).unwrap_or_else(|e| {
            let _ = child.kill();
            panic!("provider did not start ({e}): {line:?}")
        });
        Provider { issuer: ready["issuer"].as_str().expect("issuer").to_owned(), child }
    }
}

impl Drop for Provider {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The action and hidden fields of the first form in an HTML page (the provider's auto-posted
/// forms and its device confirmation form have only hidden inputs).
fn hidden_form(html: &str) -> Option<(String, Vec<(String, String)>)> {
    let form = &html[html.find("<form")?..];
    let attr = |tag: &str, name: &str| -> Option<String> {
        let start = tag.find(&format!("{name}=\""))? + name.len() + 2;
        Some(tag[start..start + tag[start..].find('"')?].to_owned())
    };
    let action = attr(&form[..form.find('>')?], "action")?;
    let mut fields = Vec::new();
    for piece in form.split("<input").skip(1) {
        let tag = &piece[..piece.find('>').unwrap_or(piece.len())];
        if tag.contains("type=\"hidden\"") {
            fields.push((attr(tag, "name")?, attr(tag, "value").unwrap_or_default()));
        }
    }
    Some((action, fields))
}

/// Plays the browser from `start`: follows redirects and posts the provider's forms, keeping
/// its cookies, until a page without a form; returns that page (the CLI's callback page in the
/// browser flow, the provider's success page in the device flow).
async fn browse(start: &str, issuer: &str) -> String {
    let http = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().expect("client");
    let mut cookies: HashMap<String, String> = HashMap::new();
    let mut url = reqwest::Url::parse(start).expect("start URL");
    let mut post: Option<Vec<(String, String)>> = None;
    for _ in 0..30 {
        let mut req = match post.take() {
            Some(fields) => http.post(url.clone()).form(&fields),
            None => http.get(url.clone()),
        };
        if url.as_str().starts_with(issuer) && !cookies.is_empty() {
            let header: Vec<String> = cookies.iter().map(|(k, v)| format!("{k}={v}")).collect();
            req = req.header("cookie", header.join("; "));
        }
        let resp = req.send().await.expect("browser request");
        for value in resp.headers().get_all("set-cookie") {
            let pair = value.to_str().unwrap_or_default().split(';').next().unwrap_or_default();
            if let Some((k, v)) = pair.split_once('=') {
                cookies.insert(k.trim().to_owned(), v.trim().to_owned());
            }
        }
        let status = resp.status();
        if let Some(location) = resp.headers().get("location").and_then(|l| l.to_str().ok()) {
            url = url.join(location).expect("redirect target");
            continue;
        }
        let body = resp.text().await.expect("page");
        assert!(status.is_success(), "{url} answered {status}: {body}");
        match hidden_form(&body).filter(|_| url.as_str().starts_with(issuer)) {
            Some((action, fields)) => {
                url = url.join(&action).expect("form action");
                post = Some(fields);
            }
            None => return body,
        }
    }
    panic!("the sign-in did not finish");
}

#[test]
fn browser_login_stores_a_token_the_api_accepts() {
    let provider = Provider::start();
    let w = World::start_with(AuthMode::Oidc(OidcConfig::new(provider.issuer.clone(), CLIENT_ID)));
    // The api's dev header does not work here: the CLI must sign in.
    w.run(None, &["jobs"]).expect(3);

    let mut child = w
        .grus(
            None,
            &[
                "login",
                "--issuer",
                &provider.issuer,
                "--client-id",
                CLIENT_ID,
                "--scopes",
                "email,profile",
                "--no-open",
                "--browser",
                "--timeout",
                "60s",
            ],
        )
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn grus login");
    let mut err = BufReader::new(child.stderr.take().expect("stderr"));
    let mut url = String::new();
    let mut printed = String::new();
    while !url.trim_start().starts_with("http") {
        url.clear();
        assert!(err.read_line(&mut url).expect("read stderr") > 0, "grus login printed no URL: {printed}");
        printed.push_str(&url);
    }
    let url = url.trim().to_owned();
    assert!(url.contains("code_challenge_method=S256") && url.contains("redirect_uri=http%3A%2F%2F127.0.0.1%3A"));
    let page = w.rt.block_on(browse(&url, &provider.issuer));
    assert!(page.contains("Signed in to Grus"), "{page}");
    let out = child.wait_with_output().expect("grus login ends");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("as alice"), "{stdout}");

    let config = std::fs::read_to_string(w.config_file()).expect("config written");
    assert!(config.contains("token_expires_at") && config.contains("client_id = \"grus-cli\""), "{config}");
    // The stored ID token is the caller's identity from now on.
    let jobs = w.run(None, &["jobs", "-o", "json"]).expect(0).json();
    assert_eq!(jobs, serde_json::json!([]));
}

#[test]
fn device_login_stores_a_token_the_api_accepts() {
    let provider = Provider::start();
    let w = World::start_with(AuthMode::Oidc(OidcConfig::new(provider.issuer.clone(), CLIENT_ID)));
    let mut child = w
        .grus(
            None,
            &[
                "login",
                "--issuer",
                &provider.issuer,
                "--client-id",
                CLIENT_ID,
                "--scopes",
                "email",
                "--no-open",
                "--timeout",
                "60s",
            ],
        )
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn grus login");
    let mut err = BufReader::new(child.stderr.take().expect("stderr"));
    let mut line = String::new();
    err.read_line(&mut line).expect("read stderr");
    // "To sign in, open <uri> and enter the code <code>": what a person reads, then types.
    let rest = line.trim().strip_prefix("To sign in, open ").unwrap_or_else(|| panic!("{line}"));
    let (uri, code) = rest.split_once(" and enter the code ").unwrap_or_else(|| panic!("{line}"));
    assert!(uri.starts_with(&provider.issuer), "{uri}");
    let start = format!("{uri}?user_code={code}");
    w.rt.block_on(browse(&start, &provider.issuer));
    let out = child.wait_with_output().expect("grus login ends");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("as alice"), "{stdout}");
    let jobs = w.run(None, &["jobs", "-o", "json"]).expect(0).json();
    assert_eq!(jobs, serde_json::json!([]));
}
