// Dialogs on these pages are mounted only while open. This hook remembers what had focus when a
// dialog opened and focuses it again once none is open, or the element with `fallbackId` (the
// section's heading, tabIndex -1) when that element is gone, e.g. a revoked key's row.
import { useLayoutEffect, useRef } from 'react';

export function useFocusReturn(open: boolean, fallbackId?: string): void {
  const opener = useRef<HTMLElement | null>(null);
  useLayoutEffect(() => {
    if (open) {
      opener.current ??= document.activeElement instanceof HTMLElement ? document.activeElement : null;
      return;
    }
    const previous = opener.current;
    opener.current = null;
    if (!previous) return;
    if (previous.isConnected) previous.focus();
    else if (fallbackId) document.getElementById(fallbackId)?.focus();
  }, [open, fallbackId]);
}
