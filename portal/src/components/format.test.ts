import { describe, expect, it } from 'vitest';
import { formatMib, formatRate, JOB_STATES, TERMINAL_STATES } from './format';

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

describe('resource amounts', () => {
  it('reads memory in MiB or GiB and rates in decimal units', () => {
    expect(formatMib(700)).toBe('700 MiB');
    expect(formatMib(3277)).toBe('3.2 GiB');
    expect(formatRate(0)).toBe('0 B/s');
    expect(formatRate(999)).toBe('999 B/s');
    expect(formatRate(12_345)).toBe('12 KB/s');
    expect(formatRate(3_400_000)).toBe('3.4 MB/s');
    expect(formatRate(2.5e12)).toBe('2500 GB/s');
  });
});
