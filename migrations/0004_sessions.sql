-- Portal sessions and pending OIDC logins (api/src/auth/login.rs).
--
-- Both keep only the SHA-256 of their random secret: a copy of this table does not let anyone
-- sign in. Expired rows are dead (every lookup checks expires_at) and swept on each login.

CREATE TABLE sessions (
    -- SHA-256 of the 256-bit random value in the `grus_session` cookie.
    id_hash     bytea PRIMARY KEY CHECK (length(id_hash) = 32),
    user_id     bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    -- Sent back by the portal in X-Grus-CSRF on every cookie-authenticated GraphQL POST.
    csrf_token  text NOT NULL CHECK (length(csrf_token) >= 32),
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL,
    CHECK (expires_at > created_at)
);
CREATE INDEX sessions_user_idx ON sessions (user_id);
CREATE INDEX sessions_expires_idx ON sessions (expires_at);

-- An authorization request in flight: created by GET /auth/login, consumed (deleted) by the
-- one GET /auth/callback that presents its state both in the query and in the `grus_login`
-- cookie of the browser that started it.
CREATE TABLE pending_logins (
    -- SHA-256 of the OAuth `state`.
    state_hash     bytea PRIMARY KEY CHECK (length(state_hash) = 32),
    nonce          text NOT NULL CHECK (length(nonce) >= 32),
    pkce_verifier  text NOT NULL CHECK (length(pkce_verifier) BETWEEN 43 AND 128),
    -- Same-origin relative path to land on after the login.
    redirect_to    text NOT NULL CHECK (redirect_to LIKE '/%'),
    created_at     timestamptz NOT NULL DEFAULT now(),
    expires_at     timestamptz NOT NULL,
    CHECK (expires_at > created_at)
);
CREATE INDEX pending_logins_expires_idx ON pending_logins (expires_at);
