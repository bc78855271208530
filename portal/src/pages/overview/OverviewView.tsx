import { gridEnvProps } from '../../components/grid';
import { Card, CardContent, CardHeader, Grid, Link, Typography } from '@mui/material';
import { BarChart } from '@mui/x-charts/BarChart';
import { DataGrid, type GridColDef } from '@mui/x-data-grid';
import { Link as RouterLink } from 'react-router-dom';
import { Empty } from '../../components/states';
import type { IdleGpu, OverviewData } from './types';

function Stat({ label, value, testId }: { label: string; value: string | number; testId?: string }) {
  return (
    <Card variant="outlined">
      <CardContent>
        <Typography variant="body2" color="text.secondary">
          {label}
        </Typography>
        <Typography variant="h4" component="p" data-testid={testId}>
          {value}
        </Typography>
      </CardContent>
    </Card>
  );
}

const idleColumns: GridColDef<IdleGpu & { id: string }>[] = [
  { field: 'clusterId', headerName: 'Cluster', width: 120 },
  { field: 'node', headerName: 'Node', flex: 1 },
  { field: 'gpu', headerName: 'GPU', width: 80 },
  { field: 'busyPercent', headerName: 'Busy %', type: 'number', width: 90 },
  {
    field: 'jobName',
    headerName: 'Job',
    flex: 1,
    renderCell: (p) => (
      <Link component={RouterLink} to={`/jobs/${p.row.jobId}`}>
        {p.row.jobName}
      </Link>
    ),
  },
  { field: 'project', headerName: 'Project', width: 120 },
];

export function OverviewView({ data }: { data: OverviewData }) {
  const total = data.clusters.reduce((n, c) => n + c.gpusTotal, 0);
  const allocated = data.clusters.reduce((n, c) => n + c.gpusAllocated, 0);
  const busy = data.clusters.reduce((n, c) => n + c.gpusBusy, 0);
  const unhealthy = data.clusters.filter((c) => !c.healthy).length;
  return (
    <Grid container spacing={2}>
      <Grid item xs={6} md={2}>
        <Stat label="Clusters" value={data.clusters.length} testId="stat-clusters" />
      </Grid>
      <Grid item xs={6} md={2}>
        <Stat label="Unhealthy clusters" value={unhealthy} />
      </Grid>
      <Grid item xs={6} md={2}>
        <Stat label="GPUs allocated" value={`${allocated} / ${total}`} testId="stat-allocated" />
      </Grid>
      <Grid item xs={6} md={2}>
        <Stat label="GPUs free" value={total - allocated} testId="stat-free" />
      </Grid>
      <Grid item xs={6} md={2}>
        <Stat label="GPUs busy" value={busy} />
      </Grid>
      <Grid item xs={6} md={2}>
        <Stat label="Queue depth" value={data.queueDepth} testId="stat-queue" />
      </Grid>
      <Grid item xs={12} lg={5}>
        <Card variant="outlined">
          <CardHeader title="Jobs by state" titleTypographyProps={{ variant: 'h6', component: 'h2' }} />
          <CardContent>
            {data.jobsByState.length === 0 ? (
              <Empty title="No jobs" />
            ) : (
              <BarChart
                height={260}
                layout="horizontal"
                yAxis={[{ scaleType: 'band', data: data.jobsByState.map((s) => s.state) }]}
                series={[{ data: data.jobsByState.map((s) => s.count), label: 'jobs' }]}
                margin={{ left: 110 }}
                slotProps={{ legend: { hidden: true } }}
              />
            )}
          </CardContent>
        </Card>
      </Grid>
      <Grid item xs={12} lg={7}>
        <Card variant="outlined">
          <CardHeader
            title="Idle allocated GPUs"
            subheader="allocated, but under 10 % busy"
            titleTypographyProps={{ variant: 'h6', component: 'h2' }}
          />
          <CardContent>
            <DataGrid
              {...gridEnvProps}
              aria-label="Idle allocated GPUs"
              rows={data.idleGpus.map((g) => ({ ...g, id: `${g.clusterId}/${g.node}/${g.gpu}` }))}
              columns={idleColumns}
              autoHeight
              density="compact"
              initialState={{ sorting: { sortModel: [{ field: 'busyPercent', sort: 'asc' }] } }}
              localeText={{ noRowsLabel: 'No idle allocated GPUs' }}
              pageSizeOptions={[10, 25]}
            />
          </CardContent>
        </Card>
      </Grid>
    </Grid>
  );
}
