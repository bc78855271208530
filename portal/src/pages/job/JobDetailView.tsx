import {
  Box,
  Button,
  Card,
  CardContent,
  CardHeader,
  Chip,
  Dialog,
  DialogActions,
  DialogContent,
  DialogContentText,
  DialogTitle,
  Grid,
  List,
  ListItem,
  ListItemText,
  MenuItem,
  Stack,
  Table,
  TableBody,
  TableCell,
  TableHead,
  TableRow,
  TextField,
  Typography,
} from '@mui/material';
import { useState } from 'react';
import type { ReactNode } from 'react';
import { aboutSeconds, formatMib, formatRate, formatTime, fromNow, stateColor, TERMINAL_STATES } from '../../components/format';
import { Empty } from '../../components/states';
import { useNow } from '../../components/useNow';
import { YamlEditor } from '../../components/YamlEditor';
import type { JobQuery } from '../../gql/graphql';
import { PRIORITY_CLASSES, specToYaml } from '../../jobs/jobInput';

export type JobDetail = JobQuery['job'];

/** Seconds as people write them: `45s`, `30m`, `2h`, `1h 30m`. */
export function formatSeconds(total: number): string {
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const parts = [h ? `${h}h` : '', m ? `${m}m` : '', s ? `${s}s` : ''].filter(Boolean);
  return parts.length ? parts.join(' ') : '0s';
}

/** The GPUs a replica holds, as people read them: "GPU 0, GPU 3 (0.25 of it)" (from the agent's
 * `devices`; a UUID where there is no index). */
export function formatDevices(devices: unknown): string {
  if (devices == null) return '—';
  if (Array.isArray(devices)) {
    return devices
      .map((d) => {
        if (typeof d !== 'object' || d === null) return String(d);
        const o = d as Record<string, unknown>;
        const id = o.index != null ? `GPU ${String(o.index)}` : String(o.uuid ?? o.id ?? JSON.stringify(o));
        if (o.mig_start != null) return `${id} (MIG instance from slice ${String(o.mig_start)})`;
        return typeof o.milli === 'number' && o.milli !== 1000 ? `${id} (${+(o.milli / 1000).toFixed(3)} of it)` : id;
      })
      .join(', ');
  }
  return JSON.stringify(devices);
}

const TERMINATION_WORDS: Record<string, string> = {
  COMPLETED: 'Completed',
  ERROR: 'Error',
  OOM_KILLED: 'OOMKilled',
  EVICTED: 'Evicted',
  DEADLINE_EXCEEDED: 'Deadline exceeded',
  STOPPED: 'Stopped',
  LOST: 'Lost',
  CANNOT_START: 'Cannot start',
  OTHER: 'Other',
};

/** How a replica ended, as `kubectl get pods` words it: "OOMKilled (exit 137)"; "—" while it runs. */
export function formatExit(termination: string | null | undefined, exitCode: number | null | undefined): string {
  if (!termination) return '—';
  const word = TERMINATION_WORDS[termination] ?? termination;
  return exitCode == null ? word : `${word} (exit ${exitCode})`;
}

/** "in ~14 min", or "now" once the estimate has passed (the allocator may start it any moment). */
export function startIn(at: string, now: number): string {
  const seconds = (new Date(at).getTime() - now) / 1000;
  return seconds <= 0 ? 'now' : `in ${aboutSeconds(seconds)}`;
}

/** Why a job waits, per cluster and stage (also the dry run's answer). */
export function WhyPendingTable({ reasons }: { reasons: readonly { cluster: string; stage: string; reason: string }[] }) {
  if (reasons.length === 0) return null;
  return (
    <Table size="small" aria-label="Why pending per cluster">
      <TableHead>
        <TableRow>
          <TableCell>Cluster</TableCell>
          <TableCell>Stage</TableCell>
          <TableCell>Reason</TableCell>
        </TableRow>
      </TableHead>
      <TableBody>
        {reasons.map((r, i) => (
          <TableRow key={`${r.cluster}/${i}`}>
            <TableCell>{r.cluster}</TableCell>
            <TableCell>{r.stage}</TableCell>
            <TableCell>{r.reason}</TableCell>
          </TableRow>
        ))}
      </TableBody>
    </Table>
  );
}


