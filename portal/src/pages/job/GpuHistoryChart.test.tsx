import { screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { mockClient, renderWith } from '../../test/render';
import { GpuHistoryChart } from './GpuHistoryChart';

const point = (at: string, busy: number) => ({
  __typename: 'MetricPoint',
  at,
  samples: 2,
  busyPctAvg: busy,
  busyPctMax: busy + 10,
  memoryUsedMibAvg: 1024,
  memoryUsedMibMax: 2048,
});

const answer = (points: ReturnType<typeof point>[]) => ({
  data: { job: { __typename: 'Job', id: '7', gpuHistory: { __typename: 'GpuHistory', resolutionSeconds: 10, points } } },
});

describe('GPU history chart', () => {
  it('charts the range and reads it again for another range', async () => {
    const { client, executed } = mockClient({
      JobGpuHistory: answer([point('2026-11-28T10:00:00Z', 40), point('2026-11-28T10:00:10Z', 60)]),
    });
    renderWith(<GpuHistoryChart jobId="7" live={false} />, { client });
    expect(await screen.findByTestId('gpu-history-chart')).toBeInTheDocument();
    expect(screen.getByText('10 s intervals')).toBeInTheDocument();
    const sinceOf = (i: number) => new Date((executed[i]!.variables as { since: string }).since).getTime();
    const first = sinceOf(executed.length - 1);
    expect(Date.now() - first).toBeGreaterThanOrEqual(60 * 60_000 - 5_000);
    await userEvent.click(screen.getByRole('button', { name: 'Last 1 day' }));
    const wider = sinceOf(executed.length - 1);
    expect(Math.round((first - wider) / 60_000)).toBe(23 * 60);
  });

  it('says when the range holds no samples', async () => {
    const { client } = mockClient({ JobGpuHistory: answer([]) });
    renderWith(<GpuHistoryChart jobId="7" live />, { client });
    expect(await screen.findByText('No GPU samples in this range.')).toBeInTheDocument();
  });
});
