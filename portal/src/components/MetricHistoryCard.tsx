import { Box, Card, CardContent, CardHeader, ToggleButton, ToggleButtonGroup, Typography } from '@mui/material';
import { LineChart } from '@mui/x-charts/LineChart';
import dayjs from 'dayjs';
import { useEffect, useMemo, useState } from 'react';
import { useQuery } from 'urql';
import { ClusterMetricHistoryQuery, JobMetricHistoryQuery } from '../api/operations';
import type { MetricPointFieldsFragment } from '../gql/graphql';
import { formatMib, formatRate } from './format';
import { errorText } from './states';

/** The ranges a user picks from, in minutes. */
export const RANGES = [
  { label: '15 min', minutes: 15 },
  { label: '1 h', minutes: 60 },
  { label: '6 h', minutes: 360 },
  { label: '1 day', minutes: 1440 },
  { label: '7 days', minutes: 10080 },
] as const;

/** While live the history is read again this often (the finest points are 10 s). */
const LIVE_MS = 10_000;

/** Whose history: a job's (GPU, CPU, memory, disk, network) or a cluster's (its GPUs). */
export type MetricSubject = { job: string } | { cluster: string };

type Point = MetricPointFieldsFragment;

/** A job's or a cluster's metrics over the chosen range, live while `live`. */
export function MetricHistoryCard({ subject, live }: { subject: MetricSubject; live: boolean }) {
  const [minutes, setMinutes] = useState<number>(60);
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!live) return undefined;
    const timer = setInterval(() => setNow(Date.now()), LIVE_MS);
    return () => clearInterval(timer);
  }, [live]);
  const since = useMemo(() => new Date(now - minutes * 60_000).toISOString(), [now, minutes]);
  const jobId = 'job' in subject ? subject.job : null;
  const clusterId = 'cluster' in subject ? subject.cluster : null;
  const [jobResult] = useQuery({
    query: JobMetricHistoryQuery,
    variables: { id: jobId ?? '', since },
    pause: jobId == null,
    requestPolicy: 'network-only',
  });
  const [clusterResult] = useQuery({
    query: ClusterMetricHistoryQuery,
    variables: { id: clusterId ?? '', since },
    pause: clusterId == null,
    requestPolicy: 'network-only',
  });
  const result = jobId != null ? jobResult : clusterResult;
  const history = jobId != null ? jobResult.data?.job.metricHistory : clusterResult.data?.cluster.metricHistory;
  const points = history?.points ?? [];
  const gpuPoints = points.filter((p) => p.samples > 0);
  const usagePoints = points.filter((p) => p.usageSamples > 0);
  const format = (d: Date) => dayjs(d).format(minutes > 1440 ? 'MM-DD HH:mm' : 'HH:mm:ss');
  const xAxis = (ps: Point[]) => [{ scaleType: 'time' as const, data: ps.map((p) => new Date(p.at)), valueFormatter: format }];
  // A line needs two points: with fewer, marks show the readings.
  const few = Math.max(gpuPoints.length, usagePoints.length) < 3;
  const what = jobId != null ? 'Metrics over time' : 'GPU utilization over time';
  return (
    <Card variant="outlined" sx={{ mt: 2 }}>
      <CardHeader
        title={what}
        titleTypographyProps={{ variant: 'h6', component: 'h2' }}
        action={
          <ToggleButtonGroup
            size="small"
            exclusive
            value={minutes}
            onChange={(_, v: number | null) => v != null && setMinutes(v)}
            aria-label="Time range"
          >
            {RANGES.map((r) => (
              <ToggleButton key={r.minutes} value={r.minutes} aria-label={`Last ${r.label}`}>
                {r.label}
              </ToggleButton>
            ))}
          </ToggleButtonGroup>
        }
      />
      <CardContent>
        {result.error ? (
          <Typography color="error">{errorText(result.error)}</Typography>
        ) : points.length === 0 ? (
          <Typography variant="body2" color="text.secondary" data-testid="metric-history-empty">
            {result.fetching ? 'Loading…' : 'No samples in this range.'}
          </Typography>
        ) : (
          <>
            {gpuPoints.length > 0 && (
              <Box data-testid="gpu-history-chart" role="img" aria-label="GPU busy percent and memory over time">
                <Typography variant="subtitle2">GPU</Typography>
                <LineChart
                  height={220}
                  xAxis={xAxis(gpuPoints)}
                  yAxis={[
                    { id: 'pct', min: 0, max: 100 },
                    { id: 'mib', min: 0, valueFormatter: (v: number) => formatMib(v) },
                  ]}
                  rightAxis="mib"
                  series={[
                    { data: gpuPoints.map((p) => p.busyPctAvg ?? null), label: 'Busy % (mean)', showMark: few, yAxisId: 'pct' },
                    { data: gpuPoints.map((p) => p.busyPctMax ?? null), label: 'Busy % (peak)', showMark: few, yAxisId: 'pct' },
                    {
                      data: gpuPoints.map((p) => p.memoryUsedMibMax ?? null),
                      label: 'Memory per GPU (peak)',
                      showMark: few,
                      yAxisId: 'mib',
                      valueFormatter: (v: number | null) => (v == null ? '—' : formatMib(v)),
                    },
                  ]}
                  margin={{ top: 50, right: 70, bottom: 30, left: 40 }}
                />
              </Box>
            )}
            {usagePoints.length > 0 && (
              <>
                <Box data-testid="cpu-history-chart" role="img" aria-label="CPU cores and memory over time">
                  <Typography variant="subtitle2">CPU and memory (all replicas)</Typography>
                  <LineChart
                    height={200}
                    xAxis={xAxis(usagePoints)}
                    yAxis={[
                      { id: 'cores', min: 0 },
                      { id: 'mib', min: 0, valueFormatter: (v: number) => formatMib(v) },
                    ]}
                    rightAxis="mib"
                    series={[
                      { data: usagePoints.map((p) => p.cpuCoresAvg ?? null), label: 'CPU cores (mean)', showMark: few, yAxisId: 'cores' },
                      { data: usagePoints.map((p) => p.cpuCoresMax ?? null), label: 'CPU cores (peak)', showMark: few, yAxisId: 'cores' },
                      {
                        data: usagePoints.map((p) => p.memoryMibMax ?? null),
                        label: 'Memory (peak)',
                        showMark: few,
                        yAxisId: 'mib',
                        valueFormatter: (v: number | null) => (v == null ? '—' : formatMib(v)),
                      },
                    ]}
                    margin={{ top: 50, right: 70, bottom: 30, left: 40 }}
                  />
                </Box>
                <Box data-testid="io-history-chart" role="img" aria-label="Disk and network throughput over time">
                  <Typography variant="subtitle2">Disk and network (all replicas)</Typography>
                  <LineChart
                    height={200}
                    xAxis={xAxis(usagePoints)}
                    yAxis={[{ min: 0, valueFormatter: (v: number) => formatRate(v) }]}
                    series={(
                      [
                        ['diskReadBpsAvg', 'Disk read'],
                        ['diskWriteBpsAvg', 'Disk write'],
                        ['netRxBpsAvg', 'Network in'],
                        ['netTxBpsAvg', 'Network out'],
                      ] as const
                    ).map(([key, label]) => ({
                      data: usagePoints.map((p) => p[key] ?? null),
                      label,
                      showMark: few,
                      valueFormatter: (v: number | null) => (v == null ? '—' : formatRate(v)),
                    }))}
                    margin={{ top: 50, right: 20, bottom: 30, left: 80 }}
                  />
                </Box>
              </>
            )}
            <Typography variant="caption" color="text.secondary">
              {history?.resolutionSeconds ?? 0} s intervals{live ? ' · live' : ''}
            </Typography>
          </>
        )}
      </CardContent>
    </Card>
  );
}
