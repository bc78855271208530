import { Button, Dialog, DialogActions, DialogContent, DialogContentText, DialogTitle } from '@mui/material';
import type { ButtonProps } from '@mui/material';
import { useId, useState } from 'react';
import type { ReactNode } from 'react';

/**
 * A button for an action that cannot be taken back (delete, retire, revoke, cancel, drain):
 * it asks first, in a dialog that says what will happen, and acts only on the dialog's
 * `confirmLabel` button.
 */
export function ConfirmButton({
  title,
  text,
  confirmLabel,
  onConfirm,
  children,
  ...button
}: Omit<ButtonProps, 'onClick'> & {
  title: string;
  text: ReactNode;
  confirmLabel: string;
  onConfirm: () => void;
  children: ReactNode;
}) {
  const [open, setOpen] = useState(false);
  const titleId = useId();
  return (
    <>
      <Button {...button} onClick={() => setOpen(true)}>
        {children}
      </Button>
      <Dialog open={open} onClose={() => setOpen(false)} aria-labelledby={titleId}>
        <DialogTitle id={titleId}>{title}</DialogTitle>
        <DialogContent>
          <DialogContentText>{text}</DialogContentText>
        </DialogContent>
        <DialogActions>
          <Button onClick={() => setOpen(false)}>Back</Button>
          <Button
            color={button.color === 'warning' ? 'warning' : 'error'}
            variant="contained"
            onClick={() => {
              setOpen(false);
              onConfirm();
            }}
          >
            {confirmLabel}
          </Button>
        </DialogActions>
      </Dialog>
    </>
  );
}
