import { useEffect } from 'react';

/**
 * Re-runs a query every `ms` while `enabled`: the live updates of today's API. When the
 * websocket subscriptions (jobEvents, clusterCapacity) are on the server, pages subscribe
 * instead and keep this as the fallback.
 */
export function usePoll(reexecute: (opts: { requestPolicy: 'network-only' }) => void, ms: number, enabled = true) {
  useEffect(() => {
    if (!enabled) return;
    const t = window.setInterval(() => {
      if (document.visibilityState !== 'hidden') reexecute({ requestPolicy: 'network-only' });
    }, ms);
    return () => window.clearInterval(t);
  }, [reexecute, ms, enabled]);
}
