//! Pure helpers of the browser-facing auth routes: cookies, the post-login redirect, random
//! secrets and their stored hashes (the OS generator is the only I/O).

use axum::http::{header, HeaderMap};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use rand::RngCore;
use sha2::{Digest, Sha256};

/// The session cookie.
pub const SESSION_COOKIE: &str = "grus_session";
/// The pending-login cookie; its value is the OAuth `state`.
pub const LOGIN_COOKIE: &str = "grus_login";
/// The header in which the portal echoes the session's CSRF token.
pub const CSRF_HEADER: &str = "x-grus-csrf";

/// 256 random bits from the OS, base64url without padding (43 characters).
pub fn random_secret() -> String {
    let mut bytes = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    URL_SAFE_NO_PAD.encode(bytes)
}

/// The stored hash of a secret the server hands out (an API token, an agent token, a session
/// id, a login `state`): SHA-256 of the whole value. The secrets are 256-bit random, so a fast
/// unsalted hash is enough (no dictionary to attack).
pub fn hash_token(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

/// The value of cookie `name` in the request's Cookie headers (the first one wins).
pub fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(n, _)| *n == name)
        .map(|(_, v)| v.trim_matches('"'))
        .filter(|v| !v.is_empty())
}

/// Attributes of a cookie this server sets.
#[derive(Clone, Copy, Debug)]
pub struct CookieSpec<'a> {
    pub path: &'a str,
    /// Seconds; 0 deletes the cookie.
    pub max_age: u64,
    pub secure: bool,
}

/// A `Set-Cookie` value. Always HttpOnly (no script needs our cookies) and SameSite=Lax: sent on
/// the top-level navigation back from the provider, never on cross-site POSTs or subresources.
pub fn set_cookie(name: &str, value: &str, spec: CookieSpec<'_>) -> String {
    let secure = if spec.secure { "; Secure" } else { "" };
    format!("{name}={value}; Path={}; Max-Age={}; HttpOnly; SameSite=Lax{secure}", spec.path, spec.max_age)
}

/// The `redirect` parameter of /auth/login, where the browser lands after the login. Only a
/// same-origin relative path: absolute URLs, scheme-relative `//host`, backslashes (browsers
/// read them as slashes) and control characters are refused, so the login is no open redirect.
pub fn safe_redirect(param: Option<&str>) -> Result<String, &'static str> {
    let Some(path) = param.filter(|p| !p.is_empty()) else { return Ok("/".into()) };
    if path.len() > 2048 {
        return Err("redirect is too long");
    }
    if !path.starts_with('/') || path.starts_with("//") {
        return Err("redirect must be a path on this site, starting with a single /");
    }
    if path.chars().any(|c| c.is_control() || c.is_whitespace() || c == '\\') {
        return Err("redirect contains characters that are not allowed in a path");
    }
    Ok(path.to_owned())
}

/// Compares two secrets without an early exit (no timing hint about a matching prefix).
pub fn secrets_equal(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn reads_cookies() {
        let mut h = HeaderMap::new();
        assert_eq!(cookie(&h, SESSION_COOKIE), None);
        h.append(header::COOKIE, "a=1; grus_session=abc; b=2".parse().unwrap());
        h.append(header::COOKIE, "grus_login=xyz".parse().unwrap());
        assert_eq!(cookie(&h, SESSION_COOKIE), Some("abc"));
        assert_eq!(cookie(&h, LOGIN_COOKIE), Some("xyz"));
        assert_eq!(cookie(&h, "grus"), None);
        let mut empty = HeaderMap::new();
        empty.insert(header::COOKIE, "grus_session=".parse().unwrap());
        assert_eq!(cookie(&empty, SESSION_COOKIE), None);
    }

    #[test]
    fn cookie_attributes() {
        let c = set_cookie("grus_session", "v", CookieSpec { path: "/", max_age: 60, secure: true });
        assert_eq!(c, "grus_session=v; Path=/; Max-Age=60; HttpOnly; SameSite=Lax; Secure");
        let c = set_cookie("grus_login", "", CookieSpec { path: "/auth", max_age: 0, secure: false });
        assert_eq!(c, "grus_login=; Path=/auth; Max-Age=0; HttpOnly; SameSite=Lax");
    }

    #[test]
    fn redirects_stay_on_site() {
        assert_eq!(safe_redirect(None).unwrap(), "/");
        assert_eq!(safe_redirect(Some("")).unwrap(), "/");
        assert_eq!(safe_redirect(Some("/jobs?project=1#x")).unwrap(), "/jobs?project=1#x");
        for bad in
            ["https://evil.example/", "//evil.example", "/\\evil.example", "jobs", "/a\nb", "/ x", "javascript:1"]
        {
            assert!(safe_redirect(Some(bad)).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn secrets() {
        let a = random_secret();
        assert_eq!(a.len(), 43);
        assert_ne!(a, random_secret());
        assert!(secrets_equal(&a, &a.clone()));
        assert!(!secrets_equal(&a, &a[1..]));
        assert!(!secrets_equal("abc", "abd"));
    }

    proptest! {
        /// Whatever is accepted resolves, against our origin, to our origin.
        #[test]
        fn accepted_redirects_are_same_origin(s in "(/|//|/\\\\|[a-z]+:)?[/\\\\a-z.:@%?# ]{0,16}") {
            if let Ok(path) = safe_redirect(Some(&s)) {
                let base = url::Url::parse("https://grus.example/auth/callback").unwrap();
                let joined = base.join(&path).unwrap();
                prop_assert_eq!(joined.origin(), base.origin());
            }
        }
    }
}
