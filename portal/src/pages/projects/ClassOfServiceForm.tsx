import { Button, Stack, TextField } from '@mui/material';
import { useEffect, useState } from 'react';
import type { FormEvent } from 'react';
import { useMutation } from 'urql';
import { UpdateQueueMutation } from '../../api/operations';
import { errorText } from '../../components/states';
import type { QueueFieldsFragment } from '../../gql/graphql';
import { formatDuration, parseDuration } from '../../jobs/humantime';

/** `HH:MM-HH:MM`, 24-hour; the server checks the rest (ends that differ). */
const WINDOW = /^([01]\d|2[0-3]):[0-5]\d-([01]\d|2[0-3]):[0-5]\d$/;

const DURATION_FIELDS = [
  ['maxWaitSeconds', 'Max wait', 'then priority is raised a class'],
  ['defaultRuntimeSeconds', 'Default runtime', 'for jobs that set none'],
  ['maxRuntimeSeconds', 'Max runtime', 'no job may ask for more'],
] as const;
type DurationField = (typeof DURATION_FIELDS)[number][0];

/** A queue's class of service as form text: durations like `2h`, empty when unset. */
function serviceText(q: QueueFieldsFragment | undefined): Record<DurationField, string> {
  const text = (s: number | null | undefined) => (s == null ? '' : formatDuration(s));
  return {
    maxWaitSeconds: text(q?.maxWaitSeconds),
    defaultRuntimeSeconds: text(q?.defaultRuntimeSeconds),
    maxRuntimeSeconds: text(q?.maxRuntimeSeconds),
  };
}

const POOL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

/** A queue's weights per node pool as form text: `train=3, infer=0.5`. */
function poolWeightsText(q: QueueFieldsFragment | undefined): string {
  return (q?.poolWeights ?? []).map((p) => `${p.pool}=${p.weight}`).join(', ');
}

/** `train=3, infer=0.5` as the API takes it; null when a part is not `POOL=WEIGHT` (weight > 0). */
export function parsePoolWeights(text: string): { pool: string; weight: number }[] | null {
  const parts = text
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
  const out: { pool: string; weight: number }[] = [];
  for (const part of parts) {
    const [pool, weight, ...rest] = part.split('=').map((x) => x.trim());
    const w = Number(weight);
    if (rest.length || !POOL.test(pool ?? '') || !(w > 0 && w <= 1e6) || out.some((o) => o.pool === pool)) return null;
    out.push({ pool: pool!, weight: w });
  }
  return out;
}

/** GPUs as typed (`2`, `0.5`; empty is 0), or null when not a count to a thousandth. */
export function parseGpus(text: string): number | null {
  const t = text.trim();
  if (t === '') return 0;
  const v = Number(t);
  return Number.isFinite(v) && v >= 0 && v <= 1e6 && Math.abs(v * 1000 - Math.round(v * 1000)) < 1e-6 ? v : null;
}

/** A choice among the project's queues, by id. */
export function QueueSelect({ queues, value, onChange }: { queues: { id: string; name: string }[]; value: string; onChange: (id: string) => void }) {
  return (
    <TextField size="small" select label="Queue" value={value} onChange={(e) => onChange(e.target.value)} SelectProps={{ native: true }} sx={{ minWidth: 140 }}>
      {queues.map((q) => (
        <option key={q.id} value={q.id}>
          {q.name}
        </option>
      ))}
    </TextField>
  );
}

/** Sets a queue's class of service (aging and runtimes, as durations: `90m`, `2h`, `1d`), the
 * window its borrowed work pauses in, its weights per node pool, and the GPUs it keeps for
 * interactive workspaces. */
export function ClassOfServiceForm({ queues, onDone }: { queues: QueueFieldsFragment[]; onDone: (message: { ok: boolean; text: string }) => void }) {
  const [, updateQueue] = useMutation(UpdateQueueMutation);
  const [queueId, setQueueId] = useState(queues[0]?.id ?? '');
  const queue = queues.find((q) => q.id === queueId);
  const [values, setValues] = useState(() => serviceText(queue));
  const [pause, setPause] = useState(queue?.suspendBorrowedDuring ?? '');
  const [pools, setPools] = useState(() => poolWeightsText(queue));
  const [reserve, setReserve] = useState(() => String(queue?.interactiveReserveGpus ?? 0));
  useEffect(() => {
    setValues(serviceText(queue));
    setPause(queue?.suspendBorrowedDuring ?? '');
    setPools(poolWeightsText(queue));
    setReserve(String(queue?.interactiveReserveGpus ?? 0));
  }, [queue]);
  const badPause = pause.trim() !== '' && !WINDOW.test(pause.trim());
  const reserveGpus = parseGpus(reserve);
  const poolWeights = parsePoolWeights(pools);
  const parsed = Object.fromEntries(
    DURATION_FIELDS.map(([field]) => {
      const text = values[field].trim();
      return [field, text === '' ? null : parseDuration(text)];
    }),
  ) as Record<DurationField, number | null>;
  const invalid = (field: DurationField) => values[field].trim() !== '' && (parsed[field] === null || !Number.isInteger(parsed[field]) || parsed[field]! < 1);
  const save = async (e: FormEvent) => {
    e.preventDefault();
    if (DURATION_FIELDS.some(([field]) => invalid(field)) || badPause || poolWeights === null || reserveGpus === null) return;
    const r = await updateQueue({
      queueId,
      ...parsed,
      suspendBorrowedDuring: pause.trim() === '' ? null : pause.trim(),
      poolWeights,
      interactiveReserveGpus: reserveGpus,
    });
    onDone(r.error ? { ok: false, text: errorText(r.error) } : { ok: true, text: `Class of service of ${queue?.name ?? 'the queue'} saved` });
  };
  return (
    <Stack component="form" aria-label="Class of service" direction="row" spacing={2} sx={{ mt: 2 }} flexWrap="wrap" useFlexGap onSubmit={(e) => void save(e)}>
      <QueueSelect queues={queues} value={queueId} onChange={setQueueId} />
      {DURATION_FIELDS.map(([field, label, help]) => (
        <TextField
          key={field}
          size="small"
          label={label}
          value={values[field]}
          onChange={(e) => setValues({ ...values, [field]: e.target.value })}
          error={invalid(field)}
          helperText={invalid(field) ? 'a duration like 90m, 2h or 1d' : `${help}; empty: none`}
          sx={{ width: 170 }}
        />
      ))}
      <TextField
        size="small"
        label="Pause borrowed work"
        value={pause}
        onChange={(e) => setPause(e.target.value)}
        error={badPause}
        helperText={badPause ? 'a window like 09:00-18:00' : 'daily, UTC; empty: never'}
        sx={{ width: 170 }}
      />
      <TextField
        size="small"
        label="Weight per node pool"
        value={pools}
        onChange={(e) => setPools(e.target.value)}
        error={poolWeights === null}
        helperText={poolWeights === null ? 'POOL=WEIGHT, comma-separated (train=3)' : 'where it differs from its weight'}
        sx={{ width: 200 }}
      />
      <TextField
        size="small"
        label="GPUs kept for workspaces"
        value={reserve}
        onChange={(e) => setReserve(e.target.value)}
        error={reserveGpus === null}
        helperText={reserveGpus === null ? 'a number of GPUs, like 2 or 0.5' : 'of its GPU guarantee; batch work may not use them'}
        sx={{ width: 200 }}
      />
      <Button type="submit" variant="outlined" sx={{ alignSelf: 'flex-start' }}>
        Save
      </Button>
    </Stack>
  );
}
