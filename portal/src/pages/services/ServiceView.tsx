import {
  Alert,
  Box,
  Button,
  Card,
  CardContent,
  CardHeader,
  Chip,
  Grid,
  Link,
  Stack,
  Table,
  TableBody,
  TableCell,
  TableHead,
  TableRow,
  Typography,
} from '@mui/material';
import { LineChart } from '@mui/x-charts/LineChart';
import dayjs from 'dayjs';
import { useState } from 'react';
import type { ReactNode } from 'react';
import { Link as RouterLink } from 'react-router-dom';
import { formatTime, fromNow, stateColor } from '../../components/format';
import { Empty } from '../../components/states';
import type { ServiceQuery } from '../../gql/graphql';
import type { ActionResult, ScaleValues } from './ServiceDialogs';
import { DeleteDialog, LoadDialog, ScaleDialog } from './ServiceDialogs';
import { autoscalingSummary, desiredSeries, num, replicaRevision, SERVICE_STATE_COLOR, signalText } from './serviceFormat';
import { useNow } from '../../components/useNow';

export type ServiceDetail = ServiceQuery['service'];

const h2 = { variant: 'h6', component: 'h2' } as const;

/** Desired replicas over time, as a step line. */
function DesiredChart({ service }: { service: ServiceDetail }) {
  const points = desiredSeries(service.scalingHistory, service.desiredReplicas, new Date());
  if (points.length < 2) return null;
  return (
    <Box data-testid="desired-chart" aria-label="Desired replicas over time" role="img">
      <LineChart
        height={220}
        xAxis={[{ scaleType: 'time', data: points.map((p) => p.at), valueFormatter: (d: Date) => dayjs(d).format('MM-DD HH:mm') }]}
        yAxis={[{ min: 0, tickMinStep: 1 }]}
        series={[{ data: points.map((p) => p.replicas), curve: 'stepAfter', label: 'Desired replicas', showMark: false }]}
        margin={{ top: 40, right: 20, bottom: 30, left: 40 }}
      />
    </Box>
  );
}

