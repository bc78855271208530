import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SessionContext } from './auth/context';
import { Shell } from './Shell';
import { mockClient, renderWith } from './test/render';

/** A window of `width` px for MUI's media queries (jsdom has no layout). */
function viewport(width: number) {
  vi.stubGlobal('matchMedia', (query: string) => {
    const max = /max-width:\s*([\d.]+)px/.exec(query);
    const min = /min-width:\s*([\d.]+)px/.exec(query);
    const matches = (!max || width <= Number(max[1])) && (!min || width >= Number(min[1]));
    return { matches, media: query, onchange: null, addListener() {}, removeListener() {}, addEventListener() {}, removeEventListener() {}, dispatchEvent: () => false };
  });
}

function shell() {
  const { client } = mockClient({
    Me: { data: { me: { __typename: 'User', id: '1', subject: 'dev:alice', email: null, displayName: 'Alice', platformAdmin: false } } },
    Projects: { data: { projects: [] } },
  });
  const session = { session: { mode: 'dev' as const, devUser: 'alice' }, logout: vi.fn() };
  renderWith(
    <SessionContext.Provider value={session}>
      <Shell>
        <p>page content</p>
      </Shell>
    </SessionContext.Provider>,
    { client },
  );
}

describe('Shell', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('at phone width hides the navigation behind a menu button and keeps log out in the bar', async () => {
    viewport(390);
    shell();
    // Closed: kept mounted but hidden from the page (not a column covering it).
    expect(screen.queryByRole('navigation', { name: 'Main' })).toBeNull();
    expect(within(screen.getByRole('banner')).getByRole('button', { name: 'Log out' })).toBeInTheDocument();
    expect(screen.getByTestId('dev-login-banner')).toHaveTextContent(/^DEV LOGIN$/);
    await userEvent.setup().click(screen.getByRole('button', { name: 'Open navigation' }));
    const opened = await screen.findByRole('navigation', { name: 'Main' });
    expect(within(opened).getByRole('link', { name: 'Jobs' })).toBeInTheDocument();
  });

  it('at desktop width shows the navigation beside the page', () => {
    viewport(1366);
    shell();
    expect(screen.queryByRole('button', { name: 'Open navigation' })).toBeNull();
    expect(within(screen.getByRole('navigation', { name: 'Main' })).getByRole('link', { name: 'Jobs' })).toBeInTheDocument();
  });
});
