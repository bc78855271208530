import { Alert, Box, Button, Paper, TextField, Typography } from '@mui/material';
import { useState } from 'react';
import type { FormEvent } from 'react';
import { validDevName } from './session';

/** Shown only when the server runs `--dev` (no /auth/session): pick who to be. */
export function DevLogin({ onLogin, initial = '' }: { onLogin: (name: string) => void; initial?: string }) {
  const [name, setName] = useState(initial);
  const [touched, setTouched] = useState(false);
  const invalid = touched && !validDevName(name);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setTouched(true);
    if (validDevName(name)) onLogin(name);
  };
  return (
    <Box component="main" sx={{ display: 'grid', placeItems: 'center', minHeight: '100vh', bgcolor: 'grey.100' }}>
      <Paper component="form" onSubmit={submit} sx={{ p: 4, width: 420 }} aria-labelledby="dev-login-title">
        <Typography id="dev-login-title" variant="h5" component="h1" gutterBottom>
          Grus — dev login
        </Typography>
        <Alert severity="warning" sx={{ mb: 2 }}>
          Development mode: the server trusts the name you type (sent as <code>X-Grus-Dev-User</code>). Never use
          this on a shared deployment.
        </Alert>
        <TextField
          label="User name"
          value={name}
          autoFocus
          fullWidth
          onChange={(e) => setName(e.target.value)}
          onBlur={() => setTouched(true)}
          error={invalid}
          helperText={invalid ? 'lowercase letters, digits, ".", "_" or "-", at most 64' : 'signs in as dev:<name>'}
        />
        <Button type="submit" variant="contained" sx={{ mt: 2 }} fullWidth>
          Sign in
        </Button>
      </Paper>
    </Box>
  );
}
