import { Box, LinearProgress, Typography } from '@mui/material';
import { formatResource } from './format';

export interface QuotaBarProps {
  resource: string;
  used: number;
  guaranteed: number;
  /** null: may borrow without bound. */
  limit: number | null;
}

/** Usage of one resource against a queue's guarantee (bar) and limit (text). */
export function QuotaBar({ resource, used, guaranteed, limit }: QuotaBarProps) {
  const cap = guaranteed > 0 ? guaranteed : (limit ?? 0);
  const pct = cap > 0 ? Math.min(100, (used / cap) * 100) : used > 0 ? 100 : 0;
  const borrowing = used > guaranteed;
  const label = `${resource}: ${formatResource(resource, used)} used of ${formatResource(resource, guaranteed)} guaranteed, limit ${
    limit == null ? 'none' : formatResource(resource, limit)
  }`;
  return (
    <Box sx={{ my: 1 }}>
      <Typography variant="body2" sx={{ display: 'flex', justifyContent: 'space-between' }}>
        <span>{resource}</span>
        <span>
          {formatResource(resource, used)} / {formatResource(resource, guaranteed)}
          {' · limit '}
          {limit == null ? '∞' : formatResource(resource, limit)}
          {borrowing ? ' · borrowing' : ''}
        </span>
      </Typography>
      <LinearProgress
        variant="determinate"
        value={pct}
        color={borrowing ? 'warning' : 'primary'}
        aria-label={label}
        sx={{ height: 8, borderRadius: 1 }}
      />
    </Box>
  );
}
