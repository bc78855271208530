// A guard around ResizeObserver for MUI X's data grid under React 18.
//
// The grid (v7) disconnects its ResizeObserver on unmount only with React 19; under React 18 the
// observer outlives the grid, and when the grid's element leaves the document the browser reports
// it as 0 x 0 — which the grid logs as a console error ("empty width"), depending on timing, on
// every page change away from a grid. An element that is no longer in the document has no size
// anyone can use, so its notifications are dropped here. So are notifications of a zero width
// (an element being hidden or torn down as the page changes, seen as a rare "empty width" in
// the browser test): nothing can be laid out in it, and a later real size is still delivered.
// Everything else passes unchanged.
export function ignoreDetachedResizes(win: Window & typeof globalThis = window) {
  const Native = win.ResizeObserver;
  if (!Native || (Native as { grusGuarded?: boolean }).grusGuarded) return;
  class Guarded extends Native {
    static grusGuarded = true;
    constructor(callback: ResizeObserverCallback) {
      super((entries, observer) => {
        const live = entries.filter((e) => e.target.isConnected && e.contentRect.width > 0);
        if (live.length > 0) callback(live, observer);
      });
    }
  }
  win.ResizeObserver = Guarded;
}
