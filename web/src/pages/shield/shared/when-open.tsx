// Renders a dialog only while it is open, and gives the keyboard focus back to what opened it.
// Why: the foundation's Modal and ConfirmDialog label themselves by fixed ids (`modal-title`,
// `dialog-title`), so two of them in the page at once would both be named by the first one's
// heading. Mounting only the open one keeps every dialog's accessible name its own.
import { useEffect, useRef, type ComponentProps, type ReactNode } from 'react';
import { ConfirmDialog, Modal } from '../../../components/dialog.tsx';

export function WhenOpen({ open, children }: { open: boolean; children: ReactNode }) {
  const opener = useRef<HTMLElement | null>(null);
  const wasOpen = useRef(false);
  if (open && !wasOpen.current && typeof document !== 'undefined') {
    opener.current = document.activeElement instanceof HTMLElement ? document.activeElement : null;
  }
  useEffect(() => {
    if (!open && wasOpen.current && opener.current?.isConnected) opener.current.focus();
    wasOpen.current = open;
  }, [open]);
  return open ? <>{children}</> : null;
}

/** The foundation's Modal, in the page only while open. */
export function ShieldModal(props: ComponentProps<typeof Modal>) {
  return (
    <WhenOpen open={props.open}>
      <Modal {...props} />
    </WhenOpen>
  );
}

/** The foundation's ConfirmDialog, in the page only while open. */
export function ShieldConfirm(props: ComponentProps<typeof ConfirmDialog>) {
  return (
    <WhenOpen open={props.open}>
      <ConfirmDialog {...props} />
    </WhenOpen>
  );
}
