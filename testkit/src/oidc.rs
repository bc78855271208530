//! A real OpenID Connect provider for tests, and a cookie-keeping HTTP client that follows a
//! login through it like a browser.
//!
//! [`TestProvider::start`] runs `node testkit/oidc/provider.mjs` (npm `oidc-provider`; `npm ci`
//! first when node_modules is missing), waits for the line with its issuer URL and kills the
//! process on drop. See provider.mjs for its test endpoints (scripted login, key rotation,
//! signing arbitrary claims). [`Browser::follow_until`] follows the scripted login;
//! [`browse_forms`] posts the provider's own forms, as a user's browser would.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;

use serde_json::Value;

/// Client of the provider's static client (authorization code + PKCE, client credentials).
pub const CLIENT_ID: &str = "grus-portal";
/// The provider's client for the CLI (device flow, and authorization code on a loopback port).
pub const CLI_CLIENT_ID: &str = "grus-cli";
pub const CLIENT_SECRET: &str = "grus-portal-secret";
/// The resource indicator whose access tokens are JWTs for the api.
pub const AUDIENCE: &str = "https://api.grus.test";

/// The provider's node project.
fn provider_dir() -> PathBuf {
    crate::env::workspace_path("testkit/oidc")
}

/// `npm ci` once per test binary, when node_modules is absent.
fn ensure_node_modules() {
    static DONE: Mutex<bool> = Mutex::new(false);
    let mut done = DONE.lock().unwrap_or_else(|p| p.into_inner());
    if *done || provider_dir().join("node_modules/oidc-provider").is_dir() {
        *done = true;
        return;
    }
    let status = Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund"])
        .current_dir(provider_dir())
        .status()
        .expect("run npm ci (is Node.js installed?)");
    assert!(status.success(), "npm ci in testkit/oidc failed");
    *done = true;
}

pub struct TestProvider {
    child: Child,
    pub issuer: String,
    http: reqwest::Client,
}

impl TestProvider {
    /// Starts a provider whose client redirects to `redirect_uri` and may return to
    /// `post_logout_uri` after logout.
    pub fn start(redirect_uri: &str, post_logout_uri: &str) -> TestProvider {
        ensure_node_modules();
        let mut child = Command::new("node")
            .arg("provider.mjs")
            .current_dir(provider_dir())
            .env("GRUS_TEST_REDIRECT_URI", redirect_uri)
            .env("GRUS_TEST_POST_LOGOUT_URI", post_logout_uri)
            .env("GRUS_TEST_AUDIENCE", AUDIENCE)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start node provider.mjs");
        let mut stdout = BufReader::new(child.stdout.take().expect("provider stdout"));
        let mut line = String::new();
        // Blocks until the provider listens; EOF (it died) leaves the line empty.
        stdout.read_line(&mut line).expect("read the provider's ready line");
        // Keep reading: the provider logs to stdout, and node dies of EPIPE on a closed pipe.
        std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::stderr()));
        let ready: Value = match serde_json::from_str(&line) {
            Ok(v) => v,
            Err(e) => {
                let _ = child.kill();
                panic!("provider did not start ({e}): {line:?}");
            }
        };
        let issuer = ready["issuer"].as_str().expect("issuer in the ready line").to_owned();
        TestProvider { child, issuer, http: reqwest::Client::new() }
    }

    /// A provider whose portal client redirects nowhere (for tests of bearer tokens and of the
    /// CLI, whose client has its own redirects).
    pub fn without_portal() -> TestProvider {
        TestProvider::start("http://127.0.0.1:1/auth/callback", "http://127.0.0.1:1/")
    }

    /// Switches the signing key to a fresh one; returns its kid.
    pub async fn rotate(&self) -> String {
        let v: Value =
            self.http.post(format!("{}/test/rotate", self.issuer)).send().await.unwrap().json().await.unwrap();
        v["kid"].as_str().unwrap().to_owned()
    }

    /// The kid of the active signing key.
    pub async fn active_kid(&self) -> String {
        let v: Value = self.http.get(format!("{}/test/kid", self.issuer)).send().await.unwrap().json().await.unwrap();
        v["kid"].as_str().unwrap().to_owned()
    }

    /// `claims` signed RS256 with the provider's active key (`header` merged into the JWS header).
    pub async fn sign(&self, claims: Value, header: Value) -> String {
        let v: Value = self
            .http
            .post(format!("{}/test/sign", self.issuer))
            .json(&serde_json::json!({ "claims": claims, "header": header }))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        v["jwt"].as_str().expect("signed jwt").to_owned()
    }

    /// A real access token (a JWT) from the client credentials grant for `resource`.
    pub async fn client_credentials(&self, resource: &str) -> String {
        let resp = self
            .http
            .post(format!("{}/token", self.issuer))
            .basic_auth(CLIENT_ID, Some(CLIENT_SECRET))
            .form(&[("grant_type", "client_credentials"), ("resource", resource), ("scope", "grus")])
            .send()
            .await
            .unwrap();
        let status = resp.status();
        let v: Value = resp.json().await.unwrap();
        assert!(status.is_success(), "token endpoint: {v}");
        v["access_token"].as_str().expect("access_token").to_owned()
    }
}

