//! `grus login` against a real OpenID Connect provider (npm `oidc-provider`, the one the api's
//! tests run: `testkit/oidc/provider.mjs`, client `grus-cli`) and grus-api in OIDC mode: the
//! device flow and the browser flow (authorization code + PKCE on a loopback redirect), each
//! driven by a plain HTTP client playing the browser, then the stored token used by the next
//! command.

use std::io::{BufRead as _, BufReader};
use std::process::Stdio;

use grus_api::auth::{AuthMode, OidcConfig};
use grus_testkit::oidc::{browse_forms, TestProvider, CLI_CLIENT_ID};

use crate::support::World;

#[test]
fn browser_login_stores_a_token_the_api_accepts() {
    let provider = TestProvider::without_portal();
    let w = World::start_with(AuthMode::Oidc(OidcConfig::new(provider.issuer.clone(), CLI_CLIENT_ID)));
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
                CLI_CLIENT_ID,
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
    let page = w.rt.block_on(browse_forms(&url, &provider.issuer));
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
    let provider = TestProvider::without_portal();
    let w = World::start_with(AuthMode::Oidc(OidcConfig::new(provider.issuer.clone(), CLI_CLIENT_ID)));
    let mut child = w
        .grus(
            None,
            &[
                "login",
                "--issuer",
                &provider.issuer,
                "--client-id",
                CLI_CLIENT_ID,
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
    w.rt.block_on(browse_forms(&start, &provider.issuer));
    let out = child.wait_with_output().expect("grus login ends");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("as alice"), "{stdout}");
    let jobs = w.run(None, &["jobs", "-o", "json"]).expect(0).json();
    assert_eq!(jobs, serde_json::json!([]));
}
