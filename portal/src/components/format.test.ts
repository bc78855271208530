import { describe, expect, it } from 'vitest';
import { JOB_STATES, TERMINAL_STATES } from './format';

describe('job states', () => {
  it('lists every state of the API in its order, unknown included', () => {
    expect(JOB_STATES).toEqual([
      'PENDING',
      'ADMITTED',
      'DISPATCHED',
      'REJECTED',
      'SCHEDULED',
      'RUNNING',
      'PREEMPTING',
      'PREEMPTED',
      'SUCCEEDED',
      'FAILED',
      'CANCELLED',
      'UNKNOWN',
      'SUSPENDED',
    ]);
  });

  it('treats a rejected job as live: the allocator dispatches it again, and it can be cancelled', () => {
    expect(TERMINAL_STATES).toEqual(['SUCCEEDED', 'FAILED', 'CANCELLED']);
  });
});
