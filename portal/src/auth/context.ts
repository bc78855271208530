import { createContext, useContext } from 'react';
import type { Session } from './session';

export interface SessionContextValue {
  session: Session;
  logout: () => void;
}

export const SessionContext = createContext<SessionContextValue>({
  session: { mode: 'dev', devUser: null },
  logout: () => {},
});

export const useSession = () => useContext(SessionContext);

/** The project the page shows, so the app bar can show the caller's role in it. */
export interface CurrentProject {
  slug: string;
  role: string;
}

export const CurrentProjectContext = createContext<{
  current: CurrentProject | null;
  setCurrent: (p: CurrentProject | null) => void;
}>({ current: null, setCurrent: () => {} });

export const useCurrentProject = () => useContext(CurrentProjectContext);
