// A real OpenID Connect provider (panva/oidc-provider) for Grus' tests: the api's, the CLI's, e2e and the portal's browser test.
//
// Listens on a free localhost port and prints one JSON line `{"issuer": ..., "port": ...}` on
// stdout once it serves. Everything a browser would do is reachable by a plain HTTP client:
//
// - GET /interaction/:uid[?sub=<subject>] logs the subject in (default `alice`) and grants
//   every requested scope and claim, so authorization code + PKCE completes without a form
//   (and so does the device flow once its confirmation form is posted).
//   Also: POST /test/subject {sub} makes `sub` the subject logged in when the interaction URL
//   names none (a browser follows the redirects itself and cannot add `?sub=`).
// - POST /test/rotate switches the signing key: a new provider instance on the same issuer
//   whose JWKS puts a fresh key first (the old one stays published, as in a real rotation).
// - POST /test/sign {claims, header?} signs arbitrary claims with the active key, for tokens
//   the provider would never issue itself (expired, wrong issuer, not yet valid).
//
// Env: GRUS_TEST_REDIRECT_URI (the api's /auth/callback), GRUS_TEST_POST_LOGOUT_URI,
// GRUS_TEST_AUDIENCE (the resource indicator whose access tokens are JWTs for the api).

import { createServer } from 'node:http';
import { generateKeyPairSync, randomUUID } from 'node:crypto';

import Provider from 'oidc-provider';
import { SignJWT, importJWK } from 'jose';

const redirectUri = process.env.GRUS_TEST_REDIRECT_URI ?? 'http://127.0.0.1:1/auth/callback';
const postLogoutUri = process.env.GRUS_TEST_POST_LOGOUT_URI ?? 'http://127.0.0.1:1/';
const audience = process.env.GRUS_TEST_AUDIENCE ?? 'https://api.grus.test';

function newKey() {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { ...privateKey.export({ format: 'jwk' }), kid: `key-${randomUUID()}`, alg: 'RS256', use: 'sig' };
}

// keys[0] signs; all are published.
let keys = [newKey()];
let provider;
let issuer;
let defaultSubject = process.env.GRUS_TEST_SUBJECT ?? 'alice';

function build() {
  const p = new Provider(issuer, {
    clients: [
      {
        client_id: 'grus-portal',
        client_secret: 'grus-portal-secret',
        grant_types: ['authorization_code', 'client_credentials'],
        response_types: ['code'],
        redirect_uris: [redirectUri],
        post_logout_redirect_uris: [postLogoutUri],
        token_endpoint_auth_method: 'client_secret_basic',
      },
      // The `grus` CLI: a public native client (PKCE, no secret) whose loopback redirect may
      // use any port (RFC 8252 7.3).
      {
        client_id: 'grus-cli',
        application_type: 'native',
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'urn:ietf:params:oauth:grant-type:device_code'],
        response_types: ['code'],
        redirect_uris: ['http://127.0.0.1/callback'],
      },
    ],
    jwks: { keys },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    // Scope claims in the ID token itself (as Keycloak, Entra ID and Google do); the api
    // reads the profile from the ID token and does not call userinfo.
    conformIdTokenClaims: false,
    scopes: ['openid', 'email', 'profile', 'grus'],
    async findAccount(_ctx, id) {
      return {
        accountId: id,
        async claims() {
          return { sub: id, email: `${id}@example.test`, email_verified: true, name: `Test ${id}` };
        },
      };
    },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    pkce: { required: () => true },
    features: {
      devInteractions: { enabled: false },
      // For `grus login`'s device flow (RFC 8628).
      deviceFlow: { enabled: true },
      clientCredentials: { enabled: true },
      rpInitiatedLogout: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: async (_ctx, _client, oneOf) => oneOf,
        useGrantedResource: async () => false,
        // Any https resource is a resource server with JWT access tokens: a token for another
        // resource is how the tests get a real token with the wrong audience.
        getResourceServerInfo: async (_ctx, resource) => ({
          scope: 'grus',
          audience: resource,
          accessTokenTTL: 600,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        }),
      },
    },
    ttl: { AccessToken: 600, ClientCredentials: 600, IdToken: 600, Interaction: 600, Session: 3600, Grant: 3600 },
  });
  p.on('server_error', (_ctx, err) => console.error('server_error', err));
  return p;
}

async function readBody(req) {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  return Buffer.concat(chunks).toString('utf8');
}

function json(res, status, body) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

async function interaction(req, res, url) {
  const details = await provider.interactionDetails(req, res);
  const { prompt, params, session } = details;
  if (prompt.name === 'login') {
    const sub = url.searchParams.get('sub') ?? defaultSubject;
    await provider.interactionFinished(req, res, { login: { accountId: sub } }, { mergeWithLastSubmission: false });
    return;
  }
  if (prompt.name === 'consent') {
    const grant = details.grantId
      ? await provider.Grant.find(details.grantId)
      : new provider.Grant({ accountId: session.accountId, clientId: params.client_id });
    const d = prompt.details;
    if (d.missingOIDCScope) grant.addOIDCScope(d.missingOIDCScope.join(' '));
    if (d.missingOIDCClaims) grant.addOIDCClaims(d.missingOIDCClaims);
    for (const [indicator, scopes] of Object.entries(d.missingResourceScopes ?? {})) {
      grant.addResourceScope(indicator, scopes.join(' '));
    }
    const grantId = await grant.save();
    await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
    return;
  }
  json(res, 400, { error: `unexpected prompt ${prompt.name}` });
}

async function sign(req, res) {
  const { claims, header } = JSON.parse((await readBody(req)) || '{}');
  const key = await importJWK(keys[0], 'RS256');
  const jwt = await new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: keys[0].kid, ...header }).sign(key);
  json(res, 200, { jwt });
}

const server = createServer((req, res) => {
  const url = new URL(req.url, issuer);
  const handle = async () => {
    if (url.pathname.startsWith('/interaction/')) return interaction(req, res, url);
    if (req.method === 'POST' && url.pathname === '/test/rotate') {
      keys = [newKey(), keys[0]];
      provider = build();
      return json(res, 200, { kid: keys[0].kid });
    }
    if (req.method === 'POST' && url.pathname === '/test/sign') return sign(req, res);
    if (req.method === 'POST' && url.pathname === '/test/subject') {
      const { sub } = JSON.parse((await readBody(req)) || '{}');
      if (typeof sub !== 'string' || !sub) return json(res, 400, { error: 'sub: a non-empty string' });
      defaultSubject = sub;
      return json(res, 200, { sub });
    }
    if (url.pathname === '/test/kid') return json(res, 200, { kid: keys[0].kid });
    return provider.callback()(req, res);
  };
  handle().catch((err) => {
    console.error(err);
    if (!res.headersSent) json(res, 500, { error: String(err) });
  });
});

server.listen(0, '127.0.0.1', () => {
  const { port } = server.address();
  issuer = `http://127.0.0.1:${port}`;
  provider = build();
  process.stdout.write(`${JSON.stringify({ issuer, port })}\n`);
});

// The harness kills us; also go away when it closes our stdin (a crashed test runner).
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
