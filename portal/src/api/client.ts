import { cacheExchange, Client, CombinedError, fetchExchange, mapExchange, subscriptionExchange } from 'urql';
import { createClient as createWsClient } from 'graphql-ws';
import type { Session } from '../auth/session';
import { sessionHeaders } from '../auth/session';

export const isUnauthenticated = (error: CombinedError | undefined) =>
  !!error?.graphQLErrors.some((e) => e.extensions?.code === 'UNAUTHENTICATED');

/** The `extensions.code` of the first GraphQL error (FORBIDDEN, NOT_FOUND, VALIDATION, ...). */
export const errorCode = (error: CombinedError | undefined): string | undefined => {
  const code = error?.graphQLErrors[0]?.extensions?.code;
  return typeof code === 'string' ? code : undefined;
};

const reconnectListeners = new WeakMap<Client, Set<() => void>>();

/**
 * Calls `fn` each time `client`'s websocket connects again after a drop (events sent meanwhile
 * were missed, so live pages refetch). Returns the unsubscribe function.
 */
export function onReconnect(client: Client, fn: () => void): () => void {
  let set = reconnectListeners.get(client);
  if (!set) reconnectListeners.set(client, (set = new Set()));
  set.add(fn);
  return () => set.delete(fn);
}

/** The websocket's `connection_init` payload: grus-api reads lower-case header names there. */
export function connectionParams(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
}

/**
 * The urql client: POST /graphql with the session's headers, and websocket subscriptions on
 * /graphql/ws (graphql-ws; connects lazily, on the first subscription). `onUnauthenticated`
 * runs when any answer says UNAUTHENTICATED.
 */
export function makeClient(session: Session, onUnauthenticated: () => void): Client {
  const headers = sessionHeaders(session);
  const wsUrl = `${window.location.protocol === 'https:' ? 'wss' : 'ws'}://${window.location.host}/graphql/ws`;
  const listeners = new Set<() => void>();
  const ws = createWsClient({
    url: wsUrl,
    lazy: true,
    retryAttempts: Infinity,
    shouldRetry: () => true,
    connectionParams: () => connectionParams(headers),
    on: {
      connected: (_socket, _payload, wasRetry) => {
        if (wasRetry) listeners.forEach((fn) => fn());
      },
    },
  });
  const client = new Client({
    url: '/graphql',
    // grus-api takes POST only (GET would also bypass the CSRF header's purpose).
    preferGetMethod: false,
    fetchOptions: () => ({ credentials: 'same-origin', headers }),
    requestPolicy: 'cache-and-network',
    exchanges: [
      mapExchange({
        onError(error) {
          if (isUnauthenticated(error)) onUnauthenticated();
        },
      }),
      cacheExchange,
      fetchExchange,
      subscriptionExchange({
        forwardSubscription(request) {
          const input = { ...request, query: request.query || '' };
          return {
            subscribe(sink) {
              const unsubscribe = ws.subscribe(input, sink);
              return { unsubscribe };
            },
          };
        },
      }),
    ],
  });
  reconnectListeners.set(client, listeners);
  return client;
}
