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

/**
 * The urql client: POST /graphql with the session's headers, and websocket subscriptions on
 * /graphql/ws (graphql-ws; connects lazily, on the first subscription). `onUnauthenticated`
 * runs when any answer says UNAUTHENTICATED.
 */
export function makeClient(session: Session, onUnauthenticated: () => void): Client {
  const headers = sessionHeaders(session);
  const wsUrl = `${window.location.protocol === 'https:' ? 'wss' : 'ws'}://${window.location.host}/graphql/ws`;
  const ws = createWsClient({ url: wsUrl, lazy: true, connectionParams: () => headers });
  return new Client({
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
}