impl Drop for TestProvider {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An HTTP client with a cookie jar that does not follow redirects by itself. The jar is keyed
/// by name only: the api and the provider both run on 127.0.0.1, and browsers do not separate
/// cookies by port either.
pub struct Browser {
    http: reqwest::Client,
    pub jar: HashMap<String, String>,
}

impl Default for Browser {
    fn default() -> Self {
        Browser {
            http: reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap(),
            jar: HashMap::new(),
        }
    }
}

/// One answer: status, Location, the raw Set-Cookie values and the body.
#[derive(Debug)]
pub struct Page {
    pub status: u16,
    pub location: Option<String>,
    pub set_cookies: Vec<String>,
    pub body: String,
}

impl Browser {
    fn cookie_header(&self) -> String {
        self.jar.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join("; ")
    }

    async fn absorb(&mut self, resp: reqwest::Response) -> Page {
        let status = resp.status().as_u16();
        let url = resp.url().clone();
        let location =
            resp.headers().get("location").map(|l| url.join(l.to_str().unwrap()).expect("valid Location").to_string());
        let set_cookies: Vec<String> =
            resp.headers().get_all("set-cookie").iter().map(|v| v.to_str().unwrap().to_owned()).collect();
        for c in &set_cookies {
            let first = c.split(';').next().unwrap();
            let (name, value) = first.split_once('=').unwrap();
            let lower = c.to_ascii_lowercase();
            if value.is_empty() || lower.contains("max-age=0") || lower.contains("expires=thu, 01 jan 1970") {
                self.jar.remove(name);
            } else {
                self.jar.insert(name.to_owned(), value.to_owned());
            }
        }
        Page { status, location, set_cookies, body: resp.text().await.unwrap() }
    }

    pub async fn get(&mut self, url: &str) -> Page {
        let resp = self.http.get(url).header("cookie", self.cookie_header()).send().await.unwrap();
        self.absorb(resp).await
    }

    pub async fn post(&mut self, url: &str, headers: &[(&str, &str)], body: Option<Value>) -> Page {
        let mut req = self.http.post(url).header("cookie", self.cookie_header());
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        if let Some(b) = body {
            req = req.json(&b);
        }
        let resp = req.send().await.unwrap();
        self.absorb(resp).await
    }

    /// Follows redirects from `url` through the provider's login and consent (logging in
    /// `subject`) and stops at the first URL that starts with `stop_at`, which it returns.
    pub async fn follow_until(&mut self, url: &str, subject: &str, stop_at: &str) -> String {
        let mut next = url.to_owned();
        for _ in 0..20 {
            if next.starts_with(stop_at) {
                return next;
            }
            let page = self.get(&next).await;
            let location =
                page.location.unwrap_or_else(|| panic!("no redirect from {next}: {} {}", page.status, page.body));
            next = location;
            if next.contains("/interaction/") {
                next = format!("{next}?sub={subject}");
            }
        }
        panic!("too many redirects, last {next}");
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
pub async fn browse_forms(start: &str, issuer: &str) -> String {
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
