import { Button, Dialog, DialogActions, DialogContent, DialogContentText, DialogTitle } from '@mui/material';
import type { ButtonProps } from '@mui/material';
import { useId, useState } from 'react';
import type { ReactNode } from 'react';

/**
 * The question before an action that cannot be taken back: says what will happen, and acts
 * only on its `confirmLabel` button. Controlled, so that its state can live above a part of the
 * page that remounts (a grid's cells re-render on every re-read) and survive it.
 */
export function ConfirmDialog({
  open,
  title,
  text,
  confirmLabel,
  color = 'error',
  onConfirm,
  onClose,
}: {
  open: boolean;
  title: string;
  text: ReactNode;
  confirmLabel: string;
  color?: 'error' | 'warning';
  onConfirm: () => void;
  onClose: () => void;
}) {
  const titleId = useId();
  return (
    <Dialog open={open} onClose={onClose} aria-labelledby={titleId}>
      <DialogTitle id={titleId}>{title}</DialogTitle>
      <DialogContent>
        <DialogContentText>{text}</DialogContentText>
      </DialogContent>
      <DialogActions>
        <Button onClick={onClose}>Back</Button>
        <Button
          color={color}
          variant="contained"
          onClick={() => {
            onClose();
            onConfirm();
          }}
        >
          {confirmLabel}
        </Button>
      </DialogActions>
    </Dialog>
  );
}

/**
 * A button for an action that cannot be taken back (delete, retire, revoke, cancel, drain):
 * it asks first, in a [`ConfirmDialog`], and acts only on the dialog's `confirmLabel` button.
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
  return (
    <>
      <Button {...button} onClick={() => setOpen(true)}>
        {children}
      </Button>
      <ConfirmDialog
        open={open}
        title={title}
        text={text}
        confirmLabel={confirmLabel}
        color={button.color === 'warning' ? 'warning' : 'error'}
        onConfirm={onConfirm}
        onClose={() => setOpen(false)}
      />
    </>
  );
}
