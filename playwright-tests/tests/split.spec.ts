import { test, expect, Page, Request } from '@playwright/test';
import * as fs from 'fs';
import * as path from 'path';
import { corpora, watchConsole } from './helpers';

// The dashboard's wasm is split (xtask/src/split.rs): the main module shows the cluster's views; the
// playground, the planner and the policy view are lazy routes whose code comes in chunks fetched the
// first time one of them is opened (dashboard/src/pages/mod.rs).

const MAIN = '/pkg/winplace_dashboard_bg.wasm';

/** Records the path of every WebAssembly module the page asks for, with its answer. */
function watchModules(page: Page): Request[] {
  const requests: Request[] = [];
  page.on('request', (r) => { if (new URL(r.url()).pathname.endsWith('.wasm')) requests.push(r); });
  return requests;
}

const paths = (requests: Request[]) => requests.map((r) => new URL(r.url()).pathname);
const split = (name: string) => new RegExp(`^/pkg/split___${name}_route_view_\\d+\\.wasm$`);

test('the overview loads the main module alone; the playground fetches its chunks, then evaluates offline', async ({ page, context }) => {
  const problems = watchConsole(page);
  const modules = watchModules(page);
  await page.goto('/');
  await expect(page.getByRole('heading', { level: 1, name: 'Overview' })).toBeVisible();
  await expect(page.locator('li[data-state="misplaced"]')).toContainText(/misplaced\s+\d+/);
  // The cluster's views need nothing more than the main module.
  await page.getByRole('link', { name: 'Nodes', exact: true }).click();
  await expect(page.getByRole('heading', { level: 1, name: 'Nodes' })).toBeVisible();
  await page.getByRole('link', { name: 'Workloads', exact: true }).click();
  await expect(page.getByRole('heading', { level: 1, name: 'Workloads' })).toBeVisible();
  await page.getByRole('link', { name: 'Rules', exact: true }).click();
  await expect(page.getByRole('heading', { level: 1, name: 'Rules' })).toBeVisible();
  expect(paths(modules)).toEqual([MAIN]);

  await page.getByRole('link', { name: 'Playground', exact: true }).click();
  await expect(page.locator('#manifest')).toBeVisible();
  const fetched = paths(modules).slice(1);
  expect(fetched.filter((p) => split('playground').test(p))).toHaveLength(1);
  expect(fetched.some((p) => split('planner').test(p) || split('policy').test(p))).toBe(false);
  expect(fetched.every((p) => /^\/pkg\/(split_|chunk_)/.test(p)), fetched.join(' ')).toBe(true);
  for (const request of modules) {
    const answer = await request.response();
    expect(answer?.status(), request.url()).toBe(200);
    expect(answer?.headers()['content-type'], request.url()).toBe('application/wasm');
    expect(answer?.headers()['content-encoding'], request.url()).toMatch(/^(gzip|br)$/);
  }

  // Everything the playground runs is in the page now: with the server out of reach it still evaluates.
  await context.setOffline(true);
  const input = fs.readFileSync(path.join(corpora[0][1], 'windows-deployment-unpinned', 'input.yaml'), 'utf8');
  await page.locator('#manifest').fill(input);
  await expect(page.locator('.finding[data-rule="windows-pod-without-os-selector"]')).toHaveCount(1);
  await page.locator('.fix-all').click();
  await expect(page.locator('.repair')).toHaveAttribute('data-remaining-fixable', '0');
  await context.setOffline(false);
  expect(problems).toEqual([]);
});

test('the planner and the policy view fetch their own chunks when first opened', async ({ page }) => {
  const problems = watchConsole(page);
  const modules = watchModules(page);
  await page.goto('/');
  await expect(page.getByRole('heading', { level: 1, name: 'Overview' })).toBeVisible();
  await page.getByRole('link', { name: 'Planner', exact: true }).click();
  await expect(page.getByRole('heading', { level: 1, name: 'Planner' })).toBeVisible();
  expect(paths(modules).filter((p) => split('planner').test(p))).toHaveLength(1);
  await page.getByRole('link', { name: 'Policy', exact: true }).click();
  await expect(page.getByRole('heading', { level: 1, name: 'Policy' })).toBeVisible();
  expect(paths(modules).filter((p) => split('policy').test(p))).toHaveLength(1);
  // A chunk is fetched once per page, however often its view is opened.
  await page.getByRole('link', { name: 'Planner', exact: true }).click();
  await expect(page.getByRole('heading', { level: 1, name: 'Planner' })).toBeVisible();
  const all = paths(modules);
  expect(new Set(all).size, all.join(' ')).toBe(all.length);
  expect(all.some((p) => split('playground').test(p))).toBe(false);
  expect(problems).toEqual([]);
});
