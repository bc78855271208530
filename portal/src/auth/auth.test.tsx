import { render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import { roleLabel } from '../Shell';
import { DevLogin } from './DevLogin';
import { DEV_USER_KEY, loadSession, sessionHeaders } from './session';

const answer = (status: number, body?: unknown) =>
  vi.fn(async () => new Response(body === undefined ? null : JSON.stringify(body), { status })) as unknown as typeof fetch;

describe('session', () => {
  it('a server without portal login means dev mode, with the stored user (no 404 on every page load)', async () => {
    localStorage.setItem(DEV_USER_KEY, 'alice');
    const s = await loadSession(answer(200, { portalLogin: false }));
    expect(s).toEqual({ mode: 'dev', devUser: 'alice' });
    expect(sessionHeaders(s)).toEqual({ 'X-Grus-Dev-User': 'alice' });
    // An older server's 404 still means the same.
    expect(await loadSession(answer(404))).toEqual({ mode: 'dev', devUser: 'alice' });
  });

  it('401 means signed out; 200 gives the CSRF header', async () => {
    expect(await loadSession(answer(401))).toEqual({ mode: 'signed-out' });
    const s = await loadSession(answer(200, { csrfToken: 'tok', user: { subject: 'oidc|1' } }));
    expect(sessionHeaders(s)).toEqual({ 'X-Grus-CSRF': 'tok' });
    await expect(loadSession(answer(500))).rejects.toThrow(/HTTP 500/);
  });
});

describe('DevLogin', () => {
  it('is clearly marked and accepts only names --dev accepts', async () => {
    const onLogin = vi.fn();
    const user = userEvent.setup();
    render(<DevLogin onLogin={onLogin} />);
    expect(screen.getByRole('heading', { name: /dev login/ })).toBeInTheDocument();
    expect(screen.getByText(/Development mode/)).toBeInTheDocument();
    await user.type(screen.getByLabelText(/User name/), 'Alice Admin');
    await user.click(screen.getByRole('button', { name: 'Sign in' }));
    expect(onLogin).not.toHaveBeenCalled();
    expect(screen.getByLabelText(/User name/)).toHaveAttribute('aria-invalid', 'true');
    await user.clear(screen.getByLabelText(/User name/));
    await user.type(screen.getByLabelText(/User name/), 'alice');
    await user.click(screen.getByRole('button', { name: 'Sign in' }));
    expect(onLogin).toHaveBeenCalledWith('alice');
  });
});

describe('roleLabel', () => {
  it('shows platform admin, the role in the page project, or the highest role', () => {
    expect(roleLabel(true, null, [])).toBe('platform admin');
    expect(roleLabel(false, { slug: 'vision', role: 'VIEWER' }, ['PROJECT_ADMIN'])).toBe('viewer in vision');
    expect(roleLabel(false, null, ['VIEWER', 'PROJECT_ADMIN', 'MEMBER'])).toBe('project admin');
    expect(roleLabel(false, null, [])).toBe('no project yet');
  });
});
