import { Alert, Button, Card, CardContent, CardHeader, Chip, Stack, ToggleButton, ToggleButtonGroup, Typography } from '@mui/material';
import { ScatterChart } from '@mui/x-charts/ScatterChart';
import { DataGrid, type GridColDef } from '@mui/x-data-grid';
import { useState } from 'react';
import { useMutation } from 'urql';
import {
  CordonClusterMutation,
  CordonNodeMutation,
  DrainClusterMutation,
  DrainNodeMutation,
  RetireClusterMutation,
  UncordonClusterMutation,
  UncordonNodeMutation,
} from '../../api/operations';
import { errorText } from '../../components/states';
import { fromNow } from '../../components/format';
import { gridEnvProps } from '../../components/grid';
import { MetricHistoryCard } from '../../components/MetricHistoryCard';
import { Empty } from '../../components/states';
import type { ClusterFieldsFragment } from '../../gql/graphql';
import { useNow } from '../../components/useNow';
import { ConfirmButton, ConfirmDialog } from '../../components/ConfirmButton';

export type Metric = 'utilization' | 'allocation';
type Gpu = ClusterFieldsFragment['nodes'][number]['gpus'][number];

/** The value a GPU's heatmap cell shows, 0..100: busy % or the allocated share. */
export function heatValue(metric: Metric, gpu: Pick<Gpu, 'allocatedMilli' | 'busyPct'>): number {
  return metric === 'allocation' ? gpu.allocatedMilli / 10 : Math.round(gpu.busyPct ?? 0);
}

export const healthColor = (health: string) =>
  health === 'healthy' ? 'success' : health === 'degraded' ? 'warning' : health === 'unknown' ? 'default' : 'error';

/** One cluster's heatmap: node (row) by GPU index (column), coloured by the metric. */
export function ClusterHeatmap({ cluster, metric }: { cluster: ClusterFieldsFragment; metric: Metric }) {
  const nodes = cluster.nodes.map((n) => n.name);
  const maxGpus = Math.max(1, ...cluster.nodes.map((n) => n.gpus.length));
  const data = cluster.nodes.flatMap((n, y) =>
    n.gpus.map((g) => ({ id: `${n.name}/${g.index}`, x: g.index, y, z: heatValue(metric, g) })),
  );
  const what = metric === 'allocation' ? 'allocated' : 'busy';
  return (
    <ScatterChart
      height={Math.max(180, 100 + nodes.length * 40)}
      series={[
        {
          data,
          markerSize: 10,
          valueFormatter: (v) => (v ? `${nodes[v.y] ?? ''} GPU ${v.x}: ${v.z ?? 0} % ${what}` : ''),
        },
      ]}
      xAxis={[{ min: -0.5, max: maxGpus - 0.5, label: 'GPU', tickMinStep: 1 }]}
      yAxis={[{ min: -0.5, max: nodes.length - 0.5, tickMinStep: 1, valueFormatter: (v: number) => nodes[v] ?? '' }]}
      zAxis={[{ min: 0, max: 100, colorMap: { type: 'continuous', min: 0, max: 100, color: ['#e3f2fd', '#0d47a1'] } }]}
      margin={{ left: 130 }}
      slotProps={{ legend: { hidden: true } }}
    />
  );
}

/** How long drained work has to stop, in seconds (the API's default). */
export const DRAIN_GRACE_S = 30;

/** Whether a node or cluster takes new work, in words. */
export function schedulingText(x: { cordoned: boolean; draining: boolean }): string {
  return x.draining ? 'draining' : x.cordoned ? 'cordoned' : 'schedulable';
}

interface NodeRow {
  id: string;
  name: string;
  healthy: boolean;
  scheduling: string;
  rack: string | null;
  pool: string | null;
  gpus: number;
  models: string;
  allocated: number;
  busy: number | null;
}

const nodeColumns: GridColDef<NodeRow>[] = [
  { field: 'name', headerName: 'Node', flex: 1, minWidth: 140 },
  { field: 'healthy', headerName: 'Health', width: 100, valueFormatter: (v: boolean) => (v ? 'healthy' : 'unhealthy') },
  { field: 'scheduling', headerName: 'Scheduling', width: 120 },
  { field: 'rack', headerName: 'Rack', width: 90, valueFormatter: (v: string | null) => v ?? '—' },
  { field: 'pool', headerName: 'Pool', width: 110, valueFormatter: (v: string | null) => v ?? '—' },
  { field: 'models', headerName: 'GPU models', flex: 1, minWidth: 120 },
  { field: 'gpus', headerName: 'GPUs', type: 'number', width: 70 },
  { field: 'allocated', headerName: 'Allocated', type: 'number', width: 100, valueFormatter: (v: number) => `${v.toFixed(2)} GPU` },
  { field: 'busy', headerName: 'Mean busy', type: 'number', width: 100, valueFormatter: (v: number | null) => (v == null ? '—' : `${v.toFixed(0)} %`) },
];

