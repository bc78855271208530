import { Card, CardContent, CardHeader, Chip, Stack, Typography } from '@mui/material';
import { QuotaBar } from '../../components/QuotaBar';
import type { QueueFieldsFragment } from '../../gql/graphql';
import { formatDuration } from '../../jobs/humantime';
import { ConfirmButton } from '../../components/ConfirmButton';

/** The queue's class of service in words, or null when it has none. */
export function classOfService(
  q: Pick<QueueFieldsFragment, 'maxWaitSeconds' | 'defaultRuntimeSeconds' | 'maxRuntimeSeconds' | 'suspendBorrowedDuring'>,
): string | null {
  const parts: string[] = [];
  if (q.maxWaitSeconds != null) parts.push(`priority raised after ${formatDuration(q.maxWaitSeconds)} waiting`);
  if (q.defaultRuntimeSeconds != null) parts.push(`runtime ${formatDuration(q.defaultRuntimeSeconds)} unless set`);
  if (q.maxRuntimeSeconds != null) parts.push(`at most ${formatDuration(q.maxRuntimeSeconds)}`);
  if (q.suspendBorrowedDuring != null) parts.push(`borrowed work paused ${q.suspendBorrowedDuring} UTC`);
  return parts.length ? parts.join(' · ') : null;
}

/** The usage key of what workspaces hold (the API's `domain::INTERACTIVE`): not a quota. */
export const INTERACTIVE = 'interactive';

/**
 * "2 GPUs kept for workspaces (they hold 1)": the queue's interactive reserve, and when its GPU
 * guarantee is smaller, that only the guarantee is kept. Null without a reserve.
 */
export function reserveText(q: Pick<QueueFieldsFragment, 'interactiveReserveGpus' | 'quotas' | 'usage'>): string | null {
  const reserve = q.interactiveReserveGpus;
  if (!reserve) return null;
  const gpus = (milli: number) => +(milli / 1000).toFixed(3);
  const held = gpus(q.usage.find((u) => u.resource === INTERACTIVE)?.amount ?? 0);
  const guaranteed = gpus(q.quotas.find((x) => x.resource === 'gpu')?.guaranteed ?? 0);
  const kept = `${reserve} GPU${reserve === 1 ? '' : 's'} kept for workspaces (they hold ${held})`;
  return guaranteed < reserve ? `${kept}, but only its guarantee of ${guaranteed} GPU can be kept` : kept;
}

/** "holds 2 of its fair share of 6 GPUs": the queue against its share of the fleet now. */
export function fairShareText(f: QueueFieldsFragment['fairShare']): string {
  const gpus = (x: number) => +x.toFixed(2);
  if (f.fairGpus === 0 && f.heldGpus === 0) return 'no GPU work held or waiting';
  return `holds ${gpus(f.heldGpus)} of its fair share of ${gpus(f.fairGpus)} GPU`;
}

/** "weight 1 (pool train: 3)": its weight, and its weights per node pool where they differ. */
export function weightText(queue: Pick<QueueFieldsFragment, 'weight' | 'poolWeights'>): string {
  const pools = queue.poolWeights.map((p) => `pool ${p.pool}: ${p.weight}`);
  return pools.length ? `weight ${queue.weight} (${pools.join(', ')})` : `weight ${queue.weight}`;
}

/**
 * A queue: weight, fair share, borrowing, and per resource its usage against guarantee and
 * limit; with `onDelete` (project admins), a button that deletes it (the API refuses a queue
 * that is not empty, saying why).
 */
export function QueueCard({ queue, onDelete }: { queue: QueueFieldsFragment; onDelete?: () => void }) {
  const used = new Map(queue.usage.map((u) => [u.resource, u.amount]));
  const resources = [...new Set([...queue.quotas.map((q) => q.resource), ...used.keys()])].filter((r) => r !== INTERACTIVE).sort();
  return (
    <Card variant="outlined" component="section" aria-label={`Queue ${queue.name}`}>
      <CardHeader
        title={queue.name}
        titleTypographyProps={{ variant: 'h6', component: 'h3' }}
        subheader={[weightText(queue), fairShareText(queue.fairShare), classOfService(queue), reserveText(queue)].filter(Boolean).join(' · ')}
        action={
          <Stack direction="row" spacing={1} sx={{ mt: 1 }}>
            <Chip size="small" label={queue.canBorrow ? 'can borrow' : 'no borrowing'} />
            {onDelete && (
              <ConfirmButton
                size="small"
                color="error"
                aria-label={`Delete queue ${queue.name}`}
                title={`Delete queue ${queue.name}?`}
                text="Only a queue that holds no jobs can be deleted."
                confirmLabel="Delete queue"
                onConfirm={onDelete}
              >
                Delete
              </ConfirmButton>
            )}
          </Stack>
        }
      />
      <CardContent>
        {resources.length === 0 ? (
          <Typography color="text.secondary">No quota set and nothing in use.</Typography>
        ) : (
          resources.map((r) => {
            const quota = queue.quotas.find((q) => q.resource === r);
            return (
              <QuotaBar
                key={r}
                resource={r}
                used={used.get(r) ?? 0}
                guaranteed={quota?.guaranteed ?? 0}
                limit={quota ? (quota.limit ?? null) : null}
              />
            );
          })
        )}
      </CardContent>
    </Card>
  );
}
