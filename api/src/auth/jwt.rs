//! Pure JWT checks: which algorithms are acceptable, which JWKS key fits a token, and the
//! claims of a token once its key is known. Fetching keys is I/O and lives in `provider`.

use std::time::Duration;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use jsonwebtoken::jwk::{AlgorithmParameters, Jwk, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde::Deserialize;

use super::web::secrets_equal;

/// Asymmetric signatures only. `none` needs no key at all, and HS* would verify with a shared
/// secret — or, in the classic confusion attack, with a public key used as the secret.
pub const ALLOWED_ALGORITHMS: [Algorithm; 7] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

#[derive(Debug, thiserror::Error)]
pub enum JwtError {
    #[error("malformed token")]
    Malformed,
    #[error("algorithm {0:?} is not allowed")]
    DisallowedAlgorithm(String),
    #[error("no key {0:?} in the issuer's JWKS")]
    UnknownKey(Option<String>),
    #[error("key {0:?} does not fit the token's algorithm")]
    KeyMismatch(Option<String>),
    #[error("token rejected: {0}")]
    Rejected(#[source] jsonwebtoken::errors::Error),
    #[error("the nonce does not match the login")]
    NonceMismatch,
    #[error("OIDC provider unavailable: {0}")]
    Provider(String),
}

/// The claims Grus uses; other claims are ignored. `iss`, `aud`, `exp` and `nbf` are checked
/// by [`verify_with_key`] before these are returned.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
pub struct VerifiedClaims {
    pub sub: String,
    #[serde(default)]
    pub email: Option<String>,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub preferred_username: Option<String>,
    #[serde(default)]
    pub nonce: Option<String>,
}

#[derive(Deserialize)]
struct RawHeader {
    alg: String,
    #[serde(default)]
    kid: Option<String>,
}

/// The algorithm (allow-listed) and key id of a compact JWS, read before any key is touched.
pub fn parse_header(token: &str) -> Result<(Algorithm, Option<String>), JwtError> {
    let mut parts = token.split('.');
    let (Some(header), Some(_), Some(_), None) = (parts.next(), parts.next(), parts.next(), parts.next()) else {
        return Err(JwtError::Malformed);
    };
    let bytes = URL_SAFE_NO_PAD.decode(header).map_err(|_| JwtError::Malformed)?;
    let raw: RawHeader = serde_json::from_slice(&bytes).map_err(|_| JwtError::Malformed)?;
    let alg = ALLOWED_ALGORITHMS
        .into_iter()
        .find(|a| alg_name(*a) == raw.alg)
        .ok_or_else(|| JwtError::DisallowedAlgorithm(raw.alg.chars().take(16).collect()))?;
    Ok((alg, raw.kid))
}

fn alg_name(alg: Algorithm) -> &'static str {
    match alg {
        Algorithm::HS256 => "HS256",
        Algorithm::HS384 => "HS384",
        Algorithm::HS512 => "HS512",
        Algorithm::ES256 => "ES256",
        Algorithm::ES384 => "ES384",
        Algorithm::RS256 => "RS256",
        Algorithm::RS384 => "RS384",
        Algorithm::RS512 => "RS512",
        Algorithm::PS256 => "PS256",
        Algorithm::PS384 => "PS384",
        Algorithm::PS512 => "PS512",
        Algorithm::EdDSA => "EdDSA",
        // Algorithms added to jsonwebtoken later are not on the allow-list.
        _ => "unsupported",
    }
}

/// The key a token names. With a `kid`, the key of that id; without one, the only signing key
/// (several candidates would mean guessing).
pub fn select_key<'a>(keys: &'a [Jwk], kid: Option<&str>) -> Option<&'a Jwk> {
    let signing = keys.iter().filter(|k| !matches!(k.common.public_key_use, Some(PublicKeyUse::Encryption)));
    match kid {
        Some(kid) => signing.into_iter().find(|k| k.common.key_id.as_deref() == Some(kid)),
        None => {
            let mut it = signing;
            let first = it.next()?;
            it.next().is_none().then_some(first)
        }
    }
}

