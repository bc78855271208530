import { Typography } from '@mui/material';
import { useEffect } from 'react';
import type { CombinedError } from 'urql';
import { useQuery } from 'urql';
import { JobCostQuery, ServiceCostQuery } from '../api/operations';
import { errorText } from './states';

type Cost = { currency: string; effectiveCostValue: number; gpuHoursValue: number } | null | undefined;

/** A running workload's cost grows with time: read again this often, and at every change. */
const REFRESH_MS = 60_000;

/** Re-runs `reexecute` (network only) when `changedAt` moves and every [`REFRESH_MS`]. */
function useFresh(reexecute: (o: { requestPolicy: 'network-only' }) => void, changedAt: string) {
  useEffect(() => {
    reexecute({ requestPolicy: 'network-only' });
    const timer = setInterval(() => reexecute({ requestPolicy: 'network-only' }), REFRESH_MS);
    return () => clearInterval(timer);
  }, [changedAt, reexecute]);
}

/** Two decimals, or `< 0.01` for an amount too small to show (not a misleading 0.00). */
function amount(v: number): string {
  return v > 0 && v < 0.005 ? '< 0.01' : v.toFixed(2);
}

/** `12.34 USD · 4.00 GPU-hours`. */
export function costText(cost: NonNullable<Cost>): string {
  return `${amount(cost.effectiveCostValue)} ${cost.currency} · ${amount(cost.gpuHoursValue)} GPU-hours`;
}

function CostLine({ cost, error, fetching }: { cost: Cost; error?: CombinedError; fetching: boolean }) {
  const text = cost ? costText(cost) : error ? `unknown (${errorText(error)})` : fetching ? '…' : 'unknown';
  return (
    <Typography variant="body2" color="text.secondary" sx={{ mb: 2 }} data-testid="workload-cost">
      Cost so far: {text}
    </Typography>
  );
}

/** What a job has cost so far, read again whenever `changedAt` (the job's last change) moves. */
export function JobCost({ id, changedAt }: { id: string; changedAt: string }) {
  const [res, reexecute] = useQuery({ query: JobCostQuery, variables: { id } });
  useFresh(reexecute, changedAt);
  return <CostLine cost={res.data?.job?.cost} error={res.error} fetching={res.fetching} />;
}

/** What a service's replicas have cost so far, read again whenever `changedAt` moves. */
export function ServiceCost({ project, name, changedAt }: { project: string; name: string; changedAt: string }) {
  const [res, reexecute] = useQuery({ query: ServiceCostQuery, variables: { project, name } });
  useFresh(reexecute, changedAt);
  return <CostLine cost={res.data?.service?.cost} error={res.error} fetching={res.fetching} />;
}