export function nodeRows(cluster: ClusterFieldsFragment): NodeRow[] {
  return cluster.nodes.map((n) => {
    const readings = n.gpus.map((g) => g.busyPct).filter((b): b is number => b != null);
    return {
      id: n.name,
      name: n.name,
      healthy: n.healthy,
      scheduling: schedulingText(n),
      rack: n.rack ?? null,
      pool: n.pool ?? null,
      gpus: n.gpus.length,
      models: [...new Set(n.gpus.map((g) => g.model))].sort().join(', '),
      allocated: n.gpus.reduce((s, g) => s + g.allocatedMilli, 0) / 1000,
      busy: readings.length ? readings.reduce((a, b) => a + b, 0) / readings.length : null,
    };
  });
}

/** A platform admin's operations on a cluster and its nodes; each answer is shown, errors included. */
function useOperations(cluster: ClusterFieldsFragment, onDone: () => void) {
  const [, cordonCluster] = useMutation(CordonClusterMutation);
  const [, drainCluster] = useMutation(DrainClusterMutation);
  const [, uncordonCluster] = useMutation(UncordonClusterMutation);
  const [, retireCluster] = useMutation(RetireClusterMutation);
  const [, cordonNode] = useMutation(CordonNodeMutation);
  const [, drainNode] = useMutation(DrainNodeMutation);
  const [, uncordonNode] = useMutation(UncordonNodeMutation);
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  // The node whose drain is being asked about. Held here, not in the grid's cell: the cell
  // remounts whenever the page reads the cluster again, and its question would go with it.
  // The node stays named while the dialog closes (its title fades out with it).
  const [drainAsked, setDrainAsked] = useState<{ node: string; open: boolean } | null>(null);
  const run = (p: Promise<{ error?: Parameters<typeof errorText>[0] }>, done: string) =>
    void p.then((r) => {
      setMessage(r.error ? { ok: false, text: errorText(r.error) } : { ok: true, text: done });
      if (!r.error) onDone();
    });
  const id = cluster.id;
  const grace = { graceSeconds: DRAIN_GRACE_S };
  return {
    message,
    clearMessage: () => setMessage(null),
    cordon: () => run(cordonCluster({ id }), `Cluster ${id} cordoned`),
    drain: () => run(drainCluster({ id, ...grace }), `Cluster ${id} draining: its preemptible work moves elsewhere`),
    uncordon: () => run(uncordonCluster({ id }), `Cluster ${id} takes new work again`),
    retire: () => run(retireCluster({ id }), `Cluster ${id} retired`),
    cordonNode: (node: string) => run(cordonNode({ clusterId: id, node }), `Node ${node} cordoned`),
    drainAsked,
    askDrainNode: (node: string) => setDrainAsked({ node, open: true }),
    dismissDrainNode: () => setDrainAsked((a) => a && { ...a, open: false }),
    drainNode: (node: string) => run(drainNode({ clusterId: id, node, ...grace }), `Node ${node} draining`),
    uncordonNode: (node: string) => run(uncordonNode({ clusterId: id, node }), `Node ${node} takes new work again`),
  };
}

function operationColumns(ops: ReturnType<typeof useOperations>): GridColDef<NodeRow>[] {
  return [
    {
      field: 'actions',
      headerName: 'Operate',
      width: 190,
      sortable: false,
      renderCell: ({ row }) =>
        row.scheduling === 'schedulable' ? (
          <Stack direction="row" spacing={1}>
            <Button size="small" onClick={() => ops.cordonNode(row.name)} aria-label={`Cordon node ${row.name}`}>
              Cordon
            </Button>
            <Button size="small" color="warning" onClick={() => ops.askDrainNode(row.name)} aria-label={`Drain node ${row.name}`}>
              Drain
            </Button>
          </Stack>
        ) : (
          <Button size="small" onClick={() => ops.uncordonNode(row.name)} aria-label={`Uncordon node ${row.name}`}>
            Uncordon
          </Button>
        ),
    },
  ];
}

