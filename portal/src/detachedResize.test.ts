import { describe, expect, it, vi } from 'vitest';
import { ignoreDetachedResizes } from './detachedResize';

describe('ignoreDetachedResizes', () => {
  it('drops notifications about elements no longer in the document', () => {
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
    const entry = (target: Element) => ({ target }) as ResizeObserverEntry;
    deliver([entry(detached)], observer);
    expect(seen).not.toHaveBeenCalled();
    deliver([entry(attached), entry(detached)], observer);
    expect(seen).toHaveBeenCalledWith([entry(attached)], observer);
    attached.remove();
  });
});
