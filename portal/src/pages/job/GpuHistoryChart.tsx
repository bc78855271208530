import { Box, Card, CardContent, CardHeader, ToggleButton, ToggleButtonGroup, Typography } from '@mui/material';
import { LineChart } from '@mui/x-charts/LineChart';
import dayjs from 'dayjs';
import { useEffect, useMemo, useState } from 'react';
import { useQuery } from 'urql';
import { JobGpuHistoryQuery } from '../../api/operations';
import { errorText } from '../../components/states';

/** The ranges a user picks from, in minutes. */
export const RANGES = [
  { label: '15 min', minutes: 15 },
  { label: '1 h', minutes: 60 },
  { label: '6 h', minutes: 360 },
  { label: '1 day', minutes: 1440 },
  { label: '7 days', minutes: 10080 },
] as const;

/** While the job runs the chart is read again this often (the finest points are 10 s). */
const LIVE_MS = 10_000;

/** A job's GPU busy % (mean and peak per interval) and memory over the chosen range, live while
 * the job runs. */
export function GpuHistoryChart({ jobId, live }: { jobId: string; live: boolean }) {
  const [minutes, setMinutes] = useState<number>(60);
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!live) return undefined;
    const timer = setInterval(() => setNow(Date.now()), LIVE_MS);
    return () => clearInterval(timer);
  }, [live]);
  const since = useMemo(() => new Date(now - minutes * 60_000).toISOString(), [now, minutes]);
  const [result] = useQuery({ query: JobGpuHistoryQuery, variables: { id: jobId, since }, requestPolicy: 'network-only' });
  const history = result.data?.job.gpuHistory;
  const points = history?.points ?? [];
  return (
    <Card variant="outlined" sx={{ mt: 2 }}>
      <CardHeader
        title="GPU utilization over time"
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
          <Typography variant="body2" color="text.secondary" data-testid="gpu-history-empty">
            {result.fetching ? 'Loading…' : 'No GPU samples in this range.'}
          </Typography>
        ) : (
          <Box data-testid="gpu-history-chart" role="img" aria-label="GPU busy percent and memory over time">
            <LineChart
              height={240}
              xAxis={[
                {
                  scaleType: 'time',
                  data: points.map((p) => new Date(p.at)),
                  valueFormatter: (d: Date) => dayjs(d).format(minutes > 1440 ? 'MM-DD HH:mm' : 'HH:mm:ss'),
                },
              ]}
              yAxis={[{ id: 'pct', min: 0, max: 100 }, { id: 'mib', min: 0 }]}
              rightAxis="mib"
              series={[
                { data: points.map((p) => p.busyPctAvg), label: 'Busy % (mean)', showMark: false, yAxisId: 'pct' },
                { data: points.map((p) => p.busyPctMax), label: 'Busy % (peak)', showMark: false, yAxisId: 'pct' },
                { data: points.map((p) => p.memoryUsedMibMax), label: 'Memory MiB (peak)', showMark: false, yAxisId: 'mib' },
              ]}
              margin={{ top: 50, right: 60, bottom: 30, left: 40 }}
            />
            <Typography variant="caption" color="text.secondary">
              {history?.resolutionSeconds ?? 0} s intervals{live ? ' · live' : ''}
            </Typography>
          </Box>
        )}
      </CardContent>
    </Card>
  );
}
