import { Alert, Box, Button, Card, CardContent, CardHeader, FormControlLabel, MenuItem, Stack, Switch, TextField, Typography } from '@mui/material';
import { useEffect, useMemo, useState } from 'react';
import { useQuery, useSubscription } from 'urql';
import { FollowJobLogsSubscription, JobLogsQuery } from '../../api/operations';
import { errorText } from '../../components/states';

/** How many lines a page shows, and a follower starts with. */
export const TAIL = 500;
/** A follower keeps at most this many lines on screen (the oldest go first). */
const MAX_LINES = 5000;

export type LogLine = { at: string; stream: 'STDOUT' | 'STDERR'; text: string };

/** A line as shown and downloaded: `HH:MM:SS text`, stderr marked. */
export function lineText(l: LogLine, withTime = true): string {
  const time = withTime ? `${l.at.slice(11, 19)} ` : '';
  return `${time}${l.stream === 'STDERR' ? '[stderr] ' : ''}${l.text}`;
}

/** The lines that contain `search` (case-insensitive); all of them when it is empty. */
export function matching(lines: LogLine[], search: string): LogLine[] {
  const s = search.trim().toLowerCase();
  return s ? lines.filter((l) => l.text.toLowerCase().includes(s)) : lines;
}

/** Where the lines came from, in words (null when there is nothing to say). */
export function sourceNote(source: string | undefined, truncated: boolean | undefined): string | null {
  const parts: string[] = [];
  if (source === 'KEPT') parts.push('The replica is gone: these are the last lines its agent kept.');
  if (source === 'GONE') parts.push('No output: the replica has not started yet, or is gone.');
  if (truncated) parts.push(`Older lines are left out (the last ${TAIL} are shown).`);
  return parts.length ? parts.join(' ') : null;
}

/**
 * Adds a followed page's lines to those shown, keeping the newest [`MAX_LINES`]. A page that
 * starts at or before the last line shown (the subscription started again and sent its tail)
 * replaces the lines from its first line's time on, so no line is shown twice.
 */
export function accumulate(prev: LogLine[] | undefined, data: { followJobLogs: { lines: LogLine[] } }): LogLine[] {
  const lines = data.followJobLogs.lines;
  const from = lines[0]?.at;
  const kept = from === undefined ? (prev ?? []) : (prev ?? []).filter((l) => l.at < from);
  const next = [...kept, ...lines];
  return next.length > MAX_LINES ? next.slice(next.length - MAX_LINES) : next;
}

/**
 * A job's output, one replica at a time: the last lines, or followed live while it runs;
 * searchable, and downloadable as text. Only people who may read the job see it (the API
 * checks; the page is the job's).
 */
export function LogViewer({
  jobId,
  tasks,
  live,
  changedAt,
}: {
  jobId: string;
  tasks: { name: string; replicaCount: number }[];
  /** The job has not ended: its output is followed from the start. */
  live: boolean;
  /** The job's last change: the shown page is read again when it moves (not following). */
  changedAt: string;
}) {
  const [task, setTask] = useState(tasks[0]?.name ?? '');
  const [replica, setReplica] = useState(0);
  const [follow, setFollow] = useState(live);
  const [search, setSearch] = useState('');
  const replicas = tasks.find((t) => t.name === task)?.replicaCount ?? 1;
  const variables = { jobId, task: task || null, replica };
  const [page, reexecute] = useQuery({ query: JobLogsQuery, variables: { ...variables, tail: TAIL }, pause: follow });
  useEffect(() => {
    if (!follow) reexecute({ requestPolicy: 'network-only' });
  }, [changedAt, follow, reexecute]);
  const [followed] = useSubscription({ query: FollowJobLogsSubscription, variables: { ...variables, tail: TAIL }, pause: !follow }, accumulate);
  const lines: LogLine[] = (follow ? followed.data : page.data?.jobLogs.lines) ?? [];
  const shown = useMemo(() => matching(lines, search), [lines, search]);
  const error = follow ? followed.error : page.error;
  const note = follow ? null : sourceNote(page.data?.jobLogs.source, page.data?.jobLogs.truncated);
  const download = () => {
    const blob = new Blob([lines.map((l) => `${l.at} ${lineText(l, false)}\n`).join('')], { type: 'text/plain' });
    const url = URL.createObjectURL(blob);
    const a = document.createElement('a');
    a.href = url;
    a.download = `job-${jobId}-${task}-${replica}.log`;
    a.click();
    URL.revokeObjectURL(url);
  };
  return (
    <Card variant="outlined">
      <CardHeader title="Logs" titleTypographyProps={{ variant: 'h6', component: 'h2' }} />
      <CardContent>
        <Stack direction="row" spacing={2} sx={{ mb: 1, flexWrap: 'wrap' }} useFlexGap alignItems="center">
          <TextField select size="small" label="Task" value={task} onChange={(e) => (setTask(e.target.value), setReplica(0))} sx={{ minWidth: 120 }}>
            {tasks.map((t) => (
              <MenuItem key={t.name} value={t.name}>
                {t.name}
              </MenuItem>
            ))}
          </TextField>
          <TextField select size="small" label="Replica" value={replica} onChange={(e) => setReplica(Number(e.target.value))} sx={{ minWidth: 100 }}>
            {Array.from({ length: replicas }, (_, i) => (
              <MenuItem key={i} value={i}>
                {i}
              </MenuItem>
            ))}
          </TextField>
          <FormControlLabel control={<Switch checked={follow} onChange={(e) => setFollow(e.target.checked)} />} label="Follow" />
          <TextField size="small" label="Search" value={search} onChange={(e) => setSearch(e.target.value)} sx={{ minWidth: 180 }} />
          {!follow && (
            <Button size="small" onClick={() => reexecute({ requestPolicy: 'network-only' })}>
              Refresh
            </Button>
          )}
          <Button size="small" variant="outlined" onClick={download} disabled={lines.length === 0}>
            Download
          </Button>
        </Stack>
        {error && (
          <Alert severity="warning" sx={{ mb: 1 }}>
            {errorText(error)}
          </Alert>
        )}
        {note && (
          <Typography variant="body2" color="text.secondary" sx={{ mb: 1 }}>
            {note}
          </Typography>
        )}
        <Box
          component="pre"
          aria-label="Log lines"
          sx={{ m: 0, p: 1, maxHeight: 420, overflow: 'auto', bgcolor: 'grey.900', color: 'grey.100', fontSize: 12, borderRadius: 1 }}
        >
          {shown.length === 0
            ? search
              ? 'No line matches.'
              : follow
                ? 'Waiting for output…'
                : 'No output.'
            : shown.map((l, i) => (
                <Box component="div" key={i} sx={l.stream === 'STDERR' ? { color: 'error.light' } : undefined}>
                  {lineText(l)}
                </Box>
              ))}
        </Box>
        {search && (
          <Typography variant="caption" color="text.secondary">
            {shown.length} of {lines.length} lines match
          </Typography>
        )}
      </CardContent>
    </Card>
  );
}
