import type { PlannedResult } from '../../api/planned';
import { unavailable } from '../../api/planned';

export interface Price {
  gpuModel: string;
  clusterId: string | null;
  pricePerGpuHour: number;
  currency: string;
  validFrom: string;
}

export interface ApiToken {
  id: string;
  name: string;
  createdAt: string;
  lastUsedAt: string | null;
  expiresAt: string | null;
}

export interface AdminData {
  registerCluster: (name: string) => Promise<{ clusterId: string; agentToken: string }>;
  prices: Price[];
  tokens: ApiToken[];
  createToken: (name: string) => Promise<string>;
  revokeToken: (id: string) => Promise<void>;
}

/** Clusters, prices and tokens: waits for the fields of admin.planned.graphql. */
export function useAdmin(): PlannedResult<AdminData> {
  return unavailable([
    'registerCluster',
    'rotateAgentToken',
    'priceBook',
    'setPrice',
    'apiTokens',
    'createApiToken',
    'revokeApiToken',
  ]);
}
