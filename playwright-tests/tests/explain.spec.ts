import { test, expect } from '@playwright/test';
import * as fs from 'fs';
import * as path from 'path';
import { watchConsole, shot, startServer, tempFile, writeJson } from './helpers';

// The snapshot of server/tests/explain.rs: a pod in CreateContainerError on a Windows Server 2019 node, and
// the Event that says why.
const failing = JSON.parse(fs.readFileSync(path.resolve(__dirname, '../../server/tests/data/incidents/cluster.json'), 'utf8'));
const quiet = {
  ...failing,
  items: failing.items
    .filter((o: any) => o.kind !== 'Event')
    .map((o: any) => (o.kind === 'Pod' ? { ...o, status: { phase: 'Running' } } : o)),
};

test('"Failing now" lists the incident as it arrives, and the playground explains a pasted error', async ({ page }, testInfo) => {
  const problems = watchConsole(page);
  const file = tempFile('cluster.json');
  writeJson(file, quiet);
  const server = await startServer(undefined, ['--snapshot', file, '--watch-snapshot']);
  try {
    await page.goto(`${server.url}/`);
    const failingNow = page.locator('section.failing-now');
    await expect(failingNow.locator('[data-incidents="0"]')).toBeVisible();
    // The pod starts failing: the live stream brings the incident without a reload.
    writeJson(file, failing);
    const incident = failingNow.locator('li.incident[data-object="Pod/billing/invoice-0"]');
    await expect(incident).toHaveAttribute('data-cause', 'build-mismatch', { timeout: 15_000 });
    await expect(incident).toContainText('×12');
    await expect(incident.locator('.incident-fix')).toContainText('aspnet:4.8-windowsservercore-ltsc2019');
    await expect(incident.locator('.incident-rule')).toContainText('windows-build-mismatch');
    await shot(page, testInfo, 'failing-now');

    // The playground explains a pasted message in the browser: the sandbox case, then an unrelated one.
    await page.goto(`${server.url}/playground`);
    const field = page.locator('#explain-input');
    await field.fill('Warning  FailedCreatePodSandBox  37s  kubelet, w1  Failed to create pod sandbox: rpc error: code = Unknown desc = failed to start sandbox container for pod "kube-flannel-ds-windows-amd64-9tffg": Error response from daemon: hcsshim::CreateComputeSystem e20e: The container operating system does not match the host operating system.');
    const explained = page.locator('.explained-item');
    await expect(explained).toHaveAttribute('data-cause', 'build-mismatch');
    await expect(explained).toHaveAttribute('data-sandbox', 'true');
    await expect(explained).toContainText('pause (sandbox) image');
    await shot(page, testInfo, 'playground-explain');
    await field.fill('Last State: Terminated\n  Reason: OOMKilled');
    await expect(page.locator('.explained .no-match')).toBeVisible();
    expect(problems).toEqual([]);
  } finally {
    await server.stop();
  }
});
