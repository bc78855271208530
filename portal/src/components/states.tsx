// Loading, empty and error states, the same on every page.
import { Alert, AlertTitle, Box, Button, CircularProgress, Typography } from '@mui/material';
import type { CombinedError } from 'urql';
import type { ReactNode } from 'react';
import { Link as RouterLink } from 'react-router-dom';

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

/** The API's error code of `error` (`NOT_FOUND`, `FORBIDDEN`, ...), if it has one. */
export function errorCode(error: CombinedError | Error | string): string | undefined {
  if (typeof error === 'string' || !('graphQLErrors' in error)) return undefined;
  const code = error.graphQLErrors[0]?.extensions?.code;
  return typeof code === 'string' ? code : undefined;
}

/** What a page shows for something that does not exist or the caller may not see (the API
 * answers both with NOT_FOUND, so as not to tell which). */
export function NotFound({ what = 'page' }: { what?: string }) {
  return (
    <Box sx={{ p: 4 }} role="region" aria-label="Not found">
      <Typography variant="h5" component="h1" gutterBottom>
        Not found
      </Typography>
      <Typography color="text.secondary" paragraph>
        There is no such {what}, or you may not see it.
      </Typography>
      <Button component={RouterLink} to="/" variant="outlined">
        Go to the overview
      </Button>
    </Box>
  );
}

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
  // Retrying cannot make a missing thing appear.
  if (errorCode(error) === 'NOT_FOUND') return <NotFound what="thing" />;
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
