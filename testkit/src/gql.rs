//! A GraphQL client of the api for one caller: a dev user (`x-grus-dev-user`, `--dev` only), a
//! bearer token (an OIDC access token or an API token), or a portal session (cookie + CSRF).

use std::time::Duration;

use serde_json::{json, Value};

/// The longest one request may take before the test fails.
const REQUEST_PATIENCE: Duration = Duration::from_secs(60);

#[derive(Clone)]
pub struct Gql {
    base: String,
    http: reqwest::Client,
    headers: Vec<(String, String)>,
}

impl Gql {
    pub fn dev(base: &str, user: &str) -> Gql {
        Gql::with_headers(base, vec![("x-grus-dev-user".into(), user.to_owned())])
    }

    pub fn bearer(base: &str, token: &str) -> Gql {
        Gql::with_headers(base, vec![("authorization".into(), format!("Bearer {token}"))])
    }

    /// A portal session: the `grus_session` cookie and its CSRF token.
    pub fn session(base: &str, cookie: &str, csrf: &str) -> Gql {
        Gql::with_headers(
            base,
            vec![("cookie".into(), format!("grus_session={cookie}")), ("x-grus-csrf".into(), csrf.to_owned())],
        )
    }

    fn with_headers(base: &str, headers: Vec<(String, String)>) -> Gql {
        // A bound on a hung request (not an assertion on speed): the suite runs on loaded machines.
        let http = reqwest::Client::builder().timeout(REQUEST_PATIENCE).build().expect("an HTTP client");
        Gql { base: base.to_owned(), http, headers }
    }

    fn with_auth(&self, mut req: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        for (k, v) in &self.headers {
            req = req.header(k.as_str(), v.as_str());
        }
        req
    }

    /// The whole response (data and errors); panics only on transport errors.
    pub async fn request(&self, query: &str, variables: Value) -> Value {
        let response = self
            .with_auth(self.http.post(format!("{}/graphql", self.base)))
            .json(&json!({ "query": query, "variables": variables }))
            .send()
            .await
            .unwrap_or_else(|e| panic!("POST {}/graphql: {e}", self.base));
        let status = response.status();
        let body = response.text().await.expect("response body");
        serde_json::from_str(&body).unwrap_or_else(|e| panic!("{status}: not JSON ({e}): {body}"))
    }

    /// `data`, asserting there were no errors.
    pub async fn data(&self, query: &str, variables: Value) -> Value {
        let response = self.request(query, variables).await;
        assert!(response.get("errors").is_none(), "{query}\n=> {response}");
        response["data"].clone()
    }

    /// The first error's `extensions.code` (panics when the request succeeded).
    pub async fn error_code(&self, query: &str, variables: Value) -> (String, Value) {
        let response = self.request(query, variables).await;
        let code = response["errors"][0]["extensions"]["code"]
            .as_str()
            .unwrap_or_else(|| panic!("expected an error: {response}"))
            .to_owned();
        (code, response)
    }

    /// GET of a relative URL with this caller's credentials (export downloads): the status and
    /// the body as text.
    pub async fn get(&self, path: &str) -> (u16, String) {
        let (status, body) = self.get_bytes(path).await;
        (status, String::from_utf8_lossy(&body).into_owned())
    }

    /// Like [`Gql::get`], with the body's bytes.
    pub async fn get_bytes(&self, path: &str) -> (u16, Vec<u8>) {
        let response = self
            .with_auth(self.http.get(format!("{}{path}", self.base)))
            .send()
            .await
            .unwrap_or_else(|e| panic!("GET {path}: {e}"));
        (response.status().as_u16(), response.bytes().await.expect("body").to_vec())
    }
}
