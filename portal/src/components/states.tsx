// Loading, empty and error states, the same on every page.
import { Alert, AlertTitle, Box, Button, CircularProgress, Typography } from '@mui/material';
import type { CombinedError } from 'urql';
import type { ReactNode } from 'react';

export function Loading({ label = 'Loading' }: { label?: string }) {
  return (
    <Box role="status" aria-live="polite" sx={{ display: 'flex', alignItems: 'center', gap: 2, p: 3 }}>
      <CircularProgress size={24} aria-hidden />
      <Typography>{label}…</Typography>
    </Box>
  );
}

const CODE_TEXT: Record<string, string> = {
  FORBIDDEN: 'You do not have access to this.',
  NOT_FOUND: 'Not found.',
  UNAUTHENTICATED: 'You are not signed in.',
  VALIDATION: 'The request was not valid.',
  CONFLICT: 'It changed meanwhile; reload and try again.',
};

export function errorText(error: CombinedError | Error | string): string {
  if (typeof error === 'string') return error;
  if ('graphQLErrors' in error && error.graphQLErrors.length > 0) {
    const first = error.graphQLErrors[0]!;
    const code = typeof first.extensions?.code === 'string' ? first.extensions.code : undefined;
    return code && CODE_TEXT[code] ? `${CODE_TEXT[code]} (${first.message})` : first.message;
  }
  if ('networkError' in error && error.networkError) return `Cannot reach the API: ${error.networkError.message}`;
  return error.message;
}

export function ErrorState({
  error,
  title = 'Something went wrong',
  onRetry,
}: {
  error: CombinedError | Error | string;
  title?: string;
  onRetry?: () => void;
}) {
  return (
    <Alert
      severity="error"
      sx={{ m: 2 }}
      action={
        onRetry ? (
          <Button color="inherit" size="small" onClick={onRetry}>
            Retry
          </Button>
        ) : undefined
      }
    >
      <AlertTitle>{title}</AlertTitle>
      {errorText(error)}
    </Alert>
  );
}

export function Empty({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <Box sx={{ p: 4, textAlign: 'center', color: 'text.secondary' }} role="note">
      <Typography variant="h6" component="p">
        {title}
      </Typography>
      {children}
    </Box>
  );
}
