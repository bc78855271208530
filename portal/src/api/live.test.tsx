import { render, waitFor } from '@testing-library/react';
import { Provider } from 'urql';
import { describe, expect, it, vi } from 'vitest';
import { makeSubject } from 'wonka';
import { mockClient } from '../test/render';
import { connectionParams, makeClient, onReconnect } from './client';
import { coalesce, useRefetchOn } from './live';
import { JobEventsSubscription } from './operations';

describe('coalesce', () => {
  it('runs once for a burst of triggers, again for a later one', async () => {
    const fn = vi.fn();
    const c = coalesce(fn, 0);
    c.trigger();
    c.trigger();
    c.trigger();
    await waitFor(() => expect(fn).toHaveBeenCalledTimes(1));
    c.trigger();
    await waitFor(() => expect(fn).toHaveBeenCalledTimes(2));
    c.trigger();
    c.cancel();
    await new Promise((r) => setTimeout(r, 5));
    expect(fn).toHaveBeenCalledTimes(2);
  });
});

function Live({ refetch, pause = false, catchUpMs = 60_000 }: { refetch: () => void; pause?: boolean; catchUpMs?: number }) {
  useRefetchOn(JobEventsSubscription, { jobId: '7' }, pause, refetch, 0, catchUpMs);
  return null;
}

describe('useRefetchOn', () => {
  it('refetches after each event, not while paused', async () => {
    const events = makeSubject<unknown>();
    const { client } = mockClient({}, {}, { JobEvents: events.source });
    const refetch = vi.fn();
    const { rerender } = render(
      <Provider value={client}>
        <Live refetch={refetch} />
      </Provider>,
    );
    expect(refetch).not.toHaveBeenCalled();
    events.next({ jobEvents: { id: '1', toState: 'running' } });
    await waitFor(() => expect(refetch).toHaveBeenCalledTimes(1));
    events.next({ jobEvents: { id: '2', toState: 'succeeded' } });
    await waitFor(() => expect(refetch).toHaveBeenCalledTimes(2));
    rerender(
      <Provider value={client}>
        <Live refetch={refetch} pause />
      </Provider>,
    );
    events.next({ jobEvents: { id: '3', toState: 'succeeded' } });
    await new Promise((r) => setTimeout(r, 5));
    expect(refetch).toHaveBeenCalledTimes(2);
  });

  it('refetches once after the subscription starts, for what changed before it was registered', async () => {
    const events = makeSubject<unknown>();
    const { client } = mockClient({}, {}, { JobEvents: events.source });
    const refetch = vi.fn();
    const { rerender } = render(
      <Provider value={client}>
        <Live refetch={refetch} pause catchUpMs={5} />
      </Provider>,
    );
    await new Promise((r) => setTimeout(r, 20));
    expect(refetch).not.toHaveBeenCalled();
    rerender(
      <Provider value={client}>
        <Live refetch={refetch} catchUpMs={5} />
      </Provider>,
    );
    await waitFor(() => expect(refetch).toHaveBeenCalledTimes(1));
    await new Promise((r) => setTimeout(r, 20));
    expect(refetch).toHaveBeenCalledTimes(1);
  });

  it('sends lower-case header names in connection_init; reconnect listeners unsubscribe', () => {
    expect(connectionParams({ 'X-Grus-Dev-User': 'alice', 'X-Grus-CSRF': 't' })).toEqual({ 'x-grus-dev-user': 'alice', 'x-grus-csrf': 't' });
    const client = makeClient({ mode: 'dev', devUser: 'alice' }, () => {});
    const seen = vi.fn();
    const off = onReconnect(client, seen);
    off();
    expect(seen).not.toHaveBeenCalled();
  });
});