/// The verification key for `alg` from `jwk`: the key type must be the algorithm's (RSA for
/// RS/PS, EC for ES, OKP for EdDSA; symmetric keys never) and a key that names its algorithm
/// must name this one.
pub fn decoding_key(jwk: &Jwk, alg: Algorithm) -> Result<DecodingKey, JwtError> {
    let mismatch = || JwtError::KeyMismatch(jwk.common.key_id.clone());
    let fits = matches!(
        (&jwk.algorithm, alg),
        (AlgorithmParameters::RSA(_), Algorithm::RS256 | Algorithm::RS384 | Algorithm::RS512 | Algorithm::PS256)
            | (AlgorithmParameters::EllipticCurve(_), Algorithm::ES256 | Algorithm::ES384)
            | (AlgorithmParameters::OctetKeyPair(_), Algorithm::EdDSA)
    );
    if !fits {
        return Err(mismatch());
    }
    if let Some(named) = jwk.common.key_algorithm {
        let named = serde_json::to_value(named).ok().and_then(|v| v.as_str().map(str::to_owned));
        if named.as_deref() != Some(alg_name(alg)) {
            return Err(mismatch());
        }
    }
    DecodingKey::from_jwk(jwk).map_err(|_| mismatch())
}

/// What a token must satisfy besides its signature.
#[derive(Clone, Copy, Debug)]
pub struct Expectations<'a> {
    pub issuer: &'a str,
    pub audience: &'a str,
    /// Allowed clock skew on `exp` and `nbf`.
    pub leeway: Duration,
    /// ID tokens: the nonce of the login that asked for it.
    pub nonce: Option<&'a str>,
}

/// Checks signature, issuer, audience, `exp` and `nbf` (both with the leeway) and the nonce.
pub fn verify_with_key(
    token: &str,
    alg: Algorithm,
    key: &DecodingKey,
    expect: &Expectations<'_>,
) -> Result<VerifiedClaims, JwtError> {
    let mut v = Validation::new(alg);
    v.set_issuer(&[expect.issuer]);
    v.set_audience(&[expect.audience]);
    v.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
    v.leeway = expect.leeway.as_secs();
    v.validate_exp = true;
    v.validate_nbf = true;
    let claims = jsonwebtoken::decode::<VerifiedClaims>(token, key, &v).map_err(JwtError::Rejected)?.claims;
    // users.subject holds 1..=512 characters.
    if claims.sub.is_empty() || claims.sub.len() > 512 {
        return Err(JwtError::Malformed);
    }
    if let Some(expected) = expect.nonce {
        if !claims.nonce.as_deref().is_some_and(|n| secrets_equal(n, expected)) {
            return Err(JwtError::NonceMismatch);
        }
    }
    Ok(claims)
}

#[cfg(test)]
mod tests {
    use super::*;
    use jsonwebtoken::jwk::JwkSet;

    fn b64(s: &str) -> String {
        URL_SAFE_NO_PAD.encode(s)
    }

    fn token(header: &str) -> String {
        format!("{}.{}.sig", b64(header), b64("{}"))
    }

