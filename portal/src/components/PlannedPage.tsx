import { Typography } from '@mui/material';
import type { ReactNode } from 'react';
import type { PlannedResult } from '../api/planned';
import { ErrorState, Loading, Unavailable } from './states';

/** A page over a PlannedResult: title, then unavailable / loading / error / the view. */
export function PlannedPage<T>({
  title,
  result,
  children,
}: {
  title: string;
  result: PlannedResult<T>;
  children: (data: T) => ReactNode;
}) {
  return (
    <>
      <Typography variant="h5" component="h1" sx={{ mb: 2 }}>
        {title}
      </Typography>
      {result.status === 'unavailable' && <Unavailable fields={result.fields} />}
      {result.status === 'loading' && <Loading />}
      {result.status === 'error' && <ErrorState error={result.error} onRetry={result.retry} />}
      {result.status === 'ready' && children(result.data)}
    </>
  );
}
