import { gridEnvProps } from '../../components/grid';
import { Alert, Box, Button, Card, CardContent, CardHeader, Stack, TextField, Typography } from '@mui/material';
import { DataGrid, type GridColDef } from '@mui/x-data-grid';
import { useState } from 'react';
import type { FormEvent } from 'react';
import { formatTime } from '../../components/format';
import type { AdminData, ApiToken, Price } from './useAdmin';

/** The helm command that installs the agent with a cluster's one-time token. */
export function helmCommand(clusterId: string, token: string, apiUrl: string): string {
  return [
    'helm install grus-agent oci://ghcr.io/grus/charts/cluster-agent',
    `  --namespace grus-system --create-namespace`,
    `  --set controlPlane.url=${apiUrl}`,
    `  --set cluster.id=${clusterId}`,
    `  --set agentToken=${token}`,
  ].join(' \\\n');
}

export function RegisterClusterPanel({ onRegister }: { onRegister: AdminData['registerCluster'] }) {
  const [name, setName] = useState('');
  const [result, setResult] = useState<{ clusterId: string; agentToken: string } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    try {
      setResult(await onRegister(name.trim()));
      setName('');
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    }
  };
  return (
    <Card variant="outlined">
      <CardHeader title="Register a cluster" titleTypographyProps={{ variant: 'h6', component: 'h2' }} />
      <CardContent>
        <Stack component="form" direction="row" spacing={2} onSubmit={(e) => void submit(e)} aria-label="Register a cluster">
          <TextField size="small" label="Cluster name" value={name} onChange={(e) => setName(e.target.value)} required />
          <Button type="submit" variant="contained" disabled={!name.trim()}>
            Register
          </Button>
        </Stack>
        {error && <Alert severity="error" sx={{ mt: 2 }}>{error}</Alert>}
        {result && (
          <Alert severity="warning" sx={{ mt: 2 }} onClose={() => setResult(null)}>
            <Typography variant="body2">
              The agent token is shown once. Install the agent in the cluster now:
            </Typography>
            <Box component="pre" data-testid="helm-command" sx={{ whiteSpace: 'pre-wrap', fontSize: 12 }}>
              {helmCommand(result.clusterId, result.agentToken, window.location.origin)}
            </Box>
          </Alert>
        )}
      </CardContent>
    </Card>
  );
}

const priceColumns: GridColDef<Price & { id: string }>[] = [
  { field: 'gpuModel', headerName: 'GPU model', flex: 1 },
  { field: 'clusterId', headerName: 'Cluster', flex: 1, valueGetter: (_v, r) => r.clusterId ?? 'any' },
  { field: 'pricePerGpuHour', headerName: 'Per GPU hour', type: 'number', width: 130 },
  { field: 'currency', headerName: 'Currency', width: 90 },
  { field: 'validFrom', headerName: 'Valid from', width: 170, valueFormatter: (v: string) => formatTime(v) },
];

export function PriceBookPanel({ prices }: { prices: Price[] }) {
  return (
    <Card variant="outlined">
      <CardHeader title="Price book" titleTypographyProps={{ variant: 'h6', component: 'h2' }} />
      <CardContent>
        <DataGrid
          {...gridEnvProps}
          aria-label="Price book"
          rows={prices.map((p) => ({ ...p, id: `${p.gpuModel}/${p.clusterId ?? '*'}/${p.validFrom}` }))}
          columns={priceColumns}
          autoHeight
          density="compact"
          localeText={{ noRowsLabel: 'No prices set' }}
          hideFooter
        />
      </CardContent>
    </Card>
  );
}

export function ApiTokensPanel({
  tokens,
  onCreate,
  onRevoke,
}: {
  tokens: ApiToken[];
  onCreate: AdminData['createToken'];
  onRevoke: AdminData['revokeToken'];
}) {
  const [name, setName] = useState('');
  const [secret, setSecret] = useState<string | null>(null);
  const columns: GridColDef<ApiToken>[] = [
    { field: 'name', headerName: 'Name', flex: 1 },
    { field: 'createdAt', headerName: 'Created', width: 170, valueFormatter: (v: string) => formatTime(v) },
    { field: 'lastUsedAt', headerName: 'Last used', width: 170, valueFormatter: (v: string | null) => formatTime(v) },
    {
      field: 'revoke',
      headerName: '',
      width: 100,
      sortable: false,
      renderCell: (p) => (
        <Button size="small" color="error" onClick={() => void onRevoke(p.row.id)} aria-label={`Revoke ${p.row.name}`}>
          Revoke
        </Button>
      ),
    },
  ];
  return (
    <Card variant="outlined">
      <CardHeader title="API tokens" titleTypographyProps={{ variant: 'h6', component: 'h2' }} />
      <CardContent>
        <Stack
          component="form"
          direction="row"
          spacing={2}
          sx={{ mb: 2 }}
          aria-label="Create an API token"
          onSubmit={(e) => {
            e.preventDefault();
            void onCreate(name.trim()).then((s) => {
              setSecret(s);
              setName('');
            });
          }}
        >
          <TextField size="small" label="Token name" value={name} onChange={(e) => setName(e.target.value)} required />
          <Button type="submit" variant="outlined" disabled={!name.trim()}>
            Create token
          </Button>
        </Stack>
        {secret && (
          <Alert severity="warning" sx={{ mb: 2 }} onClose={() => setSecret(null)}>
            Copy the token now, it is shown once: <code data-testid="token-secret">{secret}</code>
          </Alert>
        )}
        <DataGrid
          {...gridEnvProps}
          aria-label="API tokens"
          rows={tokens}
          columns={columns}
          autoHeight
          density="compact"
          localeText={{ noRowsLabel: 'No API tokens' }}
          hideFooter
        />
      </CardContent>
    </Card>
  );
}