    #[test]
    fn only_asymmetric_algorithms() {
        assert_eq!(
            parse_header(&token(r#"{"alg":"RS256","kid":"k1"}"#)).unwrap(),
            (Algorithm::RS256, Some("k1".into()))
        );
        assert_eq!(parse_header(&token(r#"{"alg":"EdDSA"}"#)).unwrap(), (Algorithm::EdDSA, None));
        for alg in ["none", "HS256", "HS384", "HS512", "PS384", "rs256", ""] {
            let err = parse_header(&token(&format!(r#"{{"alg":"{alg}"}}"#))).unwrap_err();
            assert!(matches!(err, JwtError::DisallowedAlgorithm(_)), "{alg}: {err:?}");
        }
        for bad in ["", "a.b", "a.b.c.d", "!!.b.c", &format!("{}.b.c", b64("[]"))] {
            assert!(matches!(parse_header(bad), Err(JwtError::Malformed)), "{bad}");
        }
    }

    fn jwks() -> JwkSet {
        serde_json::from_value(serde_json::json!({ "keys": [
            { "kty": "RSA", "kid": "r1", "alg": "RS256", "use": "sig", "n": "sXchDaQebHnPiGvyDOAT4saGEUetSyo9MKLOoWFsueri23bOdgWp4Dy1WlUzewbgBHod5pcM9H95GQRV3JDXboIRROSBigeC5yjU1hGzHHyXss8UDprecbAYxknTcQkhslANGRUZmdTOQ5qTRsLAt6BTYuyvVRdhS8exSZEy_c4gs_7svlJJQ4H9_NxsiIoLwAEk7-Q3UXERGYw_75IDrGA84-lA_-Ct4eTlXHBIY2EaV7t7LjJaynVJCpkv4LKjTTAumiGUIuQhrNhZLuF_RJLqHpM2kgWFLU7-VTdL1VbC2tejvcI2BlMkEpk1BzBZI0KQB0GaDWFLN-aEAw3vRw", "e": "AQAB" },
            { "kty": "EC", "kid": "e1", "crv": "P-256", "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU", "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0" },
            { "kty": "RSA", "kid": "enc", "use": "enc", "n": "sXchDaQebHnPiGvyDOAT4saGEUetSyo9MKLOoWFsueri23bOdgWp4Dy1WlUzewbgBHod5pcM9H95GQRV3JDXboIRROSBigeC5yjU1hGzHHyXss8UDprecbAYxknTcQkhslANGRUZmdTOQ5qTRsLAt6BTYuyvVRdhS8exSZEy_c4gs_7svlJJQ4H9_NxsiIoLwAEk7-Q3UXERGYw_75IDrGA84-lA_-Ct4eTlXHBIY2EaV7t7LjJaynVJCpkv4LKjTTAumiGUIuQhrNhZLuF_RJLqHpM2kgWFLU7-VTdL1VbC2tejvcI2BlMkEpk1BzBZI0KQB0GaDWFLN-aEAw3vRw", "e": "AQAB" },
            { "kty": "oct", "kid": "sym", "k": "c2VjcmV0" }
        ]}))
        .unwrap()
    }

    #[test]
    fn keys_by_id_and_type() {
        let set = jwks();
        assert_eq!(select_key(&set.keys, Some("r1")).unwrap().common.key_id.as_deref(), Some("r1"));
        assert!(select_key(&set.keys, Some("enc")).is_none(), "encryption keys never verify");
        assert!(select_key(&set.keys, Some("nope")).is_none());
        assert!(select_key(&set.keys, None).is_none(), "no kid and several keys: no guessing");
        assert!(select_key(&set.keys[..1], None).is_some());
        let r1 = select_key(&set.keys, Some("r1")).unwrap();
        assert!(decoding_key(r1, Algorithm::RS256).is_ok());
        assert!(matches!(decoding_key(r1, Algorithm::RS512), Err(JwtError::KeyMismatch(_))), "key names RS256");
        assert!(matches!(decoding_key(r1, Algorithm::ES256), Err(JwtError::KeyMismatch(_))));
        let e1 = select_key(&set.keys, Some("e1")).unwrap();
        assert!(decoding_key(e1, Algorithm::ES256).is_ok());
        assert!(matches!(decoding_key(e1, Algorithm::RS256), Err(JwtError::KeyMismatch(_))));
        let sym = select_key(&set.keys, Some("sym")).unwrap();
        for alg in ALLOWED_ALGORITHMS {
            assert!(decoding_key(sym, alg).is_err(), "a symmetric key never verifies {alg:?}");
        }
    }
}
