import { test, expect } from '@playwright/test';
import { watchConsole, shot, Server, smallCluster, snapshotServer } from './helpers';

test('the node map groups nodes by OS and build and shows taints at a glance (demo)', async ({ page }, testInfo) => {
  const problems = watchConsole(page);
  await page.goto('/nodes');
  await expect(page.locator('.node-group')).toHaveCount(4);
  await expect(page.locator('.node-group[data-build="10.0.17763"] h2')).toContainText('Windows Server 2019');
  await expect(page.locator('.node-group[data-build="10.0.20348"] h2')).toContainText('Windows Server 2022');
  await expect(page.locator('.node-group[data-build="10.0.26100"] h2')).toContainText('Windows Server 2025');
  await expect(page.locator('.node-group[data-os="linux"] h2')).toContainText('Linux');
  await expect(page.locator('.node-group[data-os="linux"] .node')).toHaveCount(3);
  await expect(page.locator('[data-node="aks-win22-0"]')).toContainText('os=windows:NoSchedule');
  // Pods are marks colored by state.
  expect(await page.locator('.node .mark').count()).toBeGreaterThan(0);
  for (const mark of await page.locator('.node .mark').all()) {
    await expect(mark).toHaveClass(/mark-(fine|at-risk|misplaced)/);
  }
  await shot(page, testInfo, 'nodes-demo');
  expect(problems).toEqual([]);
});

test('a node opens with the keyboard and shows labels, taints, nodeInfo, pods and findings (demo)', async ({ page }, testInfo) => {
  const problems = watchConsole(page);
  await page.goto('/nodes');
  const tile = page.locator('button.node[data-node="aks-win22-0"]');
  await tile.focus();
  await page.keyboard.press('Enter');
  const detail = page.getByRole('complementary', { name: 'aks-win22-0' });
  await expect(detail).toBeVisible();
  await expect(detail.getByRole('heading', { name: 'Labels' })).toBeVisible();
  await expect(detail.locator('.labels')).toContainText('node.kubernetes.io/windows-build');
  await expect(detail.locator('.taint-list')).toContainText('os=windows:NoSchedule');
  await expect(detail.getByRole('heading', { name: 'Node info' })).toBeVisible();
  await expect(detail).toContainText('kernelVersion');
  await expect(detail.getByRole('heading', { name: /^Pods \(\d+\)$/ })).toBeVisible();
  await expect(detail.getByRole('heading', { name: /^Findings \(\d+\)$/ })).toBeVisible();
  await shot(page, testInfo, 'node-detail');
  // Focus went into the panel; Escape closes it and gives focus back to the tile.
  await page.keyboard.press('Escape');
  await expect(detail).toHaveCount(0);
  await expect(tile).toBeFocused();
  // Space opens too.
  await page.keyboard.press(' ');
  await expect(detail).toBeVisible();
  expect(problems).toEqual([]);
});

test('the name filter narrows the map', async ({ page }) => {
  const problems = watchConsole(page);
  await page.goto('/nodes');
  await page.getByLabel('Find a node').fill('win25');
  await expect(page.locator('.node-group')).toHaveCount(1);
  await expect(page.locator('.node-group .node')).toHaveCount(2);
  await page.getByLabel('Find a node').fill('no-such-node');
  await expect(page.getByText('No node matches.')).toBeVisible();
  expect(problems).toEqual([]);
});

test.describe('on a snapshot', () => {
  let server: Server;
  test.beforeAll(async () => { server = await snapshotServer(smallCluster(true)); });
  test.afterAll(async () => { await server?.stop(); });

  test('a Windows pod on a Linux node is a misplaced mark, and the node lists it', async ({ page }, testInfo) => {
    const problems = watchConsole(page);
    await page.goto(`${server.url}/nodes`);
    await expect(page.locator('.node-group')).toHaveCount(3);
    const linux1 = page.locator('button.node[data-node="snap-linux-1"]');
    await expect(linux1.locator('.mark-misplaced')).toHaveCount(1);
    await expect(linux1).toHaveClass(/tile-misplaced/);
    await expect(linux1).toHaveAttribute('aria-label', /1 misplaced/);
    await linux1.click();
    const detail = page.getByRole('complementary', { name: 'snap-linux-1' });
    await expect(detail.locator('tr[data-pod="iis-old"]')).toHaveAttribute('data-state', 'misplaced');
    await expect(detail.locator('.finding').first()).toBeVisible();
    await page.getByLabel('only nodes with misplaced or at-risk pods').check();
    await expect(page.locator('button.node[data-node="snap-win22-0"]')).toHaveCount(0);
    await shot(page, testInfo, 'nodes-snapshot');
    expect(problems).toEqual([]);
  });
});

// Kubernetes 1.37's status.declaredFeatures (docs/reference/kubernetes-windows-rules.md §11): the node page
// lists what each node declares, and says so when a node declares nothing.
test.describe('declared features (snapshot)', () => {
  let server: Server;
  test.beforeAll(async () => {
    const cluster = smallCluster(false);
    const declare = (name: string, features: string[]) => {
      const n = cluster.items.find((o: any) => o.kind === 'Node' && o.metadata.name === name) as any;
      n.status.declaredFeatures = features;
      n.status.nodeInfo.kubeletVersion = 'v1.37.0';
    };
    // A Linux kubelet with the gates and containerd's user-namespace support declares both; a Windows one
    // never declares UserNamespacesHostNetworkSupport (containerd reports it on Linux only).
    declare('snap-linux-0', ['RestartAllContainersOnContainerExits', 'UserNamespacesHostNetworkSupport']);
    declare('snap-win22-0', ['RestartAllContainersOnContainerExits']);
    server = await snapshotServer(cluster);
  });
  test.afterAll(async () => { await server?.stop(); });

  test("a node's detail lists its declaredFeatures, or says it declares none", async ({ page }, testInfo) => {
    const problems = watchConsole(page);
    await page.goto(`${server.url}/nodes`);
    await page.locator('button.node[data-node="snap-win22-0"]').click();
    let detail = page.getByRole('complementary', { name: 'snap-win22-0' });
    await expect(detail.getByRole('heading', { name: 'Declared features' })).toBeVisible();
    await expect(detail.locator('ul.declared-features li')).toHaveText(['RestartAllContainersOnContainerExits']);
    await shot(page, testInfo, 'node-declared-features');
    await page.keyboard.press('Escape');
    await page.locator('button.node[data-node="snap-linux-0"]').click();
    detail = page.getByRole('complementary', { name: 'snap-linux-0' });
    await expect(detail.locator('ul.declared-features li')).toHaveText(['RestartAllContainersOnContainerExits', 'UserNamespacesHostNetworkSupport']);
    await page.keyboard.press('Escape');
    // A node without the list (a kubelet before 1.35): none declared, said in words.
    await page.locator('button.node[data-node="snap-win22-1"]').click();
    detail = page.getByRole('complementary', { name: 'snap-win22-1' });
    await expect(detail.locator('p.declared-features')).toContainText('None declared');
    await expect(detail.locator('ul.declared-features')).toHaveCount(0);
    expect(problems).toEqual([]);
  });
});