export function JobDetailView({
  job,
  onCancel,
  cancelling,
  onSetPriority,
  onSuspend,
  onResume,
  changing = false,
  cost,
  history,
  logs,
}: {
  job: JobDetail;
  /** What it has cost so far (the page's own query), under its summary line. */
  cost?: ReactNode;
  /** Its GPU metrics over time (the page's chart), above its output. */
  history?: ReactNode;
  /** Its output (the page's log viewer), under everything else. */
  logs?: ReactNode;
  onCancel: () => void;
  cancelling: boolean;
  onSetPriority?: (priorityClass: string) => void;
  /** Suspend (give back GPUs and quota, keep the history) or resume the job. */
  onSuspend?: () => void;
  onResume?: () => void;
  changing?: boolean;
}) {
  const [confirm, setConfirm] = useState(false);
  const now = useNow();
  const taskName = new Map(job.tasks.map((t) => [t.id, t.name]));
  // Events name replicas by id; the table (and people) by index within their task.
  const replicaIndex = new Map(job.replicas.map((r) => [r.id, r.index]));
  const terminal = TERMINAL_STATES.includes(job.state);
  return (
    <Box>
      <Stack direction="row" spacing={2} alignItems="center" sx={{ mb: 2, flexWrap: 'wrap' }}>
        <Typography variant="h5" component="h1">
          {job.name}
        </Typography>
        <Chip label={job.state} color={stateColor(job.state)} data-testid="job-state" />
        {job.borrowed && <Chip label="borrowed" color="warning" variant="outlined" />}
        {job.preemptible && <Chip label="preemptible" variant="outlined" />}
        {job.workspace && (
          <Chip
            label={`workspace · port ${job.workspace.port} · ${job.workspace.idleAction === 'SUSPEND' ? 'suspended' : 'stopped'} after ${formatSeconds(job.workspace.idleTimeoutSeconds)} idle`}
            color="info"
            variant="outlined"
            data-testid="job-workspace"
          />
        )}
        {job.workspace && job.endpoint && (
          <Button
            size="small"
            variant="contained"
            href={job.endpoint}
            target="_blank"
            rel="noopener noreferrer"
            data-testid="job-workspace-open"
          >
            Open workspace
          </Button>
        )}
        <Box sx={{ flexGrow: 1 }} />
        {onSetPriority && (
          <TextField
            select
            size="small"
            label="Priority"
            value={PRIORITY_CLASSES.includes(job.priorityClass as never) ? job.priorityClass : ''}
            onChange={(e) => e.target.value !== job.priorityClass && onSetPriority(e.target.value)}
            disabled={terminal}
            sx={{ minWidth: 130 }}
          >
            {PRIORITY_CLASSES.map((p) => (
              <MenuItem key={p} value={p}>
                {p}
              </MenuItem>
            ))}
          </TextField>
        )}
        {job.state === 'SUSPENDED'
          ? onResume && (
              <Button variant="outlined" disabled={changing} onClick={onResume}>
                Resume job
              </Button>
            )
          : onSuspend && (
              <Button variant="outlined" disabled={terminal || changing || job.state === 'PREEMPTING'} onClick={onSuspend}>
                Suspend job
              </Button>
            )}
        <Button variant="outlined" color="error" disabled={terminal || cancelling} onClick={() => setConfirm(true)}>
          Cancel job
        </Button>
      </Stack>
      <Typography variant="body2" color="text.secondary" sx={{ mb: 2 }}>
        Job {job.id} · priority {job.priorityClass} ({job.priority}) · submitted by {job.submitter.displayName ?? job.submitter.subject}{' '}
        {fromNow(job.submittedAt, now)} · updated {formatTime(job.updatedAt)}
        {job.clusterId ? ` · cluster ${job.clusterId} (epoch ${job.epoch})` : ''}
      </Typography>
      {job.queuePosition != null && (
        <Typography variant="body2" sx={{ mb: 1 }} data-testid="job-position">
          Position {job.queuePosition} in {job.projectSlug}/{job.queueName}
          {job.queuePosition === 1 ? ' (next in its queue)' : ''}
          {job.estimatedStart
            ? `, estimated start ${startIn(job.estimatedStart.at, now)}`
            : ', no estimated start yet'}
        </Typography>
      )}
      {job.predictedRuntime && (
        <Typography variant="body2" color="text.secondary" sx={{ mb: 1 }} data-testid="job-predicted-runtime">
          Expected run time {aboutSeconds(job.predictedRuntime.p50Seconds)} (90 % of similar jobs within{' '}
          {aboutSeconds(job.predictedRuntime.p90Seconds)}; from {job.predictedRuntime.samples} finished jobs,{' '}
          {job.predictedRuntime.basis})
        </Typography>
      )}
      {cost}

      <Grid container spacing={2}>
        <Grid item xs={12} lg={6}>
          <Card variant="outlined">
            <CardHeader title="Tasks" titleTypographyProps={{ variant: 'h6', component: 'h2' }} />
            <CardContent>
              <Table size="small" aria-label="Tasks">
                <TableHead>
                  <TableRow>
                    <TableCell>Name</TableCell>
                    <TableCell align="right">Replicas</TableCell>
                    <TableCell>State</TableCell>
                  </TableRow>
                </TableHead>
                <TableBody>
                  {job.tasks.map((t) => (
                    <TableRow key={t.id}>
                      <TableCell>{t.name}</TableCell>
                      <TableCell align="right">{t.replicaCount}</TableCell>
                      <TableCell>
                        <Chip size="small" label={t.state} color={stateColor(t.state)} />
                      </TableCell>
                    </TableRow>
                  ))}
                </TableBody>
              </Table>
            </CardContent>
          </Card>
          <Card variant="outlined" sx={{ mt: 2 }}>
            <CardHeader title="Replicas" titleTypographyProps={{ variant: 'h6', component: 'h2' }} />
            <CardContent sx={{ overflowX: 'auto' }}>
              {job.replicas.length === 0 ? (
                <Empty title="No replicas placed yet" />
              ) : (
                <Table size="small" aria-label="Replicas">
                  <TableHead>
                    <TableRow>
                      <TableCell>Task</TableCell>
                      <TableCell align="right">#</TableCell>
                      <TableCell>State</TableCell>
                      <TableCell>Cluster</TableCell>
                      <TableCell>Node</TableCell>
                      <TableCell>GPUs</TableCell>
                      <TableCell>In use</TableCell>
                      <TableCell>Ended</TableCell>
                    </TableRow>
                  </TableHead>
                  <TableBody>
                    {job.replicas.map((r) => (
                      <TableRow key={r.id}>
                        <TableCell>{taskName.get(r.taskId) ?? r.taskId}</TableCell>
                        <TableCell align="right">{r.index}</TableCell>
                        <TableCell>
                          <Chip size="small" label={r.state} color={stateColor(r.state)} />
                        </TableCell>
                        <TableCell>{r.clusterId ?? '—'}</TableCell>
                        <TableCell>{r.node ?? '—'}</TableCell>
                        <TableCell>{formatDevices(r.devices)}</TableCell>
                        <TableCell
                          title={
                            r.usage
                              ? `disk read ${formatRate(r.usage.diskReadBps)} · write ${formatRate(r.usage.diskWriteBps)} · network in ${formatRate(r.usage.netRxBps)} · out ${formatRate(r.usage.netTxBps)}`
                              : undefined
                          }
                        >
                          {r.usage ? `${r.usage.cpuCores.toFixed(2)} CPU · ${formatMib(r.usage.memoryMib)}` : '—'}
                        </TableCell>
                        <TableCell>{formatExit(r.termination, r.exitCode)}</TableCell>
                      </TableRow>
                    ))}
                  </TableBody>
                </Table>
              )}
            </CardContent>
          </Card>
          {job.utilization && (
            <Card variant="outlined" sx={{ mt: 2 }}>
              <CardHeader title="Utilization" titleTypographyProps={{ variant: 'h6', component: 'h2' }} />
              <CardContent>
                {job.utilization.samples > 0 && (
                  <Typography variant="body2" data-testid="utilization">
                    GPU busy now {job.utilization.lastBusyPct != null ? `${job.utilization.lastBusyPct.toFixed(0)} %` : '—'} · mean{' '}
                    {job.utilization.avgBusyPct.toFixed(0)} % · peak {job.utilization.maxBusyPct.toFixed(0)} % · GPU memory peak{' '}
                    {formatMib(job.utilization.maxMemoryUsedMib)} · {job.utilization.samples} samples, last{' '}
                    {fromNow(job.utilization.updatedAt, now)}
                  </Typography>
                )}
                {job.utilization.usageSamples > 0 && (
                  <Typography variant="body2" data-testid="resource-utilization">
                    CPU mean {(job.utilization.avgCpuCores ?? 0).toFixed(1)} cores · peak {(job.utilization.maxCpuCores ?? 0).toFixed(1)}{' '}
                    cores · memory peak {formatMib(job.utilization.maxMemoryMib ?? 0)} (all replicas)
                  </Typography>
                )}
              </CardContent>
            </Card>
          )}
          {job.dispatches.length > 0 && (
            <Card variant="outlined" sx={{ mt: 2 }}>
              <CardHeader title="Dispatch history" titleTypographyProps={{ variant: 'h6', component: 'h2' }} />
              <CardContent>
                <Table size="small" aria-label="Dispatch history">
                  <TableHead>
                    <TableRow>
                      <TableCell align="right">Epoch</TableCell>
                      <TableCell>Cluster</TableCell>
                      <TableCell>Dispatched</TableCell>
                      <TableCell>Outcome</TableCell>
                    </TableRow>
                  </TableHead>
                  <TableBody>
                    {job.dispatches.map((d) => (
                      <TableRow key={d.id}>
                        <TableCell align="right">{d.epoch}</TableCell>
                        <TableCell>{d.clusterId}</TableCell>
                        <TableCell>{formatTime(d.dispatchedAt)}</TableCell>
                        <TableCell>
                          {d.outcome}
                          {d.reason ? ` — ${d.reason}` : ''}
                        </TableCell>
                      </TableRow>
                    ))}
                  </TableBody>
                </Table>
              </CardContent>
            </Card>
          )}
          {job.whyPending != null && (
            <Card variant="outlined" sx={{ mt: 2 }}>
              <CardHeader title="Why pending" titleTypographyProps={{ variant: 'h6', component: 'h2' }} />
              <CardContent>
                <Typography variant="body2" data-testid="why-pending" sx={{ mb: 1 }}>
                  {job.whyPending.summary}
                </Typography>
                <WhyPendingTable reasons={job.whyPending.reasons} />
              </CardContent>
            </Card>
          )}
        </Grid>
        <Grid item xs={12} lg={6}>
          <Card variant="outlined">
            <CardHeader title="Events" titleTypographyProps={{ variant: 'h6', component: 'h2' }} />
            <CardContent sx={{ maxHeight: 420, overflow: 'auto' }}>
              {job.events.length === 0 ? (
                <Empty title="No events yet" />
              ) : (
                <List dense aria-label="Event timeline">
                  {job.events.map((e) => (
                    <ListItem key={e.id} divider>
                      <ListItemText
                        primary={
                          <>
                            <strong>
                              {e.fromState ? `${e.fromState} → ` : ''}
                              {e.toState}
                            </strong>{' '}
                            {e.taskId ? `task ${taskName.get(e.taskId) ?? e.taskId}` : 'job'}
                            {e.replicaId ? ` replica ${replicaIndex.get(e.replicaId) ?? e.replicaId}` : ''} — {e.cause}
                          </>
                        }
                        secondary={`${formatTime(e.at)} · ${e.actorName}${e.clusterId ? ` · ${e.clusterId}` : ''}`}
                      />
                    </ListItem>
                  ))}
                </List>
              )}
            </CardContent>
          </Card>
          <Card variant="outlined" sx={{ mt: 2 }}>
            <CardHeader title="Spec" titleTypographyProps={{ variant: 'h6', component: 'h2' }} />
            <CardContent>
              <YamlEditor value={specToYaml(job.spec, job.priorityClass)} readOnly label="Job spec (YAML)" height="360px" />
            </CardContent>
          </Card>
        </Grid>
        {history && (
          <Grid item xs={12}>
            {history}
          </Grid>
        )}
        {logs && (
          <Grid item xs={12}>
            {logs}
          </Grid>
        )}
      </Grid>

      <Dialog open={confirm} onClose={() => setConfirm(false)} aria-labelledby="cancel-title">
        <DialogTitle id="cancel-title">Cancel {job.name}?</DialogTitle>
        <DialogContent>
          <DialogContentText>Its replicas are stopped; this cannot be undone.</DialogContentText>
        </DialogContent>
        <DialogActions>
          <Button onClick={() => setConfirm(false)}>Keep it</Button>
          <Button
            color="error"
            variant="contained"
            onClick={() => {
              setConfirm(false);
              onCancel();
            }}
          >
            Cancel job
          </Button>
        </DialogActions>
      </Dialog>
    </Box>
  );
}
