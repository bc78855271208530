import { useCallback, useEffect, useMemo, useState } from 'react';
import type { ReactNode } from 'react';
import { Provider } from 'urql';
import { makeClient } from '../api/client';
import { ErrorState, Loading } from '../components/states';
import { DevLogin } from './DevLogin';
import { SessionContext } from './context';
import type { Session } from './session';
import { DEV_USER_KEY, loadSession, loginUrl } from './session';

/** Loads the session, shows the dev login or goes to /auth/login, then provides the client. */
export function AuthGate({ children }: { children: ReactNode }) {
  const [session, setSession] = useState<Session | null>(null);
  const [error, setError] = useState<Error | null>(null);
  const [attempt, setAttempt] = useState(0);

  useEffect(() => {
    let live = true;
    setError(null);
    loadSession()
      .then((s) => live && setSession(s))
      .catch((e: unknown) => live && setError(e instanceof Error ? e : new Error(String(e))));
    return () => {
      live = false;
    };
  }, [attempt]);

  const signedOut = useCallback(() => {
    setSession((s) => {
      if (s?.mode === 'dev') {
        localStorage.removeItem(DEV_USER_KEY);
        return { mode: 'dev', devUser: null };
      }
      return { mode: 'signed-out' };
    });
  }, []);

  const logout = useCallback(() => {
    if (session?.mode === 'dev') {
      localStorage.removeItem(DEV_USER_KEY);
      setSession({ mode: 'dev', devUser: null });
    } else {
      window.location.assign('/auth/logout');
    }
  }, [session]);

  const client = useMemo(() => (session ? makeClient(session, signedOut) : null), [session, signedOut]);

  useEffect(() => {
    if (session?.mode === 'signed-out') window.location.assign(loginUrl());
  }, [session]);

  if (error) return <ErrorState title="Cannot load the session" error={error} onRetry={() => setAttempt((a) => a + 1)} />;
  if (!session || !client) return <Loading label="Signing in" />;
  if (session.mode === 'signed-out') return <Loading label="Redirecting to the sign-in page" />;
  if (session.mode === 'dev' && !session.devUser) {
    return (
      <DevLogin
        onLogin={(name) => {
          localStorage.setItem(DEV_USER_KEY, name);
          setSession({ mode: 'dev', devUser: name });
        }}
      />
    );
  }
  return (
    <SessionContext.Provider value={{ session, logout }}>
      <Provider value={client}>{children}</Provider>
    </SessionContext.Provider>
  );
}
