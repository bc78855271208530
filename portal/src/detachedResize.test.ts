import { describe, expect, it, vi } from 'vitest';
import { ignoreDetachedResizes } from './detachedResize';

describe('ignoreDetachedResizes', () => {
  it('drops notifications about elements no longer in the document or of zero width', () => {
    let deliver: ResizeObserverCallback = () => {};
    class FakeObserver {
      constructor(cb: ResizeObserverCallback) {
        deliver = cb;
      }
      observe() {}
      unobserve() {}
      disconnect() {}
    }
    const win = { ResizeObserver: FakeObserver } as unknown as Window & typeof globalThis;
    ignoreDetachedResizes(win);
    ignoreDetachedResizes(win); // once only
    const seen = vi.fn();
    const observer = new win.ResizeObserver(seen);
    const attached = document.body.appendChild(document.createElement('div'));
    const detached = document.createElement('div');
    const entry = (target: Element, width = 300) =>
      ({ target, contentRect: { width, height: 100 } }) as ResizeObserverEntry;
    deliver([entry(detached)], observer);
    expect(seen).not.toHaveBeenCalled();
    deliver([entry(attached), entry(detached)], observer);
    expect(seen).toHaveBeenCalledWith([entry(attached)], observer);
    // A zero width (an element being hidden as the page changes) is no size to lay out in.
    seen.mockClear();
    deliver([entry(attached, 0)], observer);
    expect(seen).not.toHaveBeenCalled();
    attached.remove();
  });
});
