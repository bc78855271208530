// How the portal learns who it talks as.
//
// Production: GET /auth/session answers `{ user, csrfToken }` for a signed-in browser (cookie),
// 401 when not signed in (the portal then goes to /auth/login). Cookie-authenticated GraphQL
// POSTs carry the CSRF token as `X-Grus-CSRF`.
// Dev: when the server has no portal login (`{ portalLogin: false }`; an older server: 404), the
// portal assumes `grus-api serve --dev` and lets the user pick a name, kept in localStorage and
// sent as `X-Grus-Dev-User`.

export const DEV_USER_KEY = 'grus.devUser';
export const DEV_USER_HEADER = 'X-Grus-Dev-User';
export const CSRF_HEADER = 'X-Grus-CSRF';

export interface SessionUser {
  subject?: string;
  displayName?: string | null;
  email?: string | null;
}

export type Session =
  | { mode: 'dev'; devUser: string | null }
  | { mode: 'oidc'; csrfToken: string; user: SessionUser | null }
  | { mode: 'signed-out' };

/** The names `--dev` accepts (api/src/graphql/auth.rs `valid_dev_name`). */
export const validDevName = (name: string) => /^[a-z0-9._-]{1,64}$/.test(name);

export function storedDevUser(): string | null {
  const v = localStorage.getItem(DEV_USER_KEY);
  return v && validDevName(v) ? v : null;
}

export async function loadSession(fetchFn: typeof fetch = fetch): Promise<Session> {
  const res = await fetchFn('/auth/session', { credentials: 'same-origin', headers: { Accept: 'application/json' } });
  if (res.status === 404) return { mode: 'dev', devUser: storedDevUser() };
  if (res.status === 401 || res.status === 403) return { mode: 'signed-out' };
  if (!res.ok) throw new Error(`GET /auth/session: HTTP ${res.status}`);
  const body = (await res.json()) as { csrfToken?: unknown; user?: SessionUser | null; portalLogin?: unknown };
  if (body.portalLogin === false) return { mode: 'dev', devUser: storedDevUser() };
  if (typeof body.csrfToken !== 'string') throw new Error('GET /auth/session: no csrfToken in the answer');
  return { mode: 'oidc', csrfToken: body.csrfToken, user: body.user ?? null };
}

export function loginUrl(): string {
  const back = window.location.pathname + window.location.search;
  return `/auth/login?redirect=${encodeURIComponent(back)}`;
}

/** The headers every GraphQL request of this session carries. */
export function sessionHeaders(session: Session): Record<string, string> {
  if (session.mode === 'dev' && session.devUser) return { [DEV_USER_HEADER]: session.devUser };
  if (session.mode === 'oidc') return { [CSRF_HEADER]: session.csrfToken };
  return {};
}
