import { screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { mockClient, renderWith } from '../test/render';
import { MetricHistoryCard } from './MetricHistoryCard';

const point = (at: string, busy: number | null, cpu: number | null = null) => ({
  __typename: 'MetricPoint',
  at,
  samples: busy == null ? 0 : 2,
  busyPctAvg: busy,
  busyPctMax: busy == null ? null : busy + 10,
  memoryUsedMibAvg: busy == null ? null : 1024,
  memoryUsedMibMax: busy == null ? null : 2048,
  usageSamples: cpu == null ? 0 : 1,
  cpuCoresAvg: cpu,
  cpuCoresMax: cpu,
  memoryMibAvg: cpu == null ? null : 4096,
  memoryMibMax: cpu == null ? null : 4096,
  diskReadBpsAvg: cpu == null ? null : 1e6,
  diskWriteBpsAvg: cpu == null ? null : 0,
  netRxBpsAvg: cpu == null ? null : 5e6,
  netTxBpsAvg: cpu == null ? null : 4e6,
});

type Point = ReturnType<typeof point>;
const history = (points: Point[]) => ({ __typename: 'MetricHistory', resolutionSeconds: 10, points });
const jobAnswer = (points: Point[]) => ({ data: { job: { __typename: 'Job', id: '7', metricHistory: history(points) } } });

describe('metrics history', () => {
  it("charts a job's GPU, CPU and I/O and reads the range again for another range", async () => {
    const { client, executed } = mockClient({
      JobMetricHistory: jobAnswer([point('2026-11-28T10:00:00Z', 40, 1.5), point('2026-11-28T10:00:10Z', 60, 2)]),
    });
    renderWith(<MetricHistoryCard subject={{ job: '7' }} live={false} />, { client });
    expect(await screen.findByTestId('gpu-history-chart')).toBeInTheDocument();
    expect(screen.getByTestId('cpu-history-chart')).toBeInTheDocument();
    expect(screen.getByTestId('io-history-chart')).toBeInTheDocument();
    expect(screen.getByText('10 s intervals')).toBeInTheDocument();
    expect(executed.some((e) => e.name === 'ClusterMetricHistory')).toBe(false);
    const sinceOf = (i: number) => new Date((executed[i]!.variables as { since: string }).since).getTime();
    const first = sinceOf(executed.length - 1);
    expect(Date.now() - first).toBeGreaterThanOrEqual(60 * 60_000 - 5_000);
    await userEvent.click(screen.getByRole('button', { name: 'Last 1 day' }));
    const wider = sinceOf(executed.length - 1);
    expect(Math.round((first - wider) / 60_000)).toBe(23 * 60);
  });

  it('charts only what was measured: a CPU-only job has no GPU chart', async () => {
    const { client } = mockClient({ JobMetricHistory: jobAnswer([point('2026-11-28T10:00:00Z', null, 3)]) });
    renderWith(<MetricHistoryCard subject={{ job: '7' }} live={false} />, { client });
    expect(await screen.findByTestId('cpu-history-chart')).toBeInTheDocument();
    expect(screen.queryByTestId('gpu-history-chart')).toBeNull();
  });

  it("charts a cluster's GPUs from its own query", async () => {
    const { client, executed } = mockClient({
      ClusterMetricHistory: {
        data: { cluster: { __typename: 'Cluster', id: 'east-1', metricHistory: history([point('2026-11-28T10:00:00Z', 45)]) } },
      },
    });
    renderWith(<MetricHistoryCard subject={{ cluster: 'east-1' }} live />, { client });
    expect(await screen.findByTestId('gpu-history-chart')).toBeInTheDocument();
    expect(screen.queryByTestId('cpu-history-chart')).toBeNull();
    expect(screen.getByText('10 s intervals · live')).toBeInTheDocument();
    expect(executed.filter((e) => e.name === 'ClusterMetricHistory')[0]!.variables).toMatchObject({ id: 'east-1' });
    expect(executed.some((e) => e.name === 'JobMetricHistory')).toBe(false);
  });

  it('says when the range holds no samples', async () => {
    const { client } = mockClient({ JobMetricHistory: jobAnswer([]) });
    renderWith(<MetricHistoryCard subject={{ job: '7' }} live />, { client });
    expect(await screen.findByText('No samples in this range.')).toBeInTheDocument();
  });
});
