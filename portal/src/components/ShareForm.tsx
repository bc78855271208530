import { Button, Stack, TextField } from '@mui/material';
import { useState } from 'react';
import type { FormEvent } from 'react';
import { formatResource } from './format';

type Amount = { resource: string; amount: number };

/** A tenant's or project's fair-share settings, as the API returns them. */
export type Share = { weight: number; guarantees: Amount[]; limits: Amount[] };

/** What a save sends: the whole new guarantee and limit lists. */
export type ShareChange = { weight: number; guarantees: Amount[]; limits: Amount[] };

const amountsText = (amounts: Amount[]) =>
  amounts.map((a) => `${formatResource(a.resource, a.amount)}${a.resource === 'gpu' ? '' : ` (${a.resource})`}`).join(', ');

/** "weight 2 · guaranteed 8 GPUs · at most 16 GPUs": a share in words. */
export function shareText(share: Share): string {
  return [
    `weight ${share.weight}`,
    ...(share.guarantees.length ? [`guaranteed ${amountsText(share.guarantees)}`] : []),
    ...(share.limits.length ? [`at most ${amountsText(share.limits)}`] : []),
  ].join(' · ');
}

/** The list with its `gpu` entry set to `milli` (or removed: `null`), others kept. */
function withGpu(amounts: Amount[], milli: number | null): Amount[] {
  const others = amounts.filter((x) => x.resource !== 'gpu');
  return milli === null ? others : [...others, { resource: 'gpu', amount: milli }];
}

/** Edits a share's weight, its guarantee and its limit of GPUs of any model (in GPUs, not
 * milli; an empty limit is none); other resources' guarantees and limits are kept as they are.
 * `onSave` answers an error text or null. */
export function ShareForm({ label, share, onSave }: { label: string; share: Share; onSave: (change: ShareChange) => Promise<string | null> }) {
  const gpuMilli = share.guarantees.find((g) => g.resource === 'gpu')?.amount ?? 0;
  const limitMilli = share.limits.find((l) => l.resource === 'gpu')?.amount;
  const [weight, setWeight] = useState(String(share.weight));
  const [gpus, setGpus] = useState(String(gpuMilli / 1000));
  const [limit, setLimit] = useState(limitMilli === undefined ? '' : String(limitMilli / 1000));
  const [error, setError] = useState<string | null>(null);
  const w = Number(weight);
  const g = Number(gpus);
  const l = limit.trim() === '' ? null : Number(limit);
  const weightError = weight.trim() === '' || !(w > 0 && w <= 1e6) ? 'a positive number up to 1000000' : null;
  const gpuError = gpus.trim() === '' || !(g >= 0) || !Number.isFinite(g) ? 'GPUs, 0 or more (e.g. 8 or 0.5)' : null;
  const limitError =
    l !== null && (!(l >= 0) || !Number.isFinite(l)) ? 'GPUs, 0 or more; empty for none' : l !== null && !gpuError && l < g ? 'not below the guarantee' : null;
  const limitAsMilli = l === null ? undefined : Math.round(l * 1000);
  const changed = w !== share.weight || Math.round(g * 1000) !== gpuMilli || limitAsMilli !== limitMilli;
  const invalid = !!weightError || !!gpuError || !!limitError;

  const save = async (e: FormEvent) => {
    e.preventDefault();
    if (invalid) return;
    const amount = Math.round(g * 1000);
    setError(
      await onSave({
        weight: w,
        guarantees: withGpu(share.guarantees, amount > 0 ? amount : null),
        limits: withGpu(share.limits, limitAsMilli ?? null),
      }),
    );
  };
  return (
    <Stack component="form" direction="row" spacing={2} sx={{ mt: 2 }} flexWrap="wrap" useFlexGap aria-label={label} onSubmit={(e) => void save(e)}>
      <TextField
        size="small"
        label="Fair-share weight"
        value={weight}
        onChange={(e) => setWeight(e.target.value)}
        error={!!weightError}
        helperText={weightError ?? 'relative to its siblings'}
        sx={{ width: 170 }}
      />
      <TextField
        size="small"
        label="Guaranteed GPUs"
        value={gpus}
        onChange={(e) => setGpus(e.target.value)}
        error={!!gpuError}
        helperText={gpuError ?? error ?? 'of any model, before sharing by weight'}
        FormHelperTextProps={{ sx: error && !gpuError ? { color: 'error.main' } : undefined }}
        sx={{ width: 190 }}
      />
      <TextField
        size="small"
        label="GPU limit"
        value={limit}
        onChange={(e) => setLimit(e.target.value)}
        error={!!limitError}
        helperText={limitError ?? 'at most, together; empty: none'}
        sx={{ width: 190 }}
      />
      <Button type="submit" variant="outlined" disabled={!changed || invalid} sx={{ alignSelf: 'flex-start' }}>
        Save fair share
      </Button>
    </Stack>
  );
}
