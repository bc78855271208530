import { Card, CardContent, CardHeader, Grid, Link, Typography } from '@mui/material';
import { BarChart } from '@mui/x-charts/BarChart';
import { DataGrid, type GridColDef } from '@mui/x-data-grid';
import { Link as RouterLink } from 'react-router-dom';
import { fromNow } from '../../components/format';
import { gridEnvProps } from '../../components/grid';
import { Empty } from '../../components/states';
import type { FleetTotals, IdleGpu, JobCounts } from './summary';
import { BUSY_PCT } from './summary';
import { useNow } from '../../components/useNow';

function Stat({ label, value, testId }: { label: string; value: string | number; testId: string }) {
  return (
    <Card variant="outlined" sx={{ height: '100%' }}>
      <CardContent>
        <Typography variant="body2" color="text.secondary" id={`${testId}-label`}>
          {label}
        </Typography>
        <Typography variant="h4" component="p" data-testid={testId} aria-labelledby={`${testId}-label`}>
          {value}
        </Typography>
      </CardContent>
    </Card>
  );
}

const idleColumns: GridColDef<IdleGpu>[] = [
  { field: 'clusterId', headerName: 'Cluster', width: 110 },
  { field: 'node', headerName: 'Node', flex: 1, minWidth: 120 },
  { field: 'gpu', headerName: 'GPU', type: 'number', width: 70 },
  { field: 'model', headerName: 'Model', width: 120 },
  { field: 'allocatedMilli', headerName: 'Allocated', type: 'number', width: 95, valueFormatter: (v: number) => `${v / 10} %` },
  { field: 'busyPct', headerName: 'Busy', type: 'number', width: 80, valueFormatter: (v: number) => `${v.toFixed(0)} %` },
  {
    field: 'job',
    headerName: 'Job',
    flex: 1,
    minWidth: 140,
    valueGetter: (_v, r) => r.job?.name ?? '',
    renderCell: (p) =>
      p.row.job ? (
        <Link component={RouterLink} to={`/jobs/${p.row.job.id}`}>
          {p.row.job.name}
        </Link>
      ) : (
        '—'
      ),
  },
  { field: 'project', headerName: 'Project', width: 110, valueGetter: (_v, r) => r.job?.project ?? '' },
];

export function OverviewView({ totals, jobs, idle }: { totals: FleetTotals; jobs: JobCounts; idle: IdleGpu[] }) {
  const now = useNow();
  const more = (n: number, truncated: boolean) => (truncated ? `${n}+` : n);
  return (
    <Grid container spacing={2}>
      <Grid item xs={6} md={4} lg={2}>
        <Stat label="Clusters" value={totals.clusters} testId="stat-clusters" />
      </Grid>
      <Grid item xs={6} md={4} lg={2}>
        <Stat label="Clusters not healthy" value={totals.unhealthyClusters} testId="stat-unhealthy" />
      </Grid>
      <Grid item xs={6} md={4} lg={2}>
        <Stat label="GPUs allocated" value={`${totals.allocated} / ${totals.gpus}`} testId="stat-allocated" />
      </Grid>
      <Grid item xs={6} md={4} lg={2}>
        <Stat label="GPUs free" value={totals.free} testId="stat-free" />
      </Grid>
      <Grid item xs={6} md={4} lg={2}>
        <Stat label={`Allocated GPUs busy (≥ ${BUSY_PCT} %)`} value={totals.busy} testId="stat-busy" />
      </Grid>
      <Grid item xs={6} md={4} lg={2}>
        <Stat label="Queue depth" value={more(jobs.queueDepth, jobs.queueDepthTruncated)} testId="stat-queue" />
      </Grid>
      <Grid item xs={12} lg={5}>
        <Card variant="outlined">
          <CardHeader
            title="Jobs by state"
            subheader={jobs.truncated ? 'over the newest jobs' : undefined}
            titleTypographyProps={{ variant: 'h6', component: 'h2' }}
          />
          <CardContent>
            {jobs.byState.length === 0 ? (
              <Empty title="No jobs yet" />
            ) : (
              <BarChart
                height={Math.max(160, 60 + jobs.byState.length * 32)}
                layout="horizontal"
                yAxis={[{ scaleType: 'band', data: jobs.byState.map((s) => s.state) }]}
                series={[{ data: jobs.byState.map((s) => s.count), label: 'jobs' }]}
                margin={{ left: 110 }}
                slotProps={{ legend: { hidden: true } }}
              />
            )}
            <Typography component="ul" variant="body2" aria-label="Job counts" sx={{ m: 0, pl: 2 }}>
              {jobs.byState.map((s) => (
                <li key={s.state}>
                  {s.state}: {s.count}
                </li>
              ))}
            </Typography>
          </CardContent>
        </Card>
      </Grid>
      <Grid item xs={12} lg={7}>
        <Card variant="outlined">
          <CardHeader
            title="Idle allocated GPUs"
            subheader={`allocated, but under ${BUSY_PCT} % busy · ${
              totals.readingsAt ? `readings from ${fromNow(totals.readingsAt, now)}` : 'no readings yet'
            }`}
            titleTypographyProps={{ variant: 'h6', component: 'h2' }}
          />
          <CardContent>
            <DataGrid
              {...gridEnvProps}
              aria-label="Idle allocated GPUs"
              rows={idle}
              columns={idleColumns}
              autoHeight
              density="compact"
              localeText={{ noRowsLabel: 'No idle allocated GPUs' }}
              pageSizeOptions={[10, 25]}
              initialState={{ pagination: { paginationModel: { pageSize: 10 } } }}
            />
          </CardContent>
        </Card>
      </Grid>
    </Grid>
  );
}
