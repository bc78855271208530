import { render } from '@testing-library/react';
import type { ReactElement } from 'react';
import { MemoryRouter } from 'react-router-dom';
import { Provider } from 'urql';
import type { Client } from 'urql';
import { fromValue, never } from 'wonka';

/** Renders inside a router (at `path`) and, when given, a mock urql client. */
export function renderWith(ui: ReactElement, { path = '/', client }: { path?: string; client?: Client } = {}) {
  const tree = <MemoryRouter initialEntries={[path]}>{ui}</MemoryRouter>;
  return render(client ? <Provider value={client}>{tree}</Provider> : tree);
}

type Answer = { data?: unknown; error?: unknown };

/**
 * A urql client whose queries answer by operation name; mutations are recorded and answered
 * by `mutations[name]`.
 */
export function mockClient(queries: Record<string, Answer>, mutations: Record<string, (vars: unknown) => Answer> = {}) {
  const calls: { name: string; variables: unknown }[] = [];
  const nameOf = (q: { definitions: readonly { kind: string; name?: { value: string } }[] }) =>
    q.definitions.find((d) => d.kind === 'OperationDefinition')?.name?.value ?? '';
  const client = {
    executeQuery: (op: { query: never; variables: unknown }) => {
      const a = queries[nameOf(op.query)];
      return a ? fromValue({ operation: op, ...a, stale: false, hasNext: false }) : never;
    },
    executeMutation: (op: { query: never; variables: unknown }) => {
      const name = nameOf(op.query);
      calls.push({ name, variables: op.variables });
      const a = mutations[name]?.(op.variables) ?? { data: null };
      return fromValue({ operation: op, ...a, stale: false, hasNext: false });
    },
    executeSubscription: () => never,
  } as unknown as Client;
  return { client, calls };
}
