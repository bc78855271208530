// Live updates: a subscription whose events make a page refetch its query, and a timer for
// readings no event announces.
//
// The API's subscriptions (projectJobEvents, jobEvents, clusterUpdates) say *that* something
// changed; the page's query stays the one source of what it shows. Each event (or a "missed
// events" error, or a websocket reconnect) schedules one refetch; a burst of events (a gang's
// replicas starting together) is coalesced into one. A subscription only hears what happens
// after the server registers it, and the page's query may have been answered before that (a
// service's first replica placed while its page subscribes), so each start of a subscription
// is followed by one catch-up refetch, `CATCH_UP_MS` later (by then the server has almost
// always registered it; a later event refetches anyway).
import { useEffect, useRef } from 'react';
import type { AnyVariables, TypedDocumentNode } from 'urql';
import { useClient, useSubscription } from 'urql';
import { onReconnect } from './client';

/** Coalesces calls: the first schedules `fn` after `gapMs`; calls until then join it. */
export function coalesce(fn: () => void, gapMs: number): { trigger: () => void; cancel: () => void } {
  let timer: ReturnType<typeof setTimeout> | null = null;
  return {
    trigger() {
      if (timer !== null) return;
      timer = setTimeout(() => {
        timer = null;
        fn();
      }, gapMs);
    },
    cancel() {
      if (timer !== null) clearTimeout(timer);
      timer = null;
    },
  };
}

/** How long after a subscription starts its catch-up refetch runs. */
export const CATCH_UP_MS = 1500;

/**
 * Subscribes to `query` (unless `pause`) and calls `refetch` after each event, after an error
 * item, after the websocket reconnects and `catchUpMs` after the subscription starts.
 */
export function useRefetchOn<D, V extends AnyVariables>(
  query: TypedDocumentNode<D, V>,
  variables: V,
  pause: boolean,
  refetch: () => void,
  gapMs = 300,
  catchUpMs = CATCH_UP_MS,
) {
  const latest = useRef(refetch);
  latest.current = refetch;
  const scheduler = useRef<ReturnType<typeof coalesce> | null>(null);
  scheduler.current ??= coalesce(() => latest.current(), gapMs);
  const [sub] = useSubscription({ query, variables, pause }, (_prev: number | undefined) => (_prev ?? 0) + 1);
  const client = useClient();

  useEffect(() => {
    if (sub.data) scheduler.current?.trigger();
  }, [sub.data]);
  useEffect(() => {
    if (sub.error) scheduler.current?.trigger();
  }, [sub.error]);
  useEffect(() => (pause ? undefined : onReconnect(client, () => scheduler.current?.trigger())), [client, pause]);
  const subscribedTo = JSON.stringify(variables);
  useEffect(() => {
    if (pause) return undefined;
    const id = setTimeout(() => scheduler.current?.trigger(), catchUpMs);
    return () => clearTimeout(id);
  }, [pause, subscribedTo, catchUpMs]);
  useEffect(() => () => scheduler.current?.cancel(), []);
}

/** How often pages read GPU and resource readings again (agents send them every 5 s). */
export const READINGS_MS = 10_000;

/**
 * Calls `refetch` every `everyMs` (unless `pause`d), for what changes without an event
 * (GPU and resource readings arrive every few seconds; no subscription announces them).
 */
export function useReadEvery(refetch: () => void, everyMs: number, pause = false) {
  const latest = useRef(refetch);
  latest.current = refetch;
  useEffect(() => {
    if (pause) return undefined;
    // Not skipped while the tab is in the background: a browser may call a visible window
    // hidden (headless, a second window), and a read every 10 s costs little.
    const id = window.setInterval(() => latest.current(), everyMs);
    return () => window.clearInterval(id);
  }, [everyMs, pause]);
}
