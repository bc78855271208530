import type { PlannedResult } from '../../api/planned';
import { unavailable } from '../../api/planned';
import type { ExportFormat, UsageRow } from './types';

export interface BillingData {
  rows: UsageRow[];
  /** Starts an export; resolves to the URL to download (GET /api/exports/{id}). */
  exportUsage: (format: ExportFormat) => Promise<string>;
}

/** Usage by period: waits for the fields of billing.planned.graphql. */
export function useBilling(_period: 'DAY' | 'WEEK' | 'MONTH'): PlannedResult<BillingData> {
  return unavailable(['usage(filter, groupBy, period)', 'exportUsage', 'GET /api/exports/{id}']);
}
