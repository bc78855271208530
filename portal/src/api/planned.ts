// The seam between a page and an API field the server does not have yet. A page's hook
// returns `unavailable(...)` with the fields it waits for; once the schema has them, the hook
// runs its query (from the page's `*.planned.graphql`, moved into codegen) and returns
// `{ status: 'ready', data }` (or loading / error) in the same shape the page's view takes.
import type { CombinedError } from 'urql';

export type PlannedResult<T> =
  | { status: 'unavailable'; fields: readonly string[] }
  | { status: 'loading' }
  | { status: 'error'; error: CombinedError | Error; retry: () => void }
  | { status: 'ready'; data: T; refresh: () => void };

export const unavailable = (fields: readonly string[]): PlannedResult<never> => ({ status: 'unavailable', fields });
