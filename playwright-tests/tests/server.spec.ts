import { test, expect } from '@playwright/test';
import { watchConsole } from './helpers';

// The server's side of the dashboard contract: demo data is marked, the security headers allow the
// dashboard's wasm, and the live stream reaches a browser under the Content-Security-Policy.
test('the API marks demo data and the live stream reaches the browser under the CSP', async ({ page, request }) => {
  const problems = watchConsole(page);
  const summary = await request.get('/api/summary');
  expect(summary.status()).toBe(200);
  expect(summary.headers()['content-security-policy']).toContain("script-src 'self' 'wasm-unsafe-eval'");
  expect(summary.headers()['x-frame-options']).toBe('DENY');
  const body = await summary.json();
  expect(body.meta.source.kind).toBe('demo');
  expect(body.meta.freshness.synced).toBe(true);
  await page.goto('/');
  const hello = await page.evaluate(() => new Promise<unknown>((resolve, reject) => {
    const events = new EventSource('/api/events');
    events.addEventListener('hello', (e) => { events.close(); resolve(JSON.parse((e as MessageEvent).data)); });
    setTimeout(() => reject(new Error('no hello event')), 5000);
  }));
  expect(hello).toEqual({ revision: body.meta.freshness.revision });
  expect(problems).toEqual([]);
});
