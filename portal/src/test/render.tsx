import { render } from '@testing-library/react';
import type { ReactElement } from 'react';
import { MemoryRouter } from 'react-router-dom';
import { Provider } from 'urql';
import type { Client } from 'urql';
import { concat, fromValue, map, never, pipe } from 'wonka';
import type { Source } from 'wonka';

/** Renders inside a router (at `path`) and, when given, a mock urql client. */
export function renderWith(ui: ReactElement, { path = '/', client }: { path?: string; client?: Client } = {}) {
  const tree = <MemoryRouter initialEntries={[path]}>{ui}</MemoryRouter>;
  return render(client ? <Provider value={client}>{tree}</Provider> : tree);
}

type Answer = { data?: unknown; error?: unknown };

/**
 * A urql client whose queries answer by operation name (an answer, or a function of the
 * variables); mutations are recorded and answered by `mutations[name]`; subscriptions emit what
 * `subscriptions[name]` emits. Every executed query is recorded in `queries` (refetches too).
 */
export function mockClient(
  queries: Record<string, Answer | ((vars: never) => Answer)>,
  mutations: Record<string, (vars: never) => Answer> = {},
  subscriptions: Record<string, Source<unknown>> = {},
) {
  const calls: { name: string; variables: unknown }[] = [];
  const executed: { name: string; variables: unknown }[] = [];
  const nameOf = (q: { definitions: readonly { kind: string; name?: { value: string } }[] }) =>
    q.definitions.find((d) => d.kind === 'OperationDefinition')?.name?.value ?? '';
  const client = {
    executeQuery: (op: { query: never; variables: never }) => {
      const name = nameOf(op.query);
      executed.push({ name, variables: op.variables });
      const q = queries[name];
      const a = typeof q === 'function' ? q(op.variables) : q;
      // Like a real client's source: the answer, then open (urql retries completed errors).
      return a ? concat([fromValue({ operation: op, ...a, stale: false, hasNext: false }), never]) : never;
    },
    executeMutation: (op: { query: never; variables: never }) => {
      const name = nameOf(op.query);
      calls.push({ name, variables: op.variables });
      const a = mutations[name]?.(op.variables) ?? { data: null };
      return fromValue({ operation: op, ...a, stale: false, hasNext: false });
    },
    executeSubscription: (op: { query: never; variables: unknown }) => {
      const source = subscriptions[nameOf(op.query)];
      return source
        ? pipe(
            source,
            map((data) => ({ operation: op, data, stale: false, hasNext: true })),
          )
        : never;
    },
  } as unknown as Client;
  return { client, calls, executed };
}