export function ServiceView({
  service,
  canManage,
  onScale,
  onSetLoad,
  onDelete,
  cost,
}: {
  service: ServiceDetail;
  /** What its replicas have cost so far (the page's own query), under its summary line. */
  cost?: ReactNode;
  /** Its owner or a project admin: the actions are shown. */
  canManage: boolean;
  onScale: (v: ScaleValues) => ActionResult;
  onSetLoad: (requestsPerSecond: number) => ActionResult;
  onDelete: () => ActionResult;
}) {
  const now = useNow();
  const [dialog, setDialog] = useState<'scale' | 'load' | 'delete' | null>(null);
  const close = () => setDialog(null);
  const metric = service.autoscaling?.metric;
  return (
    <Box>
      <Stack direction="row" spacing={2} alignItems="center" sx={{ mb: 1, flexWrap: 'wrap' }}>
        <Typography variant="h5" component="h1">
          {service.name}
        </Typography>
        <Chip label={service.state} color={SERVICE_STATE_COLOR[service.state]} data-testid="service-state" />
        <Chip label={`revision ${service.revision}`} variant="outlined" data-testid="service-revision" />
        <Box sx={{ flexGrow: 1 }} />
        {canManage && (
          <>
            <Button variant="outlined" onClick={() => setDialog('scale')}>
              Scale
            </Button>
            <Button variant="outlined" onClick={() => setDialog('load')}>
              Set load
            </Button>
            <Button variant="outlined" color="error" onClick={() => setDialog('delete')}>
              Delete
            </Button>
          </>
        )}
      </Stack>
      <Typography variant="body2" color="text.secondary" sx={{ mb: 2 }}>
        Project {service.project} · queue {service.queue} · owner {service.owner} · image {service.image ?? '—'} · port{' '}
        {service.port} · readiness {service.readinessPath ?? 'none (running is ready)'} · rollout: surge {service.maxSurge}, unavailable{' '}
        {service.maxUnavailable} · updated {formatTime(service.updatedAt)}
      </Typography>
      {cost}
      {service.condition && (
        <Alert severity="warning" sx={{ mb: 2 }} data-testid="service-condition">
          {service.condition}
        </Alert>
      )}

      <Grid container spacing={2}>
        <Grid item xs={12} lg={6}>
          <Card variant="outlined">
            <CardHeader title="Scale" titleTypographyProps={h2} />
            <CardContent>
              <Typography variant="body2" data-testid="service-scale">
                {service.readyReplicas} of {service.desiredReplicas} desired replicas ready · bounds {service.minReplicas}–
                {service.maxReplicas}
              </Typography>
              <Typography variant="body2" data-testid="service-autoscaling">
                Autoscaling: {autoscalingSummary(service.autoscaling, { delay: true })}
              </Typography>
              <Typography variant="body2" data-testid="service-utilization">
                GPU utilization:{' '}
                {service.gpuUtilization
                  ? `${num(service.gpuUtilization.busyPct)} % (mean of ${service.gpuUtilization.replicas} running replica${service.gpuUtilization.replicas === 1 ? '' : 's'})`
                  : 'not measured yet'}
              </Typography>
              <Typography variant="body2">
                Request rate:{' '}
                {service.requestsPerSecond != null
                  ? `${num(service.requestsPerSecond)} req/s, reported ${fromNow(service.loadReportedAt, now)}`
                  : 'none reported'}
              </Typography>
            </CardContent>
          </Card>
          <Card variant="outlined" sx={{ mt: 2 }}>
            <CardHeader title="Replicas per cluster" titleTypographyProps={h2} />
            <CardContent>
              {service.replicasByCluster.length === 0 ? (
                <Empty title="No live replicas" />
              ) : (
                <Table size="small" aria-label="Replicas per cluster">
                  <TableHead>
                    <TableRow>
                      <TableCell>Cluster</TableCell>
                      <TableCell align="right">Replicas</TableCell>
                      <TableCell align="right">Ready</TableCell>
                      <TableCell>Address</TableCell>
                    </TableRow>
                  </TableHead>
                  <TableBody>
                    {service.replicasByCluster.map((c) => (
                      <TableRow key={c.clusterId ?? ''}>
                        <TableCell>{c.clusterId ?? 'not placed yet'}</TableCell>
                        <TableCell align="right">{c.replicas}</TableCell>
                        <TableCell align="right">{c.ready}</TableCell>
                        <TableCell sx={{ fontFamily: 'monospace' }}>{c.endpoint ?? '—'}</TableCell>
                      </TableRow>
                    ))}
                  </TableBody>
                </Table>
              )}
            </CardContent>
          </Card>
          <Card variant="outlined" sx={{ mt: 2 }}>
            <CardHeader title="Replicas" titleTypographyProps={h2} />
            <CardContent>
              {service.replicas.length === 0 ? (
                <Empty title="No live replicas" />
              ) : (
                <Table size="small" aria-label="Replicas">
                  <TableHead>
                    <TableRow>
                      <TableCell>Job</TableCell>
                      <TableCell>State</TableCell>
                      <TableCell>Cluster</TableCell>
                      <TableCell align="right">Revision</TableCell>
                      <TableCell align="right">GPU busy</TableCell>
                      <TableCell>Started</TableCell>
                    </TableRow>
                  </TableHead>
                  <TableBody>
                    {service.replicas.map((j) => {
                      const revision = replicaRevision(j.spec);
                      return (
                        <TableRow key={j.id}>
                          <TableCell>
                            <Link component={RouterLink} to={`/jobs/${j.id}`}>
                              {j.name}
                            </Link>{' '}
                            <Typography component="span" variant="caption" color="text.secondary">
                              #{j.id}
                            </Typography>
                          </TableCell>
                          <TableCell>
                            <Chip size="small" label={j.state} color={stateColor(j.state)} />
                          </TableCell>
                          <TableCell>{j.clusterId ?? '—'}</TableCell>
                          <TableCell align="right">
                            {revision ?? '—'}
                            {revision != null && revision !== service.revision ? ' (old)' : ''}
                          </TableCell>
                          <TableCell align="right">{j.utilization?.lastBusyPct != null ? `${num(j.utilization.lastBusyPct)} %` : '—'}</TableCell>
                          <TableCell>{formatTime(j.submittedAt)}</TableCell>
                        </TableRow>
                      );
                    })}
                  </TableBody>
                </Table>
              )}
            </CardContent>
          </Card>
        </Grid>
        <Grid item xs={12} lg={6}>
          <Card variant="outlined">
            <CardHeader title="Autoscaling history" titleTypographyProps={h2} />
            <CardContent>
              {service.scalingHistory.length === 0 ? (
                <Empty title="The desired count has not changed yet" />
              ) : (
                <>
                  <DesiredChart service={service} />
                  <Box sx={{ maxHeight: 360, overflow: 'auto' }}>
                    <Table size="small" aria-label="Scaling history" stickyHeader>
                      <TableHead>
                        <TableRow>
                          <TableCell>Time</TableCell>
                          <TableCell>Desired</TableCell>
                          <TableCell>Signal</TableCell>
                          <TableCell>Reason</TableCell>
                        </TableRow>
                      </TableHead>
                      <TableBody>
                        {service.scalingHistory.map((e, i) => (
                          <TableRow key={`${e.at}/${i}`}>
                            <TableCell>{formatTime(e.at)}</TableCell>
                            <TableCell>
                              {e.fromReplicas} → {e.toReplicas}
                            </TableCell>
                            <TableCell>{signalText(e.signal, metric)}</TableCell>
                            <TableCell>{e.reason}</TableCell>
                          </TableRow>
                        ))}
                      </TableBody>
                    </Table>
                  </Box>
                </>
              )}
            </CardContent>
          </Card>
          <Card variant="outlined" sx={{ mt: 2 }}>
            <CardHeader title="Revisions" titleTypographyProps={h2} />
            <CardContent>
              <Table size="small" aria-label="Revisions">
                <TableHead>
                  <TableRow>
                    <TableCell align="right">Revision</TableCell>
                    <TableCell>Image</TableCell>
                    <TableCell>Created</TableCell>
                  </TableRow>
                </TableHead>
                <TableBody>
                  {service.revisions.map((r) => (
                    <TableRow key={r.revision} selected={r.revision === service.revision}>
                      <TableCell align="right">
                        {r.revision}
                        {r.revision === service.revision ? ' (current)' : ''}
                      </TableCell>
                      <TableCell>{r.image ?? '—'}</TableCell>
                      <TableCell>{formatTime(r.createdAt)}</TableCell>
                    </TableRow>
                  ))}
                </TableBody>
              </Table>
            </CardContent>
          </Card>
        </Grid>
      </Grid>

      {dialog === 'scale' && <ScaleDialog service={service} onScale={onScale} onClose={close} />}
      {dialog === 'load' && <LoadDialog service={service} onSetLoad={onSetLoad} onClose={close} />}
      {dialog === 'delete' && <DeleteDialog service={service} onDelete={onDelete} onClose={close} />}
    </Box>
  );
}
