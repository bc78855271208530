//! Identity: OIDC portal login, server-side sessions and bearer JWT verification.
//!
//! - [`provider`]: the configured OIDC issuer (discovery, one HTTP client) and its JWKS cache,
//!   refetched on an unknown key id at most once per interval; creates users from claims.
//! - [`jwt`]: pure checks of a JWT (algorithm allow-list, key choice, issuer, audience,
//!   expiry, nonce); finding the key is I/O and stays in [`provider`].
//! - [`login`]: the browser routes /auth/login, /auth/callback, /auth/logout, /auth/session.
//! - [`web`]: pure helpers for cookies, the post-login redirect, random secrets and their hashes.
//! - [`config`]: the authentication mode and OIDC settings `crate::config` parses flags into.
//!
//! `graphql::auth::Authenticator` turns request headers into a caller with these parts.

pub mod config;
pub mod jwt;
pub mod login;
pub mod provider;
pub mod web;

pub use config::{valid_dev_name, AuthMode, LoginConfig, OidcConfig, Secret};
pub use jwt::{JwtError, VerifiedClaims};
pub use provider::OidcProvider;
