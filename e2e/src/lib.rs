//! Grus' end-to-end suite: the scenarios are `tests/e2e/`, the harness they drive (real
//! `grus-api` and `grus-agent` processes over a fresh database and a private Redis, a real
//! OIDC provider) is `grus-testkit`'s `stack`.