function ClusterCard({
  cluster,
  metric,
  canOperate,
  onChanged,
}: {
  cluster: ClusterFieldsFragment;
  metric: Metric;
  canOperate: boolean;
  onChanged: () => void;
}) {
  const now = useNow();
  const ops = useOperations(cluster, onChanged);
  const name = cluster.displayName ?? cluster.id;
  const gpus = cluster.nodes.reduce((k, n) => k + n.gpus.length, 0);
  const badNodes = cluster.nodes.filter((n) => !n.healthy).length;
  return (
    <Card variant="outlined" component="section" aria-label={`Cluster ${name}`}>
      <CardHeader
        title={name}
        titleTypographyProps={{ variant: 'h6', component: 'h2' }}
        subheader={`${cluster.id} · ${cluster.nodes.length} nodes · ${gpus} GPUs · heartbeat ${fromNow(cluster.lastHeartbeat, now)}${
          cluster.agentVersion ? ` · agent ${cluster.agentVersion}` : ''
        }`}
        action={
          <Stack direction="row" spacing={1} sx={{ mt: 1 }}>
            <Chip size="small" color={healthColor(cluster.health)} label={cluster.health} data-testid={`health-${cluster.id}`} />
            {cluster.controlPlaneMismatch && (
              <Chip
                size="small"
                color="error"
                label="agent serves another control plane"
                title="Its agent refuses this control plane's commands: re-pin it with grus-agent --control-plane"
              />
            )}
            {cluster.cordoned && <Chip size="small" color="warning" label={cluster.draining ? 'draining' : 'cordoned'} />}
            {badNodes > 0 && <Chip size="small" color="warning" label={`${badNodes} node(s) unhealthy`} />}
          </Stack>
        }
      />
      <CardContent>
        {canOperate && (
          <Stack direction="row" spacing={1} sx={{ mb: 1, flexWrap: 'wrap' }} role="group" aria-label={`Operate cluster ${cluster.id}`}>
            {cluster.cordoned ? (
              <Button size="small" variant="outlined" onClick={ops.uncordon}>
                Uncordon cluster
              </Button>
            ) : (
              <>
                <Button size="small" variant="outlined" onClick={ops.cordon}>
                  Cordon cluster
                </Button>
                <ConfirmButton
                  size="small"
                  variant="outlined"
                  color="warning"
                  title={`Drain cluster ${cluster.id}?`}
                  text="It takes no new work, and its preemptible work is evicted after a grace period and requeued elsewhere. Work that is not preemptible runs to its end."
                  confirmLabel="Drain cluster"
                  onConfirm={ops.drain}
                >
                  Drain cluster
                </ConfirmButton>
              </>
            )}
            <ConfirmButton
              size="small"
              color="error"
              title={`Retire cluster ${cluster.id}?`}
              text="It leaves the fleet and its agent token stops working; its history stays. Only a cluster that holds no work can be retired. This cannot be undone."
              confirmLabel="Retire cluster"
              onConfirm={ops.retire}
            >
              Retire cluster
            </ConfirmButton>
          </Stack>
        )}
        {canOperate && (
          <ConfirmDialog
            open={!!ops.drainAsked?.open}
            title={`Drain node ${ops.drainAsked?.node ?? ''}?`}
            text="It takes no new replicas, and its preemptible work is evicted after a grace period and requeued elsewhere. Work that is not preemptible runs to its end."
            confirmLabel="Drain node"
            color="warning"
            onConfirm={() => ops.drainAsked && ops.drainNode(ops.drainAsked.node)}
            onClose={ops.dismissDrainNode}
          />
        )}
        {ops.message && (
          <Alert severity={ops.message.ok ? 'success' : 'error'} sx={{ mb: 1 }} onClose={ops.clearMessage}>
            {ops.message.text}
          </Alert>
        )}
        <Stack direction="row" spacing={1} sx={{ mb: 1, flexWrap: 'wrap' }} aria-label="GPU models">
          {cluster.capacity.length === 0 ? (
            <Typography variant="body2" color="text.secondary">
              No capacity reported yet
            </Typography>
          ) : (
            cluster.capacity.map((m) => (
              <Chip key={m.model} variant="outlined" label={`${m.model}: ${m.freeWholeGpus} free of ${m.totalGpus}`} />
            ))
          )}
        </Stack>
        {cluster.pools.length > 0 && (
          <Stack direction="row" spacing={1} sx={{ mb: 1, flexWrap: 'wrap' }} role="group" aria-label="Node pools">
            {cluster.pools.map((p) => (
              <Chip
                key={p.name}
                size="small"
                color="primary"
                variant="outlined"
                label={`pool ${p.name}: ${p.freeWholeGpus} of ${p.totalGpus} GPUs free · ${p.nodes} node${p.nodes === 1 ? '' : 's'}`}
              />
            ))}
          </Stack>
        )}
        {cluster.nodes.length === 0 ? (
          <Empty title="No nodes reported yet" />
        ) : (
          <>
            <ClusterHeatmap cluster={cluster} metric={metric} />
            <DataGrid
              {...gridEnvProps}
              aria-label={`Nodes of ${name}`}
              rows={nodeRows(cluster)}
              columns={canOperate ? [nodeColumns[0]!, ...operationColumns(ops), ...nodeColumns.slice(1)] : nodeColumns}
              autoHeight
              density="compact"
              hideFooter={cluster.nodes.length <= 25}
              pageSizeOptions={[25, 50]}
            />
          </>
        )}
        <MetricHistoryCard subject={{ cluster: cluster.id }} live />
      </CardContent>
    </Card>
  );
}

/** Every cluster; `canOperate` (platform admins) adds cordon, drain, uncordon and retire. */
export function ClustersView({
  clusters,
  canOperate = false,
  onChanged = () => {},
}: {
  clusters: readonly ClusterFieldsFragment[];
  canOperate?: boolean;
  onChanged?: () => void;
}) {
  const [metric, setMetric] = useState<Metric>('utilization');
  if (clusters.length === 0) {
    return <Empty title="No clusters registered">A platform admin registers clusters on the Admin page.</Empty>;
  }
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
        {clusters.map((c) => (
          <ClusterCard key={c.id} cluster={c} metric={metric} canOperate={canOperate} onChanged={onChanged} />
        ))}
      </Stack>
    </>
  );
}
