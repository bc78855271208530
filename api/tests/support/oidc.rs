//! A real OpenID Connect provider for tests, and a cookie-keeping HTTP client that follows a
//! login through it like a browser.
//!
//! [`TestProvider::start`] runs `node api/tests/oidc/provider.mjs` (npm `oidc-provider`; `npm ci`
//! first when node_modules is missing), waits for the line with its issuer URL and kills the
//! process on drop. See provider.mjs for its test endpoints (scripted login, key rotation,
//! signing arbitrary claims).
#![allow(dead_code)]

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;

use serde_json::Value;

/// Client of the provider's static client (authorization code + PKCE, client credentials).
pub const CLIENT_ID: &str = "grus-portal";
pub const CLIENT_SECRET: &str = "grus-portal-secret";
/// The resource indicator whose access tokens are JWTs for the api.
pub const AUDIENCE: &str = "https://api.grus.test";

/// `api/tests/oidc` from the workspace root: this file is also compiled into the e2e crate.
fn provider_dir() -> PathBuf {
    let crate_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    crate_dir.parent().expect("a workspace member's directory has a parent").join("api/tests/oidc")
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
    assert!(status.success(), "npm ci in api/tests/oidc failed");
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
        let stdout = child.stdout.take().expect("provider stdout");
        let mut line = String::new();
        // Blocks until the provider listens; EOF (it died) leaves the line empty.
        BufReader::new(stdout).read_line(&mut line).expect("read the provider's ready line");
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
