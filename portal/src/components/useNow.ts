import { useEffect, useState } from 'react';

/** The current time in ms, refreshed every `everyMs`: relative times ("in ~14 min") stay true
 * without a reload. */
export function useNow(everyMs = 15_000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const id = window.setInterval(() => setNow(Date.now()), everyMs);
    return () => window.clearInterval(id);
  }, [everyMs]);
  return now;
}
