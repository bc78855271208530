import { Card, CardContent, CardHeader, Chip, Stack, ToggleButton, ToggleButtonGroup, Typography } from '@mui/material';
import { ScatterChart } from '@mui/x-charts/ScatterChart';
import { useState } from 'react';
import { fromNow } from '../../components/format';
import { Empty } from '../../components/states';
import type { ClusterInfo } from './types';

type Metric = 'utilization' | 'allocation';

/** Per node and GPU, the value the heatmap colours (0..100). */
export function heatValue(metric: Metric, gpu: { allocatedMilli: number; busyPercent: number | null }): number {
  return metric === 'allocation' ? gpu.allocatedMilli / 10 : (gpu.busyPercent ?? 0);
}

/** One cluster's heatmap: a scatter of square markers, node by GPU index, coloured by value. */
export function ClusterHeatmap({ cluster, metric }: { cluster: ClusterInfo; metric: Metric }) {
  const nodes = cluster.nodes.map((n) => n.name);
  const maxGpus = Math.max(1, ...cluster.nodes.map((n) => n.gpus.length));
  const data = cluster.nodes.flatMap((n, y) =>
    n.gpus.map((g) => ({ id: `${n.name}/${g.index}`, x: g.index, y, z: heatValue(metric, g) })),
  );
  return (
    <ScatterChart
      height={Math.max(160, 40 + nodes.length * 28)}
      series={[{ data, markerSize: 9, valueFormatter: (v) => (v ? `${nodes[v.y]} GPU ${v.x}: ${v.z ?? 0}%` : '') }]}
      xAxis={[{ min: -0.5, max: maxGpus - 0.5, label: 'GPU', tickMinStep: 1 }]}
      yAxis={[{ min: -0.5, max: nodes.length - 0.5, tickMinStep: 1, valueFormatter: (v: number) => nodes[v] ?? '' }]}
      zAxis={[{ min: 0, max: 100, colorMap: { type: 'continuous', min: 0, max: 100, color: ['#e3f2fd', '#0d47a1'] } }]}
      margin={{ left: 120 }}
      slotProps={{ legend: { hidden: true } }}
    />
  );
}

export function ClustersView({ clusters }: { clusters: ClusterInfo[] }) {
  const [metric, setMetric] = useState<Metric>('utilization');
  if (clusters.length === 0) return <Empty title="No clusters registered">An admin registers clusters on the Admin page.</Empty>;
  return (
    <>
      <ToggleButtonGroup
        exclusive
        size="small"
        value={metric}
        onChange={(_e, v: Metric | null) => v && setMetric(v)}
        aria-label="Heatmap colour"
        sx={{ mb: 2 }}
      >
        <ToggleButton value="utilization">Utilization</ToggleButton>
        <ToggleButton value="allocation">Allocation</ToggleButton>
      </ToggleButtonGroup>
      <Stack spacing={2}>
        {clusters.map((c) => {
          const models = [...new Set(c.nodes.flatMap((n) => n.gpus.map((g) => g.model)))].sort();
          const gpus = c.nodes.reduce((k, n) => k + n.gpus.length, 0);
          const badNodes = c.nodes.filter((n) => !n.healthy).length;
          return (
            <Card variant="outlined" key={c.id} component="section" aria-label={`Cluster ${c.name}`}>
              <CardHeader
                title={c.name}
                titleTypographyProps={{ variant: 'h6', component: 'h2' }}
                subheader={`${c.nodes.length} nodes · ${gpus} GPUs · seen ${fromNow(c.lastSeenAt)}`}
                action={
                  <Stack direction="row" spacing={1} sx={{ mt: 1 }}>
                    <Chip size="small" color={c.healthy ? 'success' : 'error'} label={c.healthy ? 'healthy' : 'unhealthy'} />
                    {badNodes > 0 && <Chip size="small" color="warning" label={`${badNodes} node(s) unhealthy`} />}
                  </Stack>
                }
              />
              <CardContent>
                <Typography variant="body2" color="text.secondary">
                  Models: {models.join(', ') || '—'}
                </Typography>
                {c.nodes.length === 0 ? <Empty title="No nodes reported" /> : <ClusterHeatmap cluster={c} metric={metric} />}
              </CardContent>
            </Card>
          );
        })}
      </Stack>
    </>
  );
}
