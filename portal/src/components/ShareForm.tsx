import { Button, Stack, TextField } from '@mui/material';
import { useState } from 'react';
import type { FormEvent } from 'react';
import { formatResource } from './format';

/** A tenant's or project's fair-share settings, as the API returns them. */
export type Share = { weight: number; guarantees: { resource: string; amount: number }[] };

/** "weight 2 · guaranteed 8 GPUs": a share in words. */
export function shareText(share: Share): string {
  const guaranteed = share.guarantees.map((g) => `${formatResource(g.resource, g.amount)}${g.resource === 'gpu' ? '' : ` (${g.resource})`}`);
  return [`weight ${share.weight}`, ...(guaranteed.length ? [`guaranteed ${guaranteed.join(', ')}`] : [])].join(' · ');
}

/** Edits a share's weight and its guarantee of GPUs of any model (in GPUs, not milli); other
 * guarantees are kept as they are. `onSave` gets the whole new guarantee list and answers an
 * error text or null. */
export function ShareForm({
  label,
  share,
  onSave,
}: {
  label: string;
  share: Share;
  onSave: (weight: number, guarantees: { resource: string; amount: number }[]) => Promise<string | null>;
}) {
  const gpuMilli = share.guarantees.find((g) => g.resource === 'gpu')?.amount ?? 0;
  const [weight, setWeight] = useState(String(share.weight));
  const [gpus, setGpus] = useState(String(gpuMilli / 1000));
  const [error, setError] = useState<string | null>(null);
  const w = Number(weight);
  const g = Number(gpus);
  const weightError = weight.trim() === '' || !(w > 0 && w <= 1e6) ? 'a positive number up to 1000000' : null;
  const gpuError = gpus.trim() === '' || !(g >= 0) || !Number.isFinite(g) ? 'GPUs, 0 or more (e.g. 8 or 0.5)' : null;
  const changed = w !== share.weight || Math.round(g * 1000) !== gpuMilli;

  const save = async (e: FormEvent) => {
    e.preventDefault();
    if (weightError || gpuError) return;
    const others = share.guarantees.filter((x) => x.resource !== 'gpu');
    const amount = Math.round(g * 1000);
    setError(await onSave(w, amount > 0 ? [...others, { resource: 'gpu', amount }] : others));
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
      <Button type="submit" variant="outlined" disabled={!changed || !!weightError || !!gpuError} sx={{ alignSelf: 'flex-start' }}>
        Save fair share
      </Button>
    </Stack>
  );
}
