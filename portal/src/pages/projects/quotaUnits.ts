// Quota amounts as people enter them: GPUs, CPUs and GiB on screen; the API's milli-GPU,
// milli-CPU and MiB underneath (pure, tested without a server).

/** How a quota resource is shown: its unit, and how many stored units make one. */
export interface QuotaUnit {
  unit: string;
  perUnit: number;
}

/** The unit of `resource` (`gpu`, `gpu/<model>`, `pool/<pool>`, `cpu_milli`, `memory_mib`). */
export function quotaUnit(resource: string): QuotaUnit {
  const r = resource.trim();
  if (r === 'gpu' || r.startsWith('gpu/') || r.startsWith('pool/')) return { unit: 'GPUs', perUnit: 1000 };
  if (r === 'cpu_milli') return { unit: 'CPUs', perUnit: 1000 };
  if (r === 'memory_mib') return { unit: 'GiB', perUnit: 1024 };
  return { unit: 'units', perUnit: 1 };
}

/**
 * The stored amount of `text` entered in `resource`'s unit (`8` GPUs → 8000, `0.5` → 500), or
 * why it is not one: not a number, negative, or finer than the API keeps (a thousandth of a GPU
 * or CPU, a MiB).
 */
export function toStoredAmount(text: string, resource: string): { amount: number } | { error: string } {
  const { unit, perUnit } = quotaUnit(resource);
  const t = text.trim();
  if (!/^\d+(\.\d+)?$/.test(t)) return { error: `a number of ${unit}, like 8 or 0.5` };
  const amount = Number(t) * perUnit;
  const rounded = Math.round(amount);
  if (Math.abs(amount - rounded) > 1e-6) {
    return { error: `${t} ${unit} is finer than ${unit === 'GiB' ? 'a MiB' : `a thousandth of a ${unit.slice(0, -1)}`}` };
  }
  if (!Number.isSafeInteger(rounded)) return { error: `${t} ${unit} is too large` };
  return { amount: rounded };
}

/** A stored amount in `resource`'s unit, as the form shows it back. */
export function fromStoredAmount(amount: number, resource: string): string {
  const { unit, perUnit } = quotaUnit(resource);
  return `${+(amount / perUnit).toFixed(3)} ${unit}`;
}
